"""Claude Code (docs/agents.md): its sessions under `~/.claude/projects/<project>/`, with
sub-agents in `<session>/subagents/agent-*.jsonl`; it compacts 13,000 under its effective
window, whose output reserve and size its version and model decide."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from compaction_inspector.core.agents.claude_code import memory, reinjection, rules, settings, statusline
from compaction_inspector.core.agents.claude_code import places as own_places
from compaction_inspector.core.agents.claude_code import transcript as transcript_format
from compaction_inspector.core.agents.claude_code.microcompact import MICROCOMPACT
from compaction_inspector.core.agents.claude_code.reinjection import reinjected_range
from compaction_inspector.core.agents.claude_code.settings import ClaudeSettings
from compaction_inspector.core.agents.claude_code.strategy import STRATEGY
from compaction_inspector.core.agents.claude_code.transcript import FORMAT
from compaction_inspector.core.caching.token_cache import count_session
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import (
    SESSION_PREFIX,
    ConfigView,
    Preset,
    PutBack,
    SessionWindow,
    Tour,
)
from compaction_inspector.core.formats.kinds import Journal, Writer
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import TokenCounter, make_counter
from compaction_inspector.core.model import Block, Compaction, Message, Session, text_message
from compaction_inspector.core.own.autocompact import Count, Point, version
from compaction_inspector.core.statusline import StatusLine

ROUGH = "chars4"  # its own rough estimate: characters / 4, media at a flat figure

AGENT_ID = re.compile(r"^agentId: ([A-Za-z0-9_-]+)", re.MULTILINE)  # a Task result's sub-agent
__all__ = ["FORMAT", "PRESET", "PRESET_1M", "ClaudeCode"]

PRESET = Preset(
    FORMAT,
    200_000,
    20_000,
    "Claude Code: auto-compact 13,000 under the effective window (window less min(max output, "
    "20,000); the whole max output up to 2.1.20)",
    agent=FORMAT,
)
PRESET_1M = Preset(
    "claude-code-1m",
    rules.CLAUDE_CODE_1M_WINDOW,
    20_000,
    "Claude Code with a 1M-token model: auto-compact 13,000 under the effective window",
    agent=FORMAT,
)


SKILL_LISTING_SENT_AGAIN = (2, 1, 23)  # sent again after a compaction from this version
SKILL_LISTING_SHARE = 0.02  # of the window: the listing's budget from 2.1.32 (changelog)


class ClaudeCode(Agent):
    """Claude Code: its sessions, its windows by version and model, its point, what it
    counted before a compaction (`preTokens`) and what it puts back after one."""

    format = FORMAT
    name = "Claude Code"
    homes = ("CLAUDE_CONFIG_DIR",)
    signs_as = ("claude",)
    folder_option = "claude-dir"
    folder_help = (
        "Claude Code's projects folder (default $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)"
    )
    journal: ClassVar[Journal] = transcript_format
    places: ClassVar[Places | None] = own_places
    writer: ClassVar[Writer | None] = transcript_format
    presets = (PRESET, PRESET_1M)
    strategies = (MICROCOMPACT, STRATEGY)
    tour = {
        MICROCOMPACT.name: Tour(
            {"keep_tool_uses": 2}, 0, "Old tool results become a placeholder; the calls stay."
        ),
        STRATEGY.name: Tour(
            {"auto_compact_tokens": 3_500},
            999,
            "Claude Code: the history becomes a summary and re-read files.",
        ),
    }
    status_line: ClassVar[StatusLine | None] = statusline
    task_tools = ("Task", "Agent")
    settings_keys = {"autocompact_pct_override": settings.PCT_OVERRIDE}
    settings_layers = {
        "user": "$CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json",
        "project": ".claude/settings.json in this folder",
        "local": ".claude/settings.local.json in this folder",
    }
    compaction_mark = b'"compact_boundary"'
    counts_recorded = True  # `preTokens`

    def point(self, window: Window, config: ConfigView) -> Point:
        """Where it compacts in `window`: the inspector's settings first, then the user's
        own Claude Code settings (`settings`), each said where it is used."""
        options = config.options(FORMAT)  # the user's own settings folded in (`with_own_settings`)
        own = config.agent_settings if isinstance(config.agent_settings, ClaudeSettings) else ClaudeSettings()
        found = rules.claude_code_point(window, options.auto_compact_tokens, options.autocompact_pct_override)
        if options.auto_compact_tokens is not None:
            return found
        if own.disabled is None and not options.auto_compact:
            return Point(None, "auto_compact false (set): it does not compact on its own")
        if own.disabled is not None:
            return Point(None, f"{own.disabled.told(settings.DISABLED)}: it does not compact on its own")
        if own.pct_override is not None and options.autocompact_pct_override == own.pct_override.value:
            said = own.pct_override.told(settings.PCT_OVERRIDE)
            return Point(found.tokens, found.rule.replace(f"{settings.PCT_OVERRIDE} ", f"{said}: "))
        return found

    def idle(self, settings: ConfigView) -> Point | None:
        """Idle compaction as the session's version and the user's settings have it
        (`rules.claude_code_idle`), or at the size the options set."""
        options = settings.options(FORMAT)
        own = settings.agent_settings if isinstance(settings.agent_settings, ClaudeSettings) else None
        ran = own.idle if own is not None else None
        if ran is not None and options.idle_compact_tokens == ran[0]:
            return Point(ran[0], ran[1])
        if options.idle_compact_tokens is not None:
            return Point(
                options.idle_compact_tokens, f"idle_compact_tokens {options.idle_compact_tokens:,} (set)"
            )
        return Point(None, ran[1]) if ran is not None else None

    def at_point(self, options: Any, tokens: int) -> Any:
        # the session compacted on its own at this point: it was on, whatever is set now
        return dataclasses.replace(
            options, auto_compact=True, auto_compact_tokens=tokens, autocompact_pct_override=None
        )

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """The override the user's settings set, where the inspector's options set no point;
        idle compaction as it runs for the session, where they leave it unset."""
        if not isinstance(own, ClaudeSettings):
            return options
        if own.idle is not None and own.idle[0] is not None and options.idle_compact_tokens is None:
            options = dataclasses.replace(options, idle_compact_tokens=own.idle[0])
        if own.disabled is not None and options.auto_compact_tokens is None:
            options = dataclasses.replace(options, auto_compact=False)
        if own.pct_override is None:
            return options
        if options.auto_compact_tokens is not None or options.autocompact_pct_override is not None:
            return options
        return dataclasses.replace(options, autocompact_pct_override=own.pct_override.value)

    def window(self, config: ConfigView, session: Session) -> SessionWindow | None:
        """The reserve its version kept, a 1M window where its model or its reported
        prompts say so, and the user's own settings of its compaction (`settings`, read from
        the session's working directory and the user's folder); None where the window is
        not the preset's own, or neither the session nor the settings say anything."""
        as_preset = config.preset == PRESET.name and config.window == Window(
            PRESET.context_window, PRESET.reserved_output
        )
        if session.format != FORMAT or not as_preset:
            return None
        agent_version = session.metadata.get("version")
        reserve, why = rules.claude_code_reserve(agent_version)
        size, reasons = PRESET.context_window, [why] if version(agent_version) else []
        model = session.metadata.get("model")
        largest = max((m.usage.prompt_tokens for m in session.messages if m.usage), default=0)
        one_m = rules.claude_code_1m(model, agent_version)
        compacted = [c.pre_tokens for c in session.compactions if c.trigger == "auto" and c.pre_tokens]
        cwd = session.metadata.get("cwd")
        own = settings.read(cwd if isinstance(cwd, str) else None)
        seen_idle = any(c.trigger == "idle" for c in session.compactions)
        idle = rules.claude_code_idle(agent_version, seen_idle, own)
        if idle.tokens is not None or own is not None:
            own = dataclasses.replace(own or ClaudeSettings(), idle=(idle.tokens, idle.why))
        if (
            one_m is not None
            and own is not None
            and own.no_1m is not None
            and largest <= PRESET.context_window
        ):
            reasons.append(f"{own.no_1m.told(settings.NO_1M)} holds it to 200,000")
        elif one_m is not None and compacted and max(compacted) < PRESET.context_window:
            reasons.append(f"it compacted on its own at {max(compacted):,}, under 200,000: not a 1M window")
        elif one_m is not None:
            size, reasons = rules.CLAUDE_CODE_1M_WINDOW, [*reasons, one_m]
        elif largest > PRESET.context_window:
            size = rules.CLAUDE_CODE_1M_WINDOW
            reasons.append(f"a reported prompt of {largest:,} is past 200,000: a 1M window")
        if own is not None and own.window is not None and own.window.value < size:
            size = own.window.value
            reasons.append(f"the window its point is worked out in: {own.window.told(settings.WINDOW)}")
        if not reasons and own is None:  # nothing the session or the settings say: the default stands
            return None
        if own is not None:
            reasons += [f"your settings {r}" for r in own.refused]
        return SessionWindow(
            PRESET_1M.name if size > PRESET.context_window else PRESET.name,
            Window(size, reserve),
            f"{SESSION_PREFIX} " + "; ".join(reasons or ["default window, with the user's settings"]),
            own,
        )

    def counted(self, session: Session) -> Mapping[int, int]:
        """Its estimate before each request (`rules.claude_code_estimates`): what it fires on."""
        # a counter of its own, let go after: the counts are kept between runs (0.35 s at 100 MB)
        rough = count_session(session, make_counter(ROUGH))[0]
        return rules.claude_code_estimates(session.messages, rough, session.metadata.get("version"))

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """What it counted before an automatic compaction (`preTokens`), against its point,
        or an idle one's against the size idle compaction waits for."""
        if compaction.pre_tokens is None:
            return None
        if compaction.trigger == "idle":
            idle = settings.options(FORMAT).idle_compact_tokens
            if not idle:
                return None
            why = f"idle compaction at {idle:,} after {rules.CLAUDE_CODE_IDLE_MINUTES} minutes idle"
            return rules.claude_code_count(compaction.pre_tokens, reported, Point(idle, why))
        if compaction.trigger != "auto":
            return None
        return rules.claude_code_count(compaction.pre_tokens, reported, at)

    def put_back(
        self, session: Session, boundary: int, after: Sequence[Message], counter: TokenCounter, scale: float
    ) -> PutBack:
        """The files, plan and skills it reads again after compacting (`reinjection`),
        where no attachment line after it records them; only the plan after a compaction that
        kept the recent messages. Which files it chose is a range where some it only read may
        have changed after others it changed (their times are not in the transcript)."""
        kept = self._kept_round(session, boundary, after, counter, scale)
        if any(m.attachment is not None for m in after):
            return dataclasses.replace(PutBack.known(0), **kept)
        back, (low, high) = reinjected_range(session.messages[:boundary], session.touches, counter, scale)
        if any(m.replaces for m in after):
            return PutBack.known(sum(r.tokens for r in back if r.kind == "plan"))
        tokens = sum(r.tokens for r in back)
        files = sum(r.tokens for r in back if r.kind == "file")
        if low == high:
            return dataclasses.replace(PutBack.known(tokens), **kept)
        return PutBack(
            tokens,
            tokens - files + min(low, files),
            tokens - files + max(high, files),
            "which files: when the ones it only read last changed is not in the transcript",
            **kept,
        )

    @staticmethod
    def _kept_round(
        session: Session, boundary: int, after: Sequence[Message], counter: TokenCounter, scale: float
    ) -> dict[str, Any]:
        """The last round its version keeps after an automatic compaction mid-turn
        (`reinjection.kept_round`), as PutBack's `kept` and `kept_why`."""
        v = version(session.metadata.get("version"))
        automatic = any(c.index == boundary and c.trigger in ("auto", "idle") for c in session.compactions)
        if v is None or v < reinjection.KEEPS_LAST_ROUND_FROM or not automatic:
            return {}
        kept = reinjection.kept_round(session.messages[:boundary], after)
        if not kept:
            return {}
        at = session.metadata["version"]
        why = f"read from the transcript before it: Claude Code {at} keeps it mid-turn"
        return {"kept": round(scale * sum(counter.count(m) for m in kept)), "kept_why": why}

    def first_only(self, session: Session, config: ConfigView) -> tuple[int, str] | None:
        """The skill listing, where the transcript does not record it: the first request
        carries it, at most 2 % of the window (changelog 2.1.32). From 2.1.23 it was sent
        again after each compaction, around 2.1.4x sometimes twice over
        (anthropics/claude-code#25994), and later versions do not send it again ("pure
        cache_creation with marginal benefit", anthropics/claude-code#74990); at which
        version that changed is not published, so after a compaction it may hold none of it,
        or twice. Newer versions write it as an `attachment` line: then it is read, not
        guessed."""
        v = version(session.metadata.get("version"))
        if (
            v is None
            or v < SKILL_LISTING_SENT_AGAIN
            or any(m.attachment == "skill_listing" for m in session.messages)
        ):
            return None
        most = round(config.window.context_window * SKILL_LISTING_SHARE)
        return (
            most,
            f"the skill listing its first request holds (at most {most:,}) may not be sent again, or twice",
        )

    def carried(self, session: Session, counter: TokenCounter) -> tuple[int, str] | None:
        """CLAUDE.md in its layers and the auto memory, sent with every request and never
        written to the transcript (`memory`), counted from the files as they are now; only
        for a session that ran here, else nothing, and why."""
        cwd = session.metadata.get("cwd")
        elsewhere = self._ran_elsewhere(session, cwd)
        if elsewhere is not None:
            return 0, f"CLAUDE.md and memory left out: {elsewhere}"
        found = memory.read(cwd if isinstance(cwd, str) else None)
        if found is None:
            return None
        tokens = counter.count(text_message("user", found.text), remember=False)
        files = f"{len(found.files)} file{'s' if len(found.files) != 1 else ''}"
        return tokens, f"CLAUDE.md and memory counted from {files} as they are now"

    def _ran_elsewhere(self, session: Session, cwd: object) -> str | None:
        """Why this machine's memory files say nothing of the session (None: it ran here,
        its folder is here and its transcript in this machine's projects folder)."""
        if not isinstance(cwd, str) or not cwd:
            return "the session records no folder"
        if not Path(cwd).is_dir():
            return f"it ran in {cwd}, which is not on this machine"
        projects = self.home()
        try:
            here = session.path is not None and Path(session.path).resolve().is_relative_to(
                projects.resolve()
            )
        except (OSError, ValueError):
            here = False
        return None if here else f"its transcript is not in this machine's projects folder ({projects})"

    def subagent_files(self, session: Path, results: Sequence[Block]) -> list[Path]:
        """Newer Claude Code writes a sub-agent to `<session>/subagents/agent-<id>.jsonl`,
        and the call's result names the id on a line of its own ("agentId: a2271d1 (for
        resuming …)")."""
        return [
            session.parent / session.stem / "subagents" / f"agent-{match.group(1)}.jsonl"
            for b in results
            for match in AGENT_ID.finditer(b.text)
        ]

    def settings_file(self, layer: str | None = None) -> Path:
        """The user's file, or the project's (`.claude/settings.json`) or the local one
        (`.claude/settings.local.json`) of this folder: later layers win."""
        return settings.layers(str(Path.cwd()))[list(self.settings_layers).index(layer or "user")]

    def setting(self, text: str, key: str) -> str | None:
        return settings.current(text, key)

    def with_setting(self, text: str, key: str, value: int) -> str:
        return settings.written(text, key, value)

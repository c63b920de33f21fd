"""Gemini CLI (docs/agents.md#gemini-cli): its chat recordings under `~/.gemini/tmp/<project>/
chats/` (`$GEMINI_CLI_HOME/.gemini` where that is set), a sub-agent's in a folder named for
the session that started it; it compresses when the last prompt reaches half its model's
token limit, and keeps the newest 30 % of the history."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import orjson

from compaction_inspector.core.agents.gemini_cli import places as own_places
from compaction_inspector.core.agents.gemini_cli import settings as configured
from compaction_inspector.core.agents.gemini_cli import transcript
from compaction_inspector.core.agents.gemini_cli.settings import KEY, GeminiSettings
from compaction_inspector.core.agents.gemini_cli.strategy import STRATEGY
from compaction_inspector.core.agents.gemini_cli.transcript import FORMAT
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import SESSION_PREFIX, ConfigView, Preset, SessionWindow
from compaction_inspector.core.formats.kinds import Journal
from compaction_inspector.core.jsonedit import entry, with_key
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Compaction, Session
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.strategies import summarize

__all__ = ["FORMAT", "PRESET", "GeminiCli"]

# packages/core/src/core/tokenLimits.ts: every model's limit (DEFAULT_TOKEN_LIMIT), the
# window its compression is a share of
TOKEN_LIMIT = 1_048_576
OUTPUT = 65_536  # Gemini 2.5's and 3's output limit (ai.google.dev/gemini-api/docs/models)
PRESET = Preset(
    FORMAT,
    TOKEN_LIMIT,
    OUTPUT,
    "Gemini CLI: compresses when the last prompt reaches half its model's token limit of 1,048,576",
    agent=FORMAT,
)


class GeminiCli(Agent):
    """Gemini CLI: its chat recordings, its token limit, its compression point, and the
    prompt it compared with it before a compression its recording shows."""

    format = FORMAT
    name = "Gemini CLI"
    homes = ("GEMINI_CLI_HOME",)
    folder_option = "gemini-dir"
    folder_help = "Gemini CLI's folder (default $GEMINI_CLI_HOME/.gemini, else ~/.gemini)"
    journal: ClassVar[Journal | None] = transcript
    places: ClassVar[Places | None] = own_places
    presets = (PRESET,)
    strategies = (STRATEGY,)
    compaction_mark = transcript.SNAPSHOT.encode()
    counts_recorded = True  # a recorded compression's count is the last prompt before it
    settings_keys = {"trigger_percent": KEY}  # a share of its limit there, a percent here
    settings_layers = {
        "user": "$GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini/settings.json",
        "project": ".gemini/settings.json in this folder (its workspace settings)",
    }

    def point(self, window: Window, settings: ConfigView) -> Point:
        """Where its compression fires in the window: half of it, under the options (the
        user's own threshold where set: `with_own_settings`), said where used."""
        options = settings.options(FORMAT)
        tokens, rule = summarize.trigger(options, window)
        own = (
            settings.agent_settings.threshold if isinstance(settings.agent_settings, GeminiSettings) else None
        )
        if own is not None and options.trigger_percent == own.value * 100:
            rule = f"{own.told(KEY)}: {rule}"
        return Point(tokens, rule)

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """The threshold the user's settings set, where the inspector's is its default."""
        found = own.threshold if isinstance(own, GeminiSettings) else None
        if found is None or options.trigger_percent != STRATEGY.default_options().trigger_percent:
            return options
        return dataclasses.replace(options, trigger_percent=found.value * 100)

    def settings_file(self, layer: str | None = None) -> Path:
        return configured.written_file(layer or "user")

    def setting(self, text: str, key: str) -> str | None:
        return entry(text, key, orjson.loads)

    def with_setting(self, text: str, key: str, value: int) -> str:
        if not 0 < value <= 100:
            raise ValueError(f"{KEY} takes a share above 0 and at most 1, not {value} %")
        return with_key(text, key, value / 100, orjson.loads)

    def at_point(self, options: Any, tokens: int) -> Any:
        return dataclasses.replace(options, trigger_tokens=tokens, trigger_percent=None)

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        """Its model's token limit, the same for every model it names (tokenLimits.ts)."""
        if session.format != FORMAT:
            return None
        limit = f"Gemini CLI's token limit for every model, {TOKEN_LIMIT:,} (tokenLimits.ts)"
        cwd = session.metadata.get("cwd")
        own = configured.read(cwd if isinstance(cwd, str) else None)
        refused = [f"your settings {r}" for r in own.refused] if own is not None else []
        source = "; ".join([f"{SESSION_PREFIX} {limit}", *refused])
        return SessionWindow(PRESET.name, Window(TOKEN_LIMIT, OUTPUT), source, own)

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """What it compared with its point before a compression: the last prompt reported."""
        if compaction.pre_tokens is None:
            return None
        return Count(self.name, (("its last prompt", compaction.pre_tokens),), (), at)

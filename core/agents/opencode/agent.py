"""opencode (docs/agents.md#opencode): its sessions in one SQLite database, `opencode.db`
in its data folder (`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`), sub-agents
as sessions with a parent; it compacts when a response's tokens reach the input the model
takes less its reserve, and the model's limits come from models.dev's catalogue, which
opencode keeps in its cache folder."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import orjson

from compaction_inspector.core.agents.opencode import database, export
from compaction_inspector.core.agents.opencode import places as own_places
from compaction_inspector.core.agents.opencode import settings as configured
from compaction_inspector.core.agents.opencode.overflow import OUTPUT_TOKEN_MAX, Limits, Overflow, overflow
from compaction_inspector.core.agents.opencode.strategy import PRUNE, STRATEGY
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import SESSION_PREFIX, ConfigView, Preset, SessionWindow
from compaction_inspector.core.files import read_text
from compaction_inspector.core.formats.kinds import Journal, Store, stored_in
from compaction_inspector.core.jsonedit import entry, load_jsonc, with_key
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Block, Compaction, Session
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.strategies import summarize

__all__ = ["FORMAT", "PRESET", "Opencode"]

TASK_ID = re.compile(r"^task_id: (ses_[A-Za-z0-9]+)", re.MULTILINE)  # a task result's sub-agent session

FORMAT = database.FORMAT
USUAL_CONTEXT, USUAL_OUTPUT = 200_000, 32_000  # a model whose limits the catalogue does not give
PRESET = Preset(
    FORMAT,
    USUAL_CONTEXT,
    OUTPUT_TOKEN_MAX,
    "opencode: compacts when a response's tokens reach its input limit less min(20,000, max "
    "output), or, for a model with no input limit, its context less min(max output, 32,000)",
    agent=FORMAT,
)


def catalogue() -> Path:
    """Where opencode keeps models.dev's catalogue of models and their limits."""
    return own_places.folder("XDG_CACHE_HOME", ".cache") / "models.json"


@functools.lru_cache(maxsize=2)
def _catalogue(file: Path, size: int, mtime_ns: int) -> Any:
    """The catalogue read once while it stays the same file (it runs to megabytes)."""
    try:
        return orjson.loads(read_text(file))
    except (OSError, orjson.JSONDecodeError):
        return None


def limits(provider: str | None, model: str | None, path: Path | None = None) -> Limits | None:
    """A model's limits from opencode's copy of models.dev's catalogue; None where the
    file or the model is not there."""
    if not model:
        return None
    file = path or catalogue()
    try:
        st = file.stat()
    except OSError:
        return None
    data = _catalogue(file, st.st_size, st.st_mtime_ns)
    providers = [data.get(provider)] if provider and isinstance(data, dict) else []
    providers += list(data.values()) if isinstance(data, dict) else []
    for listed in providers:
        models = listed.get("models") if isinstance(listed, dict) else None
        found = models.get(model) if isinstance(models, dict) else None
        limit = found.get("limit") if isinstance(found, dict) else None
        if not isinstance(limit, dict):
            continue
        context, output, given = limit.get("context"), limit.get("output"), limit.get("input")
        if not (isinstance(context, int) and isinstance(output, int) and 0 < output < context):
            continue
        taken = given if isinstance(given, int) and 0 < given <= context else None
        told = f", {taken:,} input" if taken else ""
        return Limits(
            context,
            output,
            taken,
            f"models.dev's limits for {model} ({context:,} context, {output:,} output{told})",
        )
    return None


SIZES = (200_000, 262_144, 400_000, 1_000_000, 2_000_000)  # the context windows models usually have


def _assumed(session: Session, model: Any) -> Limits:
    """The limits of a model the catalogue does not give: the usual ones, unless the
    session's own responses went past where those compact without compacting; then the
    smallest usual size that takes them, said to be an inference."""
    unknown = f"{model or 'its model'}'s limits unknown (no models.dev catalogue in opencode's cache)"
    largest = max(
        (m.usage.prompt_tokens + m.usage.output_tokens for m in session.messages if m.usage), default=0
    )
    compacted = any(c.trigger == "auto" for c in session.compactions)
    for size in SIZES:
        if compacted or largest < size - USUAL_OUTPUT:
            break
    if size == USUAL_CONTEXT:
        usual = f"{unknown}: the usual {USUAL_CONTEXT:,} context and {USUAL_OUTPUT:,} output"
        return Limits(size, USUAL_OUTPUT, None, usual)
    inferred = (
        f"{unknown}: at least {size:,}, the smallest usual window its {largest:,}-token response fits "
        "without compacting (an inference)"
    )
    return Limits(size, USUAL_OUTPUT, None, inferred)


class Opencode(Agent):
    """opencode: its database of sessions, the window its model's limits give, its
    overflow point, and what it counted before a compaction (the last response's tokens)."""

    format = FORMAT
    name = "opencode"
    homes = ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
    folder_option = "opencode-dir"
    folder_help = "opencode's data folder (default $XDG_DATA_HOME/opencode, else ~/.local/share/opencode)"
    journal: ClassVar[Journal | None] = export
    store: ClassVar[Store | None] = database
    places: ClassVar[Places | None] = own_places
    presets = (PRESET,)
    strategies = (STRATEGY, PRUNE)
    compaction_mark = b""  # its compactions are rows of its database, not lines
    task_tools = ("task",)
    settings_keys = {"trigger_reserve": "compaction.reserved"}
    settings_layers = {
        "user": "$XDG_CONFIG_HOME/opencode/opencode.json, else ~/.config/opencode/ (or its .jsonc)",
        "project": "opencode.json in this folder (or its .jsonc)",
    }
    counts_recorded = True  # a compaction's count is its last response's tokens

    def point(self, window: Window, settings: ConfigView) -> Point:
        """Where its compaction strategy fires in the window: the overflow point, under
        the user's own `compaction` settings (`with_own_settings`), said where used."""
        options = settings.options(FORMAT)
        found = settings.agent_settings if isinstance(settings.agent_settings, Overflow) else None
        own = found.own if found is not None else None
        if own is not None and own.auto is not None and own.auto.value is False:
            return Point(None, f"{own.auto.told('compaction.auto')}: it does not compact on its own")
        tokens, rule = summarize.trigger(options, window)
        if found is not None and window == found.window and tokens == found.point:
            rule = found.rule
        return Point(tokens, rule)

    def at_point(self, options: Any, tokens: int) -> Any:
        return dataclasses.replace(options, trigger_tokens=tokens, trigger_percent_less_output=None)

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """What its overflow rule takes off the session's window (`overflow`), where the
        inspector's reserve is opencode's own default."""
        default = STRATEGY.default_options().trigger_reserve
        if not isinstance(own, Overflow) or options.trigger_reserve != default:
            return options
        return dataclasses.replace(options, trigger_reserve=own.window.reserved_output)

    def settings_file(self, layer: str | None = None) -> Path:
        return configured.written_file(layer or "user")

    def setting(self, text: str, key: str) -> str | None:
        return entry(text, key, load_jsonc)

    def with_setting(self, text: str, key: str, value: int) -> str:
        return with_key(text, key, value, load_jsonc)

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        """The input its model takes and the reserve, from models.dev's catalogue where
        opencode keeps it, else the usual ones (`_assumed`)."""
        if session.format != FORMAT:
            return None
        model, provider = session.metadata.get("model"), session.metadata.get("provider")
        found = limits(
            provider if isinstance(provider, str) else None, model if isinstance(model, str) else None
        )
        given = found if found is not None else _assumed(session, model)
        cwd = session.metadata.get("cwd")
        own = configured.read(cwd if isinstance(cwd, str) else None)
        rule = overflow(given, own)
        refused = [f"your settings {r}" for r in own.refused] if own is not None else []
        source = "; ".join([f"{SESSION_PREFIX} {given.source}", *refused])
        return SessionWindow(PRESET.name, rule.window, source, rule)

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """What it counted before an automatic compaction: the last response's tokens."""
        if compaction.trigger != "auto" or compaction.pre_tokens is None:
            return None
        return Count(self.name, (("its last response's tokens", compaction.pre_tokens),), (), at)

    def subagent_files(self, session: Path, results: Sequence[Block]) -> list[Path]:
        """A task call's result names the sub-agent's session ("task_id: ses_… (for
        resuming …)"): that session of the same database."""
        file = stored_in(session)[0]
        return [database.named(file, m.group(1)) for b in results for m in TASK_ID.finditer(b.text)]

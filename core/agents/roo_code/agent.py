"""Roo Code (docs/agents.md#roo-code): its task folders in VS Code's global storage
(`…/globalStorage/rooveterinaryinc.roo-cline/tasks/<id>/`), a sub-task listed under the
task that started it; it condenses when the context reaches its share of the window (100 %
by default) or passes 90 % of the window less the output it reserves, whichever first."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, ClassVar

from compaction_inspector.core.agents.roo_code import places as own_places
from compaction_inspector.core.agents.roo_code import settings as configured
from compaction_inspector.core.agents.roo_code import transcript
from compaction_inspector.core.agents.roo_code.settings import RooSettings
from compaction_inspector.core.agents.roo_code.strategy import STRATEGY
from compaction_inspector.core.agents.roo_code.transcript import FORMAT, STORAGE
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import SESSION_PREFIX, ConfigView, Preset, SessionWindow
from compaction_inspector.core.formats import task_folder
from compaction_inspector.core.formats.kinds import TaskFolder
from compaction_inspector.core.jsonedit import entry, load_jsonc, with_key
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Compaction, Session
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.pricing.rates import window_of
from compaction_inspector.core.strategies import summarize

__all__ = ["FORMAT", "PRESET", "RooCode"]

WINDOW = 200_000  # assumed where the price table does not know the model (a Claude model's)
# packages/types/src/providers/anthropic.ts ANTHROPIC_DEFAULT_MAX_TOKENS: what it reserves for
# a Claude model's reply (src/shared/api.ts getModelMaxOutputTokens)
CLAUDE_OUTPUT = 8_192
OUTPUT_SHARE = 0.2  # ... and at most this share of the window for any other model's
PRESET = Preset(
    FORMAT,
    WINDOW,
    CLAUDE_OUTPUT,
    "Roo Code: condenses at 100 % of the window, or past 90 % of it less 8,192 for output",
    agent=FORMAT,
)


class RooCode(Agent):
    """Roo Code: its task folders, its condense point, and the count it recorded before
    each condense and truncation."""

    format = FORMAT
    name = "Roo Code"
    homes = (task_folder.PORTABLE,)
    folder_option = "roo-dir"
    folder_help = "Roo Code's folder in VS Code's global storage (default …/globalStorage/" + STORAGE + ")"
    task_folder: ClassVar[TaskFolder | None] = transcript
    places: ClassVar[Places | None] = own_places
    presets = (PRESET,)
    strategies = (STRATEGY,)
    compaction_mark = b'"isSummary"'
    counts_recorded = True  # its panel records the context it compared before each
    not_written = (
        "its live settings are in VS Code's state database (state.vscdb), which VS Code owns; name a file "
        f"for it to import at start in VS Code's settings ({configured.AUTO_IMPORT}) and apply writes that"
    )
    settings_keys = {"trigger_percent": configured.KEY}
    settings_layers = {"user": f"the exported settings file VS Code's {configured.AUTO_IMPORT} names"}

    def point(self, window: Window, settings: ConfigView) -> Point:
        """Where its condense fires in the window, under the options (the user's own
        threshold where set: `with_own_settings`), said where used."""
        options = settings.options(FORMAT)
        tokens, rule = summarize.trigger(options, window)
        own = settings.agent_settings if isinstance(settings.agent_settings, RooSettings) else None
        if (
            own is not None
            and own.auto is not None
            and own.auto.value is False
            and options.trigger_percent is None
        ):
            rule = f"{own.auto.told('autoCondenseContext')}: it truncates instead at {rule}"
        elif own is not None and own.percent is not None and options.trigger_percent == own.percent.value:
            rule = f"{own.percent.told(own.said)}: {rule}"
        return Point(tokens, rule)

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """The threshold its settings set (none where it does not condense on its own: its
        truncation's rule stands), where the inspector's is its default."""
        if not isinstance(own, RooSettings) or options != STRATEGY.default_options():
            return options
        if own.auto is not None and own.auto.value is False:
            return dataclasses.replace(options, trigger_percent=None)
        if own.percent is not None:
            return dataclasses.replace(options, trigger_percent=own.percent.value)
        return options

    def at_point(self, options: Any, tokens: int) -> Any:
        return summarize.at_tokens(options, tokens)

    def settings_file(self, layer: str | None = None) -> Path | None:
        return configured.imported(self.home())

    def setting(self, text: str, key: str) -> str | None:
        return entry(text, key, load_jsonc)

    def with_setting(self, text: str, key: str, value: int) -> str:
        if not configured.MIN_THRESHOLD <= value <= configured.MAX_THRESHOLD:
            raise ValueError(f"autoCondenseContextPercent takes 5-100, not {value}")
        return with_key(text, key, value, load_jsonc)

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        """Its model's window as the price table gives it, and the output it reserves."""
        if session.format != FORMAT:
            return None
        model = session.metadata.get("model")
        named = model if isinstance(model, str) else None
        size, said = window_of(named, WINDOW, f"an assumed window of {WINDOW:,}")
        if named is None or "claude" in named:
            reserve, why = CLAUDE_OUTPUT, f"{CLAUDE_OUTPUT:,} reserved for a Claude model's reply"
        else:
            reserve = math.ceil(size * OUTPUT_SHARE)
            why = f"{reserve:,} reserved for its reply, at most ({OUTPUT_SHARE:.0%} of the window)"
        own = configured.read(Path(session.path).parent) if session.path else None
        return SessionWindow(
            PRESET.name, Window(size, reserve), f"{SESSION_PREFIX} model: {said}; {why}", own
        )

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """What it compared with its point before a condense or truncation, as its panel
        recorded it: the last request's tokens in and out, and its estimate of the message
        it was about to send (the rest)."""
        pre = compaction.pre_tokens
        if pre is None:
            return None
        held = dict(compaction.details.to_dict()) if compaction.details is not None else {}
        last = held.get("last_request_tokens")
        if not isinstance(last, int) or last > pre:
            return Count(self.name, (("its recorded context before", pre),), (), at)
        parts = (
            ("its last request's tokens in and out", last),
            ("its estimate of the next message", pre - last),
        )
        return Count(self.name, parts, (), at)

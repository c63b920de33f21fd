"""Cline (docs/agents.md#cline): the task folders of Cline up to 3.85 in VS Code's global
storage (`…/globalStorage/saoudrizwan.claude-dev/tasks/<id>/`); it compacts when the last
request's tokens reach its model's window less a margin it keeps (27,000 of 64k, 30,000 of
128k, 40,000 of 200k, else min(40,000, 20 %))."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from compaction_inspector.core.agents.cline import places as own_places
from compaction_inspector.core.agents.cline import sdk, transcript
from compaction_inspector.core.agents.cline.strategy import LEGACY_STRATEGY, STRATEGY
from compaction_inspector.core.agents.cline.transcript import FORMAT, STORAGE
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import SESSION_PREFIX, ConfigView, Preset, SessionWindow
from compaction_inspector.core.formats import task_folder
from compaction_inspector.core.formats.kinds import Document, TaskFolder
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Compaction, Session, immutable
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.pricing.rates import window_of
from compaction_inspector.core.strategies import summarize

__all__ = ["FORMAT", "PRESET", "Cline"]

WINDOW = 128_000  # its window for a model that states none (getContextWindowInfo)
# context-window-utils.ts: what it leaves free of the usual windows
MARGINS = {64_000: 27_000, 128_000: 30_000, 200_000: 40_000}
MARGIN, SHARE = 40_000, 0.2  # ... and of any other: at most 40,000, at most 20 % of it
# sdk/packages/core/src/extensions/context/compaction-shared.ts: the current Cline's input
# budget where the model states no input limit, a share of the window
BUDGET = 0.9
PRESET = Preset(
    FORMAT,
    200_000,
    MARGINS[200_000],
    "Cline 3: compacts when the last request reaches the window less 40,000 (of 200,000)",
    agent=FORMAT,
)


def margin(window: int) -> int:
    """What Cline 3 leaves free of a window: its table's, else min(40,000, 20 %)."""
    return MARGINS.get(window, min(MARGIN, window - int(max(window - MARGIN, window * (1 - SHARE)))))


@immutable()
class Ran:
    """What a task folder says of the Cline that wrote it: Cline 3, keeping `margin` free."""

    margin: int


class Cline(Agent):
    """Cline: its task folders, its point, and the last request's tokens it compared with
    it before each compaction its ranges show."""

    format = FORMAT
    name = "Cline"
    homes = (task_folder.PORTABLE, "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")
    folder_option = "cline-dir"
    folder_help = "Cline's folder in VS Code's global storage (default …/globalStorage/" + STORAGE + ")"
    task_folder: ClassVar[TaskFolder | None] = transcript
    places: ClassVar[Places | None] = own_places
    document: ClassVar[Document | None] = sdk
    presets = (PRESET,)
    strategies = (STRATEGY, LEGACY_STRATEGY)
    compaction_mark = b'"conversationHistoryDeletedRange"'
    counts_recorded = True  # the last request's tokens, as its panel wrote them
    not_written = (
        "Cline 3 keeps them in VS Code's state, which VS Code owns; the current Cline's are not read here"
    )

    def point(self, window: Window, settings: ConfigView) -> Point:
        """Where it compacts in the window, under the options (Cline 3's, for a task
        folder it wrote: `with_own_settings`)."""
        tokens, rule = summarize.trigger(settings.options(FORMAT), window)
        return Point(tokens, rule)

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """Cline 3's rule, with its margin for the session's window, where the options are
        the current Cline's defaults (or Cline 3's)."""
        if not isinstance(own, Ran):
            return options
        if options == STRATEGY.default_options():
            options = LEGACY_STRATEGY.default_options()
        if options == LEGACY_STRATEGY.default_options():
            return dataclasses.replace(options, trigger_reserve=own.margin)
        return options

    def recorded_settings(self, own: Any) -> Any:
        """That Cline 3 wrote the task folder is the session's own record, not a setting."""
        return own if isinstance(own, Ran) else None

    def at_point(self, options: Any, tokens: int) -> Any:
        return summarize.at_tokens(options, tokens)

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        """Its model's window as the price table gives it, less the margin Cline 3 keeps; for
        the current Cline's session, less a tenth (its input budget, 0.9 of the window)."""
        if session.format != FORMAT:
            return None
        own = f"a window of {WINDOW:,} (Cline's own for a model that states none)"
        size, said = window_of(session.metadata.get("model"), WINDOW, own)
        if session.metadata.get("layout") == sdk.SDK:
            budget = size - int(size * BUDGET)
            source = f"{SESSION_PREFIX} model: {said}; its input budget is {BUDGET:.0%} of it"
            return SessionWindow(PRESET.name, Window(size, budget), source)
        kept = margin(size)
        source = f"{SESSION_PREFIX} model: {said}; Cline 3 keeps {kept:,} free of it"
        return SessionWindow(PRESET.name, Window(size, kept), source, Ran(kept))

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """What it compared with its point: the last request's tokens in, out and cached."""
        if compaction.pre_tokens is None:
            return None
        return Count(self.name, (("its last request's tokens", compaction.pre_tokens),), (), at)

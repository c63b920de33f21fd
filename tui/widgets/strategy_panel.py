"""The strategy panel: pick a strategy, edit its options (validated as you type), and
read the step being shown: its explanation, token delta and pressure before → after."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.message import Message as TextualMessage
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static

from compaction_inspector.core.strategies import (
    CompactionResult,
    OptionError,
    Setting,
    Stats,
    Strategy,
    highlights,
)
from compaction_inspector.core.strategies.declaration import Options
from compaction_inspector.core.text import counted, one_line
from compaction_inspector.tui.text import safe


def _fields(declared: Strategy[Any]) -> list[Setting]:
    """The options the panel edits: those with a label."""
    return [s for s in declared.settings if s.option.label is not None]


class StrategyPanel(VerticalScroll):
    class Chosen(TextualMessage):
        """Another strategy was picked: the screen shows it (and the form its options)."""

        def __init__(self, strategy: str) -> None:
            super().__init__()
            self.strategy = strategy

    class Changed(TextualMessage):
        """A valid set of the shown strategy's options was entered."""

        def __init__(self, strategy: str, options: Options) -> None:
            super().__init__()
            self.strategy = strategy
            self.options = options

    def __init__(
        self,
        strategies: Mapping[str, Strategy[Any]],
        strategy: str,
        options: Options,
        *,
        id: str | None = None,
    ) -> None:
        """The form of `strategy` (one of `strategies`) holding `options`; the screen's
        config keeps every strategy's options, the form only the shown one's."""
        super().__init__(id=id)
        self.strategies = strategies
        self.strategy = strategy
        self.current = options
        self.keys_hint = "(n next · e end)"  # the screen sets it from the keys in force
        # what the options left blank come to now, for the strategy they were worked out for
        self.in_force: tuple[str, Mapping[str, int | None]] | None = None
        self._building = asyncio.Lock()
        self.own = False  # titled for the transcript's own compactions (`show_own`)

    def compose(self) -> ComposeResult:
        # the strategy's picker is mounted with its form (`_make_form`)
        yield Static("The transcript's own compactions (o returns)", id="own-title", classes="hidden")
        yield Grid(id="options")
        yield Static("", id="options-error")  # wraps: an error can take lines
        yield Static("", id="step-title")
        yield Static("", id="step-body")

    def on_mount(self) -> None:
        # the picker and the form take about a frame to mount (a select, inputs): built once
        # the screen's first frame, which holds the transcript's first rows, is drawn
        self.call_after_refresh(self._build_form)

    def show_own(self, own: bool) -> None:
        """Titled for the transcript's own compactions (no strategy's form), or for the strategy."""
        self.own = own
        self.query_one("#own-title").set_class(not own, "hidden")
        for widget in self.query("#strategy-select, #options"):
            widget.set_class(own, "hidden")

    def show_in_force(self, values: Mapping[str, int | None]) -> None:
        """What the options left blank come to now, shown in their boxes ("167,000 in force"),
        and kept for a form built after."""
        self.in_force = (self.strategy, values)
        self._show_in_force()

    def _show_in_force(self) -> None:
        if self.in_force is None or self.in_force[0] != self.strategy:
            return
        for name, value in self.in_force[1].items():
            for box in self.query(f"#opt-{name}").results(Input):
                # the figure first: a narrow box (80 columns) cuts the words, never the number
                box.placeholder = f"{value:,} in force" if value is not None else "none in this window"

    async def _build_form(self) -> None:
        async with self._building:  # the first build, deferred, and a strategy picked: one at a time
            if self.is_attached:  # not where the app ended before its first frame was drawn
                await self._make_form()

    async def _make_form(self) -> None:
        if not self.query("#strategy-select"):
            picker = Select(
                [(s.label, n) for n, s in self.strategies.items()],
                value=self.strategy,
                allow_blank=False,
                id="strategy-select",
                compact=True,
                classes="hidden" if self.own else "",
            )
            await self.mount(picker, before="#own-title")
        grid = self.query_one("#options", Grid)
        await grid.remove_children()
        opts = self.current
        widgets: list[Widget] = []
        for s in _fields(self.strategies[self.strategy]):
            value, label = getattr(opts, s.name), s.option.label or s.name
            if s.option.kind == "bool":
                widgets.append(Checkbox(label, value=bool(value), id=f"opt-{s.name}", compact=True))
                widgets.append(Static(""))
            elif s.option.kind == "choice":
                widgets.append(Label(label))
                widgets.append(
                    Select(
                        [(c, c) for c in s.option.choices],
                        value=value,
                        allow_blank=False,
                        id=f"opt-{s.name}",
                        compact=True,
                    )
                )
            else:
                widgets.append(Label(label))
                widgets.append(Input(s.show(value), id=f"opt-{s.name}", compact=True))
        await grid.mount_all(widgets)
        self._show_in_force()
        error = self.query_one("#options-error", Static)
        error.update("")
        error.display = False

    async def set_strategy(self, strategy: str, options: Options) -> None:
        if strategy != self.strategy:
            self.strategy, self.current = strategy, options
            for picker in self.query("#strategy-select").results(Select):
                picker.value = strategy
            await self._build_form()

    async def set_options(self, strategy: str, options: Options) -> None:
        """Options changed elsewhere (tuning keys, a preset): show them in the form."""
        if strategy == self.strategy:
            self.current = options
            for s in _fields(self.strategies[strategy]):  # a form not built yet is built from `current`
                for widget in self.query(f"#opt-{s.name}").results(Input):
                    text = s.show(getattr(options, s.name))
                    if widget.value != text:
                        widget.value = text

    async def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "strategy-select" and event.value != self.strategy:
            self.post_message(self.Chosen(str(event.value)))
        elif event.select.id and event.select.id.startswith("opt-"):
            self._apply_form({event.select.id.removeprefix("opt-"): event.value})

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply_form()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._apply_form({(event.checkbox.id or "").removeprefix("opt-"): event.value})

    def _apply_form(self, given: dict[str, Any] | None = None) -> None:
        """Apply what the whole form says, or show why not: an option another one made
        invalid (thresholds against the target) is applied once that one changes."""
        values = dict(given or {})
        error = ""
        for s in _fields(self.strategies[self.strategy]):
            widget = self.query_one(f"#opt-{s.name}")
            if not isinstance(widget, Input):
                continue
            try:
                values[s.name] = s.parse(widget.value)
                widget.remove_class("invalid")
            except OptionError as exc:
                widget.add_class("invalid")
                error = error or f"{s.name}: {exc}"
        current = self.current
        if not error:
            try:
                updated = self.strategies[self.strategy].checked(dataclasses.replace(current, **values))
            except (OptionError, TypeError, ValueError) as exc:
                error = str(exc)
        label = self.query_one("#options-error", Static)
        label.display = bool(error)  # no empty row when all is well
        if error:
            label.update(safe(error, "red"))
            return
        label.update("")
        if updated != current:
            self.current = updated
            self.post_message(self.Changed(self.strategy, updated))

    def show_step(self, result: CompactionResult[Stats] | None, index: int, running: bool = False) -> None:
        title = self.query_one("#step-title", Static)
        body = self.query_one("#step-body", Static)
        if running or result is None:
            title.update(Text("Running…" if running else "", style="italic"))
            body.update("")
            return
        total = len(result.steps)
        head = Text()
        if index < 0:
            head.append(f"Before · {counted(total, 'step')} ahead", "bold")
            head.append(f"  {self.keys_hint}", "bright_black")
            detail = safe(self._stats_line(result), "bright_black")
        else:
            step = result.steps[index]
            head.append(f"Step {index + 1}/{total} · ", "bold")
            head.append(one_line(step.title, 60), "bold yellow")
            d = step.diff
            # the figures first: on a short terminal they are what stays in sight
            detail = Text(
                f"tokens {d.tokens_before:,} → {d.tokens_after:,} ({d.token_delta:+,}) · "
                f"pressure {step.pressure_before:.1%} → {step.pressure_after:.1%}\n",
                "bold",
            )
            detail.append_text(safe(step.explanation + "\n"))
            summaries = len({a for _, a in d.summarized})
            counts = [
                (len(d.dropped), f"{len(d.dropped):,} dropped", "red"),
                (summaries, counted(summaries, "summary", "summaries"), "yellow"),
                (len(d.summarized), f"{len(d.summarized):,} summarized", "yellow"),
                (len(d.edited), f"{len(d.edited):,} edited", "blue"),
                (len(d.inserted), f"{len(d.inserted):,} inserted", "green"),
            ]
            for n, label, colour in counts:
                if n:
                    detail.append(f"{label}  ", colour)
            if index == total - 1:
                detail.append_text(safe("\n" + self._stats_line(result), "bright_black"))
        title.update(head)
        body.update(detail)

    @staticmethod
    def _stats_line(result: CompactionResult[Stats]) -> str:
        parts = [f"{k}={v}" for k, v in highlights(result.stats).items()]
        return "stats: " + (", ".join(parts) if parts else "nothing to do")

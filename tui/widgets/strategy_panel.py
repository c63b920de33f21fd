"""The strategy panel: pick a strategy, edit its options (validated as you type), and
read the step being shown: its explanation, token delta and pressure before → after."""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.message import Message as TextualMessage
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static

from compaction_inspector.core.strategies import STRATEGIES, CompactionResult, OptionError
from compaction_inspector.core.text import one_line

LABELS = {
    "trim": "Trim",
    "ptl-retry": "PTL retry",
    "hysteresis": "Hysteresis",
    "microcompact": "Microcompact",
}
ORDER = ("trim", "ptl-retry", "hysteresis", "microcompact")

# The editable options of each strategy: (field, label, kind) with kind int, int?, str?, bool, list
FIELDS: dict[str, list[tuple[str, str, str]]] = {
    "trim": [
        ("keep_recent_turns", "keep recent turns", "int"),
        ("trigger_turns", "trigger turns", "int?"),
        ("trigger_tokens", "trigger tokens", "int?"),
        ("turn", "turn (default next)", "int?"),
        ("keep_initial_user", "keep initial user", "bool"),
    ],
    "ptl-retry": [
        ("limit", "limit (default window)", "int?"),
        ("summary_prompt_tokens", "summary prompt tok", "int"),
        ("error_text", "provider error text", "str?"),
    ],
    "hysteresis": [
        ("thresholds", "thresholds %", "list"),
        ("target", "target %", "int"),
        ("summary_chars", "summary chars", "int"),
        ("protect_volleys", "protect volleys", "int"),
        ("stage", "stage", "stage"),
    ],
    "microcompact": [
        ("keep_recent", "keep recent", "int"),
        ("idle_gap_minutes", "idle gap minutes", "int?"),
    ],
}


def _text(value: Any, kind: str) -> str:
    if value is None:
        return ""
    if kind == "list":
        return ",".join(map(str, value))
    return str(value)


def _parse(raw: str, kind: str) -> Any:
    raw = raw.strip()
    if kind in ("int?", "str?") and not raw:
        return None
    if kind in ("int", "int?"):
        if not raw.lstrip("-").isdigit():
            raise OptionError(f"a whole number, not {raw!r}")
        return int(raw)
    if kind == "list":
        try:
            return tuple(int(x) for x in raw.split(","))
        except ValueError:
            raise OptionError(f"three whole percents like 75,85,95, not {raw!r}") from None
    return raw


class StrategyPanel(Vertical):
    class Changed(TextualMessage):
        """The strategy or a valid set of its options was chosen."""

        def __init__(self, strategy: str, options: Any) -> None:
            super().__init__()
            self.strategy = strategy
            self.options = options

    def __init__(self, strategy: str, options: dict[str, Any], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.strategy = strategy
        self.options = dict(options)  # strategy name -> options object

    def compose(self) -> ComposeResult:
        yield Select(
            [(LABELS[n], n) for n in ORDER],
            value=self.strategy,
            allow_blank=False,
            id="strategy-select",
            compact=True,
        )
        yield Grid(id="options")
        yield Label("", id="options-error")
        yield Static("", id="step-title")
        yield Static("", id="step-body")

    async def on_mount(self) -> None:
        await self._build_form()

    async def _build_form(self) -> None:
        grid = self.query_one("#options", Grid)
        await grid.remove_children()
        opts = self.options[self.strategy]
        widgets: list[Widget] = []
        for name, label, kind in FIELDS[self.strategy]:
            value = getattr(opts, name)
            if kind == "bool":
                widgets.append(Checkbox(label, value=bool(value), id=f"opt-{name}", compact=True))
                widgets.append(Static(""))
            elif kind == "stage":
                widgets.append(Label(label))
                widgets.append(
                    Select(
                        [("preflight", "preflight"), ("post-turn", "post-turn")],
                        value=value,
                        allow_blank=False,
                        id=f"opt-{name}",
                        compact=True,
                    )
                )
            else:
                widgets.append(Label(label))
                widgets.append(Input(_text(value, kind), id=f"opt-{name}", compact=True))
        await grid.mount_all(widgets)
        self.query_one("#options-error", Label).update("")

    async def set_strategy(self, strategy: str) -> None:
        if strategy != self.strategy:
            self.strategy = strategy
            self.query_one("#strategy-select", Select).value = strategy
            await self._build_form()

    async def set_options(self, strategy: str, options: Any) -> None:
        """Options changed elsewhere (tuning keys, a preset): show them in the form."""
        self.options[strategy] = options
        if strategy == self.strategy:
            for name, _, kind in FIELDS[strategy]:
                widget = self.query_one(f"#opt-{name}")
                value = getattr(options, name)
                if isinstance(widget, Input):
                    text = _text(value, kind)
                    if widget.value != text:
                        widget.value = text

    async def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "strategy-select" and event.value != self.strategy:
            self.strategy = str(event.value)
            await self._build_form()
            self.post_message(self.Changed(self.strategy, self.options[self.strategy]))
        elif event.select.id == "opt-stage":
            self._apply("stage", event.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        name = (event.input.id or "").removeprefix("opt-")
        kind = next((k for n, _, k in FIELDS[self.strategy] if n == name), "str?")
        try:
            self._apply(name, _parse(event.value, kind))
            event.input.remove_class("invalid")
        except OptionError as exc:
            event.input.add_class("invalid")
            self.query_one("#options-error", Label).update(Text(f"{name}: {exc}", style="red"))

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._apply((event.checkbox.id or "").removeprefix("opt-"), event.value)

    def _apply(self, name: str, value: Any) -> None:
        current = self.options[self.strategy]
        if getattr(current, name) == value:
            return
        try:
            updated = dataclasses.replace(current, **{name: value})
        except (OptionError, TypeError, ValueError) as exc:
            raise OptionError(str(exc)) from exc
        self.options[self.strategy] = updated
        self.query_one("#options-error", Label).update("")
        self.post_message(self.Changed(self.strategy, updated))

    def show_step(self, result: CompactionResult | None, index: int, running: bool = False) -> None:
        title = self.query_one("#step-title", Static)
        body = self.query_one("#step-body", Static)
        if running or result is None:
            title.update(Text("Running…" if running else "", style="italic"))
            body.update("")
            return
        total = len(result.steps)
        head = Text()
        if index < 0:
            head.append(f"Before · {total} step{'s' if total != 1 else ''} ahead", "bold")
            head.append("  (n next · e end)", "bright_black")
            detail = Text(self._stats_line(result), style="bright_black")
        else:
            step = result.steps[index]
            head.append(f"Step {index + 1}/{total} · ", "bold")
            head.append(one_line(step.title, 60), "bold yellow")
            d = step.diff
            detail = Text(step.explanation + "\n")
            detail.append(
                f"tokens {d.tokens_before:,} → {d.tokens_after:,} ({d.token_delta:+,})\n"
                f"pressure {step.pressure_before:.1%} → {step.pressure_after:.1%}\n",
                "bold",
            )
            counts = [
                (len(d.dropped), "dropped", "red"),
                (len({a for _, a in d.summarized}), "summaries", "yellow"),
                (len(d.summarized), "summarized", "yellow"),
                (len(d.edited), "edited", "blue"),
                (len(d.inserted), "inserted", "green"),
            ]
            for n, label, colour in counts:
                if n:
                    detail.append(f"{n} {label}  ", colour)
            if index == total - 1:
                detail.append("\n" + self._stats_line(result), "bright_black")
        title.update(head)
        body.update(detail)

    @staticmethod
    def _stats_line(result: CompactionResult) -> str:
        keep = (
            "reason",
            "outcome",
            "tier",
            "triggered",
            "volleys_summarized",
            "results_cleared",
            "over_budget",
            "over_budget?",
            "error",
        )
        parts = [
            f"{k}={result.stats[k]}"
            for k in keep
            if k in result.stats and result.stats[k] not in (None, False, 0)
        ]
        return "stats: " + (", ".join(parts) if parts else "nothing to do")


__all__ = ["FIELDS", "LABELS", "ORDER", "STRATEGIES", "StrategyPanel"]

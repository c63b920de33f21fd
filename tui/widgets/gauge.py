"""The pressure gauge: the context against the window, where the figure comes from, and
every mark that matters."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget

from compaction_inspector.core.context_model import Reading


@dataclass(frozen=True)
class Fit:
    """What the context model rests on, for the gauge's last line."""

    scale: float
    pairs: int  # consecutive responses the scale was fitted on
    responses: int
    error: float | None  # median next-response error
    overhead_source: str


@dataclass(frozen=True)
class GaugeState:
    tokens: int
    context_window: int
    reserved_output: int
    thresholds: tuple[int, ...] = (75, 85, 95)
    target: int = 70
    auto_compact: int | None = None
    label: str = "cl100k_base"
    estimate: bool = False  # counts are the chars/4 estimate
    caption: str = ""
    reading: Reading | None = None  # where the live context's figure comes from; None: messages only
    fit: Fit | None = None
    step_note: str = ""  # how a shown step's figure follows from the reading

    @property
    def usable(self) -> int:
        return self.context_window - self.reserved_output

    @property
    def pressure(self) -> float:
        return self.tokens / self.usable if self.usable else 0.0


def provenance(s: GaugeState) -> Text:
    """Where the figure comes from: measured, estimated from what, or messages only."""
    line = Text(no_wrap=True, overflow="ellipsis")
    r = s.reading
    if s.step_note:
        line.append(s.step_note, "italic")
    elif r is None:
        line.append("messages only (--pressure messages): the transcript's messages, counted", "yellow")
    elif r.response is not None:
        line.append(f"measured {r.response.prompt_tokens:,}", "bold cyan")
        line.append(f" at response {r.response.number}")
        if r.output_tokens:
            line.append(f" + {r.output_tokens:,} output")
        if r.estimated_since:
            line.append(f" + ~{r.estimated_since:,} estimated since", "yellow")
    else:
        line.append(f"estimated: ~{r.overhead:,} overhead", "yellow")
        line.append(f" ({s.fit.overhead_source if s.fit else 'preset'})")
        line.append(f" + ~{r.estimated_since:,} for the messages (the transcript reports no usage)")
    return line


def breakdown(s: GaugeState) -> Text:
    """What the live context holds, and what the model's fit rests on."""
    line = Text(no_wrap=True, overflow="ellipsis", style="bright_black")
    r, fit = s.reading, s.fit
    if r is None or fit is None:
        return line
    line.append(f"outside the messages {r.overhead:,} (system prompt, tools)")
    line.append(f" · messages {r.messages:,}")
    if r.attachments:
        line.append(f" · attachments {r.attachments:,}")
    if fit.pairs:
        line.append(f" · ×{fit.scale:.2f} per counted token, fitted on {fit.pairs} response pairs")
    else:
        line.append(" · ×1 per counted token (too few responses to fit)")
    if fit.error is not None:
        line.append(f" · next-response error {fit.error:.2%}")
    return line


class PressureGauge(Widget):
    """Renders a `GaugeState`; set `state` to move it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: GaugeState | None = None

    def update_state(self, state: GaugeState) -> None:
        self.state = state
        self.refresh()

    def render(self) -> RenderableType:
        s = self.state
        if s is None:
            return Text("Pressure: counting…", style="dim")
        width = max(20, self.size.width - 2)
        scale = s.context_window / width

        def column(tokens: float) -> int:
            return max(0, min(width - 1, int(tokens / scale)))

        fill = column(s.tokens) if s.tokens else -1
        usable_end = column(s.usable)
        colour = (
            "green"
            if s.pressure < s.thresholds[0] / 100
            else "yellow"
            if s.pressure < s.thresholds[-1] / 100
            else "red"
        )
        marks: dict[int, tuple[str, str]] = {column(s.usable * s.target / 100): ("┆", "cyan")}
        for t in s.thresholds:
            marks[column(s.usable * t / 100)] = ("│", "bold white")
        if s.auto_compact:
            marks[column(s.auto_compact)] = ("▼", "bold magenta")
        bar = Text()
        for x in range(width):
            # Threshold marks hide under the fill; the auto-compact point never does.
            if x in marks and (x > fill or marks[x][0] == "▼"):
                char, style = marks[x]
                bar.append(char, style)
            elif x <= fill:
                bar.append("█", colour if x < usable_end else "bold red")
            elif x >= usable_end:
                bar.append("▒", "bright_black")
            else:
                bar.append("░", "bright_black")
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(f"Pressure {s.pressure:.1%}", f"bold {colour}")
        head.append(f"  {max(0.0, 1 - s.pressure):.1%} left", "bold")
        head.append(f"  {s.tokens:,} / {s.usable:,} usable tokens", "")
        counting = "chars/4 estimate" if s.estimate else s.label
        head.append(f"  ({counting})", "yellow" if s.estimate else "bright_black")
        legend = Text(no_wrap=True, overflow="ellipsis")
        legend.append(f"┆ target {s.target}%  ", "cyan")
        legend.append("│ " + "/".join(map(str, s.thresholds)) + "%  ", "bold white")
        if s.auto_compact:
            legend.append(f"▼ auto-compact {s.auto_compact:,}  ", "bold magenta")
        legend.append(f"▒ reserved output {s.reserved_output:,}", "bright_black")
        if s.caption:
            legend.append(f"  · {s.caption}", "italic")
        shown = Text("\n").join([head, bar, provenance(s), breakdown(s), legend])
        shown.no_wrap, shown.overflow = True, "ellipsis"  # one row each, cut at the width
        return shown

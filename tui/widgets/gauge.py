"""The pressure gauge: the context against the window, where the figure comes from, and
every mark that matters."""

from __future__ import annotations

import sys

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget

from compaction_inspector.core.measuring.context_model import Reading
from compaction_inspector.core.model import immutable
from compaction_inspector.tui.text import safe, whole_parts, within


@immutable()
class GaugeState:
    tokens: int
    context_window: int
    reserved_output: int
    thresholds: tuple[int, ...] = (75, 85, 95)
    target: int = 70
    bands_of: str = ""  # the strategy whose bands these are, when the one shown draws none: none drawn
    auto_compact: int | None = None
    auto_compact_rule: str = ""  # why the point sits where it does
    label: str = "cl100k_base"
    estimate: bool = False  # counts are the chars/4 estimate
    caption: str = ""
    reading: Reading | None = None  # where the live context's figure comes from; None: messages only
    fit: str = ""  # what the context model's scale rests on
    step_note: str = ""  # how a shown step's figure follows from the reading
    agent_count: str = ""  # what the agent counted against its point, and its parts

    @property
    def usable(self) -> int:
        return self.context_window - self.reserved_output

    @property
    def pressure(self) -> float:
        return self.tokens / self.usable if self.usable else 0.0


def provenance(s: GaugeState) -> Text:
    """Where the figure comes from: measured, estimated from what, or messages only."""
    r = s.reading
    if s.step_note:
        return safe(s.step_note, "italic")
    if r is None:
        return Text("messages only (--pressure messages): the transcript's messages, counted", "yellow")
    return safe(r.provenance(), "cyan" if r.source == "measured" else "yellow")


def breakdown(s: GaugeState) -> Text:
    """What the live context holds, and what the model's fit rests on."""
    if s.reading is None:
        return Text()
    return safe(f"{s.reading.holds()} · {s.fit}", "bright_black")


class PressureGauge(Widget):
    """Renders a `GaugeState`; set `state` to move it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: GaugeState | None = None

    def update_state(self, state: GaugeState) -> None:
        self.state = state
        self.set_class(bool(state.agent_count), "-counted")  # a row more, laid out by the stylesheet
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
        marks: dict[int, tuple[str, str]] = {}
        if not s.bands_of:  # another strategy's marks would read as the shown one's
            marks[column(s.usable * s.target / 100)] = ("┆", "cyan")
            for t in s.thresholds:
                marks[column(s.usable * t / 100)] = ("│", "bold white")
        if s.auto_compact:
            marks[column(s.auto_compact)] = ("▼", "bold magenta")
        bar = Text()
        for x in range(width):
            # Marks stay visible under the fill too, drawn on its colour.
            if x in marks:
                char, style = marks[x]
                bar.append(char, f"{style} on {colour}" if x <= fill and char != "▼" else style)
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
        parts: list[tuple[Text, int]] = []
        if not s.bands_of:
            parts.append((Text(f"┆ target {s.target}%", "cyan"), 0))
            parts.append((Text("│ " + "/".join(map(str, s.thresholds)) + "%", "bold white"), 0))
        if s.auto_compact:
            parts.append((Text(f"▼ auto-compact {s.auto_compact:,}", "bold magenta"), 0))
        parts.append((Text(f"▒ reserved output {s.reserved_output:,}", "bright_black"), 1))
        if s.auto_compact_rule:
            parts.append((safe(f"▼ {s.auto_compact_rule}", "magenta"), 3))
        if s.caption:
            parts.append((safe(s.caption, "italic"), 2))
        # a line of parts shows the parts that fit whole, never one cut mid-figure (unmounted: all)
        room = self.content_size.width or sys.maxsize
        legend = within(parts, room, "  ")
        lines = [head, bar, whole_parts(provenance(s), room), whole_parts(breakdown(s), room), legend]
        if s.agent_count:
            lines.append(whole_parts(safe(f"▼ {s.agent_count}", "magenta"), room))
        return Text("\n").join(lines)

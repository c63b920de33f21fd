"""The simulate() pressure curve over API rounds, redrawn whenever a threshold changes.

Columns are rounds (bucketed to the width, each bucket showing its peak); the main
policy is drawn as bars, a compared policy as a line of dots, and ◆ is the prompt the
transcript reports for a request (what the agent really sent); threshold and target
rows are ruled and labelled, other rows carry even ticks; under the chart, ✂ marks a
compaction by the policy and ⚑ one the transcript records, then the round numbers.
Focused, ← → move a cursor over the rounds a round at a time (shift or page keys: a
column at a time; its figures on the last line) and enter moves the transcript to that
round.
"""

from __future__ import annotations

import math

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from compaction_inspector.core.pricing.cost import Cost, signed
from compaction_inspector.core.replaying.simulation import AS_IT_RAN, RoundPoint, Simulation
from compaction_inspector.tui.text import at_word, safe, within

EIGHTHS = " ▁▂▃▄▅▆▇█"


class Timeline(Widget, can_focus=True):
    DEFAULT_CSS = "Timeline { height: 1fr; min-height: 8; }"
    BINDINGS = [
        Binding("left", "move(-1)", "Earlier round", show=False, id="timeline.left"),
        Binding("right", "move(1)", "Later round", show=False, id="timeline.right"),
        # a long session has thousands of rounds a column: a column at a time
        Binding("shift+left,pageup", "move_column(-1)", "Earlier column", show=False, id="timeline.back"),
        Binding("shift+right,pagedown", "move_column(1)", "Later column", show=False, id="timeline.on"),
        Binding("home", "move(-1_000_000)", "First round", show=False, id="timeline.first"),
        Binding("end", "move(1_000_000)", "Last round", show=False, id="timeline.last"),
        Binding("enter", "jump", "Show the round in the transcript", show=False, id="timeline.jump"),
    ]

    class Jump(Message):
        """Show the transcript at the request that ends before `message_end`."""

        def __init__(self, message_end: int) -> None:
            super().__init__()
            self.message_end = message_end

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.main: Simulation | None = None
        self.other: Simulation | None = None
        self.thresholds: tuple[int, ...] = (75, 85, 95)
        self.target = 70
        self.drawn = True  # the rules of the thresholds and target: only the shown strategy's own
        self.message = "Simulating…"
        self.costs: tuple[Cost | None, Cost | None, Cost | None] = (None, None, None)  # main, other, real
        self.cursor: int | None = None  # a point of the main replay, once the cursor moved

    def show(
        self,
        main: Simulation | None,
        other: Simulation | None,
        thresholds: tuple[int, ...],
        target: int,
        drawn: bool = True,
    ) -> None:
        """The replays to draw, and the bands they are coloured by; `drawn`: their rules
        and labels too (False: the bands are not the shown strategy's, so none is drawn)."""
        self.main, self.other, self.thresholds, self.target = main, other, thresholds, target
        self.drawn = drawn
        self.costs = (None, None, None)  # priced after, each replayed whole
        if main is None or self.cursor is None or self.cursor >= len(main.points):
            self.cursor = None
        self.refresh()

    def priced(self, main: Cost, other: Cost | None, real: Cost) -> None:
        """What the replays shown would have cost, and the session did: in the legend."""
        self.costs = (main, other, real)
        self.refresh()

    def action_move(self, by: int) -> None:
        if self.main is None or not self.main.points:
            return
        last = len(self.main.points) - 1
        start = last if self.cursor is None else self.cursor
        self.cursor = max(0, min(last, start + by))  # a round a key, however many a column holds
        self.refresh()

    def action_move_column(self, by: int) -> None:
        self.action_move(by * self._per())

    def enter_cursor(self) -> None:
        """Focused, the cursor on the last round."""
        self.focus()
        self.action_move(0)

    def leave_cursor(self) -> None:
        """Out of the cursor mode: the last line says what the marks mean again."""
        self.cursor = None
        self.refresh()

    def action_jump(self) -> None:
        if self.main is not None and self.cursor is not None:
            self.post_message(self.Jump(self.main.points[self.cursor].message_end))

    def _per(self) -> int:
        """Points a column holds."""
        return max(1, -(-len(self.main.points) // self._width())) if self.main else 1

    def _width(self) -> int:
        return max(10, self.size.width - 7)

    @staticmethod
    def _buckets(sim: Simulation, per: int) -> list[float]:
        values = [p.pressure_after for p in sim.points]
        return [max(values[i : i + per]) for i in range(0, len(values), per)]

    @staticmethod
    def _marks(sim: Simulation, per: int) -> tuple[dict[int, float], dict[int, float]]:
        """Per column, the peak reported prompt and the context a transcript's own
        compaction recorded, as pressures."""
        usable = sim.usable_window
        reported: dict[int, float] = {}
        recorded: dict[int, float] = {}
        for k, p in enumerate(sim.points):
            if p.reported is not None:
                reported[k // per] = max(reported.get(k // per, 0.0), p.reported / usable)
            if p.event and p.event.recorded_tokens is not None:
                recorded[k // per] = p.event.recorded_tokens / usable
        return reported, recorded

    def _labels(self, height: int, top: float) -> dict[int, tuple[str, str]]:
        """Each row's label: a threshold or the target on the row that holds it, in its
        own style; else an even tick (every 25 %, or 50 % on a short chart) on its row."""
        labels: dict[int, tuple[str, str]] = {}
        marks = [(t, "bold white") for t in self.thresholds] + [(self.target, "cyan")] if self.drawn else []
        for value, style in sorted(marks, reverse=True):
            labels.setdefault(max(1, math.ceil(value / 100 / top * height)), (f"{value:>4}%", style))
        step = 25 if height >= 8 else 50
        for value in range(step, int(top * 100) + 1, step):
            row = max(1, math.ceil(value / 100 / top * height))
            if row not in labels and all(abs(row - r) > 1 for r in labels if labels[r][1] == "bright_black"):
                labels[row] = (f"{value:>4}%", "bright_black")
        return labels

    def render(self) -> RenderableType:
        if self.main is None or not self.main.points:
            return Text(self.message, style="dim")
        per = self._per()
        main = self._buckets(self.main, per)
        other = self._buckets(self.other, per) if self.other else []
        reported, recorded = self._marks(self.main, per)
        top = max(1.0, *main, *(other or [0.0]), *reported.values(), *recorded.values())
        # Under the chart, in the order shown: the events, the round numbers, the legend.
        # A short timeline keeps at least 3 rows of chart and drops the lines that matter
        # least: the round numbers, what the marks mean, the events, the compared policy's
        # totals, then (when the cursor is on a round) the main policy's.
        events, rounds = self._events(len(main), per), self._rounds(len(main), per)
        legend = self._legend(reported, recorded)
        below = [events, rounds, *legend]
        policies, last = legend[:-1], legend[-1]
        order = [rounds, *([] if self.cursor is not None else [last]), events, *reversed(policies)]
        for least in order:
            if self.size.height - len(below) >= 3 or len(below) == 1:
                break
            below.remove(least)
        height = max(3, self.size.height - len(below))
        labels = self._labels(height, top)
        rules = {row for row, (_, style) in labels.items() if style != "bright_black"}
        column = self.cursor // per if self.cursor is not None else None
        lines = []
        for row in range(height, 0, -1):
            label, style = labels.get(row, ("", "bright_black"))
            line = Text(f"{label:>5} ", style=style if row in rules else "bright_black")
            for x in range(len(main)):
                level = main[x] / top * height
                o = other[x] / top * height if x < len(other) else None
                r = reported.get(x)
                flag = recorded.get(x)
                if flag is not None and row - 1 < flag / top * height <= row:
                    line.append("⚑", "bold yellow")
                elif r is not None and row - 1 < r / top * height <= row:
                    line.append("◆", "bold cyan")
                elif o is not None and row - 1 < o <= row:
                    line.append("●", "bold bright_magenta")
                elif level >= row:
                    line.append("█", self._colour(main[x]))
                elif level > row - 1:
                    line.append(EIGHTHS[int((level - row + 1) * 8)], self._colour(main[x]))
                elif row in rules:
                    line.append("┄", labels[row][1])
                else:
                    line.append(" ")
                if x == column:
                    line.stylize("reverse", len(line) - 1)
            lines.append(line)
        return Text("\n").join([*lines, *below])

    def _events(self, columns: int, per: int) -> Text:
        """Under the chart: ✂ the policy's compactions, ⚑ the transcript's own."""
        assert self.main is not None
        events: dict[int, str] = {}
        for k, p in enumerate(self.main.points):
            if p.event:
                events[k // per] = "⚑" if p.event.source == "transcript" else "✂"
        axis = Text("      ")
        for x in range(columns):
            axis.append(
                events.get(x, "┬" if x % 10 == 0 else "─"), "yellow" if x in events else "bright_black"
            )
        return axis

    def _rounds(self, columns: int, per: int) -> Text:
        """The round each tenth column starts at."""
        assert self.main is not None
        text = "round "
        for x in range(0, columns, 10):
            number = str(self.main.points[x * per].round)
            text = text.ljust(6 + x) + number
        return Text(text[: 6 + columns], style="bright_black")

    def _legend(self, reported: dict[int, float], recorded: dict[int, float]) -> list[Text]:
        """A line a policy, each with its totals; the cursor's round, or what the marks mean."""
        assert self.main is not None
        main, other, real = self.costs
        width = self.content_size.width  # inside its padding
        lines = [self._policy_line("█", self.main, "bold", main, real, width)]
        if self.other is not None:
            lines.append(self._policy_line("●", self.other, "bold bright_magenta", other, real, width))
        if self.cursor is not None:
            lines.append(self._point_line(self.main.points[self.cursor], width))
        else:
            parts: list[tuple[Text, int]] = []
            if reported:
                parts.append((Text("◆ reported", "cyan"), 1))
            if recorded:
                parts.append((Text("⚑ its own compaction", "yellow"), 1))
            parts.append((Text(f"{self.main.totals.rounds} rounds", "bright_black"), 0))
            parts.append((Text("focus and ← → for a round", "bright_black"), 2))
            lines.append(within(parts, width, "   "))
        return lines

    @staticmethod
    def _policy_line(
        mark: str, sim: Simulation, style: str, cost: Cost | None, real: Cost | None, width: int
    ) -> Text:
        """A policy by its short name and its totals: compactions (✂), peak, what it would
        have cost against the real cost once priced, tokens removed; as many as fit in
        `width` whole (the name, compactions and cost first)."""
        t = sim.totals

        def line(short: bool) -> Text:
            """`short`: without how many fall at ⚑ and the change in cost, where the rest
            would not fit whole."""
            head = Text(f"{mark} {sim.policy.strategy or AS_IT_RAN}: ", style)
            head.append(f"{t.compactions} ✂")
            if t.transcript_compactions and sim.policy.strategy and not short:
                head.append(f" ({t.at_agent_compactions} at ⚑)")
            parts: list[tuple[Text, int]] = [(head, 0)]
            parts.append((Text(f"peak {t.peak_pressure:.0%}"), 2))
            if t.rounds_exceeding_window:
                parts.append((Text(f"{t.rounds_exceeding_window} over the window", "red"), 1))
            if cost is not None:
                change = f" ({signed(cost.total - real.total)})" if real is not None and real.priced else ""
                parts.append((Text(f"{cost.usd()}{change if cost.priced and not short else ''}"), 0))
            parts.append((Text(f"−{t.tokens_removed:,} tokens"), 3))
            return within(parts, width)

        full = line(short=False)
        return line(short=True) if full.plain.endswith("…") else full

    @staticmethod
    def _point_line(p: RoundPoint, width: int) -> Text:
        """The cursor's round in one line of `width`: its figures whole, what happened
        there cut to fit, the hint only where it fits."""
        line = Text(f"round {p.round}: ", "bold reverse")
        line.append(f"{p.tokens_before:,} → {p.tokens_after:,} ({p.pressure_after:.1%})")
        if p.reported is not None:
            line.append(f" · reported {p.reported:,}", "cyan")
        if p.event is not None:
            line.append(f" · {'⚑' if p.event.source == 'transcript' else '✂'} ", "yellow")
            line.append_text(safe(p.event.description, "yellow"))
        repaired = " · repaired"  # its tool pairing, as the agent sent it: whole or not at all
        if p.repaired and line.cell_len + len(repaired) <= width:
            line.append(repaired, "bright_black")
        hint = " · enter: show it"
        if line.cell_len + len(hint) <= width:
            line.append(hint, "bright_black")
        return at_word(line, width)

    def _colour(self, pressure: float) -> str:
        if pressure < self.thresholds[0] / 100:
            return "green"
        return "yellow" if pressure < self.thresholds[-1] / 100 else "red"

"""The simulate() pressure curve over API rounds, redrawn whenever a threshold changes.

Columns are rounds (bucketed to the width, each bucket showing its peak); the main
policy is drawn as bars, a compared policy as dots, and ◆ is the prompt the transcript
reports for a request (what the agent really sent); threshold and target rows are
ruled; ✂ marks a compaction by the policy and ⚑ one the transcript records, drawn at
the context it recorded before it when it did.
"""

from __future__ import annotations

import math

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget

from compaction_inspector.core.simulate import Simulation

EIGHTHS = " ▁▂▃▄▅▆▇█"


class Timeline(Widget):
    DEFAULT_CSS = "Timeline { height: 1fr; min-height: 8; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.main: Simulation | None = None
        self.other: Simulation | None = None
        self.thresholds: tuple[int, ...] = (75, 85, 95)
        self.target = 70
        self.message = "Simulating…"

    def show(
        self, main: Simulation | None, other: Simulation | None, thresholds: tuple[int, ...], target: int
    ) -> None:
        self.main, self.other, self.thresholds, self.target = main, other, thresholds, target
        self.refresh()

    @staticmethod
    def _buckets(sim: Simulation, width: int) -> list[float]:
        values = [p.pressure_after for p in sim.points]
        if not values:
            return []
        per = max(1, -(-len(values) // width))
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

    def render(self) -> RenderableType:
        if self.main is None or not self.main.points:
            return Text(self.message, style="dim")
        width = max(10, self.size.width - 7)
        height = max(3, self.size.height - 3)
        main = self._buckets(self.main, width)
        other = self._buckets(self.other, width) if self.other else []
        per = max(1, -(-len(self.main.points) // width))
        reported, recorded = self._marks(self.main, per)
        top = max(1.0, *main, *(other or [0.0]), *reported.values(), *recorded.values())
        events = {}
        for k, p in enumerate(self.main.points):
            if p.event:
                events[k // per] = "⚑" if p.event.source == "transcript" else "✂"
        # a line on the row nearest each threshold and the target, labelled with its own value
        # Each line on the row whose range holds its value, labelled with that value; of two
        # in one row (a short chart) the higher is drawn, never one a row off.
        rules: dict[int, tuple[int, str]] = {}
        marks = [(t, "bold white") for t in self.thresholds] + [(self.target, "cyan")]
        for value, style in sorted(marks, reverse=True):
            rules.setdefault(max(1, math.ceil(value / 100 / top * height)), (value, style))
        lines = []
        for row in range(height, 0, -1):
            label = f"{rules[row][0]:>4}%" if row in rules else f"{row / height * top:>5.0%}"
            line = Text(label + " ", style="bright_black")
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
                    line.append("•", "bold magenta")
                elif level >= row:
                    line.append("█", self._colour(main[x]))
                elif level > row - 1:
                    line.append(EIGHTHS[int((level - row + 1) * 8)], self._colour(main[x]))
                elif row in rules:
                    line.append("┄", rules[row][1])
                else:
                    line.append(" ")
            lines.append(line)
        axis = Text("      ")
        for x in range(len(main)):
            axis.append(
                events.get(x, "·" if x % 10 == 0 else " "), "yellow" if x in events else "bright_black"
            )
        lines.append(axis)
        totals = self.main.totals
        legend = Text(
            f"█ {self.main.policy.label}: {totals.compactions} compaction(s), "
            f"peak {totals.peak_pressure:.0%}",
            "bold",
        )
        if self.other:
            others = self.other.totals
            legend.append(
                f"   • {self.other.policy.label}: {others.compactions}, peak {others.peak_pressure:.0%}",
                "magenta",
            )
        if reported:
            legend.append("   ◆ reported", "cyan")
        if recorded:
            legend.append("   ⚑ its own compaction", "yellow")
        sampled = f", every {self.main.every}" if self.main.every > 1 else ""
        legend.append(f"   {self.main.totals.rounds} rounds{sampled}", "bright_black")
        lines.append(legend)
        return Text("\n").join(lines)

    def _colour(self, pressure: float) -> str:
        if pressure < self.thresholds[0] / 100:
            return "green"
        return "yellow" if pressure < self.thresholds[-1] / 100 else "red"

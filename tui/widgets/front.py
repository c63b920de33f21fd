"""A sweep's points on real axes: one count against another (`AXES`), each point a
glyph, the front's ★, the current setting C, the default D, the chosen one ◉."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from compaction_inspector.core.sweeping.points import GridPoint, ticks
from compaction_inspector.tui.text import safe

# an axis: its name, a point's figure on it (None: it has none), the figure as a tick
# shows it, whether its figures are whole numbers
Axis = tuple[str, Callable[[GridPoint], float | None], Callable[[float], str], bool]
X_AXES: tuple[Axis, ...] = (
    ("compactions", lambda p: float(p.compactions), lambda v: f"{v:,.0f}", True),
    ("cost", lambda p: float(p.cost), lambda v: f"${v:,.2f}", False),
)
Y_AXES: tuple[Axis, ...] = (
    ("rounds over the window", lambda p: float(p.rounds_over), lambda v: f"{v:,.0f}", True),
    ("kept of what was removed", lambda p: p.retention, lambda v: f"{v:.0%}", False),
)
TICK_WIDTH = 9  # the y ticks' column


def glyph(p: GridPoint, chosen: bool) -> tuple[str, str]:
    """A point's mark and style: the chosen one first, then the current setting, the
    default, the front, the rest."""
    if chosen:
        return "◉", "bold reverse"
    if "current" in p.marks:
        return "C", "bold cyan"
    if "default" in p.marks:
        return "D", "bold magenta"
    return ("★", "bold yellow") if p.on_front else ("·", "dim")


def plotted(
    points: Sequence[GridPoint], x: Axis, y: Axis, width: int, height: int, chosen: int | None
) -> Text:
    """The points on a canvas `width` by `height` cells, its ticks the real figures at
    each end and the middle. Where two fall on one cell, the mark drawn last in
    `glyph`'s order gives way."""
    placed = [(n, x[1](p), y[1](p)) for n, p in enumerate(points)]
    shown = [(n, a, b) for n, a, b in placed if a is not None and b is not None]
    cols, rows = max(4, width - TICK_WIDTH - 1), max(3, height - 3)
    if not shown:
        return safe("No point has figures on these axes.", "dim")
    xs, ys = [a for _, a, _ in shown], [b for _, _, b in shown]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    def at(value: float, low: float, high: float, cells: int) -> int:
        """The cell of `value`; every point in the middle where all have the same figure."""
        return cells // 2 if high == low else round((value - low) / (high - low) * (cells - 1))

    canvas: list[list[tuple[str, str]]] = [[(" ", "")] * cols for _ in range(rows)]
    rank = {"◉": 5, "C": 4, "D": 3, "★": 2, "·": 1, " ": 0}
    for n, a, b in shown:
        col, row = at(a, x0, x1, cols), rows - 1 - at(b, y0, y1, rows)
        mark = glyph(points[n], n == chosen)
        if rank[mark[0]] > rank[canvas[row][col][0]]:
            canvas[row][col] = mark
    out = Text()
    out.append(f"{y[0]}\n", style="bold")
    marked = {rows - 1 - at(v, y0, y1, rows): v for v in ticks(y0, y1, y[3])}
    for r, line in enumerate(canvas):
        label = y[2](marked[r]) if r in marked else ""
        out.append(f"{label:>{TICK_WIDTH}}│", style="dim")
        for ch, style in line:
            out.append(ch, style=style)
        out.append("\n")
    out.append(" " * TICK_WIDTH + "└" + "─" * cols + "\n", style="dim")
    axis = [" "] * cols
    for v in ticks(x0, x1, x[3]):  # each under its cell, kept inside the axis, none over another
        label, col = x[2](v), at(v, x0, x1, cols)
        start = min(max(0, col - len(label) // 2), cols - len(label))
        if start >= 0 and all(c == " " for c in axis[max(0, start - 1) : start + len(label) + 1]):
            axis[start : start + len(label)] = label
    out.append(" " * (TICK_WIDTH + 1) + "".join(axis).rstrip() + f"  {x[0]}", style="dim")
    return out


class FrontPlot(Widget):
    """The plot of `points`; its axes and the chosen point are reactives the sweep screen binds."""

    points: reactive[tuple[GridPoint, ...]] = reactive(())
    x_axis: reactive[int] = reactive(0)
    y_axis: reactive[int] = reactive(0)
    chosen: reactive[int | None] = reactive(None)

    def render(self) -> Text:
        if not self.points:
            return safe("The front is drawn when the sweep is done.", "dim")
        size = self.content_size
        return plotted(
            self.points, X_AXES[self.x_axis], Y_AXES[self.y_axis], size.width, size.height, self.chosen
        )

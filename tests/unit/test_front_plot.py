"""The sweep's plot: points on real axes, ticks of real figures, marks by precedence."""

from __future__ import annotations

from decimal import Decimal

from compaction_inspector.core.sweeping.points import GridPoint
from compaction_inspector.tui.widgets.front import X_AXES, Y_AXES, plotted


def point(compactions: int, over: int, *marks: str, front: bool = True) -> GridPoint:
    return GridPoint({"x": compactions}, list(marks), compactions=compactions, rounds_over=over,
                 cost=Decimal(compactions), on_front=front)  # fmt: skip


def test_points_fall_on_their_figures_with_the_ends_and_middle_ticked() -> None:
    found = [point(0, 4), point(10, 0, "current"), point(5, 2, front=False)]
    drawn = plotted(found, X_AXES[0], Y_AXES[0], width=30, height=8, chosen=None).plain
    assert drawn.splitlines() == [
        "rounds over the window",
        "        4│★                   ",
        "         │                    ",
        "        2│          ·         ",
        "         │                    ",
        "        0│                   C",
        "         └────────────────────",
        "          0         5       10  compactions",
    ]


def test_the_chosen_point_is_drawn_over_the_others_and_one_figure_is_ticked_once() -> None:
    found = [point(3, 1, "default"), point(3, 1)]
    drawn = plotted(found, X_AXES[0], Y_AXES[0], width=20, height=6, chosen=1).plain
    assert drawn.splitlines() == [
        "rounds over the window",
        "         │          ",
        "        1│     ◉    ",
        "         │          ",
        "         └──────────",
        "               3  compactions",
    ]


def test_a_count_axis_is_ticked_at_whole_numbers_only() -> None:
    """Eight and nine compactions: no middle tick of 8.5 shown as a second 8."""
    drawn = plotted([point(8, 0), point(9, 0)], X_AXES[0], Y_AXES[0], width=30, height=6, chosen=None)
    assert drawn.plain.splitlines()[-1] == "          8                  9  compactions"

"""The comparison screen: C replays and prices every strategy on the session, sorts by
a column, and enter shows the strategy chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screens.compare import CompareScreen
from tests.tui.conftest import settle, shown
from tests.tui.test_app import SIZE, SMALL


async def comparing(app: InspectorApp, pilot: Any, settled: bool = True) -> CompareScreen:
    """The comparison opened with C on the settled session screen (`settled`: and done)."""
    await settle(pilot)
    await pilot.press("C")
    if settled:
        await settle(pilot)
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    return screen


@pytest.fixture(autouse=True)
def _rows_made_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's comparison makes its rows: none is read back from another test's run."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))


def cells(screen: CompareScreen, column: int) -> list[str]:
    from textual.widgets import DataTable

    table = screen.query_one(DataTable)
    return [str(table.get_row_at(n)[column]) for n in range(table.row_count)]


async def test_every_strategy_is_ranked_by_cost_and_enter_shows_the_one_chosen() -> None:
    from textual.widgets import DataTable

    app = InspectorApp(path(), SMALL)
    async with app.run_test(size=SIZE) as pilot:
        screen = await comparing(app, pilot)
        names = cells(screen, 0)
        assert len(names) == len(CATALOGUE.replayed) + 1 and "as it ran" in names
        costs = [float(c.lstrip("$").replace(",", "")) for c in cells(screen, 1)]
        assert costs == sorted(costs)  # by cost, the cheapest first
        title = str(screen.query_one("#compare-title").render())
        assert title.startswith("What the session really cost: main chain $")  # the sample ran a sub-agent
        table = screen.query_one(DataTable)
        chosen = cells(screen, 0)[table.cursor_row]
        await pilot.press("S")  # the most expensive first
        await pilot.pause()
        costs = [float(c.lstrip("$").replace(",", "")) for c in cells(screen, 1)]
        assert costs == sorted(costs, reverse=True)
        assert cells(screen, 0)[table.cursor_row] == chosen  # sorted again, the cursor stays on its strategy
        for _ in range(table.cursor_row):  # up to the most expensive
            await pilot.press("up")
        first = cells(screen, 0)[table.cursor_row]
        assert table.cursor_row == 0 and first != "as it ran"
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        session = shown(app)
        assert session.inspection is not None
        assert session.inspection.policy(session.strategy).label == first


async def test_a_summarizer_that_fails_is_said_as_the_sweep_says_it() -> None:
    """One way to say it (tui/screens/progress.py): the title, in red, the bar gone (the
    comparison once put it in its progress line, the bar left up)."""
    import dataclasses

    from textual.widgets import ProgressBar, Static

    from compaction_inspector.core.replaying.summarizer import Command

    config = dataclasses.replace(SMALL, summarizer=Command("no-such-summarizer --now"))
    app = InspectorApp(path(), config)
    async with app.run_test(size=SIZE) as pilot:
        screen = await comparing(app, pilot, settled=False)
        for _ in range(200):
            title = str(screen.query_one("#compare-title", Static).render())
            if title.startswith("Stopped"):
                break
            await pilot.pause(0.05)
        assert title.startswith("Stopped: your summarizer failed: summarizer 'no-such-summarizer --now'")
        assert not screen.query_one(ProgressBar).display


async def test_at_80_columns_the_compare_table_shows_whole_columns_only() -> None:
    """Every column shown fits whole, the strategy and its cost first (a head once read
    `r` at the table's edge, and costs `$7.4`)."""
    from textual.widgets import DataTable

    app = InspectorApp(path(), SMALL)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await comparing(app, pilot)
        table = screen.query_one(DataTable)
        heads = [str(c.label) for c in table.ordered_columns]
        assert heads[:3] == ["strategy", "cost", "vs real"] and len(heads) < 10
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.size.width


async def test_rows_are_shown_as_each_is_replayed_and_the_cursor_stays_on_its_strategy(
    monkeypatch: Any,
) -> None:
    """The comparison held after three rows: those three are on screen, sorted, while the
    bar still runs; once it goes on, every row comes and the cursor is on the same one."""
    import threading

    from textual.widgets import DataTable, ProgressBar

    from compaction_inspector.core import compare

    go_on, kept = threading.Event(), []
    measure = compare._kept

    def held(*args: Any) -> Any:
        kept.append(1)
        if len(kept) == 3:  # no compaction and two strategies done: the third waits
            go_on.wait(10)
        return measure(*args)

    monkeypatch.setattr(compare, "_kept", held)
    app = InspectorApp(path(), SMALL)
    async with app.run_test(size=SIZE) as pilot:
        screen = await comparing(app, pilot, settled=False)
        table = screen.query_one(DataTable)
        for _ in range(200):
            if table.row_count == 3:
                break
            await pilot.pause(0.02)
        assert table.row_count == 3 and screen.query_one(ProgressBar).display
        costs = [float(c.lstrip("$").replace(",", "")) for c in cells(screen, 1)]
        assert costs == sorted(costs)
        await pilot.press("down")
        chosen = cells(screen, 0)[table.cursor_row]
        go_on.set()
        for _ in range(400):
            if not screen.query_one(ProgressBar).display:
                break
            await pilot.pause(0.02)
        await settle(pilot)
        assert table.row_count == len(CATALOGUE.replayed) + 1
        assert cells(screen, 0)[table.cursor_row] == chosen

"""The sweep screen: F4 on the session list sweeps a strategy's settings over the sessions
listed, draws the points on real axes, and enter applies the point chosen and opens the
session it changes most; the session's palette sweeps the sessions in its folder."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select, Static

from compaction_inspector.core.agents.claude_code.agent import FORMAT as CLAUDE_CODE
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.sweeping.points import TIED
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screens.browser import SessionBrowser
from compaction_inspector.tui.screens.sweep import SweepScreen
from compaction_inspector.tui.widgets.front import FrontPlot
from tests.tui.conftest import SETTLE_S, settle, shown

pytestmark = pytest.mark.slow  # sweeps in a process pool

SMALL = Config(CATALOGUE, window=Window(3_000, 500), preset=None)  # a window the samples' strategies fill


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "projects" / "-nowhere-flaky"
    project.mkdir(parents=True)
    for name in ("claude_code_compacted.jsonl", "claude_code_session.jsonl"):
        (project / name).write_bytes(path(name).read_bytes())
    return tmp_path


async def swept(pilot: Pilot[None]) -> SweepScreen:
    """The sweep screen in front, once its sweep is done."""
    for _ in range(SETTLE_S * 20):
        screen = pilot.app.screen
        if isinstance(screen, SweepScreen) and screen.done is not None:
            await pilot.pause()
            return screen
        await asyncio.sleep(0.05)
    raise AssertionError(f"no sweep finished: {pilot.app.screen!r}")


async def f4(pilot: Pilot[None]) -> SweepScreen:
    """F4 on the session list, once it is listed: the sweep screen, its sweep done."""
    browser = pilot.app.screen
    assert isinstance(browser, SessionBrowser)
    await asyncio.wait_for(browser.scanned.wait(), SETTLE_S)
    await pilot.press("f4")
    return await swept(pilot)


async def folder_swept(pilot: Pilot[None], app: InspectorApp, strategy: str) -> SweepScreen:
    """The session's palette sweeps its folder with `strategy` shown: the sweep screen, done."""
    await settle(pilot)
    await shown(app).run_action(f"strategy('{strategy}')")
    await settle(pilot)
    await shown(app).run_action("sweep_folder")
    return await swept(pilot)


def rows(screen: SweepScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]


async def test_f4_sweeps_the_listed_sessions_and_enter_applies_the_point(home: Path) -> None:
    app = InspectorApp(path(), SMALL, browse=[(CLAUDE_CODE, home / "projects")], export_dir=home)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await f4(pilot)
        title = str(screen.query_one("#sweep-title", Static).render())
        assert title == "hysteresis: 15 points over 2 sessions"
        assert screen.query_one("#sweep-grid", Input).value == "target=34:70:9,summary_chars=200:600:200"
        table = rows(screen)
        # on these two short sessions every point comes to the same: none is starred, and that is said
        assert len(table) == 15 and not any(r[0].startswith("★ ") for r in table)
        assert [n.message for n in app._notifications][-1] == TIED
        assert sum("(current, default)" in r[0] for r in table) == 1
        plot = str(screen.query_one(FrontPlot).render())
        assert plot.startswith("rounds over the window") and plot.rstrip().endswith("compactions")
        assert "◉" in plot  # the row under the cursor
        await pilot.press("x", "y")
        plot = str(screen.query_one(FrontPlot).render())
        assert plot.startswith("kept of what was removed") and plot.rstrip().endswith("cost")
        screen.query_one(Select).value = "microcompact"  # a strategy whose settings move the samples
        await pilot.pause()
        assert screen.done is None  # sweeping again
        screen = await swept(pilot)
        assert screen.query_one("#sweep-grid", Input).value == "keep.tool_uses=3:7:1"
        assert screen.done is not None
        order = [n for n, _, _ in screen.done.rows()]
        at = next(k for k, n in enumerate(order) if screen.done.points[n].changed_most is not None)
        point = screen.done.points[order[at]]
        assert point.changed_most is not None
        await pilot.press(*["down"] * at)
        await pilot.press("w")  # the sweep as an HTML page, in the export folder
        await pilot.pause()
        written = home / "sweep-microcompact.html"
        assert written.is_file() and 'id="sweep-table"' in written.read_text()
        await pilot.press("enter")
        await settle(pilot)
        session = shown(app)
        assert str(session.path) == point.changed_most[2]
        assert session.strategy == "microcompact"
        options = session.config.options("microcompact")
        assert {k: getattr(options, k) for k in point.values} == point.values


async def test_a_grid_the_strategy_refuses_is_named_and_nothing_is_swept(home: Path) -> None:
    app = InspectorApp(path(), SMALL, browse=[(CLAUDE_CODE, home / "projects")])
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await f4(pilot)
        box = screen.query_one("#sweep-grid", Input)
        box.value = "target=60:80:10"
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        title = str(screen.query_one("#sweep-title", Static).render())
        assert title.startswith("The grid: target 80: thresholds [75, 85, 95] and target 80 must satisfy")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser)


async def test_the_sessions_palette_sweeps_its_folder_with_the_strategy_shown(home: Path) -> None:
    app = InspectorApp(home / "projects" / "-nowhere-flaky" / "claude_code_session.jsonl", SMALL)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await folder_swept(pilot, app, "microcompact")
        assert str(screen.query_one("#sweep-title", Static).render()) == (
            "microcompact: 5 points over 2 sessions"
        )
        labels = [r[0] for r in rows(screen)]
        assert sorted(label[2:] for label in labels) == [
            "keep.tool_uses 3",
            "keep.tool_uses 4",
            "keep.tool_uses 5 (current, default)",
            "keep.tool_uses 6",
            "keep.tool_uses 7",
        ]


async def test_a_summarizer_that_fails_stops_the_sweep_and_says_why(home: Path) -> None:
    from dataclasses import replace

    from textual.widgets import ProgressBar

    from compaction_inspector.core.replaying.summarizer import Command

    session_file = home / "projects" / "-nowhere-flaky" / "claude_code_session.jsonl"
    failing = replace(SMALL, summarizer=Command(str(home / "no-such-summarizer")))
    app = InspectorApp(session_file, failing)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await shown(app).run_action("strategy('cline')")
        await settle(pilot)
        await shown(app).run_action("sweep_folder")
        screen = await swept(pilot)  # its suggested triggers never fire on the samples: nothing summarized
        box = screen.query_one("#sweep-grid", Input)
        box.value = "trigger.tokens=1500:2500:1000,keep.tokens=500:500:1"  # these do
        box.focus()
        await pilot.press("enter")
        for _ in range(SETTLE_S * 20):
            title = (
                str(screen.query_one("#sweep-title", Static).render())
                if isinstance(screen, SweepScreen)
                else ""
            )
            if title.startswith("Stopped"):
                break
            await asyncio.sleep(0.05)
        assert isinstance(screen, SweepScreen) and screen.done is None
        assert title.startswith("Stopped: your summarizer failed: ") and "no-such-summarizer" in title
        assert not screen.query_one(ProgressBar).display


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_sweep_table_shows_its_figures_whole_or_not_at_all(
    home: Path, size: tuple[int, int]
) -> None:
    """At 80 columns the cost, what was kept and its change against the real cost still
    show, whole ($8.12, never `$8.`); no column is cut at the table's edge (at 160 the
    last head once read `rem`)."""
    app = InspectorApp(path(), SMALL, browse=[(CLAUDE_CODE, home / "projects")], export_dir=home)
    async with app.run_test(size=size) as pilot:
        screen = await f4(pilot)
        table = screen.query_one(DataTable)
        heads = [str(c.label) for c in table.ordered_columns]
        assert {"cost", "kept", "vs real"} <= set(heads), heads
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.size.width
        cost = heads.index("cost")
        assert all(re.fullmatch(r"\$\d[\d,]*\.\d\d", r[cost]) for r in rows(screen))


async def test_a_on_the_chosen_point_writes_it_to_the_agents_own_settings_once_its_diff_is_accepted(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A swept point of Claude Code's own strategy goes into Claude Code's settings.json
    as the strategy panel's A writes a tuned one: the diff first, then the file."""
    from compaction_inspector.tui.screens.applying import ApplyScreen

    claude = home / "claude"
    claude.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    app = InspectorApp(home / "projects" / "-nowhere-flaky" / "claude_code_session.jsonl", SMALL)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await folder_swept(pilot, app, "claude-code")
        assert screen.done is not None
        order = [n for n, _, _ in screen.done.rows()]
        values = [screen.done.points[n].values["autocompact_pct_override"] for n in order]
        at = values.index(60)
        await pilot.press(*["down"] * at, "A")
        await pilot.pause()
        assert isinstance(app.screen, ApplyScreen)
        diff = str(app.screen.query_one("#apply-diff Static").render())
        assert '+  "env": {' in diff and '"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"' in diff
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SweepScreen)  # back on the sweep, the file written
        written = (claude / "settings.json").read_text()
        assert '"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"' in written

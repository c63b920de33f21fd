"""Snapshots of the main states at 120x40 (pytest-textual-snapshot).

Update after an intended change with `python3 -m pytest tests/tui --snapshot-update`
and look at the SVGs in tests/tui/__snapshots__ before committing them.
"""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from tests.tui.conftest import settle

SIZE = (120, 40)


def app() -> InspectorApp:
    return InspectorApp(path(), Config(CATALOGUE, window=Window(5000, 500), preset=None))


def presses(*keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def test_opened(snap_compare: Any) -> None:
    assert snap_compare(app(), terminal_size=SIZE, run_before=presses())


def test_hysteresis_step(snap_compare: Any) -> None:
    assert snap_compare(app(), terminal_size=SIZE, run_before=presses("n"))


def test_side_by_side(snap_compare: Any) -> None:
    assert snap_compare(app(), terminal_size=SIZE, run_before=presses("n", "d"))


def test_microcompact_step(snap_compare: Any) -> None:
    assert snap_compare(app(), terminal_size=SIZE, run_before=presses("4", "n"))


def test_help(snap_compare: Any) -> None:
    assert snap_compare(app(), terminal_size=SIZE, run_before=presses("question_mark"))


def test_session_browser(snap_compare: Any, tmp_path: Any, monkeypatch: Any) -> None:
    from compaction_inspector.core.agents.claude_code.agent import FORMAT as CLAUDE_CODE
    from compaction_inspector.tui.screens.browser import SessionBrowser

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "projects" / "-nowhere-flaky"
    project.mkdir(parents=True)
    for name in ("claude_code_compacted.jsonl", "claude_code_session.jsonl", "agent_only_session.jsonl"):
        (project / name).write_bytes(path(name).read_bytes())
    (project / "broken.jsonl").write_text("not a transcript\n")
    browsing = InspectorApp(path(), Config(CATALOGUE), browse=[(CLAUDE_CODE, tmp_path / "projects")])

    async def scanned(pilot: Any) -> None:
        for _ in range(200):
            screen = pilot.app.screen
            if (
                isinstance(screen, SessionBrowser)
                and screen.rows
                and not screen.query_one("#browser-progress").display
            ):
                break
            await pilot.pause(0.05)
        await pilot.pause()

    assert snap_compare(browsing, terminal_size=SIZE, run_before=scanned)


def test_sweep(snap_compare: Any, tmp_path: Any, monkeypatch: Any) -> None:
    """Microcompact's tail swept over two sessions from the session's palette."""
    import asyncio

    from compaction_inspector.tui.screens.sweep import SweepScreen

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    project.mkdir()
    for name in ("claude_code_compacted.jsonl", "claude_code_session.jsonl"):
        (project / name).write_bytes(path(name).read_bytes())
    sweeping = InspectorApp(
        project / "claude_code_session.jsonl", Config(CATALOGUE, window=Window(3000, 500), preset=None)
    )

    async def swept(pilot: Any) -> None:
        await settle(pilot)
        await pilot.app.screen.run_action("strategy('microcompact')")
        await settle(pilot)
        await pilot.app.screen.run_action("sweep_folder")
        for _ in range(1200):
            screen = pilot.app.screen
            if isinstance(screen, SweepScreen) and screen.done is not None:
                break
            await asyncio.sleep(0.05)
        await pilot.pause()

    assert snap_compare(sweeping, terminal_size=SIZE, run_before=swept)

"""Snapshots of the main states at 120x40 (pytest-textual-snapshot).

Update after an intended change with `python3 -m pytest tests/tui --snapshot-update`
and look at the SVGs in tests/tui/__snapshots__ before committing them.
"""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.config import Config
from compaction_inspector.core.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from tests.tui.conftest import settle

SIZE = (120, 40)


def app() -> InspectorApp:
    return InspectorApp(path(), Config(window=Window(5000, 500), preset=None))


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

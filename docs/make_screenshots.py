"""Regenerate the README screenshots: `python3 -m docs.make_screenshots` from the repository root.

A test renders them again and fails when a file here differs, so they never show an older app."""

from __future__ import annotations

import asyncio
from pathlib import Path

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screenshot import offline_svg
from tests.tui.conftest import settle

HERE = Path(__file__).parent
SHOTS = {
    "app-hysteresis-step.svg": ("claude_code_session.jsonl", ("n",)),
    "app-side-by-side.svg": ("claude_code_session.jsonl", ("4", "n", "d")),
}


async def render(name: str) -> str:
    """The SVG the screenshot `name` should hold: the app on its sample after its keys, at 120x40."""
    sample, keys = SHOTS[name]
    app = InspectorApp(path(sample), Config(CATALOGUE, window=Window(5000, 500), preset=None))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return offline_svg(app, title="Compaction Inspector")


if __name__ == "__main__":
    for shot in SHOTS:
        write_atomic(HERE / shot, asyncio.run(render(shot)))
        print(f"wrote docs/{shot}")

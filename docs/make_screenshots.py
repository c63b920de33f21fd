"""Regenerate the README screenshots: `python3 -m docs.make_screenshots` from the repository root."""

from __future__ import annotations

import asyncio
from pathlib import Path

from compaction_inspector.core.config import Config
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screenshot import offline_svg
from tests.tui.conftest import settle

HERE = Path(__file__).parent
SHOTS = {
    "app-hysteresis-step.svg": ("claude_code_session.jsonl", ("n",)),
    "app-side-by-side.svg": ("claude_code_session.jsonl", ("4", "n", "d")),
}


async def shoot(name: str, sample: str, keys: tuple[str, ...]) -> None:
    app = InspectorApp(path(sample), Config(window=Window(5000, 500), preset=None))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        write_atomic(HERE / name, offline_svg(app, title="Compaction Inspector"))


if __name__ == "__main__":
    for name, (sample, keys) in SHOTS.items():
        asyncio.run(shoot(name, sample, keys))
        print(f"wrote docs/{name}")

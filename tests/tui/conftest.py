"""Helpers for driving the app: wait until loading, counting, the strategy run and the
simulation have all finished, so assertions and snapshots see a settled screen."""

from __future__ import annotations

import contextlib

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.widgets.timeline import Timeline


async def settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, InspectorApp)
    for _ in range(100):
        # A newer run replaces an exclusive worker: a cancelled one is expected.
        with contextlib.suppress(WorkerCancelled):
            await app.workers.wait_for_complete()
        await pilot.pause()
        if (
            app.exact
            and app.result is not None
            and app.query_one(Timeline).main is not None
            and not app.workers
        ):
            break
    await pilot.pause()

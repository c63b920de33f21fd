"""Helpers for driving the app: the session shown, and waiting until its loading,
counting, strategy run and replay are done, so assertions and snapshots see a settled
screen (the screen says so; nothing is polled)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from compaction_inspector.core.inspection import Inspection
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.session.screen import SessionScreen

SETTLE_S = 60  # far beyond what the samples take: a hang fails the test, not the suite


def shown(app: InspectorApp) -> SessionScreen:
    """The session screen in front (under the help or the palette, if they are open)."""
    screens = [s for s in app.screen_stack if isinstance(s, SessionScreen)]
    assert screens, f"no session is shown: {app.screen!r}"
    return screens[-1]


def inspected(app: InspectorApp) -> Inspection:
    """What the session in front shows, once it is read."""
    inspection = shown(app).inspection
    assert inspection is not None, "the session is not read yet"
    return inspection


def title(app: InspectorApp) -> str:
    """The session screen's title line after the app's name."""
    return shown(app).sub_title or ""


async def until(pilot: Pilot[None], done: Callable[[], bool]) -> None:
    """Until `done()` holds, or 10 s: the app retries a missing file each second, and a
    loaded machine is slower."""
    for _ in range(100):
        if done():
            return
        await pilot.pause(0.1)


async def settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, InspectorApp)
    screen = next((s for s in reversed(app.screen_stack) if isinstance(s, SessionScreen)), None)
    if screen is None:  # not pushed yet: once the app has run its mount
        await pilot.pause()
        screen = next((s for s in reversed(app.screen_stack) if isinstance(s, SessionScreen)), None)
    if screen is not None:
        await asyncio.wait_for(screen.settled.wait(), SETTLE_S)
    # what else runs in the background (listings prepared ahead, an export) ends too
    with contextlib.suppress(WorkerCancelled):
        await app.workers.wait_for_complete()
    await pilot.pause()

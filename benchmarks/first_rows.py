"""How soon a session's first rows are on screen: `python3 -m benchmarks.first_rows [--sizes 1,10,100]`.

Each measure is a fresh process, from its start until the transcript lists its first
rows (Pilot at 160x45), against the floor of any Textual app measured in the same run: a
Textual app of one line, started and waited for the same way until the line is on screen.
Every figure is the median of RUNS, taken in turns with the floor's. Sessions are the generated ones of
`benchmarks.run` (`benchmarks/results/sessions/`); counts are not cached between runs,
so every open reads and counts from nothing. Also timed: until the strategy view is
ready (counted from nothing, the strategy's result shown, nothing under way). Prints a
Markdown table; the targets are 2.5x the floor at every size, and a strategy view of
100 MB within 5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.run import session_file

RUNS = 5
FLOOR = """
import asyncio, os, time
from textual.app import App
from textual.widgets import Static

class Line(App[None]):
    def compose(self):
        yield Static("one line")

async def main() -> None:
    app = Line()
    async with app.run_test(size=(160, 45)):
        while not app.query(Static) or not app.query_one(Static).region.height:
            await asyncio.sleep(0.005)
        print(time.time(), flush=True)
        os._exit(0)

asyncio.run(main())
"""
OPEN = """
import asyncio, os, sys, time
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.widgets.transcript import TranscriptView

async def main() -> None:
    app = InspectorApp(sys.argv[1], Config(CATALOGUE))
    async with app.run_test(size=(160, 45)):
        while not any(len(v.entries) for v in app.screen.query(TranscriptView)):
            await asyncio.sleep(0.005)  # not Pilot.pause: it walks every widget, a load no reader adds
        print(time.time(), flush=True)  # the rows are on screen: the reading goes on without us
        os._exit(0)

asyncio.run(main())
"""


# the strategy view ready: the session counted from nothing, its strategy's result shown
# and nothing left under way
READY = """
import asyncio, os, sys, time
from compaction_inspector.core.config import Config
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.session.screen import SessionScreen
from compaction_inspector.core.agents.registry import CATALOGUE

async def main() -> None:
    app = InspectorApp(sys.argv[1], Config(CATALOGUE))
    async with app.run_test(size=(160, 45)):
        while True:
            screen = app.screen
            if isinstance(screen, SessionScreen) and screen.result is not None and screen.settled.is_set():
                break
            await asyncio.sleep(0.02)
        print(time.time(), flush=True)
        os._exit(0)

asyncio.run(main())
"""


def once(code: str, *args: str) -> float:
    """The wall time of a fresh process running `code` (until it prints the time it is
    done, or else ends), the modules compiled as they are on a user's machine after the
    first run."""
    env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": tempfile.mkdtemp()}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.time()
    done = subprocess.run([sys.executable, "-c", code, *args], check=True, env=env, capture_output=True)
    return (float(done.stdout) if done.stdout.strip() else time.time()) - start


def paired(code: str, *args: str) -> tuple[float, float]:
    """The medians of RUNS runs of `code` and of the floor, taken in turns, after one of
    each that leaves the modules compiled."""
    once(FLOOR), once(code, *args)
    floors, ours = [], []
    for _ in range(RUNS):
        floors.append(once(FLOOR))
        ours.append(once(code, *args))
    return statistics.median(ours), statistics.median(floors)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.first_rows", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sizes", default="1,10,100", help="MB, comma separated")
    args = parser.parse_args()
    print(
        "| session | first rows on screen | the floor (one line) | against the floor | strategy view ready, cold |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for size in (int(s) for s in args.sizes.split(",")):
        path: Path = session_file(size)
        seconds, floor = paired(OPEN, str(path))
        ready = statistics.median(once(READY, str(path)) for _ in range(RUNS))
        print(f"| {size} MB | {seconds:.2f} s | {floor:.2f} s | {seconds / floor:.1f}× | {ready:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

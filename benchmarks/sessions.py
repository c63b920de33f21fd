"""How fast the session list is: `python3 -m benchmarks.sessions [--sessions N] [--size 4MB]
[--ccusage COMMAND] [--runs 5]`.

Generates a fake home of N Claude Code sessions (deterministic, `sample_sessions.generate`,
each of the given size) and times, each against a raw read of the same bytes measured in
the same run: the first row (what the browser shows first), the full scan, and the
re-list from the index. Then `compaction-inspector sessions --json` as a user runs it, a
process each time, cold (no index) and warm (the index kept), medians of `--runs` taken in
turns with `ccusage session --json --offline` on the same home where `--ccusage` names its
command. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compaction_inspector.core.agents.claude_code.agent import FORMAT as CLAUDE_CODE
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.session_index import Index, Row
from compaction_inspector.core.sessions import find, rows
from compaction_inspector.sample_sessions.generate import generate, parse_size


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.sessions", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--size", type=parse_size, default=parse_size("4MB"))
    parser.add_argument("--ccusage", default=None, help="ccusage's command, timed on the same home")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        projects = Path(folder) / ".claude" / "projects"
        for n in range(args.sessions):
            project = projects / f"-project-{n % 10}"
            project.mkdir(parents=True, exist_ok=True)
            generate(project / f"session-{n}.jsonl", args.size, seed=n + 1)
        places = [(CLAUDE_CODE, projects)]
        found = find(CATALOGUE, places)
        total = sum(f.path.stat().st_size for f in found)

        start = time.perf_counter()
        for f in found:
            f.path.read_bytes()
        raw = time.perf_counter() - start

        first: list[float] = []
        index_path = Path(folder) / "sessions.json"
        start = time.perf_counter()

        def progress(done: int, _total: int, _row: Row) -> None:
            if not first:
                first.append(time.perf_counter() - start)

        rows(CATALOGUE, found, progress, index=Index(index_path))
        scan = time.perf_counter() - start
        start = time.perf_counter()
        rows(CATALOGUE, find(CATALOGUE, places), index=Index(index_path))
        relist = time.perf_counter() - start

        cache = Path(folder) / "cache"
        os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = str(cache)
        app_cold = asyncio.run(_app_list(places, len(found)))
        app_warm = asyncio.run(_app_list(places, len(found)))
        command = _commands(Path(folder), args.ccusage, args.runs, len(found))
    print(f"{args.sessions} sessions, {total / 1e9:.2f} GB, raw read {raw:.2f} s\n")
    print("| measure | seconds | against the raw read |")
    print("| --- | ---: | ---: |")
    print(f"| first row | {first[0]:.3f} | {first[0] / raw:.3f}× |")
    print(f"| full scan | {scan:.2f} | {scan / raw:.1f}× |")
    print(f"| re-list from the index | {relist:.3f} | {relist / raw:.3f}× |")
    print()
    print("| the app's list, every row on screen | seconds | against |")
    print("| --- | ---: | ---: |")
    print(f"| cold (no index) | {app_cold:.2f} | {app_cold / scan:.2f}× the library's full scan |")
    print(f"| warm (the index kept) | {app_warm:.3f} | {app_warm / relist:.1f}× the library's re-list |")
    print()
    print("| `sessions --json`, a process each time | seconds | against ccusage |")
    print("| --- | ---: | ---: |")
    other = command.get("ccusage")
    for name, took in command.items():
        against = f"{took / other:.2f}×" if other else "—"
        print(f"| {name} | {took:.3f} | {against} |")
    return 0


def _commands(home: Path, ccusage: str | None, runs: int, sessions: int) -> dict[str, float]:
    """Medians of `runs`, taken in turns: the command with no index, with the index kept,
    and ccusage's where its command is given; each with `home` as the user's home and
    every agent's own folder left to it. A ccusage run that lists other than the home's
    `sessions` fails: it is timed doing what ours does."""
    env = {k: v for k, v in os.environ.items() if k not in {h for a in CATALOGUE.agents for h in a.homes}}
    env["HOME"] = str(home)
    ours = [sys.executable, "-m", "compaction_inspector.tui.cli", "sessions", "--json"]
    kept = str(home / "kept")
    subprocess.run(ours, env={**env, "COMPACTION_INSPECTOR_CACHE_DIR": kept}, check=True, capture_output=True)
    runs_of: dict[str, list[float]] = {"cold (no index)": [], "warm (the index kept)": []}
    if ccusage:
        runs_of["ccusage"] = []
    for n in range(runs):
        for name, times in runs_of.items():
            cache = str(home / f"cold-{n}") if name.startswith("cold") else kept
            argv = (
                [*shlex.split(ccusage), "session", "--json", "--offline"]
                if name == "ccusage" and ccusage
                else ours
            )
            start = time.perf_counter()
            done = subprocess.run(
                argv, env={**env, "COMPACTION_INSPECTOR_CACHE_DIR": cache}, check=True, capture_output=True
            )
            times.append(time.perf_counter() - start)
            printed = json.loads(done.stdout)
            listed = len(printed["session"] if name == "ccusage" else printed)
            if listed != sessions:
                raise SystemExit(f"{name} listed {listed} sessions of {sessions}")
    return {name: statistics.median(times) for name, times in runs_of.items()}


async def _app_list(places: list[tuple[str, Path]], rows: int) -> float:
    """Seconds from the app's start until the list shows all `rows` rows: from its index
    when it has one (the files are checked after), else once its scan is done."""
    from textual.widgets import DataTable

    from compaction_inspector.core.config import Config
    from compaction_inspector.sample_sessions import path
    from compaction_inspector.tui.app import InspectorApp
    from compaction_inspector.tui.screens.browser import SessionBrowser

    start = time.perf_counter()
    app = InspectorApp(path(), Config(CATALOGUE), browse=places)
    async with app.run_test(size=(160, 45)):
        while True:
            screen = app.screen
            if (
                isinstance(screen, SessionBrowser)
                and screen.query_one(DataTable).row_count == rows
                and (screen.listed or screen.scanned.is_set())
            ):
                return time.perf_counter() - start
            await asyncio.sleep(0.02)  # a poll as light as a reader: Pilot.pause would walk every widget


if __name__ == "__main__":
    sys.exit(main())

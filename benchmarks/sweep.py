"""A sweep's cost against one plain replay of the same sessions:
`python3 -m benchmarks.sweep [--sessions 40] [--size 1MB] [--jobs 2]`.

Generates a home of N Claude Code sessions (`sample_sessions.generate`, deterministic),
then measures, each in this process: one no-compaction replay of every session (read,
counted, replayed: the baseline), the sweep of a grid over them (`--grid`, default 8
points of Cline's trigger and tail) in a pool of `--jobs`, and the same sweep again,
its results kept. Prints the three times and the sweep's ratios to the baseline.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from compaction_inspector.core.config import Config
from compaction_inspector.core.formats import load
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.simulate import Policy
from compaction_inspector.sample_sessions.generate import generate, parse_size
from tests.test_cli import run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--size", type=parse_size, default=parse_size("1MB"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--grid", default="trigger.percent=60:90:10,keep.tokens=10000:20000:10000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "sessions"
        home.mkdir()
        for n in range(args.sessions):
            generate(home / f"session-{n}.jsonl", args.size, seed=n + 1)
        os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = str(Path(folder) / "baseline")
        start = time.perf_counter()
        for path in sorted(home.glob("*.jsonl")):
            Inspection.of(load(path), Config()).replay(Policy())
        baseline = time.perf_counter() - start
        sweep = [
            "sweep",
            str(home),
            "--strategy",
            "cline",
            "--grid",
            args.grid,
            "--jobs",
            str(args.jobs),
            "--json",
        ]
        os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = str(Path(folder) / "sweep")  # counted afresh too
        start = time.perf_counter()
        assert run(*sweep).returncode == 0
        first = time.perf_counter() - start
        start = time.perf_counter()
        assert run(*sweep).returncode == 0
        again = time.perf_counter() - start
    mb = args.size / 2**20
    print(f"{args.sessions} sessions of {mb:.0f} MB, grid {args.grid}, {args.jobs} jobs")
    print(f"one plain replay of each: {baseline:.1f} s")
    print(
        f"the sweep: {first:.1f} s ({first / baseline:.1f}x), again: {again:.2f} s ({again / baseline:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

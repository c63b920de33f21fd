"""A sweep against one plain replay of the same sessions:
`python3 -m benchmarks.sweep [--sessions 500] [--size 4MB] [--jobs 2] [--strategy cline]
[--grid ...] [--context-window 200000]`.

Generates a home of N Claude Code sessions (`sample_sessions.generate`, deterministic,
the session list benchmark's home at its defaults: 500 of 4 MB, about 2 GB), then
measures, each on counts made afresh:
- the baseline: one no-compaction replay of every session (read, counted, replayed), in
  `--jobs` processes of their own that share the sessions out, on the cores the sweep has;
- the sweep of a 40-point grid over a tenth of the sessions, then over all of them, each
  a command of its own with `--jobs` spawned processes: its time, and the largest memory
  any one of its processes held (flat in the sessions when the two are alike), that
  command's and its workers' alone (this process stays small: it loads no session);
- the same sweep again, every point kept: a re-sweep with nothing changed.
Prints a Markdown table of times and their ratios to the baseline, and the cost per
session. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.sample_sessions.generate import generate, parse_size


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--size", type=parse_size, default=parse_size("4MB"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--strategy", default="cline")
    parser.add_argument("--grid", default="trigger.percent=50:95:5,keep.tokens=10000:40000:10000")
    parser.add_argument(
        "--context-window", type=int, default=None, help="the window replayed (default each session's own)"
    )
    args = parser.parse_args()
    window = ["--context-window", str(args.context_window)] if args.context_window else []
    with tempfile.TemporaryDirectory() as folder:
        home, tenth = Path(folder) / "sessions", Path(folder) / "tenth"
        home.mkdir()
        tenth.mkdir()
        for n in range(args.sessions):
            generate(home / f"session-{n}.jsonl", args.size, seed=n + 1)
            if n < max(1, args.sessions // 10):
                (tenth / f"session-{n}.jsonl").hardlink_to(home / f"session-{n}.jsonl")
        total = sum(p.stat().st_size for p in home.iterdir())

        env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": str(Path(folder) / "baseline")}
        paths = [str(p) for p in sorted(home.iterdir())]
        start = time.perf_counter()
        given = [sys.executable, "-c", BASELINE, str(args.context_window or "")]
        replays = [subprocess.Popen([*given, *paths[k :: args.jobs]], env=env) for k in range(args.jobs)]
        for replay in replays:
            _waited(replay)
        baseline = time.perf_counter() - start

        def sweep(where: Path, cache: str) -> tuple[float, float]:
            """Its time, and the peak memory (MB) of its largest process."""
            env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": str(Path(folder) / cache)}
            command = [sys.executable, "-m", "compaction_inspector.tui.cli", "sweep", str(where),
                       "--strategy", args.strategy, "--grid", args.grid, "--jobs", str(args.jobs),
                       *window, "--json"]  # fmt: skip
            start = time.perf_counter()
            largest = _waited(subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL))
            return time.perf_counter() - start, largest

        small, small_mb = sweep(tenth, "tenth")
        first, first_mb = sweep(home, "sweep")
        again, _ = sweep(home, "sweep")
    points = _points(args.strategy, args.grid)
    print(f"{args.sessions} sessions, {total / 1e9:.2f} GB, {args.strategy} over {points} points "
          f"({args.grid}), {args.jobs} jobs, window {args.context_window or 'each session’s own'}\n")  # fmt: skip
    print("| run | time | vs one plain replay of each | per session | largest process |")
    print("| --- | --- | --- | --- | --- |")
    n_small = max(1, args.sessions // 10)
    print(
        f"| one plain replay of each (baseline) | {baseline:.1f} s | 1.00x | {baseline / args.sessions * 1e3:.0f} ms | |"
    )
    print(
        f"| the sweep, {n_small} sessions | {small:.1f} s | | {small / n_small * 1e3:.0f} ms | {small_mb:.0f} MB |"
    )
    print(f"| the sweep, {args.sessions} sessions | {first:.1f} s | {first / baseline:.2f}x | "
          f"{first / args.sessions * 1e3:.0f} ms | {first_mb:.0f} MB |")  # fmt: skip
    print(f"| the sweep again, every point kept | {again:.2f} s | {again / baseline:.3f}x | "
          f"{again / args.sessions * 1e3:.1f} ms | |")  # fmt: skip
    return 0


BASELINE = """
import sys
from pathlib import Path
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.replaying.simulation import Policy

window = int(sys.argv[1]) if sys.argv[1] else None
config = Config(CATALOGUE).overridden(context_window=window) if window else Config(CATALOGUE)
for path in sys.argv[2:]:
    Inspection.of(CATALOGUE.formats.load(Path(path)), config).replay(Policy())
"""


def _waited(process: subprocess.Popen[bytes]) -> float:
    """The peak memory (MB) of `process` and the processes it waited for, once it ended
    (a failure raised)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, process.args)
    return usage.ru_maxrss / 1024


def _points(strategy: str, spec: str) -> int:
    from compaction_inspector.core.sweeping.grid import Grid

    return len(Grid.of(strategy, spec, Config(CATALOGUE)).values)


if __name__ == "__main__":
    raise SystemExit(main())

"""What each command costs on a large session: time and peak memory, each in a fresh process.

`python3 -m benchmarks.commands --sizes 100` (MB). Time is the median of `--runs` runs and
is given against the same session only opened (read, counted from the persistent cache,
fitted: `Inspection.open`) in the same run, so a command's ratio is what its own work
and output cost on top; peak memory (the process's maximum resident set) is given
against the file's size. The token cache is filled once before anything is timed, as a
session a user opens a second time has it.
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

# what every command does before its own work: the collector set as the program sets it,
# the settings read, the session opened
OPEN = (
    "import sys; from compaction_inspector.tui import heap; heap.configure(); "
    "from compaction_inspector.core.agents.registry import CATALOGUE; "
    "from compaction_inspector.core import config_file; from compaction_inspector.core.inspection import Inspection; "
    "Inspection.open(sys.argv[1], config_file.load(CATALOGUE)); heap.settle()"
)
COMMANDS = [
    ["analyze", "--json"],
    ["analyze"],
    ["compactions", "--json"],
    ["simulate", "--strategy", "hysteresis", "--json"],
    ["simulate", "--strategy", "hysteresis"],
    ["simulate", "--strategy", "claude-code", "--json"],
    ["compact", "--strategy", "trim", "--json"],
    ["compact", "--strategy", "hysteresis", "--json"],
    ["compact", "--strategy", "hysteresis"],
    ["report", "-o", "{out}", "--force"],
]


def measured(argv: list[str]) -> tuple[float, int]:
    """Seconds and peak resident bytes of one fresh process, its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return seconds, usage.ru_maxrss * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100", help="MB, comma separated")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "compaction_inspector.tui.cli"]
    with tempfile.TemporaryDirectory() as scratch:
        out = str(Path(scratch) / "report.html")
        for size in (int(s) for s in args.sizes.split(",")):
            path = str(session_file(size))
            file_bytes = os.path.getsize(path)
            measured([*cli, "analyze", path])  # fills the token cache
            rows = [("open (the anchor)", [sys.executable, "-c", OPEN, path])]
            rows += [(" ".join(c), [*cli, c[0], path, *(a.format(out=out) for a in c[1:])]) for c in COMMANDS]
            results = {name: [measured(argv) for _ in range(args.runs)] for name, argv in rows}
            anchor = statistics.median(t for t, _ in results["open (the anchor)"])
            print(f"\n{size} MB session ({file_bytes / 1e6:.1f} MB), median of {args.runs} runs\n")
            print("| command | time | / open | peak memory | / file |")
            print("| --- | --- | --- | --- | --- |")
            for name, runs in results.items():
                seconds = statistics.median(t for t, _ in runs)
                peak = max(m for _, m in runs)
                print(
                    f"| `{name}` | {seconds:.2f} s | {seconds / anchor:.2f}× | {peak / 1e6:.0f} MB "
                    f"| {peak / file_bytes:.2f}× |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

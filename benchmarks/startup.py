"""Start-up as a user sees it: `python3 -m benchmarks.startup [--sizes 0,1,10] [--runs 5]
[--size 80x24]`.

Each run is a fresh process in a real terminal (tmux, 80x24 unless `--size`), timed from `tmux new`
until the pane shows the session's first transcript row (the app) or its one line (the
floor: a Textual app of one line, launched the same way). Counts are not cached between
runs. Needs tmux. Prints a Markdown table of medians; the target is 2x the floor.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.keys import FLOOR
from benchmarks.run import session_file
from benchmarks.tmux import running
from compaction_inspector.sample_sessions import path as sample_path

FIRST_ROW = "#0 "  # the transcript's first message, as its row shows it


def shown(command: str, sign: str, size: tuple[int, int]) -> float:
    """Seconds from launching `command` in tmux of `size` until the pane holds `sign`."""
    start = time.perf_counter()
    with running(command, size) as terminal:
        terminal.holds(sign)
        return time.perf_counter() - start


def median_of(runs: int, command: str, sign: str, size: tuple[int, int]) -> float:
    return statistics.median(shown(command, sign, size) for _ in range(runs))


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.startup", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sizes", default="0,1,10", help="MB, comma separated (0: the bundled sample)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", default="80x24", help="the terminal, COLUMNSxROWS")
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.split("x"))
    if shutil.which("tmux") is None:
        print("benchmarks.startup needs tmux", file=sys.stderr)
        return 2
    script = Path(tempfile.mkdtemp()) / "floor.py"
    script.write_text(FLOOR.format(key="j"))
    floor = median_of(
        args.runs, f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", "row 0", (columns, rows)
    )
    print("| session | first row on screen | against the floor |")
    print("| --- | ---: | ---: |")
    print(f"| the floor (a Textual app of one line) | {floor:.2f} s | 1.0× |")
    for size in (int(s) for s in args.sizes.split(",")):
        target = sample_path() if size == 0 else session_file(size)
        times = []
        for _ in range(args.runs):
            cache = tempfile.mkdtemp()  # nothing counted before: every run counts from nothing
            command = (
                f"COMPACTION_INSPECTOR_CACHE_DIR={cache} {shlex.quote(sys.executable)} "
                f"-m compaction_inspector.tui.cli {shlex.quote(str(target))}"
            )
            times.append(shown(command, FIRST_ROW, (columns, rows)))
        took = statistics.median(times)
        name = "the sample" if size == 0 else f"{size} MB"
        print(f"| {name} | {took:.2f} s | {took / floor:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Keys as a user feels them: `python3 -m benchmarks.keys [--sizes 0,10,100] [--key j]`.

The app runs in a real terminal (tmux, 160x45) on the bundled sample (size 0) or a
generated session of N MB (`benchmarks/results/sessions/`). Once it has settled, a key
is sent and timed to the app's first output after it (`benchmarks.tmux`: no polling).
The floor is a Textual app of one line changed by the same key, measured the same way.
Needs tmux. Prints a Markdown table; the target is a 20 ms median.
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

from benchmarks.run import session_file
from benchmarks.tmux import running
from compaction_inspector.sample_sessions import path as sample_path

PRESSES = 25
READING_S = 0.2  # a pause between keys, as a reader makes


# the floor of any Textual app: one line of text that changes on the key
FLOOR = """
from textual.app import App
from textual.widgets import Static

class Floor(App[None]):
    BINDINGS = [("{key}", "next", "next")]
    n = 0

    def compose(self):
        yield Static("row 0", id="row")

    def action_next(self) -> None:
        self.n += 1
        self.query_one("#row", Static).update(f"row {{self.n}}")

Floor().run()
"""


def measure(target: Path, key: str) -> tuple[float, float]:
    """(median, 90th percentile) in seconds, for `key` pressed on `target`."""
    cache = tempfile.mkdtemp()
    command = f"COMPACTION_INSPECTOR_CACHE_DIR={cache} {shlex.quote(sys.executable)} -m compaction_inspector.tui.cli"
    return timed(f"{command} {shlex.quote(str(target))}", key)


def floor(key: str) -> tuple[float, float]:
    """The same for the floor app."""
    script = Path(tempfile.mkdtemp()) / "floor.py"
    script.write_text(FLOOR.format(key=key))
    return timed(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", key)


def timed(command: str, key: str) -> tuple[float, float]:
    """`command` run in tmux, settled, then `key` pressed PRESSES times, each timed from
    sending it to the app's first output after it."""
    with running(command) as terminal:
        terminal.settled(2.0)
        waits = []
        for _ in range(PRESSES):
            waits.append(terminal.pressed(key, within=2.0))
            time.sleep(READING_S)
    waits.sort()
    return statistics.median(waits), waits[int(len(waits) * 0.9)]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.keys", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,10,100", help="MB, comma separated (0: the bundled sample)")
    parser.add_argument("--key", default="j")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("benchmarks.keys needs tmux", file=sys.stderr)
        return 2
    base, base_p90 = floor(args.key)
    print(f"| session | `{args.key}` median | 90th percentile | against the floor |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| the floor (a Textual app of one line) | {base * 1000:.0f} ms | {base_p90 * 1000:.0f} ms | 1.0× |"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        target = sample_path() if size == 0 else session_file(size)
        median, p90 = measure(target, args.key)
        name = "the sample" if size == 0 else f"{size} MB"
        print(f"| {name} | {median * 1000:.0f} ms | {p90 * 1000:.0f} ms | {median / base:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

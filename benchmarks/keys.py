"""Keys as a user feels them: `python3 -m benchmarks.keys [--sizes 0,10,100] [--key j]`.

The app runs in a real terminal (tmux, 160x45) on the bundled sample (size 0) or a
generated session of N MB (`benchmarks/results/sessions/`). Once it has settled, a key
is sent and the pane is read until it changes: that is the time a user waits, plus one
read of the pane, which is measured on its own in the same run and reported beside it.
The floor is a Textual app of one line changed by the same key, measured the same way.
Needs tmux. Prints a Markdown table; the target is a 20 ms median.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.run import session_file
from compaction_inspector.sample_sessions import path as sample_path

SESSION = "ci-keys"
PRESSES = 25
READING_S = 0.2  # a pause between keys, as a reader makes


def _pane() -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True
    ).stdout


def _settled(seconds: float) -> None:
    """Until the pane has not changed for `seconds` (loading, counting and replays done)."""
    last, since = _pane(), time.monotonic()
    while time.monotonic() - since < seconds:
        time.sleep(0.1)
        now = _pane()
        if now != last:
            last, since = now, time.monotonic()


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


def measure(target: Path, key: str) -> tuple[float, float, float]:
    """(median, 90th percentile, one pane read) in seconds, for `key` pressed on `target`."""
    cache = tempfile.mkdtemp()
    command = f"COMPACTION_INSPECTOR_CACHE_DIR={cache} {shlex.quote(sys.executable)} -m compaction_inspector.tui.cli"
    return timed(f"{command} {shlex.quote(str(target))}", key)


def floor(key: str) -> tuple[float, float, float]:
    """The same for the floor app."""
    script = Path(tempfile.mkdtemp()) / "floor.py"
    script.write_text(FLOOR.format(key=key))
    return timed(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", key)


def timed(command: str, key: str) -> tuple[float, float, float]:
    """`command` run in tmux, settled, then `key` pressed PRESSES times, each timed
    from sending it until the pane changes."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    subprocess.run(
        [
            "tmux",
            "new",
            "-d",
            "-s",
            SESSION,
            "-x",
            "160",
            "-y",
            "45",
            command,
        ],
        check=True,
    )
    try:
        _settled(2.0)
        start = time.perf_counter()
        for _ in range(20):
            _pane()
        read = (time.perf_counter() - start) / 20
        waits = []
        for _ in range(PRESSES):
            before = _pane()
            start = time.perf_counter()
            subprocess.run(["tmux", "send-keys", "-t", SESSION, key], check=True)
            while _pane() == before and time.perf_counter() - start < 2:
                pass
            waits.append(time.perf_counter() - start)
            time.sleep(READING_S)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    waits.sort()
    return statistics.median(waits), waits[int(len(waits) * 0.9)], read


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.keys", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,10,100", help="MB, comma separated (0: the bundled sample)")
    parser.add_argument("--key", default="j")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("benchmarks.keys needs tmux", file=sys.stderr)
        return 2
    base, base_p90, _ = floor(args.key)
    print(f"| session | `{args.key}` median | 90th percentile | one read of the pane | against the floor |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
        f"| the floor (a Textual app of one line) | {base * 1000:.0f} ms | {base_p90 * 1000:.0f} ms | | 1.0× |"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        target = sample_path() if size == 0 else session_file(size)
        median, p90, read = measure(target, args.key)
        name = "the sample" if size == 0 else f"{size} MB"
        print(
            f"| {name} | {median * 1000:.0f} ms | {p90 * 1000:.0f} ms | {read * 1000:.1f} ms "
            f"| {median / base:.1f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A tuning key as a user feels it: `python3 -m benchmarks.tuning [FILE ...] [--strategies ...]`.

The app runs in a real terminal (tmux, 160x45) on each FILE (default: the generated 20 MB
session of `benchmarks.run`), showing each strategy in turn. Once it has settled, the
thresholds key (`h`, then `H` back) is pressed and the app's output followed until it has
written nothing for a while (`benchmarks.tmux`: no polling): the time to its last output is
when the gauge, the panel and the timeline all show the new setting. Against it, in the same app and run, `j` timed to its first
change (as `benchmarks.keys` times it). Needs tmux. Prints a Markdown table of medians.
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
from benchmarks.tmux import Terminal, running
from compaction_inspector.core.agents.registry import CATALOGUE

PRESSES = 8
QUIET_S = 1.0  # no change for this long: the screen has settled
STRATEGIES = "hysteresis,claude-code,anthropic-compaction,anthropic-context-editing"


def _choose(terminal: Terminal, name: str) -> None:
    """The strategy by its number key, or through the palette for the rest."""
    number = list(CATALOGUE.strategies).index(name) + 1
    if number <= 9:
        terminal.send(str(number))
        return
    terminal.send("C-p")
    time.sleep(0.5)
    terminal.send("-l", f"Strategy: {CATALOGUE.strategies[name].label}")
    time.sleep(0.5)
    terminal.send("Enter")


def measure(target: Path, name: str) -> tuple[float, float, float]:
    """(`j` to its first change, the tuning key to its last: pressed on to settings new
    to the session, then pressed back to those shown before), medians in seconds."""
    cache = tempfile.mkdtemp()
    command = (
        f"COMPACTION_INSPECTOR_CACHE_DIR={cache} {shlex.quote(sys.executable)} "
        f"-m compaction_inspector.tui.cli {shlex.quote(str(target))}"
    )
    with running(command) as terminal:
        terminal.settled(3.0)
        _choose(terminal, name)
        terminal.settled(3.0)
        moves = []
        for _ in range(PRESSES):
            moves.append(terminal.pressed("j"))
            time.sleep(0.2)
        terminal.settled(1.0)
        on = [terminal.settled(QUIET_S, 60.0, "h") for _ in range(PRESSES // 2)]
        back = [terminal.settled(QUIET_S, 60.0, "H") for _ in range(PRESSES // 2)]
    return statistics.median(moves), statistics.median(on), statistics.median(back)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.tuning", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="sessions (default: the generated 20 MB one)")
    parser.add_argument("--strategies", default=STRATEGIES, help="names separated by commas")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("benchmarks.tuning needs tmux", file=sys.stderr)
        return 2
    print(
        "| session | strategy | `j` to its first change | `h` to its last change (new settings) "
        "| against `j` | `H` back (settings shown before) | against `j` |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for target in args.files or [session_file(20)]:
        for name in args.strategies.split(","):
            move, on, back = measure(target, name)
            print(
                f"| `{target.name}` | {name} | {move * 1000:.0f} ms | {on * 1000:.0f} ms | {on / move:.1f}× "
                f"| {back * 1000:.0f} ms | {back / move:.1f}× |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

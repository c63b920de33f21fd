"""`compare` against `analyze` on real sessions: `python3 -m benchmarks.comparison FILE ...`.

Each command a fresh process on the same file, the token cache filled by a first run of
`analyze` (as a session opened before has it); the medians of `--runs` runs (5), and `compare`'s
as a multiple of `analyze`'s. Every `compare` timed is a first run with its settings: the rows
a run keeps are let go before the next. Apart: `compare` again with every row kept. Issue 48's bar: every row of `compare` on a real session of
about 150 rounds in at most 1.5x `analyze` of it. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.grouping import api_round_starts

load = CATALOGUE.formats.load


def _seconds(command: str, path: Path, cache: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "compaction_inspector.tui.cli", command, "--json", str(path)],
        capture_output=True,
        check=True,
        env={**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": cache},
    )
    return time.perf_counter() - start


def _first_compare(path: Path, cache: str) -> float:
    """`compare` with none of its rows kept from a run before (the token counts are)."""
    shutil.rmtree(Path(cache) / "compare", ignore_errors=True)
    return _seconds("compare", path, cache)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.comparison", description=__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="+", type=Path, help="sessions")
    parser.add_argument("--runs", type=int, default=5, help="of each command; the median is shown")
    args = parser.parse_args()
    print("| session | rounds | `analyze --json` | `compare --json` | against `analyze` | every row kept |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for path in args.files:
        cache = tempfile.mkdtemp()
        _seconds("analyze", path, cache)  # the token cache filled
        analyzed = statistics.median(_seconds("analyze", path, cache) for _ in range(args.runs))
        compared = statistics.median(_first_compare(path, cache) for _ in range(args.runs))
        kept = statistics.median(_seconds("compare", path, cache) for _ in range(args.runs))
        rounds = len(api_round_starts(load(path).messages))
        print(
            f"| `{path.name}` | {rounds:,} | {analyzed:.2f} s | {compared:.2f} s | {compared / analyzed:.2f}× "
            f"| {kept:.2f} s |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

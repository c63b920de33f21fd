"""The status line as Claude Code runs it: `python3 -m benchmarks.statusline [--sizes 1,100]
[--replay PATH...]`.

Speed: each call is a fresh process fed the status line JSON on stdin, warm (its entry kept
from the calls before, the part before the tail read whole) and cold (no entry; the calls
between, reading on that part, are reported apart), on the generated sessions of `benchmarks.run`,
against a process that only imports the package's status line module, and cold against
`analyze --json` of the session's last 1 MB. Prints a Markdown table of medians.

`--replay`: real Claude Code transcripts grown line by line as if live; after each response
the line's "compacts in" is read after each line. For every automatic compaction the file records: how many
requests before it the figure first said the point was reached, and whether it said so
more than one request early (a request: a response's prompt reported), beside the count
the agent recorded (`preTokens`) and the line's count at the line before it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.run import session_file
from compaction_inspector.core.agents.claude_code import statusline
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config

RUNS = 5
FLOOR = "import compaction_inspector.core.agents.claude_code.statusline"


def timed(stdin: str, cache: str, argv: list[str]) -> float:
    return ran(stdin, cache, argv)[0]


def ran(stdin: str, cache: str, argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env={"COMPACTION_INSPECTOR_CACHE_DIR": cache},
    )
    return time.perf_counter() - start, done.stdout


def speed(sizes: list[int]) -> None:
    command = [sys.executable, "-m", "compaction_inspector.tui.cli", "statusline"]
    floor = statistics.median(timed("", "off", [sys.executable, "-c", FLOOR]) for _ in range(RUNS))
    analyze = [sys.executable, "-m", "compaction_inspector.tui.cli", "analyze", "--json"]
    print("| session | warm | cold | warm against the floor | `analyze` of its last 1 MB | cold against it |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| the floor (importing the module) | {floor:.3f} s | | 1.0× | | |")
    for size in sizes:
        path = session_file(size)
        given = json.dumps({"transcript_path": str(path)})
        colds, warms, catching = [], [], []
        for _ in range(RUNS):
            cache = tempfile.mkdtemp()
            took, said = ran(given, cache, command)
            colds.append(took)
            calls = 1
            while "≥" in said and calls < 50:  # the calls that read on the part before the tail
                took, said = ran(given, cache, command)
                catching.append(took)
                calls += 1
            warms.append(timed(given, cache, command))
        warm, cold = statistics.median(warms), statistics.median(colds)
        if catching:
            print(
                f"<!-- {size} MB: {len(catching) // RUNS} calls reading on, median {statistics.median(catching):.3f} s -->"
            )
        with tempfile.TemporaryDirectory() as folder:
            last = Path(folder) / "last.jsonl"
            data = path.read_bytes()
            start = data.find(b"\n", max(0, len(data) - 1_000_000)) + 1  # from a whole line
            last.write_bytes(data[start:])
            tail = statistics.median(timed("", "off", [*analyze, str(last)]) for _ in range(RUNS))
        print(
            f"| {size} MB | {warm:.3f} s | {cold:.3f} s | {warm / floor:.1f}× | {tail:.3f} s | {cold / tail:.2f}× |"
        )


def replay(paths: list[Path]) -> None:
    print(
        "| transcript | automatic compaction (line) | its own count | the line's count at the line before"
        " | first said at the point, requests before | too early |"
    )
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for path in paths:
        lines = path.read_bytes().splitlines(keepends=True)
        tail, said_at, requests, count = statusline.Tail(), None, 0, None
        for number, raw in enumerate(lines, 1):
            record = json.loads(raw) if raw.strip() else {}
            boundary = record.get("type") == "system" and record.get("subtype") == "compact_boundary"
            metadata = record.get("compactMetadata", {}) if boundary else {}
            if metadata.get("trigger") == "auto":
                early = "—" if said_at is None else requests - said_at
                own = metadata.get("preTokens")
                print(
                    f"| `{path.name}` | {number} | {own if own is not None else '—':,} "
                    f"| {count if count is not None else '—':,} | {early} "
                    f"| {'yes' if isinstance(early, int) and early > 1 else 'no'} |"
                )
            before = tail.prompts[-1:] if tail.prompts else []
            statusline.advance(tail, [raw])
            if boundary:
                said_at, requests, count = None, 0, None
                continue
            requests += tail.prompts[-1:] != before  # a new response reported its prompt
            figures = statusline.figures(tail, Config(CATALOGUE), {})  # as the line reads after this line
            count, left = figures.count, figures.left
            if left is not None and left.left <= 0 and said_at is None:
                said_at = requests


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.statusline", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sizes", default="1,10", help="MB, comma separated")
    parser.add_argument(
        "--replay", nargs="*", default=[], help="Claude Code transcripts to replay line by line"
    )
    args = parser.parse_args()
    if args.replay:
        replay([Path(p) for p in args.replay])
    else:
        speed([int(s) for s in args.sizes.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())

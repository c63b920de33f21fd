"""The status line as Claude Code runs it: `python3 -m benchmarks.statusline [--sizes 1,100]
[--replay PATH...]`.

Speed: each call is a fresh process fed the status line JSON on stdin, on the generated
sessions of `benchmarks.run`: cold (no entry; the calls between, reading on the part before
the tail, are reported apart), warm (its entry kept from the calls before, the part before
the tail read whole, the file as the last call left it) and grown (warm, a response's lines
written since the last call: the call Claude Code makes after each message). Against a
process that only starts the interpreter, cold against `analyze --json` of the session's last
1 MB, and with `--ccusage COMMAND` against `COMMAND statusline --no-cache` on the same file,
taken in turns. Both run in a home where the transcript is where Claude Code keeps it
(`~/.claude/projects/<project>/<session id>.jsonl`), so ccusage finds the session and prices
it as the status line does: a line of ccusage's with no session cost fails the run.
Prints a Markdown table of medians.

`--replay`: real Claude Code transcripts grown line by line as if live; after each response
the line's "compacts in" is read after each line. For every automatic compaction the file records: how many
requests before it the figure first said the point was reached, and whether it said so
more than one request early (a request: a response's prompt reported), beside the count
the agent recorded (`preTokens`) and the line's count at the line before it.
"""

from __future__ import annotations

import argparse
import json
import shlex
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
GROWN_LINES = 4  # a response as Claude Code writes it: its lines, a tool's result, the next prompt
MODEL = "claude-sonnet-4-5"


def timed(stdin: str, cache: str, argv: list[str]) -> float:
    return ran(stdin, cache, argv)[0]


def ran(stdin: str, cache: str, argv: list[str]) -> tuple[float, str]:
    """Seconds `argv` took on `stdin`, and what it printed; a cache folder's run has a home
    beside it (the one the transcript is in), as a user's has."""
    home = {"HOME": str(Path(cache).parent / "home")} if cache != "off" else {}
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env={"COMPACTION_INSPECTOR_CACHE_DIR": cache, **home},
    )
    return time.perf_counter() - start, done.stdout


SESSION_ID = "benchmark-session"  # the transcript's file name: how ccusage finds the session it prices


def speed(sizes: list[int], ccusage: str | None) -> None:
    command = [sys.executable, "-m", "compaction_inspector.tui.cli", "statusline"]
    floor = statistics.median(timed("", "off", [sys.executable, "-c", "pass"]) for _ in range(RUNS))
    analyze = [sys.executable, "-m", "compaction_inspector.tui.cli", "analyze", "--json"]
    print(
        "| session | cold | warm | grown | ccusage | grown / ccusage | `analyze` of its last 1 MB | cold / that |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| the floor (an interpreter that does nothing) | | {floor:.3f} s | | | | | |")
    for size in sizes:
        path = session_file(size)
        lines = path.read_bytes().splitlines(keepends=True)
        cut = len(lines) - RUNS * GROWN_LINES
        colds, warms, growns, theirs, catching = [], [], [], [], []
        with tempfile.TemporaryDirectory() as folder:
            project = Path(folder) / "home" / ".claude" / "projects" / "-benchmark"
            project.mkdir(parents=True)
            live = project / f"{SESSION_ID}.jsonl"
            given = json.dumps({"transcript_path": str(live)})
            theirs_given = json.dumps(
                {
                    "session_id": SESSION_ID,
                    "transcript_path": str(live),
                    "model": {"id": MODEL, "display_name": MODEL},
                    "workspace": {"current_dir": folder, "project_dir": folder},
                    "cwd": folder,
                }
            )
            for run in range(RUNS):
                live.write_bytes(b"".join(lines[:cut]))
                cache = tempfile.mkdtemp(dir=folder)
                took, said = ran(given, cache, command)
                colds.append(took)
                calls = 1
                while "≥" in said and calls < 50:  # the calls that read on the part before the tail
                    took, said = ran(given, cache, command)
                    catching.append(took)
                    calls += 1
                warms.append(timed(given, cache, command))
                with live.open("ab") as f:  # a response's lines, written since the last call
                    f.write(b"".join(lines[cut + run * GROWN_LINES : cut + (run + 1) * GROWN_LINES]))
                growns.append(timed(given, cache, command))
                if ccusage is not None:
                    took, said = ran(theirs_given, cache, [*shlex.split(ccusage), "statusline", "--no-cache"])
                    if "N/A session" in said:
                        raise SystemExit(f"ccusage did not price the session: {said.strip()}")
                    theirs.append(took)
        warm, cold, grown = statistics.median(warms), statistics.median(colds), statistics.median(growns)
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
        them = f"{statistics.median(theirs):.3f} s" if theirs else "—"
        versus = f"{grown / statistics.median(theirs):.2f}×" if theirs else "—"
        print(
            f"| {size} MB | {cold:.3f} s | {warm:.3f} s | {grown:.3f} s | {them} | {versus} "
            f"| {tail:.3f} s | {cold / tail:.2f}× |"
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
    parser.add_argument("--sizes", default="1,30", help="MB, comma separated")
    parser.add_argument("--ccusage", help="the ccusage command to time beside it (`npx ccusage`, a path)")
    parser.add_argument(
        "--replay", nargs="*", default=[], help="Claude Code transcripts to replay line by line"
    )
    args = parser.parse_args()
    if args.replay:
        replay([Path(p) for p in args.replay])
    else:
        speed([int(s) for s in args.sizes.split(",")], args.ccusage)
    return 0


if __name__ == "__main__":
    sys.exit(main())

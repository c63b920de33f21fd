"""A hostile session: 100,000 tool calls no result ever answers, 1,000 to each of 100
responses (78 MB). `python3 -m benchmarks.unanswered [--runs 3]`.

Times `compare --json` (a first run: the rows earlier runs kept are removed before each)
and `report` against `analyze --json` of the same file, each a fresh process with the
token cache filled, medians of `--runs`; prints a Markdown table with peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from benchmarks.commands import measured
from benchmarks.run import RESULTS

RESPONSES, CALLS = 100, 1_000


def session_file() -> Path:
    """The session, written once: each response's calls on lines of their own, as Claude
    Code writes a response's blocks, and a prompt before each response."""
    target = RESULTS / "sessions" / f"unanswered-{RESPONSES * CALLS}.jsonl"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    parent: str | None = None
    count = 0
    with open(target, "w", encoding="utf-8") as out:

        def line(record: dict[str, object]) -> None:
            nonlocal parent, count
            count += 1
            me = str(uuid.UUID(int=count))
            stamp = f"2026-11-19T10:{count // 3600 % 60:02d}:{count // 60 % 60:02d}.{count % 1000:03d}Z"
            record.update(parentUuid=parent, isSidechain=False, userType="external", cwd="/home/dev/x",
                          sessionId="6a1e0c3d-2f47-4a8e-9d61-0c7e4f2a8b13", version="2.1.40",
                          uuid=me, timestamp=stamp)  # fmt: skip
            parent = me
            out.write(json.dumps(record, separators=(",", ":")) + "\n")

        for k in range(RESPONSES):
            line(
                {
                    "type": "user",
                    "message": {"role": "user", "content": f"Step {k}: run every module's tests."},
                }
            )
            for j in range(CALLS):
                call = {"type": "tool_use", "id": f"toolu_{k:04d}_{j:04d}", "name": "Bash",
                        "input": {"command": f"pytest tests/test_mod{j}.py -x -q --tb=short  # run {k}.{j}",
                                  "description": "Run one module's tests and stop at the first failure"}}  # fmt: skip
                usage = {"input_tokens": 4, "cache_creation_input_tokens": 100,
                         "cache_read_input_tokens": 20_000 + k * 300, "output_tokens": 60}  # fmt: skip
                message = {"id": f"msg_{k:04d}", "type": "message", "role": "assistant",
                           "model": "claude-sonnet-4-5-20250929", "content": [call], "usage": usage}  # fmt: skip
                line({"type": "assistant", "message": message, "requestId": f"req_{k:04d}"})
    return target


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.unanswered", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = str(session_file())
    cli = [sys.executable, "-m", "compaction_inspector.tui.cli"]
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = cache = str(Path(scratch) / "cache")
        out = str(Path(scratch) / "report.html")
        measured([*cli, "analyze", path])  # fills the token cache
        commands = {
            "analyze --json": [*cli, "analyze", path, "--json"],
            "compare --json": [*cli, "compare", path, "--json"],
            "report": [*cli, "report", path, "-o", out, "--force"],
        }
        results = {}
        for name, argv in commands.items():
            runs = []
            for _ in range(args.runs):
                shutil.rmtree(Path(cache) / "compare", ignore_errors=True)  # a first run, every time
                runs.append(measured(argv))
            results[name] = runs
    anchor = statistics.median(t for t, _ in results["analyze --json"])
    print(
        f"\n{RESPONSES * CALLS:,} unanswered calls ({os.path.getsize(path) / 1e6:.0f} MB), median of {args.runs}\n"
    )
    print("| command | time | / analyze | peak memory |")
    print("| --- | --- | --- | --- |")
    for name, runs in results.items():
        seconds = statistics.median(t for t, _ in runs)
        print(
            f"| `{name}` | {seconds:.2f} s | {seconds / anchor:.2f}x | {max(m for _, m in runs) / 1e6:.0f} MB |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

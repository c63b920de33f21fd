"""A long hostile-input run: `python3 -m benchmarks.fuzz [--mutants N] [--seed S] [PATH...]`.

Every file of the hand-made corpus (`tests/hostile.py`), then N seeded mutants of the
bundled samples and of any transcripts given (a folder means every `.jsonl` under it),
each through every command the CI run uses. Counts what must stay 0: tracebacks, runs
past the deadline, exit codes other than 0/2/3/4, escape sequences in the output, and
inputs that were written. Prints a Markdown summary (`--json` for one object) and the
first failure of each kind, so a failure can be replayed from its seed and number.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.sessions import transcripts_under
from tests.hostile import CORPUS, mutants, run_cli
from tests.test_hostile import EXITS, commands


def inputs(seed: int, count: int, given: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    yield from sorted(CORPUS.items())
    yield from mutants(seed, count)
    real = {p.name: p.read_bytes() for p in transcripts_under(CATALOGUE, given)}
    if real:
        yield from mutants(seed + 1, count, real)


def run(seed: int, count: int, given: Sequence[str], seconds: int) -> dict[str, Any]:
    tally: Counter[str] = Counter()
    first: dict[str, str] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, data in inputs(seed, count, given):
            target = root / name
            target.write_bytes(data)
            tally["inputs"] += 1
            for argv in commands(target, root / "memory"):
                tally["runs"] += 1
                outcome = run_cli(argv, seconds)
                kind = (
                    ("hangs" if outcome.crash.rstrip().endswith(f"after {seconds} s") else "tracebacks")
                    if outcome.crash
                    else "bad exit codes"
                    if outcome.code not in EXITS
                    else "escapes in output"
                    if outcome.leaked
                    else None
                )
                if kind:
                    tally[kind] += 1
                    first.setdefault(
                        kind, f"{name} {argv[0]} {' '.join(argv[2:])}: {outcome.crash or outcome.err}"
                    )
            if target.read_bytes() != data:
                tally["inputs written"] += 1
                first.setdefault("inputs written", name)
            target.unlink()
    tally["seconds"] = round(time.perf_counter() - start)
    return {"seed": seed, "mutants": count, "counts": dict(tally), "first": first}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.fuzz", description=__doc__)
    parser.add_argument("paths", nargs="*", help="real transcripts (or folders) to mutate as well")
    parser.add_argument("--mutants", type=int, default=1000, help="mutants of the samples, and of the paths")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=60, help="a run longer than this is a hang")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.seed, args.mutants, args.paths, args.seconds)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    counts = report["counts"]
    print(
        "| inputs | runs | tracebacks | hangs | bad exit codes | escapes in output | inputs written | seconds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    keys = (
        "inputs",
        "runs",
        "tracebacks",
        "hangs",
        "bad exit codes",
        "escapes in output",
        "inputs written",
        "seconds",
    )
    print("| " + " | ".join(f"{counts.get(k, 0):,}" for k in keys) + " |")
    for kind, example in report["first"].items():
        print(f"\nfirst of {kind}: {example[:2000]}", file=sys.stderr)
    return 1 if report["first"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

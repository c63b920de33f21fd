"""Every command's figures on a set of transcripts, kept to compare two commits:
`python3 -m benchmarks.figures OUT PATH...` writes each command's output per file into
OUT (a folder); `--against BEFORE` then lists every output that differs from BEFORE's.

A change meant to move code without changing a figure (an agent's package, a registry)
runs it before and after: every command's `--json` (and the status line's line) must be
byte-identical. Each run has a cache folder of its own, so no figure depends on what an
earlier run kept. Not part of the test suite: the real transcripts are not in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# every strategy an agent replays, the app's first, and a summarizing one
STRATEGIES = ("claude-code", "codex", "opencode", "hysteresis", "aider")
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("analyze", "--json"),
    ("compactions", "--json"),
    ("compare", "--json"),
    *(("simulate", "--json", "--strategy", s) for s in STRATEGIES),
    ("watch", "--once"),
    ("statusline",),  # fed the transcript as Claude Code feeds it: cold, reading on, then kept
)
STATUS_CALLS = 12  # at most: a first call, the calls reading on the part before its tail, a kept one
TWICE = ("compare",)  # run again in the same cache: the second reads back what the first kept
_TRANSCRIPTS = (".jsonl", ".json", ".yaml")


def transcripts(given: Sequence[str]) -> Iterator[Path]:
    """The files named, and every transcript under a folder named, in a stable order."""
    for name in given:
        path = Path(name)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in _TRANSCRIPTS and p.is_file())
        elif path.suffix in _TRANSCRIPTS or path.suffix == ".db":
            yield path


def _run(args: Sequence[str], cache: Path, stdin: bytes | None = None) -> bytes:
    env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": str(cache), "NO_COLOR": "1", "COLUMNS": "160"}
    done = subprocess.run(
        [sys.executable, "-m", "compaction_inspector.tui.cli", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=900,
        check=False,
    )
    return done.stdout + b"\n--- stderr ---\n" + done.stderr + f"\n--- exit {done.returncode}\n".encode()


def _status_calls(path: str, cache: Path) -> bytes:
    """The status line's calls on an unchanged transcript in one cache: the first, each one
    reading on till its figures are the whole file's, and one more (from what was kept)."""
    given = json.dumps({"transcript_path": str(Path(path).resolve())}).encode()
    said = [_run(["statusline"], cache, given)]
    reading_on = "≥".encode()  # the part before the tail is still being read
    while reading_on in said[-1] and len(said) < STATUS_CALLS:
        said.append(_run(["statusline"], cache, given))
    said.append(_run(["statusline"], cache, given))
    return b"".join(said)


def _jobs(files: Sequence[Path], only: Sequence[str] = ()) -> Iterator[tuple[str, list[str]]]:
    for i, path in enumerate(files):
        for command in COMMANDS:
            if only and command[0] not in only:
                continue
            yield f"{i:03d}-{path.name}.{'.'.join(command).replace('--', '')}", [*command, str(path)]


def write(out: Path, given: Sequence[str], only: Sequence[str] = ()) -> int:
    """Each command's output on each transcript into `out`; the number written."""
    out.mkdir(parents=True, exist_ok=True)
    files = list(transcripts(given))
    (out / "files.json").write_text(json.dumps([str(p) for p in files], indent=1))
    with tempfile.TemporaryDirectory() as tmp:

        def one(job: tuple[str, list[str]]) -> None:
            name, args = job
            cache = Path(tmp) / name
            (out / name).write_bytes(
                _status_calls(args[1], cache) if args[0] == "statusline" else _run(args, cache)
            )

        jobs = list(_jobs(files, only))
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(one, jobs))
    return len(jobs)


def differing(before: Path, after: Path) -> list[str]:
    """The outputs of `after` that are missing from `before` or differ from it."""
    return sorted(
        p.name
        for p in after.iterdir()
        if p.name != "files.json"
        and (not (before / p.name).exists() or (before / p.name).read_bytes() != p.read_bytes())
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--against", type=Path, help="a folder an earlier run wrote: list what differs")
    parser.add_argument("--only", nargs="+", default=(), metavar="COMMAND", help="run only these commands")
    args = parser.parse_args(argv)
    if args.paths:
        print(f"{write(args.out, args.paths, args.only)} outputs written to {args.out}")
    if args.against:
        changed = differing(args.against, args.out)
        print("\n".join(changed) if changed else "every output is byte-identical")
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""This checkout against an earlier commit, measured in one run on the same sessions.

    .venv/bin/python -m benchmarks.compare --base COMMIT [--sizes 10,100] [--runs 3] [--skip-app]

The base is checked out in a temporary git worktree; each version's own
`benchmarks/run.py` functions are run in fresh interpreters, the two versions taken in
turns so the machine's drift falls on both alike. A version is imported from its own
tree (under its installed name through a tree of links, or as bare `core` for commits
from before the one installed name), and each runs as its program does (a version with
`tui/heap.py` sets the collector as its app and command line do). Rows: loading against
`json.loads`, counting against raw tiktoken, each strategy and replay as a share of the
counting in its interpreter (the median), and the app's keys (the median). The change
is after / before: over 1.15 is more than 15 % slower. Written to
benchmarks/results/compare.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import byte_compiled
from benchmarks.run import RESULTS, machine, session_file

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tui", "sample_sessions")


class Version:
    """A tree of the product, and how a fresh interpreter imports it."""

    def __init__(self, label: str, root: Path, links: Path) -> None:
        self.label, self.root = label, root
        self.path = [str(root)]
        namespaced = "compaction_inspector" in (root / "core" / "strategies" / "__init__.py").read_text()
        if namespaced:  # its modules import compaction_inspector.core: link the folders under that name
            package = links / label / "compaction_inspector"
            package.mkdir(parents=True)
            for name in PACKAGES:
                (package / name).symlink_to(root / name, target_is_directory=True)
            self.path.insert(0, str(package.parent))
        self.sets_collector = (root / "tui" / "heap.py").exists()

    def call(self, name: str, *args: str) -> Any:
        """`benchmarks.run.name(Path(args[0]), *args[1:])` of this version, in a new interpreter."""
        setup = "from compaction_inspector.tui import heap\nheap.configure()\n" if self.sets_collector else ""
        code = (
            f"import json, sys\nsys.path[:0] = {self.path!r}\nfrom pathlib import Path\n{setup}"
            f"from benchmarks.run import {name}\n"
            f"args = [int(a) if a.isdigit() else a for a in sys.argv[2:]]\n"
            f"print(json.dumps({name}(Path(sys.argv[1]), *args)))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, cwd=self.root
        )
        return json.loads(out.stdout.splitlines()[-1])

    def strategy_names(self) -> list[str]:
        code = (
            f"import json, sys\nsys.path[:0] = {self.path!r}\n"
            "from benchmarks.run import _strategy_runs\nprint(json.dumps(list(_strategy_runs((), None))))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=self.root
        )
        return list(json.loads(out.stdout.splitlines()[-1]))


def rows(versions: list[Version], path: Path, runs: int, app: bool) -> dict[str, list[float]]:
    """Each row's figure for each version (lower is better), measured in turns."""
    out: dict[str, list[list[float]]] = {}

    def add(row: str, k: int, value: float) -> None:
        out.setdefault(row, [[] for _ in versions])[k].append(value)

    names = [n for n in versions[0].strategy_names() if n in set(versions[1].strategy_names())]
    for _ in range(runs):
        for k, v in enumerate(versions):
            load = v.call("bench_load", str(path), "1")
            add("load / json.loads", k, load["ratio"])
            tokens = v.call("bench_tokens", str(path), "1")
            add("count / raw tiktoken", k, tokens["ratio"])
            for name in names:
                r = v.call("bench_strategy", str(path), name)
                add(f"{name} / counting", k, r["s"] / r["count_s"])
            if app:
                a = v.call("bench_app", str(path))
                for key in (
                    "scroll_median_ms",
                    "step_median_ms",
                    "jump_to_last_step_ms",
                    "step_unpaused_median_ms",
                ):
                    add(f"app {key}", k, a[key])
    return {row: [statistics.median(x) for x in values] for row, values in out.items()}


def _figure(row: str, x: float) -> str:
    if row.startswith("app"):
        return f"{x:.0f} ms"
    return f"{x:.2f}×" if "/ json" in row or "/ raw" in row else f"{x:.1%}"


def markdown(base: str, results: dict[int, dict[str, list[float]]], command: str) -> str:
    lines = [f"Command: `{command}`  ", f"Machine: {machine()}  ", f"Base: `{base}`", ""]
    for mb, table in results.items():
        lines += [
            f"{mb} MB session:",
            "",
            "| row | base | this checkout | after / before |",
            "| --- | --- | --- | --- |",
        ]
        for row, (before, after) in table.items():
            change = after / before if before else float("inf")
            flag = " **slower**" if change > 1.15 else ""
            lines.append(f"| {row} | {_figure(row, before)} | {_figure(row, after)} | {change:.2f}{flag} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the commit to measure against")
    parser.add_argument("--sizes", default="10,100", help="MB, comma separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-app", action="store_true")
    args = parser.parse_args()
    from compaction_inspector.tui import heap

    heap.configure()
    command = "python3 -m benchmarks.compare " + " ".join(sys.argv[1:])
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.base], cwd=ROOT, check=True)
        byte_compiled(tree)
        try:
            versions = [Version("base", tree, Path(scratch)), Version("head", ROOT, Path(scratch))]
            results: dict[int, dict[str, list[float]]] = {}
            for mb in (int(s) for s in args.sizes.split(",")):
                print(f"{mb} MB…", flush=True)
                results[mb] = rows(versions, session_file(mb), args.runs, not args.skip_app)
                print(json.dumps(results[mb], indent=1), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    report = markdown(args.base, results, command)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compare.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()

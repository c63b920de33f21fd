"""A user's install of a commit, to time the product as users run it:
`python3 -m benchmarks.installed DIR [--commit REV]`.

The commit (this checkout's HEAD by default) is checked out in a temporary git worktree and
installed with pip, with the `bench` extra, into a fresh virtual environment at DIR,
byte-compiled as pip leaves it. An editable install (`.venv`) adds its finder to every process: 13 ms, and modules such
as pathlib and importlib.util imported before the program starts, which hides part of what
each command imports. Prints DIR's interpreter; run any benchmark with it from this
checkout (`DIR/bin/python -m benchmarks.startup`): the benchmarks come from the checkout,
the product from the install. Two installs, of two commits, timed in turns, compare them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def install(at: Path, commit: str) -> Path:
    """The interpreter of a fresh virtual environment at `at` holding `commit` installed."""
    if at.exists():
        raise SystemExit(f"{at} exists: name a folder to make")
    python = at / "bin" / "python"
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"  # a worktree, as `benchmarks.compare` checks out its base
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
        try:
            venv.EnvBuilder(with_pip=True).create(at)
            subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"{tree}[bench]"], check=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    subprocess.run([str(python), "-c", "import compaction_inspector.tui.cli"], check=True)
    return python


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.installed", description=__doc__.splitlines()[0]
    )
    parser.add_argument("at", type=Path, help="the folder to make the virtual environment in")
    parser.add_argument("--commit", default="HEAD", help="what to install (default: this checkout's HEAD)")
    args = parser.parse_args()
    print(install(args.at.resolve(), args.commit))
    return 0


if __name__ == "__main__":
    sys.exit(main())

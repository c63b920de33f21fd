"""The benchmarks (`benchmarks/README.md`). Each times the package byte-compiled, as `pip
install` leaves it: a checkout run under PYTHONDONTWRITEBYTECODE would otherwise time
compiling each module changed since the last compile, at every start. Importing them
compiles this checkout; `byte_compiled` compiles another tree timed beside it."""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE_FOLDERS = ("core", "tui", "sample_sessions")  # pyproject's package-dir


def byte_compiled(root: Path) -> None:
    """The package's folders in the checkout at `root`, byte-compiled where they are not."""
    for folder in PACKAGE_FOLDERS:
        compileall.compile_dir(root / folder, quiet=1)


byte_compiled(Path(__file__).resolve().parent.parent)

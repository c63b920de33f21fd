"""The benchmarks (`benchmarks/README.md`). Importing them first byte-compiles the package,
as `pip install` leaves it: a checkout run under PYTHONDONTWRITEBYTECODE would otherwise
time compiling each module changed since the last compile, at every start."""

from __future__ import annotations

import compileall
import importlib.util

for _part in ("core", "tui", "sample_sessions"):
    _spec = importlib.util.find_spec(f"compaction_inspector.{_part}")
    for _folder in (_spec.submodule_search_locations or []) if _spec is not None else []:
        compileall.compile_dir(_folder, quiet=1)

"""Lint and type checks are part of the test suite, so one command runs them all."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ruff and mypy over every file

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tui", "sample_sessions")  # installed under compaction_inspector
CHECKED_TOO = ("tests", "benchmarks", "docs")  # the checkout's own code, by its own name


def test_ruff() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict() -> None:
    """mypy follows no editable-install finder, so it reads the folders under their
    installed name through a tree of links kept beside its cache; the tests, benchmarks
    and docs' scripts are checked as strictly as the product."""
    tree = ROOT / ".mypy_cache" / "installed"
    package = tree / "compaction_inspector"
    package.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        link = package / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name, target_is_directory=True)
    for name in CHECKED_TOO:
        link = tree / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name, target_is_directory=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "-p",
            "compaction_inspector",
            *(arg for name in CHECKED_TOO for arg in ("-p", name)),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_scripts_benchmarks_run_name_only_what_they_import(tmp_path: Path) -> None:
    """A benchmark runs some of its code as a script in a fresh interpreter, a string no
    linter reads in place: each is linted as the file it becomes."""
    scripts = []
    for module in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                text = node.value.value
                if isinstance(text, str) and "import " in text:
                    name = node.targets[0].id if isinstance(node.targets[0], ast.Name) else "script"
                    (script := tmp_path / f"{module.stem}_{name}.py").write_text(text)
                    scripts.append(script)
    assert len(scripts) >= 6  # commands, first_rows (three), keys, statusline
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "F821,F822,F823",
            *map(str, scripts),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

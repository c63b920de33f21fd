"""The examples the README and the guide show are what the program prints: each line of
an example's output appears, as written, in the output of its command (run at 100
columns from the repository's root). An example may leave lines out, never change one."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile import run_cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROMPT = "$ compaction-inspector "


def blocks(text: str) -> list[list[str]]:
    """The lines of each fenced block."""
    out: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("```") and current is None:
            current = []
        elif line.startswith("```") and current is not None:
            out.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return out


def examples() -> list[tuple[str, str, list[str]]]:
    """(where, the command's arguments, the output lines shown) of every example."""
    found = []
    for doc in DOCS:
        for block in blocks(doc.read_text()):
            if not block or not block[0].startswith(PROMPT):
                continue
            lines = block
            command = lines[0][len(PROMPT) :]
            n = 1
            while command.endswith("\\"):
                command = command[:-1] + lines[n].strip()
                n += 1
            found.append(
                (f"{doc.name}: {command[:60]}", command, [x.rstrip() for x in lines[n:] if x.strip()])
            )
    return found


def test_the_docs_have_examples() -> None:
    assert len(examples()) >= 3


@pytest.mark.parametrize(("where", "command", "shown"), examples(), ids=[e[0] for e in examples()])
def test_an_example_shows_what_the_program_prints(
    where: str, command: str, shown: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    outcome = run_cli(shlex.split(command))
    assert outcome.crash is None and outcome.code == 0, outcome.err
    printed = [line.rstrip() for line in outcome.out.splitlines()]
    missing = [line for line in shown if line not in printed]
    assert not missing, f"{where}: not printed: {missing}"


def test_the_command_reference_is_what_help_prints() -> None:
    """docs/reference.md is every command's --help as this program prints it (compared
    word for word: Python versions wrap argparse's help differently)."""
    from docs.make_reference import PAGE, reference

    assert PAGE.read_text().split() == reference().split(), "run: python3 -m docs.make_reference"


def test_every_page_is_linked_and_every_link_leads_somewhere() -> None:
    """Each page of docs/ is reached from the README or another page; each relative link
    in them names a file of the repository."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    linked: set[Path] = set()
    for doc in [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *pages]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
            where = (doc.parent / target).resolve()
            assert where.exists(), f"{doc.name} links to {target}, which is not there"
            linked.add(where)
    assert [p.name for p in pages if p.resolve() not in linked] == []


@pytest.mark.parametrize("name", ["app-hysteresis-step.svg", "app-side-by-side.svg"])
def test_a_readme_screenshot_shows_the_app_as_it_is(name: str) -> None:
    """The screenshots in docs/ are what the app draws today (the README shows them)."""
    import asyncio

    from docs.make_screenshots import HERE, SHOTS, render

    assert name in SHOTS
    assert (HERE / name).read_text() == asyncio.run(render(name)), "run: python3 -m docs.make_screenshots"


def test_the_library_examples_run(tmp_path: Path) -> None:
    """Every Python example in the docs runs as written, on the bundled sample where it
    names a session: a reader who copies one gets no error from an API that moved."""
    from compaction_inspector.sample_sessions import path

    blocks = [
        block
        for page in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    ]
    assert blocks
    for block in blocks:
        code = block.replace('"SESSION.jsonl"', repr(str(path())))
        env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": str(tmp_path)}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[-2000:]

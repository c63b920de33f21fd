"""The command's tables at a narrow terminal: one line a row, figures whole."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from compaction_inspector.sample_sessions import path
from compaction_inspector.sample_sessions.generate import generate
from tests.hostile import run_cli


def test_sessions_at_80_columns_keep_a_line_a_session_and_what_tells_them_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    shutil.copy(path("claude_code_compacted.jsonl"), project / "s.jsonl")
    out = run_cli(
        ["sessions", "--claude-dir", str(tmp_path / "projects"), "--codex-dir", str(tmp_path / "x")]
    ).out
    lines = out.splitlines()[-3:]  # the heading before them names the folders, wrapped
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].split()[:5] == ["title", "┃", "peak", "┃", "compactions"]
    assert (
        "Make test_expiry dete" in lines[2] and "16,165 (9%)" in lines[2] and "2026-11-19 10:03" in lines[2]
    )


def test_simulate_at_80_columns_keeps_the_pressure_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session whose contexts run to six digits, with compactions to describe."""
    monkeypatch.setenv("COLUMNS", "80")
    generate(tmp_path / "big.jsonl", 3_000_000)
    out = run_cli(["simulate", str(tmp_path / "big.jsonl"), "--context-window", "60000"]).out
    assert re.search(r"│ +\d{3},\d{3} │", out)
    rows = [line for line in out.splitlines() if "│" in line]
    assert rows and all(
        line.rstrip().split("│")[5].strip().endswith("%") for line in rows if line[:6].strip()
    )

"""The command's tables at a narrow terminal: one line a row, figures whole."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from compaction_inspector.core.replaying.simulation import Event, RoundPoint, shown_rounds
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


def _point(round_: int, pressure: float, event: bool = False) -> RoundPoint:
    happened = Event("policy", ("Auto-compact",), 100) if event else None
    return RoundPoint(round_, round_, 1, 100, 100, pressure, pressure, False, happened)


def test_a_long_replay_shows_its_ends_its_peak_and_every_compaction() -> None:
    points = [_point(r, r / 1000) for r in range(100)]
    points[30] = _point(30, 0.5, event=True)
    points[70] = _point(70, 0.95)  # the peak
    rows, thinned = shown_rounds(points, 10)
    assert rows == [0, 1, 17, 30, 34, 50, 66, 70, 83, 99] and not thinned
    assert shown_rounds(points, None) == (list(range(100)), False)
    assert shown_rounds(points[:10], 10) == (list(range(10)), False)


def test_more_compactions_than_rows_are_thinned_evenly() -> None:
    points = [_point(r, 0.5, event=r % 2 == 0) for r in range(100)]
    rows, thinned = shown_rounds(points, 5)
    assert thinned and len(rows) == 5 and rows[0] == 0 and rows[-1] == 99


def test_simulate_says_which_rounds_it_shows_and_all_rounds_shows_each(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    generate(big, 300_000, seed=3)
    short = run_cli(["simulate", str(big), "--strategy", "none"])
    every = run_cli(["simulate", str(big), "--strategy", "none", "--all-rounds"])
    assert short.code == every.code == 0
    found = re.search(r": ([\d,]+) rounds", short.out)
    assert found is not None
    rounds = int(found.group(1).replace(",", ""))

    def table(out: str) -> list[str]:
        return [line for line in out.splitlines() if re.match(r"\s+\d+ │", line)]

    assert len(table(short.out)) == 40 < rounds == len(table(every.out))
    assert f"40 of {rounds:,} rounds shown: the first, the last, the peak" in " ".join(short.out.split())
    assert "rounds shown" not in every.out


def test_compact_shows_the_first_and_last_steps_of_a_long_run_and_all_steps_shows_each(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.jsonl"
    generate(big, 1_600_000, seed=3)  # 45 volleys to summarize in a 20,000 window
    command = ["compact", str(big), "--strategy", "hysteresis", "--context-window", "20000"]
    short, every = run_cli(command), run_cli([*command, "--all-steps"])
    assert short.code == every.code == 0
    count = len(json.loads(run_cli([*command, "--json"]).out)["steps"])

    def steps(out: str) -> list[int]:
        return [int(n) for n in re.findall(r"─ step (\d+):", out)]

    assert count > 40 and steps(every.out) == list(range(1, count + 1))
    assert steps(short.out) == [*range(1, 21), *range(count - 19, count + 1)]
    said = f"… steps 21–{count - 20} not shown ({count - 40:,} of {count:,}): --all-steps shows every one"
    assert said in " ".join(short.out.split()) and "not shown" not in every.out
    assert short.out.splitlines()[-1] == every.out.splitlines()[-1]  # the same result either way


def test_analyze_lists_the_first_and_last_volleys_of_a_long_session_and_all_volleys_lists_each(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.jsonl"
    generate(big, 1_600_000, seed=3)
    short, every = run_cli(["analyze", str(big)]), run_cli(["analyze", str(big), "--all-volleys"])
    count = len(json.loads(run_cli(["analyze", str(big), "--json"]).out)["volleys"])

    def volleys(out: str) -> list[int]:
        return [int(n) for n in re.findall(r"^│ +(\d+) │", out, re.M)]

    assert count > 40 and volleys(every.out) == list(range(count))
    assert volleys(short.out) == [*range(20), *range(count - 20, count)]
    assert f"│ volleys 20–{count - 21} " in short.out
    assert f"40 of {count:,} volleys shown: the first and last 20; --all-volleys shows every one" in " ".join(
        short.out.split()
    )

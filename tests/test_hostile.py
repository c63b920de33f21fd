"""The hostile-input corpus through every command: no traceback, no exit code but the
documented ones, no escape sequence on stdout or stderr, the input never written.

`python3 -m benchmarks.fuzz` runs the same checks on many more mutants.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from pathlib import Path

import pytest

from compaction_inspector.core.agents.codex.agent import FORMAT as CODEX
from tests.hostile import COMMANDS, CORPUS, ESCAPES, Outcome, mutants, run_cli

pytestmark = pytest.mark.slow  # the hostile corpus through every command

EXITS = {0, 2, 3, 4}  # success, unreadable input or bad options, nothing to compact, truncation
CI_MUTANTS = 40


def commands(target: Path, memory: Path) -> list[list[str]]:
    return [
        *([c[0], str(target), *c[1:]] for c in COMMANDS),
        ["compact", str(target), "--strategy", "hysteresis", "--write", str(memory / "out.jsonl"), "--force"],
        ["checkpoint", str(target), "--memory-dir", str(memory)],
        ["checkpoint", str(target), "--detect", "--memory-dir", str(memory)],
    ]


def check(outcome: Outcome, argv: list[str]) -> None:
    assert outcome.crash is None, f"{argv}\n{outcome.crash}"
    assert outcome.code in EXITS, f"{argv}: exit {outcome.code}\n{outcome.err}"
    assert not outcome.leaked, f"{argv}: {outcome.leaked} reached the output"


def exercise(tmp_path: Path, name: str, data: bytes) -> None:
    target = tmp_path / name
    target.write_bytes(data)
    for argv in commands(target, tmp_path / "memory"):
        check(run_cli(argv), argv)
    assert target.read_bytes() == data  # never written


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_corpus_through_every_command(tmp_path: Path, name: str) -> None:
    exercise(tmp_path, name, CORPUS[name])


@pytest.mark.parametrize("part", range(4))  # the same mutants, a quarter each, run side by side
def test_mutated_samples_through_every_command(tmp_path: Path, part: int) -> None:
    for name, data in list(mutants(seed=0, count=CI_MUTANTS))[part::4]:
        exercise(tmp_path, name, data)


@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_a_file_name_with_an_escape_is_shown_not_obeyed(tmp_path: Path, kind: str) -> None:
    target = tmp_path / f"s{ESCAPES[kind].replace('/', '')}.jsonl"
    target.write_bytes(CORPUS["claude-big-usage.jsonl"])
    for argv in (["analyze", str(target)], ["analyze", str(tmp_path / "missing\x1b]0;x\x07.jsonl")]):
        check(run_cli(argv), argv)


def test_the_session_list_has_a_row_for_every_file_it_cannot_read(tmp_path: Path) -> None:
    """Every corpus file, a FIFO and a link to /dev/zero among a user's sessions: the list
    is made, one row each, and no row's text is obeyed."""
    claude = tmp_path / "claude" / "-p"
    codex = tmp_path / "codex" / "2026" / "01" / "01"
    claude.mkdir(parents=True)
    codex.mkdir(parents=True)
    for n, data in enumerate(CORPUS.values()):
        (claude / f"{n}.jsonl").write_bytes(data)
        (codex / f"rollout-{n}.jsonl").write_bytes(data)
    os.mkfifo(codex / "rollout-fifo.jsonl")
    (codex / "rollout-zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(claude / "fifo.jsonl")
    places = ["--claude-dir", str(tmp_path / "claude"), "--codex-dir", str(tmp_path / "codex")]
    for argv in (["sessions", *places], ["sessions", "--json", *places]):
        outcome = run_cli(argv, seconds=120)
        check(outcome, argv)
        assert outcome.code == 0
    rows = json.loads(run_cli(["sessions", "--json", *places]).out)
    fifo = next(r for r in rows if r["path"].endswith("rollout-fifo.jsonl"))
    zero = next(r for r in rows if r["path"].endswith("rollout-zero.jsonl"))
    assert fifo["problem"].endswith(": a FIFO, not a file to read") and fifo["agent"] == CODEX
    assert zero["problem"].endswith(": a device, not a file to read")
    assert len(rows) == 2 * len(CORPUS) + 2  # the Claude folder lists regular files only


def test_the_version_prints() -> None:
    outcome = run_cli(["--version"])
    assert (outcome.code, outcome.out) == (0, f"compaction-inspector {version('compaction-inspector')}\n")


def test_every_help_prints() -> None:
    from compaction_inspector.tui.cli.commandline import COMMANDS as NAMES

    for argv in (["--help"], *([name, "--help"] for name in NAMES)):
        outcome = run_cli(argv)
        assert (outcome.crash, outcome.code) == (None, 0), argv
        assert "usage: compaction-inspector" in outcome.out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--write", ""], "no file name given"),
        (["--strategy", "microcompact", "--now", "notatime"], "now must be an ISO 8601 time"),
        (
            ["--strategy", "trim", "--thresholds", "1,2,3"],
            "--thresholds is an option of hysteresis, not of trim",
        ),
    ],
)
def test_options_without_a_meaning_are_refused(tmp_path: Path, argv: list[str], said: str) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(CORPUS["claude-mixed-timestamps.jsonl"])
    strategy = [] if "--strategy" in argv else ["--strategy", "trim"]
    outcome = run_cli(["compact", str(target), *strategy, *argv])
    assert (outcome.crash, outcome.code) == (None, 2) and said in outcome.err


def test_times_with_and_without_a_zone_are_compared(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(CORPUS["claude-mixed-timestamps.jsonl"])
    for now in ("2025-01-01T00:00:00", "2026-01-01T06:00:00+00:00"):
        argv = ["compact", str(target), "--strategy", "microcompact", "--idle-gap-minutes", "5", "--now", now]
        outcome = run_cli(argv)
        check(outcome, argv)
        assert outcome.code == 0


def test_a_hook_event_of_any_type_and_a_broken_neighbour_never_break_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `hook_success` whose `hookEvent` is a list once ended every command in a
    traceback, and a slice (which takes its overhead from a complete session of its
    folder) failed with its neighbour."""
    from compaction_inspector.core.measuring import slices
    from compaction_inspector.sample_sessions import path

    lines = path("claude_code_session.jsonl").read_text().splitlines()
    attachment = {"type": "hook_success", "hookEvent": ["SessionStart"], "content": "x"}
    hostile = {
        "type": "attachment",
        "uuid": "h1",
        "parentUuid": None,
        "sessionId": "n",
        "attachment": attachment,
    }
    (tmp_path / "neighbour.jsonl").write_text("\n".join([json.dumps(hostile), *lines]) + "\n")
    (tmp_path / "slice.jsonl").write_text("\n".join(lines[10:]) + "\n")
    for name in ("neighbour.jsonl", "slice.jsonl"):
        ran = run_cli(["analyze", str(tmp_path / name), "--json"])
        assert ran.crash is None and ran.code == 0, ran.crash
    sliced = json.loads(run_cli(["analyze", str(tmp_path / "slice.jsonl"), "--json"]).out)
    assert sliced["slice"] and "neighbour.jsonl" in sliced["context"]["overhead_source"]

    def broken(*_: object) -> None:
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(slices, "_first_response_overhead", broken)
    ran = run_cli(["analyze", str(tmp_path / "slice.jsonl"), "--json"])
    assert ran.crash is None and ran.code == 0
    assert json.loads(ran.out)["context"]["overhead_source"].startswith("preset")

"""What the user's sessions beside one measured after their compactions (core/own/calibration.py)."""

import json
import os
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.model import Session
from compaction_inspector.core.own.calibration import (
    MAX_SESSIONS,
    Calibration,
    Measured,
    Siblings,
    across_sessions,
)


def write(folder: Path, name: str, version: str, *, compacted: bool = True, age: int = 0) -> Path:
    lines = [{"type": "user", "version": version, "message": {"role": "user", "content": "go"}}]
    if compacted:
        lines.append({"type": "system", "subtype": "compact_boundary", "version": version})
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    os.utime(path, (1_000_000 - age, 1_000_000 - age))
    return path


def measured_as(path: Path, residuals: tuple[tuple[str | None, tuple[str, ...], int], ...]) -> Measured:
    """What `measure` reads of a file `write` made: its version from its first line."""
    version = json.loads(path.read_text().splitlines()[0])["version"]
    return Measured("claude-code", version, True, residuals)


def test_the_nearest_sessions_of_the_version_that_compacted_are_measured_once_each(tmp_path: Path) -> None:
    mine = write(tmp_path, "mine", "2.1.49")
    write(tmp_path, "other-version", "2.1.45", age=1)
    write(tmp_path, "never-compacted", "2.1.49", compacted=False, age=2)
    for k in range(MAX_SESSIONS + 2):
        write(tmp_path, f"s{k}", "2.1.49", age=10 + k)
    measured: list[str] = []

    def measure(path: Path) -> Measured:
        measured.append(path.stem)
        return measured_as(path, (("auto", (), int(path.stem[1:]) * 1_000),))

    session = Session((), "claude-code", path=str(mine), metadata={"version": "2.1.49"})
    found = across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "cl100k_base")
    assert measured == [f"s{k}" for k in range(MAX_SESSIONS)]  # the nearest in time first
    assert found is not None and found.of("manual") is None
    auto = found.of("auto")
    assert auto == Calibration(((0,), (1_000,), (2_000,), (3_000,), (4_000,)), "2.1.49", "auto")
    assert (auto.correction, auto.span) == (2_000, (0, 4_000))
    assert auto.source == "calibrated on 5 automatic compactions of 2.1.49 in your sessions"
    # kept: read again only when a file changes, or under another key
    assert (
        across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "cl100k_base") == found
        and len(measured) == MAX_SESSIONS
    )
    with (tmp_path / "s0.jsonl").open("a") as grown:
        grown.write(json.dumps({"type": "user", "message": {"role": "user", "content": "more"}}) + "\n")
    os.utime(tmp_path / "s0.jsonl", (1_000_000 - 10, 1_000_000 - 10))
    across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "cl100k_base")
    assert measured[MAX_SESSIONS:] == ["s0"]
    across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "o200k_base")
    assert len(measured) == 2 * MAX_SESSIONS + 1


def test_the_same_session_gets_the_same_calibration_whatever_was_opened_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kept entry says which version its session was: a session of another version
    asking first neither lends it its figures nor leaves it empty for the next."""
    a = write(tmp_path, "a", "2.0.76")
    b = write(tmp_path, "b", "2.1.25", age=1)
    write(tmp_path, "old1", "2.0.76", age=2)
    write(tmp_path, "old2", "2.0.76", age=3)
    write(tmp_path, "new1", "2.1.25", age=4)
    write(tmp_path, "new2", "2.1.25", age=5)
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    figures = {"a": 10, "b": 20, "old1": 100, "old2": 300, "new1": 7_000, "new2": 9_000}

    def measure(path: Path) -> Measured:
        return measured_as(path, (("auto", (), figures[path.stem]),))

    def asked(path: Path, version: str) -> Siblings | None:
        session = Session((), "claude-code", path=str(path), metadata={"version": version})
        return across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "k")

    fresh = asked(a, "2.0.76")
    assert fresh is not None and fresh.of("auto") == Calibration(((100,), (300,)), "2.0.76", "auto")
    (tmp_path / "cache" / "calibration.json").unlink()
    asked(b, "2.1.25")  # warms the cache with the other version's files
    assert asked(a, "2.0.76") == fresh
    assert asked(b, "2.1.25") is not None


def test_a_correction_is_applied_only_where_it_would_have_helped_the_sessions_it_comes_from() -> None:
    """Each session corrected by the others' median: applied only if that lowers their
    median error below the plain model's; one session is too few to check."""
    agree = Calibration(((5_000,), (6_000,), (7_000,)), "2.1.49", "auto")
    assert agree.errors == (6_000, 1_500) and agree.helps
    scattered = Calibration(((30_000,), (-2_000,), (1_000,)), "2.1.49", "auto")
    assert scattered.errors == (2_000, 17_500) and not scattered.helps
    assert scattered.declined == (
        "not calibrated: corrected by each other, your 3 automatic compactions of 2.1.49 "
        "would have been 17,500 off at the median, against 2,000 for the plain model"
    )
    alone = Calibration(((5_000, 6_000),), "2.1.49", "manual")
    assert alone.errors is None and not alone.helps
    assert alone.declined == (
        "not calibrated: 2 manual compactions of 2.1.49 in 1 other session of yours, "
        "too few to check a correction on"
    )


def test_a_session_with_no_version_or_no_file_has_nothing_to_go_by(tmp_path: Path) -> None:
    write(tmp_path, "s0", "2.1.49")
    never = lambda path: Measured("claude-code", "2.1.49", True, (("auto", (), 1),))  # noqa: E731
    assert (
        across_sessions(
            Session((), "claude-code", metadata={"version": "2.1.49"}),
            CATALOGUE.by_format["claude-code"],
            never,
            "k",
        )
        is None
    )
    unversioned = Session((), "claude-code", path=str(tmp_path / "mine.jsonl"))
    assert across_sessions(unversioned, CATALOGUE.by_format.get(unversioned.format), never, "k") is None


def test_each_agent_is_read_for_its_own_version_and_mark_of_a_compaction(tmp_path: Path) -> None:
    """A Codex rollout names its version as `cli_version` and marks a compaction with a
    `compacted` line; a mark past the first read, across two reads, is found too."""

    def rollout(name: str, version: str, compacted: bool, padding: int = 0) -> Path:
        lines = [
            {"type": "session_meta", "payload": {"id": name, "cli_version": version}},
            {"type": "response_item", "payload": {"type": "message", "content": "x" * padding}},
        ]
        if compacted:
            lines.append({"type": "compacted", "payload": {"message": ""}})
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        return path

    mine = rollout("mine", "0.142.0", True)
    rollout("far", "0.142.0", True, padding=(1 << 20) + 64_000 - 165)  # its mark straddles two reads
    rollout("none", "0.142.0", False)
    rollout("older", "0.140.0", True)
    measured: list[str] = []

    def measure(path: Path) -> Measured:
        measured.append(path.stem)
        return Measured("codex", "0.142.0", True, (("auto", (), 1),))

    session = Session((), "codex", path=str(mine), metadata={"version": "0.142.0"})
    found = across_sessions(session, CATALOGUE.by_format.get(session.format), measure, "k")
    assert found is not None and found.of("auto") == Calibration(((1,),), "0.142.0", "auto")
    assert measured == ["far"]


def test_a_compaction_after_a_hook_the_transcript_lacks_is_calibrated_by_those_after_the_same_hook() -> None:
    """What a hook sent on a compaction, unrecorded, is in that compaction's residual
    only: it calibrates compactions after the same hook, and no others."""
    hook = ("the SessionStart hook 'entire hooks claude-code session-start' ran on it",)
    other = ("the SessionStart hook 'make context' ran on it",)
    siblings = Siblings(
        (
            Measured("claude-code", "2.1.45", True, (("auto", hook, 9_000), ("auto", (), 500))),
            Measured("claude-code", "2.1.45", True, (("auto", hook, 11_000), ("auto", other, 40_000))),
            Measured("claude-code", "2.1.45", True, (("auto", hook, 10_000),)),
        ),
        "2.1.45",
    )
    after_hook = siblings.of("auto", hook)
    assert after_hook == Calibration(((9_000,), (11_000,), (10_000,)), "2.1.45", "auto", hook)
    assert after_hook.errors == (10_000, 1_500) and after_hook.correction == 10_000
    assert after_hook.source == (
        "calibrated on 3 automatic compactions of 2.1.45 after the same hooks "
        "(their output not in the transcripts) in your sessions"
    )
    assert siblings.of("auto") == Calibration(((500,),), "2.1.45", "auto")
    assert siblings.of("auto", other) == Calibration(((40_000,),), "2.1.45", "auto", other)
    assert siblings.of("manual", hook) is None
    # kept between runs with its hooks; an entry kept before hooks were told apart is read again
    kept = siblings.sessions[1]
    assert Measured.from_json(json.loads(json.dumps(kept.to_json()))) == kept
    assert Measured.from_json({**kept.to_json(), "residuals": [["auto", 500]]}) is None

"""What the user's sessions beside one measured after their compactions (core/calibration.py)."""

import json
import os
from pathlib import Path

from compaction_inspector.core.calibration import MAX_SESSIONS, Calibration, across_sessions
from compaction_inspector.core.model import Session


def write(folder: Path, name: str, version: str, *, compacted: bool = True, age: int = 0) -> Path:
    lines = [{"type": "user", "version": version, "message": {"role": "user", "content": "go"}}]
    if compacted:
        lines.append({"type": "system", "subtype": "compact_boundary", "version": version})
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    os.utime(path, (1_000_000 - age, 1_000_000 - age))
    return path


def test_the_nearest_sessions_of_the_version_that_compacted_are_measured_once_each(tmp_path: Path) -> None:
    mine = write(tmp_path, "mine", "2.1.49")
    write(tmp_path, "other-version", "2.1.45", age=1)
    write(tmp_path, "never-compacted", "2.1.49", compacted=False, age=2)
    for k in range(MAX_SESSIONS + 2):
        write(tmp_path, f"s{k}", "2.1.49", age=10 + k)
    measured: list[str] = []

    def measure(path: Path) -> tuple[int, ...]:
        measured.append(path.stem)
        return (int(path.stem[1:]) * 1_000,)

    session = Session((), "claude-code", path=str(mine), metadata={"version": "2.1.49"})
    found = across_sessions(session, measure, "cl100k_base")
    assert measured == [f"s{k}" for k in range(MAX_SESSIONS)]  # the nearest in time first
    assert found == Calibration((0, 1_000, 2_000, 3_000, 4_000), "2.1.49")
    assert (found.correction, found.span) == (2_000, (0, 4_000))
    assert found.source == "calibrated on 5 compactions of 2.1.49 in your sessions"
    # kept: read again only when a file changes, or under another key
    assert across_sessions(session, measure, "cl100k_base") == found and len(measured) == MAX_SESSIONS
    with (tmp_path / "s0.jsonl").open("a") as grown:
        grown.write(json.dumps({"type": "user", "message": {"role": "user", "content": "more"}}) + "\n")
    os.utime(tmp_path / "s0.jsonl", (1_000_000 - 10, 1_000_000 - 10))
    across_sessions(session, measure, "cl100k_base")
    assert measured[MAX_SESSIONS:] == ["s0"]
    across_sessions(session, measure, "o200k_base")
    assert len(measured) == 2 * MAX_SESSIONS + 1


def test_a_session_with_no_version_or_no_file_has_nothing_to_go_by(tmp_path: Path) -> None:
    write(tmp_path, "s0", "2.1.49")
    never = lambda path: (1,)  # noqa: E731
    assert across_sessions(Session((), "claude-code", metadata={"version": "2.1.49"}), never, "k") is None
    unversioned = Session((), "claude-code", path=str(tmp_path / "mine.jsonl"))
    assert across_sessions(unversioned, never, "k") is None


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

    def measure(path: Path) -> tuple[int, ...]:
        measured.append(path.stem)
        return (1,)

    session = Session((), "codex", path=str(mine), metadata={"version": "0.142.0"})
    assert across_sessions(session, measure, "k") == Calibration((1,), "0.142.0")
    assert measured == ["far"]

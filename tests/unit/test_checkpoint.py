import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from compaction_inspector.core.files import NotRegularFile, WriteRefused
from compaction_inspector.core.model import Block, Message, Session
from compaction_inspector.core.replaying.checkpoint import (
    Checkpoint,
    append_checkpoint,
    build,
    detect,
    parse,
    read_memory,
    triggers,
)
from compaction_inspector.sample_sessions import path
from tests.helpers import call, load, result, u


def test_sample_checkpoint_is_filled_from_the_session() -> None:
    c = build(load(path()))
    assert c.message_number == 64 and c.message_count == 65  # message #64, the 65th
    assert c.topic == "Fix tinyparse '=' in values, quotes, multi-line values"
    assert c.goal == "End the value. And please document multi-line values in the README."
    assert c.session_id == "7f3c2a91-5b8e-4d1a-9c6f-2e4b8a1d0c55"
    assert [p for p, _ in c.files] == [
        "tinyparse/__init__.py",
        "tests/test_quotes.py",
        "tests/test_parser.py",
        "README.md",
    ]
    assert dict(c.files)["tests/test_quotes.py"] == "created (Write)"
    assert c.action_items == [
        (True, "Check how configparser treats continuation lines"),
        (True, "Implement continuation lines in parse()"),
        (True, "Add tests for multi-line values"),
        (False, "Document multi-line values in README.md"),
    ]
    assert c.status.startswith("Done. A blank line now ends a multi-line value")
    assert (True, "I decided to keep comments inside values out of scope for now.") in c.decisions


def test_unanswered_questions_are_open() -> None:
    session = load(path())
    c = build(session, at=53)  # right after the assistant asked, before the user answered
    assert c.open_questions == [
        "Should a blank line inside a multi-line value end the value, or be kept as an empty line?"
    ]
    assert build(session).open_questions == []


def test_render_matches_the_protocol_and_round_trips() -> None:
    c = build(load(path()))
    text = c.render()
    assert text.splitlines()[0] == f"## Checkpoint [{c.time}] — Message #64"
    for section in (
        "Session Context",
        "Decisions Made",
        "Action Items",
        "Open Questions",
        "Current Status",
        "Files Modified",
        "Message Count",
    ):
        assert f"### {section}" in text
    assert "**Messages this session:** 65" in text
    assert "- `tests/test_quotes.py` — created (Write)" in text
    assert parse(text, c.date) == [c]


def test_parser_tolerates_hand_edits() -> None:
    text = """# Memory 2026-01-02
Some notes I typed.

## Checkpoint [9:05] - Message #12
### session context
* **Topic:** parser work
* **Goal:** ship it
### Action Items
* [X] write tests
- [ ] release
- follow up with Sam
### Open Questions
- None
### Current Status
Half done.
More text.
### Files Modified
- `a.py`
- `b.py` -- renamed
### Message Count
**Messages this session:** 12

## Unrelated heading
- not part of a checkpoint
"""
    [c] = parse(text, "2026-01-02")
    assert (c.time, c.message_number, c.topic, c.goal) == ("9:05", 12, "parser work", "ship it")
    assert c.action_items == [(True, "write tests"), (False, "release"), (False, "follow up with Sam")]
    assert c.open_questions == [] and c.status == "Half done.\nMore text."
    assert c.files == [("a.py", ""), ("b.py", "renamed")] and c.message_count == 12


def test_append_keeps_earlier_checkpoints(tmp_path: Path) -> None:
    session = load(path())
    first, _ = append_checkpoint(session, tmp_path / "memory", at=20)
    before = first.read_text()
    second, _ = append_checkpoint(session, tmp_path / "memory")
    assert first == second and second.read_text().startswith(before)
    assert [c.message_count for c in read_memory(tmp_path / "memory")] == [21, 65]


def test_truncation_is_detected_when_the_count_drops(tmp_path: Path) -> None:
    full = load(path())
    append_checkpoint(full, tmp_path)
    assert not detect(full, tmp_path).truncated
    lines = path().read_text().splitlines()
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    found = detect(load(half), tmp_path)
    assert found.truncated and found.checkpoint is not None
    assert found.report.startswith("truncation likely")
    assert found.checkpoint.recovery() == (
        "Recovered context: we were working on “End the value. And please document multi-line values "
        "in the README”, last completed Add tests for multi-line values, next step Document multi-line "
        "values in README.md."
    )


def test_other_sessions_are_not_compared(tmp_path: Path) -> None:
    append_checkpoint(load(path()), tmp_path)
    other = load(path("codex_rollout.jsonl"))
    assert detect(other, tmp_path).checkpoint is None


def test_triggers() -> None:
    msgs = [u("go")]
    for i in range(12):
        msgs += [call(f"t{i}", name="Bash", id=f"A{i}", input={"command": "ls"}), result(f"t{i}")]
    msgs += [
        Message(
            "assistant", (Block.tool_use("x", "Bash", {"command": "git push --force origin main"}),), id="Z"
        )
    ]
    found = {t.index: t.reason for t in triggers(msgs, every=5, compactions=[7], pressure_crossings=[9])}
    assert found[9] == "5 exchanges, pressure threshold crossed"
    assert found[19] == "5 exchanges"
    assert found[7] == "compaction"
    assert found[25] == "before destructive Bash"


def test_checkpoint_of_an_empty_position_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="message 99 does not exist"):
        build(load(path()), at=99)
    assert isinstance(build(load(path()), at=0), Checkpoint)


def _append(args: tuple[str, str, int]) -> str:
    transcript, memory, at = args
    return append_checkpoint(load(transcript), memory, at=at)[1].heading


@pytest.mark.slow
def test_concurrent_checkpoints_to_one_day_keep_every_entry(tmp_path: Path) -> None:
    with ProcessPoolExecutor(4) as pool:
        headings = list(pool.map(_append, [(str(path()), str(tmp_path), at) for at in range(10, 22)]))
    [day] = list(tmp_path.glob("*.md"))
    assert sorted(c.message_number for c in parse(day.read_text())) == sorted(
        int(h.rsplit("#", 1)[1]) for h in headings
    )
    assert len(headings) == 12 and [p.name for p in tmp_path.iterdir()] == [day.name]  # no lock file left


def test_a_checkpoint_writes_through_a_link_and_never_over_a_read_only_file(tmp_path: Path) -> None:
    session = load(path())
    day = append_checkpoint(session, tmp_path / "memory", at=20)[0]
    kept = tmp_path / "kept.md"
    day.rename(kept)
    day.symlink_to(kept)
    append_checkpoint(session, tmp_path / "memory", at=30)
    assert day.is_symlink() and [c.message_count for c in parse(kept.read_text())] == [21, 31]
    kept.chmod(0o444)
    with pytest.raises(WriteRefused, match="read-only"):
        append_checkpoint(session, tmp_path / "memory", at=40)
    assert [c.message_count for c in parse(kept.read_text())] == [21, 31]


def test_reading_checkpoints_skips_a_folder_and_never_waits_on_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "2026-01-01.md").mkdir()
    assert read_memory(tmp_path) == []
    os.mkfifo(tmp_path / "2026-01-02.md")
    with pytest.raises(NotRegularFile):
        read_memory(tmp_path)


def test_a_checkpoint_of_odd_input_is_still_written() -> None:
    far = Message(role="user", blocks=(Block("text", text="hi"),), timestamp="9999-12-31T23:59:59-14:00")
    plan = Message(role="assistant", blocks=(Block.tool_use("p", "update_plan", {"plan": 5}),), id="a")
    todos = Message(
        role="assistant", blocks=(Block.tool_use("t", "TodoWrite", {"todos": [5, {"content": [1]}]}),), id="b"
    )
    c = build(Session(messages=(far, plan, todos), format="claude-code"))
    assert c.action_items == [(False, "[1]")]
    assert len(c.time) == 5  # the time now: 9999-12-31 in -14:00 is past the calendar

from pathlib import Path

from compaction_inspector.core.checkpoint import (
    Checkpoint,
    append_checkpoint,
    build,
    detect,
    parse,
    read_memory,
    triggers,
)
from compaction_inspector.core.formats import load
from compaction_inspector.core.model import Block, Message
from compaction_inspector.sample_sessions import path
from tests.helpers import call, result, u


def test_sample_checkpoint_is_filled_from_the_session() -> None:
    c = build(load(path()))
    assert c.message_number == 65 and c.message_count == 65
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
    assert text.splitlines()[0] == f"## Checkpoint [{c.time}] — Message #65"
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

"""Follow mode: a growing, truncated, rotated or deleted file never crashes the app and
never duplicates a message."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.session.follow import Follower
from compaction_inspector.tui.widgets.transcript import TranscriptView
from tests.helpers import load
from tests.tui.conftest import inspected, settle, shown, title, until

LINES = path().read_text().splitlines(keepends=True)


def uuids(session: object) -> list[str | None]:
    return [m.uuid for m in session.messages]  # type: ignore[attr-defined]


def test_growth_with_a_half_written_last_line(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    follower = Follower(CATALOGUE.formats, f, load(f))
    assert follower.poll() is None
    with open(f, "a") as out:
        out.write("".join(LINES[20:30]) + LINES[30][:50])  # the last line is cut mid-write
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert not reloaded
    with open(f, "a") as out:
        out.write(LINES[30][50:] + "".join(LINES[31:]))
    session, reloaded = follower.poll()  # type: ignore[misc]
    full = load(path())
    assert uuids(session) == uuids(full) and len(set(uuids(session))) == len(full.messages)
    assert follower.poll() is None


def test_a_codex_rollout_appended_to_is_read_again_without_saying_it_was_replaced(tmp_path: Path) -> None:
    """A rollout is read whole when it grows (its format has no appended reader), but
    nothing replaced it: `watch` must not say so at every refresh."""
    rollout = path("codex_rollout.jsonl").read_text().splitlines(keepends=True)
    f = tmp_path / "rollout.jsonl"
    f.write_text("".join(rollout[: len(rollout) // 2]))
    follower = Follower(CATALOGUE.formats, f, load(f))
    with open(f, "a") as out:
        out.write("".join(rollout[len(rollout) // 2 :]))
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert not reloaded and follower.event is None
    assert len(session.messages) == len(load(path("codex_rollout.jsonl")).messages)


def test_truncation_rotation_and_deletion(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES))
    follower = Follower(CATALOGUE.formats, f, load(f))
    f.write_text("".join(LINES[:10]))  # truncated in place
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert reloaded and uuids(session) == uuids(load(f))
    f.unlink()
    assert follower.poll() is None  # deleted: keep what we have
    rotated = tmp_path / "new.jsonl"
    rotated.write_text("".join(LINES[:15]))
    os.replace(rotated, f)  # replaced by another file
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert reloaded and len(session.messages) == len(load(f).messages)


async def test_the_app_follows_a_growing_file(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    app = InspectorApp(
        f, Config(CATALOGUE, window=Window(5000, 500), preset=None), follow=True, export_dir=tmp_path
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = len(inspected(app).session.messages)
        with open(f, "a") as out:
            out.write("".join(LINES[20:]))
        shown(app).runs.poll()
        await settle(pilot)
        assert shown(app).session is not None and len(inspected(app).session.messages) > before
        assert len(inspected(app).tokens) == len(inspected(app).session.messages)
        assert title(app).endswith("· following")
        # the cursor was never moved: it started at the tail and follows it
        view = shown(app).query_one("#before", TranscriptView)
        assert view.cursor == len(view.entries) - 1
        f.unlink()
        shown(app).runs.poll()
        await pilot.pause()
        assert title(app).endswith("· deleted: what was read stays shown")


def test_appended_lines_keep_their_line_numbers_in_the_file(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    follower = Follower(CATALOGUE.formats, f, load(f))
    with open(f, "a") as out:
        out.write("".join(LINES[20:40]))
    session, _ = follower.poll()  # type: ignore[misc]
    whole = load(f)
    assert [m.line for m in session.messages] == [m.line for m in whole.messages]
    assert session.messages[-1].line is not None and session.messages[-1].line > 20


async def test_following_a_file_still_empty_reads_it_once_written_and_says_what_happens(
    tmp_path: Path,
) -> None:
    f = tmp_path / "new.jsonl"
    f.write_text("")
    app = InspectorApp(
        f, Config(CATALOGUE, window=Window(5000, 500), preset=None), follow=True, export_dir=tmp_path
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: shown(app).sub_title == "new.jsonl · waiting · following")
        assert shown(app).session is None and shown(app).sub_title == "new.jsonl · waiting · following"
        f.write_text("".join(LINES[:20]))
        await until(pilot, lambda: shown(app).session is not None)  # the next try reads it
        await settle(pilot)
        assert shown(app).session is not None and title(app).endswith("· following")
        view = shown(app).query_one("#before", TranscriptView)
        view.set_cursor(len(view.entries) - 1)  # on the last message: new ones are followed
        with open(f, "a") as out:
            out.write("".join(LINES[20:]))
        shown(app).runs.poll()
        await settle(pilot)
        assert view.cursor == len(view.entries) - 1 and len(inspected(app).session.messages) > 20
        notices: list[str] = []
        app.notify = lambda message, **kw: notices.append(str(message))  # type: ignore[method-assign]
        f.write_text("".join(LINES[:5]))  # truncated
        shown(app).runs.poll()
        f.unlink()
        shown(app).runs.poll()
        assert notices == [
            "The file was truncated: read again from the start",
            "The file was deleted: what was read stays shown",
        ]


def test_an_in_place_rewrite_is_read_again_and_said(tmp_path: Path) -> None:
    """Same inode, longer content: the stale messages go and the new ones are all read."""
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    follower = Follower(CATALOGUE.formats, f, load(f))
    with open(f, "r+") as out:  # rewritten where it is, from other lines, and longer
        out.write("".join(LINES[20:45]))
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert reloaded and uuids(session) == uuids(load(f))
    assert follower.event == "The file was rewritten in place: read again from the start"


def test_a_same_size_rewrite_and_an_emptied_file_are_said(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    follower = Follower(CATALOGUE.formats, f, load(f))
    size = f.stat().st_size
    f.write_text("".join(LINES[20:])[:size].rsplit("\n", 1)[0].ljust(size - 1) + "\n")
    assert f.stat().st_size == size
    update = follower.poll()
    assert update is not None and update[1] and follower.event is not None
    kept = follower.session
    with open(f, "r+") as out:
        out.truncate(0)
    assert follower.poll() is None and follower.session is kept  # what was read stays shown
    assert follower.event is not None and follower.event.startswith("The file was truncated")
    follower.event = None
    assert follower.poll() is None and follower.event is None  # still empty: said once
    f.write_text("".join(LINES[:5]))  # written again: read whole, not appended to the old
    session, reloaded = follower.poll()  # type: ignore[misc]
    assert reloaded and uuids(session) == uuids(load(f))


def test_a_followed_session_keeps_its_compactions_and_is_no_slice(tmp_path: Path) -> None:
    """Lines appended while following: a compaction among them is the transcript's own
    (at its index), and their first parent, read before, does not make a slice."""
    lines = path("claude_code_compacted.jsonl").read_text().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_text("".join(lines[:10]))
    follower = Follower(CATALOGUE.formats, target, load(target))
    with target.open("a") as out:
        out.write("".join(lines[10:]))
    update = follower.poll()
    assert update is not None
    session, reloaded = update
    assert not reloaded and "slice" not in session.metadata
    assert [c.index for c in session.compactions] == [c.index for c in load(target).compactions] == [14]

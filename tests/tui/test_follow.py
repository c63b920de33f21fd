"""Follow mode: a growing, truncated, rotated or deleted file never crashes the app and
never duplicates a message."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.config import Config
from compaction_inspector.core.formats import load
from compaction_inspector.core.pressure import Window
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.follow import Follower
from tests.tui.conftest import settle

LINES = path().read_text().splitlines(keepends=True)


def uuids(session: object) -> list[str | None]:
    return [m.uuid for m in session.messages]  # type: ignore[attr-defined]


def test_growth_with_a_half_written_last_line(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES[:20]))
    follower = Follower(f, load(f))
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


def test_truncation_rotation_and_deletion(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("".join(LINES))
    follower = Follower(f, load(f))
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
    app = InspectorApp(f, Config(window=Window(5000, 500), preset=None), follow=True, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = len(app.session.messages)  # type: ignore[union-attr]
        with open(f, "a") as out:
            out.write("".join(LINES[20:]))
        app.poll_follow()
        await settle(pilot)
        assert app.session is not None and len(app.session.messages) > before
        assert len(app.tokens) == len(app.session.messages)
        assert app.sub_title.endswith("· following")

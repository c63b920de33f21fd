"""The session browser: a fake home of sessions, listed, filtered, sorted, opened and
come back to."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.session_index import Index, Row
from compaction_inspector.core.sessions import find, roots, rows
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screens.browser import SessionBrowser
from compaction_inspector.tui.widgets.transcript import TranscriptView
from tests.tui.conftest import SETTLE_S, inspected, settle, shown, title


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / ".claude" / "projects" / "-nowhere-flaky"
    project.mkdir(parents=True)
    (project / "compacted.jsonl").write_bytes(path("claude_code_compacted.jsonl").read_bytes())
    (project / "tinyparse.jsonl").write_bytes(path("claude_code_session.jsonl").read_bytes())
    (project / "broken.jsonl").write_text("not a transcript\n")
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    (day / "rollout-1.jsonl").write_bytes(path("codex_rollout.jsonl").read_bytes())
    return tmp_path


def titles(app: InspectorApp) -> list[str]:
    table = app.screen.query_one(DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def until_listed(pilot: Pilot[None], app: InspectorApp) -> None:
    """Until the browser has checked every file and drawn what it found."""
    await pilot.pause()
    browser = app.screen
    assert isinstance(browser, SessionBrowser)
    await asyncio.wait_for(browser.scanned.wait(), SETTLE_S)
    await pilot.pause()


async def test_the_browser_lists_filters_sorts_opens_and_comes_back(home: Path) -> None:
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_listed(pilot, app)
        assert isinstance(app.screen, SessionBrowser)
        listed = titles(app)
        assert len(listed) == 4 and "Make test_expiry deterministic with a fake clock" in listed
        assert any("not a transcript" in t for t in listed)  # a file it cannot read says why
        head = app.screen.query_one("#browser-head")
        assert str(head.render()).startswith("4 sessions: ")
        # every column is wide enough for its label and the sort's arrow
        table = app.screen.query_one(DataTable)
        assert all(c.width >= len(str(c.label).rstrip(" ▼▲")) + 2 for c in table.ordered_columns)
        await pilot.press(*"expiry")  # typing on the list filters it
        await pilot.pause()
        assert app.screen.query_one(Input).value == "expiry"
        assert titles(app) == ["Make test_expiry deterministic with a fake clock"]
        assert str(head.render()).startswith("1 of 4 sessions match the filter: ")
        app.screen.query_one(Input).value = ""
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        table.focus()
        await pilot.click("#browser-table", offset=(3, 0))  # the title header: sorted by title
        await pilot.pause()
        assert titles(app) == sorted(titles(app))
        target = titles(app).index("Make test_expiry deterministic with a fake clock")
        table.move_cursor(row=target)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, SessionBrowser)
        assert shown(app).session is not None and shown(app).path.name == "compacted.jsonl"
        assert title(app).startswith("compacted.jsonl · claude-code · 25 messages")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser) and app.screen.query_one(DataTable).cursor_row == target


async def test_escape_leaves_the_timeline_cursor_and_a_session_reopened_is_as_it_was_left(home: Path) -> None:
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_listed(pilot, app)
        await pilot.press(*"expiry", "enter")
        await settle(pilot)
        await pilot.press("3", "t", "n")  # hysteresis, its target up, a step
        await settle(pilot)
        screen = shown(app)
        state = (screen.strategy, screen.config.options("hysteresis").target, screen.step)
        assert state == ("hysteresis", 69, 0)  # t lowers the target
        await pilot.press("l", "left", "enter")  # the timeline's cursor, a round, shown in the transcript
        await pilot.pause()
        await pilot.press("escape")  # leaves the cursor mode, not the session
        await pilot.pause()
        assert shown(app) is screen and app.screen is screen
        assert "round " not in str(screen.query_one("#timeline").render()).splitlines()[-1][:6]
        await pilot.press("escape")  # now back to the list
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser)
        await pilot.press("enter")  # the same session: as it was left
        await settle(pilot)
        again = shown(app)
        assert (again.strategy, again.config.options("hysteresis").target, again.step) == state


async def test_the_browser_by_keyboard_alone(home: Path) -> None:
    """Enter in the filter opens its one match; backspace and escape edit the filter from
    the list; F2 and F3 sort; ? lists the browser's own keys."""
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_listed(pilot, app)
        browser = app.screen
        assert isinstance(browser, SessionBrowser)
        box = browser.query_one(Input)
        await pilot.press(*"fakex")
        assert box.value == "fakex" and titles(app) == []
        box.blur()
        browser.query_one(DataTable).focus()
        await pilot.press("backspace")  # on the list: a letter off the filter
        await pilot.pause()
        assert box.value == "fake" and titles(app) == ["Make test_expiry deterministic with a fake clock"]
        await pilot.press("escape")  # clears it
        await pilot.pause()
        assert box.value == "" and len(titles(app)) == 4
        await pilot.press("f2")  # from the last activity, the last column at 120, round to the title
        await pilot.pause()
        table = browser.query_one(DataTable)
        assert browser.sort == "title" and "title ▲" in [str(c.label) for c in table.ordered_columns]
        first = titles(app)[0]
        await pilot.press("f3")
        await pilot.pause()
        assert browser.sort == "title" and browser.reverse and titles(app)[-1] == first
        await pilot.press("question_mark")
        await pilot.pause()
        keys = app.screen.query_one(DataTable)
        does = [str(keys.get_row_at(i)[2]) for i in range(keys.row_count)]
        assert "Sort by next column" in does and "Next step" not in does
        await pilot.press("escape")
        await pilot.press(*"expiry", "enter")  # one match: enter opens it
        await settle(pilot)
        assert not isinstance(app.screen, SessionBrowser) and shown(app).path.name == "compacted.jsonl"


@pytest.mark.parametrize(
    ("width", "columns"),
    [
        (60, ["title", "project", "peak"]),
        (80, ["title", "project", "peak", "compactions", "cost"]),
        (120, ["title", "project", "peak", "compactions", "cost", "last activity"]),
        (160, ["title", "project", "peak", "compactions", "cost", "last activity", "messages", "model"]),
        (200, ["title", "project", "peak", "compactions", "cost", "last activity", "messages", "rounds",
               "model", "agent", "started"]),
    ],
)  # fmt: skip
async def test_the_columns_that_matter_most_stay_as_the_terminal_narrows(
    home: Path, width: int, columns: list[str]
) -> None:
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(width, 30)) as pilot:
        await until_listed(pilot, app)
        table = app.screen.query_one(DataTable)
        assert [str(c.label).rstrip(" ▼▲") for c in table.ordered_columns] == columns
        peak = columns.index("peak")
        assert any("%" in str(table.get_row_at(i)[peak]) for i in range(4))
        if "cost" in columns:  # priced from the usage the responses reported
            assert any("$" in str(table.get_row_at(i)[columns.index("cost")]) for i in range(4))
        # the project, by its last two folders, tells rows apart at every width
        assert "dev/webapp" in [str(table.get_row_at(i)[1]) for i in range(4)]


async def test_a_task_call_opens_its_sub_agents_transcript_and_escape_returns(tmp_path: Path) -> None:
    def line(kind: str, uuid: str, content: object, **extra: object) -> str:
        body = {"role": kind, "content": content, **({"id": "msg_1"} if kind == "assistant" else {})}
        return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s", "message": body, **extra})

    task = [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "explore"}}]
    done = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Explored.\nagentId: a77 (to resume)"}
    ]
    session = tmp_path / "s1.jsonl"
    session.write_text("\n".join([line("user", "u1", "look around"), line("assistant", "a1", task),
                                  line("user", "u2", done)]) + "\n")  # fmt: skip
    agents = tmp_path / "s1" / "subagents"
    agents.mkdir(parents=True)
    # a sub-agent's own file: every line of it a sidechain, as Claude Code writes them
    sub = [json.loads(x) for x in path("agent_only_session.jsonl").read_text().splitlines()]
    sidechain = "\n".join(json.dumps({**x, "isSidechain": True}) for x in sub)
    (agents / "agent-a77.jsonl").write_text(sidechain + "\n")
    app = InspectorApp(session, Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = shown(app).query_one("#before", TranscriptView)
        view.set_cursor(1)  # the Task call
        await pilot.press("a")
        await settle(pilot)
        assert shown(app).path == agents / "agent-a77.jsonl" and shown(app).session is not None
        assert len(inspected(app).session.messages) == 63
        await pilot.press("escape")
        await settle(pilot)
        assert (
            shown(app).path == session
            and shown(app).session is not None
            and len(inspected(app).session.messages) == 3
        )
        assert shown(app).query_one("#before", TranscriptView).cursor == 1  # back on the Task call
        (agents / "agent-a77.jsonl").unlink()  # the result names a file that is not there
        await pilot.press("a")
        await pilot.pause()
        assert shown(app).path == session
        notice = [n.message for n in app._notifications][-1]
        assert notice.startswith("The sub-agent's transcript is missing: ") and "agent-a77.jsonl" in notice


async def test_a_sub_agent_kept_inline_opens_as_a_transcript_of_its_own(tmp_path: Path) -> None:
    """Older Claude Code kept a sub-agent's messages as sidechain lines of the session's
    own file: `a` on the Task call shows them as their own transcript."""

    def line(kind: str, uuid: str, content: object, parent: str | None, side: bool = False) -> str:
        body = {"role": kind, "content": content, **({"id": f"m{uuid}"} if kind == "assistant" else {})}
        return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s",
                           "isSidechain": side, "message": body})  # fmt: skip

    task = [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "explore the repo"}}]
    lines = [
        line("user", "u1", "look around", None),
        line("assistant", "a1", task, "u1"),
        line("user", "s1", "explore the repo", None, side=True),
        line("assistant", "s2", "I read the README.", "s1", side=True),
        line("user", "s3", "other agent", None, side=True),
        line("user", "u2", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Explored."}], "a1"),
    ]
    session = tmp_path / "s1.jsonl"
    session.write_text("\n".join(lines) + "\n")
    app = InspectorApp(session, Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown(app).query_one("#before", TranscriptView).set_cursor(2)  # the result names no file
        await pilot.press("a")
        await settle(pilot)
        assert shown(app).session is not None and [m.text for m in inspected(app).session.messages] == [
            "explore the repo", "I read the README.",
        ]  # fmt: skip
        await pilot.press("escape")
        await settle(pilot)
        assert shown(app).session is not None and len(inspected(app).session.messages) == 3
        assert shown(app).query_one("#before", TranscriptView).cursor == 2


async def test_the_palette_on_the_list_sorts_it(home: Path) -> None:
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_listed(pilot, app)
        browser = app.screen
        assert isinstance(browser, SessionBrowser)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"sort sessions by compactions", "enter")
        await pilot.pause(0.3)
        assert isinstance(browser, SessionBrowser) and browser.sort == "compactions"


async def test_the_index_lists_every_session_at_once_then_the_scan_checks_them(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened again, the list shows what the index kept before any file is looked at; a
    file changed since is shown as it is now once the scan reaches it."""
    places = roots(
        CATALOGUE, {"claude-code": home / ".claude" / "projects", "codex": home / ".codex" / "sessions"}
    )
    kept = rows(CATALOGUE, find(CATALOGUE, places))  # a first run kept every row
    changed = home / ".claude" / "projects" / "-nowhere-flaky" / "tinyparse.jsonl"
    changed.write_text("not a transcript any more\n")
    release = threading.Event()
    checked = Index.rows

    def held(index: Index, found: list[Found], *args: Any) -> list[Row]:
        release.wait(10)  # the files are not checked until the list is seen
        return checked(index, found, *args)

    monkeypatch.setattr(Index, "rows", held)
    app = InspectorApp(path(), Config(CATALOGUE), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, SessionBrowser) and app.screen.query_one(DataTable).row_count:
                break
        listed = titles(app)  # the index's rows, before any file is checked
        assert len(listed) == len(kept) == 4
        assert sum(t.startswith("not a transcript") for t in listed) == 1  # broken.jsonl only
        release.set()
        await until_listed(pilot, app)
        assert sum(t.startswith("not a transcript") for t in titles(app)) == 2  # checked: it changed


def test_the_project_column_sorts_by_the_folders_it_shows() -> None:
    """A sort puts "alpha/app" before "zeta/lib" as shown, not by their full paths."""
    from compaction_inspector.core.contract.files import Found
    from compaction_inspector.core.session_index import problem
    from compaction_inspector.tui.screens.browser import _sorted_by

    rows = [problem(Found(Path(p), "claude-code", p), "unread") for p in ("/a/zeta/lib", "/z/alpha/app")]
    shown = [_sorted_by(r, "project") for r in rows]
    assert shown == [("zeta/lib", "/a/zeta/lib"), ("alpha/app", "/z/alpha/app")]  # alpha/app sorts first


def test_a_model_too_long_for_its_column_loses_its_snapshot_date_not_digits() -> None:
    from compaction_inspector.tui.screens.browser import _model

    assert _model("claude-opus-4-5-20251101", 20) == "claude-opus-4-5"
    assert _model("gpt-5.3-codex-spark", 20) == "gpt-5.3-codex-spark"
    assert _model("some-vendor-model-with-a-long-name", 20) == "some-vendor-model…"

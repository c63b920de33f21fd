"""The session browser: a fake home of sessions, listed, filtered, sorted, opened and
come back to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, ProgressBar

from compaction_inspector.core.config import Config
from compaction_inspector.core.sessions import roots
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screens.browser import SessionBrowser
from compaction_inspector.tui.widgets.transcript import TranscriptView
from tests.tui.conftest import settle


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
    return [str(table.get_row_at(i)[5]) for i in range(table.row_count)]


async def until_listed(pilot: object, app: InspectorApp) -> None:
    for _ in range(100):
        if isinstance(app.screen, SessionBrowser) and not app.screen.query_one(ProgressBar).display:
            return  # the scan is done
        await pilot.pause(0.05)  # type: ignore[attr-defined]


async def test_the_browser_lists_filters_sorts_opens_and_comes_back(home: Path) -> None:
    places = roots(home / ".claude" / "projects", home / ".codex" / "sessions")
    app = InspectorApp(path(), Config(), browse=places, export_dir=home)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_listed(pilot, app)
        assert isinstance(app.screen, SessionBrowser)
        shown = titles(app)
        assert len(shown) == 4 and "Make test_expiry deterministic with a fake clock" in shown
        assert any("not a transcript" in t for t in shown)  # a file it cannot read says why
        await pilot.press(*"expiry")  # typing on the list filters it
        await pilot.pause()
        assert app.screen.query_one(Input).value == "expiry"
        assert titles(app) == ["Make test_expiry deterministic with a fake clock"]
        app.screen.query_one(Input).value = ""
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        table.focus()
        await pilot.click("#browser-table", offset=(95, 0))  # the title header: sorted by title
        await pilot.pause()
        assert titles(app) == sorted(titles(app))
        target = titles(app).index("Make test_expiry deterministic with a fake clock")
        table.move_cursor(row=target)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, SessionBrowser)
        assert app.session is not None and app.path.name == "compacted.jsonl"
        assert app.sub_title.startswith("compacted.jsonl · claude-code · 25 messages")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser) and app.screen.query_one(DataTable).cursor_row == target


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
    app = InspectorApp(session, Config(), export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.query_one("#before", TranscriptView)
        view.set_cursor(1)  # the Task call
        await pilot.press("a")
        await settle(pilot)
        assert app.path == agents / "agent-a77.jsonl" and app.session is not None
        assert len(app.session.messages) == 63
        await pilot.press("escape")
        await settle(pilot)
        assert app.path == session and app.session is not None and len(app.session.messages) == 3

"""`watch`: follows a session as its agent writes it, warns before it may compact, and says
when the file is gone or replaced."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.tui.watch import WatchApp
from compaction_inspector.tui.widgets.gauge import PressureGauge
from tests.hostile import run_cli
from tests.unit.test_statusline import prompt, reply


def shown(app: WatchApp) -> str:
    return str(app.query_one("#line", Static).render())


async def settled(app: WatchApp, pilot: Pilot[None]) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_it_follows_the_session_and_warns_before_it_may_compact(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000)]) + "\n")
    app = WatchApp(transcript, Config(CATALOGUE))
    async with app.run_test(size=(100, 10)) as pilot:
        await settled(app, pilot)
        assert shown(app).startswith("ctx 100k of 167k · compacts in ~67k · no compaction yet · $")
        state = app.query_one(PressureGauge).state
        # the agent's own point is what it watches: hysteresis's bands are not drawn on its gauge
        assert state is not None and state.auto_compact == 167_000 and state.bands_of == "hysteresis"
        with transcript.open("a") as f:  # it grows: 30,000 a request, 167,000 within reach
            f.write("\n".join(x for n in (1, 2, 3) for x in reply(n, 100_000 + 30_000 * n)) + "\n")
        app.check()
        await settled(app, pilot)
        assert shown(app).startswith("ctx 190k of 167k · compacts at the next request")
        assert any("It may compact" in n.title for n in app._notifications)
        transcript.unlink()
        app.check()
        await pilot.pause()
        assert shown(app) == f"{transcript} is gone: waiting for it to come back"
        transcript.write_text("\n".join([prompt(0, "again"), *reply(0, 50_000)]) + "\n")
        app.check()
        await settled(app, pilot)
        assert shown(app).startswith("ctx 50k of 167k")


def test_once_prints_the_line_and_exits(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000)]) + "\n")
    outcome = run_cli(["watch", str(transcript), "--once"])
    assert outcome.code == 0 and outcome.out.startswith("ctx 100k of 167k · compacts in ~67k")


def test_with_no_session_named_it_watches_the_newest_session_not_a_sub_agent(tmp_path: Path) -> None:
    import os

    project = tmp_path / "projects" / "-work-app"
    (project / "s1" / "subagents").mkdir(parents=True)
    session = project / "s1.jsonl"
    session.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000)]) + "\n")
    helper = project / "s1" / "subagents" / "agent-1.jsonl"
    helper.write_text("\n".join([prompt(0, "look"), *reply(0, 20_000)]) + "\n")
    os.utime(helper, (session.stat().st_mtime + 60, session.stat().st_mtime + 60))  # written last
    outcome = run_cli(
        ["watch", "--once", "--claude-dir", str(tmp_path / "projects"), "--codex-dir", str(tmp_path)]
    )
    assert outcome.code == 0 and outcome.out.startswith("ctx 100k"), outcome.out

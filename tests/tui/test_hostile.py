"""The app on hostile input: text from a transcript, a file name or a config is shown,
never obeyed as an escape sequence or read as markup, and nothing it opens stops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from compaction_inspector.core.agents.claude_code.agent import FORMAT as CLAUDE_CODE
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.tui.app import InspectorApp
from tests.hostile import CORPUS, ESCAPES, FORBIDDEN, MARKUP
from tests.tui.conftest import settle, until
from tests.tui.conftest import shown as session_of

pytestmark = pytest.mark.slow  # the hostile corpus in the app

KEYS = ["o", "n", "n", "o", "3", "n", "e", "d", "6", "n", "c", "s", "down", "down", "enter", "x", "m"]
# every escape in every Claude Code field, and the two that do most harm in every Codex one
CASES = [*((kind, "claude.jsonl") for kind in ESCAPES), ("osc52", "codex.jsonl"), ("csi", "codex.jsonl")]


def on_screen(app: InspectorApp) -> str:
    """Everything on screen, toasts included, as the terminal would receive its text."""
    return app.export_screenshot().replace("&#160;", " ")


@pytest.mark.parametrize(("kind", "fmt"), CASES)
async def test_escapes_in_every_field_are_shown_not_obeyed(tmp_path: Path, kind: str, fmt: str) -> None:
    """Every screen the keys reach (the own compactions, a step, a diff, the timeline
    compared, sidechains, an expanded message, an export and a checkpoint's notices)."""
    target = tmp_path / f"{kind}-{fmt}"
    target.write_bytes(CORPUS[f"escape-{kind}-{fmt}"])
    app = InspectorApp(target, Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:  # toasts drawn too
        await settle(pilot)
        seen = False
        for key in KEYS:
            await pilot.press(key)
            await settle(pilot)
            screen = on_screen(app)
            assert not [c for c in FORBIDDEN if c in screen], key
            seen = seen or "␛" in screen
        assert seen  # the escape is there to see


async def test_markup_in_a_transcript_and_a_config_key_is_text(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(CORPUS["markup-claude.jsonl"])
    warning = f"unknown key {MARKUP!r}; allowed: preset — using the defaults"
    app = InspectorApp(target, Config(CATALOGUE), config_warning=warning)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        for key in ("o", "n", "s"):
            await pilot.press(key)
            await settle(pilot)
        assert MARKUP in on_screen(app)


async def test_following_a_file_whose_name_reads_as_markup(tmp_path: Path) -> None:
    target = tmp_path / "missing[a=b:c].jsonl"
    app = InspectorApp(target, Config(CATALOGUE), follow=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: (session_of(app).sub_title or "").endswith("following"))
        assert session_of(app).sub_title == "missing[a=b:c].jsonl · waiting · following"


async def test_the_session_list_shows_a_markup_timestamp_as_text(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    (project / "s.jsonl").write_text(
        json.dumps({"type": "user", "uuid": "u", "sessionId": "s", "timestamp": "9[/bold]",
                    "message": {"role": "user", "content": "hello [b]there"}}) + "\n"
    )  # fmt: skip
    app = InspectorApp(
        tmp_path / "none.jsonl", Config(CATALOGUE), browse=[(CLAUDE_CODE, tmp_path / "projects")]
    )
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(50):
            await pilot.pause(0.1)
            if app.screen.query(DataTable) and app.screen.query_one(DataTable).row_count:
                break
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1
        assert "9[/bold]" in on_screen(app) and "hello [b]there" in on_screen(app)


async def test_ctrl_s_never_saves_over_a_config_that_was_not_used(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "compaction.yaml"
    mine.write_text("# mine\ntarget: 3\n")
    target = tmp_path / "s.jsonl"
    target.write_bytes(CORPUS["escape-csi-claude.jsonl"])
    notices: list[str] = []
    app = InspectorApp(target, Config(CATALOGUE), config_warning="not used")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        app.notify = lambda message, **kw: notices.append(str(message))  # type: ignore[method-assign]
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert mine.read_text() == "# mine\ntarget: 3\n"
    assert notices and "not replaced" in notices[-1]

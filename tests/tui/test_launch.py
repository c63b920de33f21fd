"""Starting the app: a broken user config does not stop it; a broken named one does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.sessions import FOLDER, find, transcripts_under
from compaction_inspector.tui import cli, launch
from compaction_inspector.tui.app import InspectorApp


def capture(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake_run(self: InspectorApp) -> None:
        places = self.browser.places if self.browser else None
        seen.update(
            path=self.path, config=self.config, warning=self.config_warning, note=self.note, browse=places
        )

    monkeypatch.setattr(InspectorApp, "run", fake_run)
    return seen


def test_broken_config_in_the_working_directory_opens_with_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compaction.yaml").write_text("hysteresis: {target: 99}\n")
    seen = capture(monkeypatch)
    assert cli.main([]) == 0
    assert "hysteresis.thresholds [75, 85, 95] and target 99 must satisfy" in seen["warning"]
    assert seen["warning"].endswith("using the defaults")
    assert seen["path"].name == "claude_code_session.jsonl"
    assert seen["config"].window == launch.SAMPLE_WINDOW and "5,000-token window" in seen["note"]


def test_a_named_broken_config_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("nope: 1\n")
    capture(monkeypatch)
    assert cli.main(["--config", str(bad)]) == 2
    assert "unknown key 'nope'" in capsys.readouterr().err


def test_a_file_argument_keeps_the_configured_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "some.jsonl").touch()
    seen = capture(monkeypatch)
    cli.main(["some.jsonl", "--context-window", "64000"])
    assert seen["config"].window.context_window == 64000 and seen["note"] is None


def test_open_reaches_a_file_named_like_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "analyze").touch()
    seen = capture(monkeypatch)
    assert cli.main(["open", "analyze", "--reserved-output", "4000"]) == 0
    assert str(seen["path"]) == "analyze" and seen["config"].window.reserved_output == 4000


def test_a_file_that_cannot_be_read_is_refused_before_the_app_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = capture(monkeypatch)
    target = tmp_path / "nope.jsonl"
    assert cli.main([str(target)]) == 2
    assert seen == {}  # the app never started
    err = capsys.readouterr().err
    assert err.startswith(f"compaction-inspector: {target}: cannot read ") and err.count("\n") == 1


@pytest.mark.parametrize("content", [b"", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256))])
async def test_a_file_that_is_not_a_transcript_ends_the_app_with_its_reason(
    content: bytes, tmp_path: Path
) -> None:
    target = tmp_path / "bad.jsonl"
    target.write_bytes(content)
    app = InspectorApp(target, Config(CATALOGUE))
    said: list[str] = []
    async with app.run_test() as pilot:
        for _ in range(100):  # loading runs in a worker; the app ends when it fails
            if app.return_code is not None:
                said = [str(r) for r in app._exit_renderables]  # printed and cleared once it has ended
                break
            await pilot.pause(0.05)
    assert app.return_code == 2
    reason = "the file is empty" if not content else "not a transcript in any known format"
    assert len(said) == 1 and said[0].startswith(f"compaction-inspector: {target}: ") and reason in said[0]


def test_a_folder_or_no_file_opens_the_session_browser_where_there_are_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    seen = capture(monkeypatch)
    assert cli.main([str(tmp_path)]) == 0  # a folder: its transcripts to choose from
    assert seen["browse"] == [("folder", tmp_path)]
    assert cli.main([]) == 0  # nothing where the agents keep sessions: the sample, and where it looked
    assert seen["browse"] is None and seen["path"].name == "claude_code_session.jsonl"
    assert seen["note"].startswith(
        f"No sessions found in {home / '.claude' / 'projects'}, {home / '.codex' / 'sessions'}, "
        f"{home / '.local' / 'share' / 'opencode'}"
    )
    project = home / ".claude" / "projects" / "-x"
    project.mkdir(parents=True)
    (project / "s.jsonl").write_text("{}\n")
    assert cli.main([]) == 0
    places: list[tuple[str, Path]] = seen.get("browse") or []
    assert [agent for agent, _ in places] == [
        "claude-code",
        "codex",
        "opencode",
        "gemini-cli",
        "roo-code",
        "cline",
    ]
    assert seen["config"].window.context_window == 200_000  # not the sample's demo window


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not utf-8",
        b"a: " + b"[" * 3000,
        b"'[/bold]': 1\n",
        b"overhead_tokens: " + b"9" * 401,
    ],
)
def test_a_working_directory_config_that_cannot_be_used_opens_with_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compaction.yaml").write_bytes(content)
    seen = capture(monkeypatch)
    assert cli.main(["--sample"]) == 0
    assert "compaction.yaml" in seen["warning"] and seen["warning"].endswith("using the defaults")


def test_a_named_config_that_cannot_be_read_is_an_error_named_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "c\x1b]0;x\x07.yaml"
    bad.write_bytes(b"\xff")
    capture(monkeypatch)
    assert cli.main(["--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "is not UTF-8 text" in err and "\x1b" not in err and "c␛]0;x␇.yaml" in err


def test_the_demo_tours_the_sample_even_where_there_are_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "projects" / "-x").mkdir(parents=True)
    (home / ".claude" / "projects" / "-x" / "s.jsonl").write_text("{}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    seen = capture(monkeypatch)
    assert cli.main(["--demo"]) == 0
    assert seen["browse"] is None and seen["path"].name == "claude_code_session.jsonl"
    assert seen["config"].window == launch.SAMPLE_WINDOW


def test_an_agents_task_folder_opens_as_its_session_and_is_one_row_of_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A VS Code agent's task folder is one session: opened, not browsed; in a folder
    searched for transcripts, its history is the one row (not each of its files), as a
    session file read with others beside it (the current Cline's) is."""
    task = tmp_path / "tasks" / "t1"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text('[{"role": "user", "content": "hi"}]')
    (task / "ui_messages.json").write_text("[]")
    (task / "history_item.json").write_text('{"id": "t1"}')
    seen = capture(monkeypatch)
    assert cli.main([str(task)]) == 0
    assert seen["browse"] is None and Path(seen["path"]) == task
    sdk = tmp_path / "sessions" / "s1"
    sdk.mkdir(parents=True)
    for name in ("s1.messages.json", "s1.json", "s1.compaction.json"):
        (sdk / name).write_text("{}")
    assert transcripts_under(CATALOGUE, [str(tmp_path)]) == [
        sdk / "s1.messages.json",
        task / "api_conversation_history.json",
    ]
    browsed = [f.path for f in find(CATALOGUE, [(FOLDER, tmp_path)])]  # the app's list of a folder
    assert browsed == [sdk / "s1.messages.json", task / "api_conversation_history.json"]

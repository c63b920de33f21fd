"""Starting the app: a broken user config does not stop it; a broken named one does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.tui import cli, launch
from compaction_inspector.tui.app import InspectorApp


def capture(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake_run(self: InspectorApp) -> None:
        seen.update(path=self.path, config=self.config, warning=self.config_warning, note=self.note)

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
    seen = capture(monkeypatch)
    cli.main(["some.jsonl", "--context-window", "64000"])
    assert seen["config"].window.context_window == 64000 and seen["note"] is None


def test_open_reaches_a_file_named_like_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    seen = capture(monkeypatch)
    assert cli.main(["open", "analyze", "--reserved-output", "4000"]) == 0
    assert str(seen["path"]) == "analyze" and seen["config"].window.reserved_output == 4000

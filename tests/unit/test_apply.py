"""`apply`: a tuned setting written into the agent's own settings file, every other byte
kept, with a backup, refused over a value already set unless forced. The files are built
here in the layout the agents document (Claude Code's settings.json `env`, Codex's
config.toml top level)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_inspector.core.config import Config
from compaction_inspector.core.formats import load
from compaction_inspector.sample_sessions import path
from tests.hostile import run_cli

CLAUDE = (
    '{\n  "model": "opus",\n  "permissions": {"allow": ["Bash(ls)"]},\n  "env": {\n    "FOO": "1"\n  }\n}\n'
)
CODEX = (
    '# my Codex settings\nmodel = "gpt-5.1-codex"  # the model I use\n\n[profiles.fast]\nmodel = "o4-mini"\n'
)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    codex.mkdir()
    (claude / "settings.json").write_text(CLAUDE)
    (codex / "config.toml").write_text(CODEX)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def test_the_diff_is_shown_and_nothing_written_without_write(homes: tuple[Path, Path]) -> None:
    claude, _ = homes
    out = run_cli(["apply", "claude-code", "autocompact_pct_override=70"])
    assert out.code == 0 and '+    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70",' in out.out
    assert (claude / "settings.json").read_text() == CLAUDE and not (claude / "settings.json.bak").exists()


def test_claude_codes_override_is_written_into_env_with_a_backup_and_read_back(
    homes: tuple[Path, Path],
) -> None:
    claude, _ = homes
    out = run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--write"])
    assert out.code == 0, out.err
    assert (claude / "settings.json").read_text() == CLAUDE.replace(
        '"env": {\n', '"env": {\n    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70",\n'
    )
    assert (claude / "settings.json.bak").read_text() == CLAUDE
    # the point read on the next call follows it (the status line's and analyze's)
    assert (
        Config().for_session(load(path("claude_code_session.jsonl"))).auto_compact_tokens
        == 168_000 * 70 // 100
    )


def test_a_value_already_set_is_replaced_only_when_forced(homes: tuple[Path, Path]) -> None:
    claude, _ = homes
    assert run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--write"]).code == 0
    refused = run_cli(["apply", "claude-code", "autocompact_pct_override=60", "--write"])
    assert refused.code == 2 and "sets CLAUDE_AUTOCOMPACT_PCT_OVERRIDE to 70 already: --force" in refused.err
    assert '"70"' in (claude / "settings.json").read_text()
    assert run_cli(["apply", "claude-code", "autocompact_pct_override=60", "--write", "--force"]).code == 0
    assert '"60"' in (claude / "settings.json").read_text() and (claude / "settings.json.bak-2").exists()


def test_codexs_limit_is_written_keeping_its_comments_and_order(homes: tuple[Path, Path]) -> None:
    _, codex = homes
    assert run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--write"]).code == 0
    assert (codex / "config.toml").read_text() == CODEX.replace(
        "# the model I use\n", "# the model I use\nmodel_auto_compact_token_limit = 200000\n"
    )
    assert (codex / "config.toml.bak").read_text() == CODEX


def test_an_option_out_of_range_or_not_taken_is_refused_before_anything(homes: tuple[Path, Path]) -> None:
    claude, _ = homes
    assert run_cli(["apply", "claude-code", "autocompact_pct_override=160"]).code == 2
    wrong = run_cli(["apply", "claude-code", "auto_compact_tokens=100000"])
    assert wrong.code == 2 and "it takes: autocompact_pct_override" in wrong.err
    assert (claude / "settings.json").read_text() == CLAUDE

"""`apply`: a tuned setting written into the agent's own settings file, every other byte
kept, with a backup, refused over a value already set unless forced. The files are built
here in the layout the agents document (Claude Code's settings.json `env`, Codex's
config.toml top level)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core import apply as applying
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.files import Busy, Changed, locked, rewrite
from compaction_inspector.sample_sessions import path
from tests.helpers import load
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
        Config(CATALOGUE).for_session(load(path("claude_code_session.jsonl"))).account.tokens
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


def test_a_file_changed_since_the_diff_is_not_written_over(homes: tuple[Path, Path]) -> None:
    claude, _ = homes
    change = applying.planned(CATALOGUE.by_format["claude-code"], "autocompact_pct_override", 70)
    theirs = CLAUDE.replace('"opus"', '"sonnet"')
    (claude / "settings.json").write_text(theirs)  # another writer, between the diff and the write
    with pytest.raises(Changed, match="changed since it was read: nothing written"):
        applying.write(change)
    assert (claude / "settings.json").read_text() == theirs and not (claude / "settings.json.bak").exists()


def test_the_cli_shows_the_diff_as_the_file_is_now_when_it_changed(
    homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, _ = homes
    planned = applying.planned

    def raced(agent: Agent, option: str, value: int, layer: str | None = None) -> applying.Change:
        change = planned(agent, option, value, layer)
        (claude / "settings.json").write_text(CLAUDE.replace('"opus"', '"sonnet"'))
        monkeypatch.setattr(applying, "planned", planned)  # the second look sees the file as it is
        return change

    monkeypatch.setattr(applying, "planned", raced)
    out = run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--write"])
    assert out.code == 1 and "changed since it was read: nothing written" in out.err
    assert ' "model": "sonnet",' in out.err and '+    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70",' in out.err
    assert "CLAUDE_AUTOCOMPACT" not in (claude / "settings.json").read_text()


def test_a_file_that_is_not_utf8_is_refused_and_kept_byte_for_byte(homes: tuple[Path, Path]) -> None:
    claude, _ = homes
    raw = CLAUDE.replace('"1"', '"\xff"').encode("latin-1")
    (claude / "settings.json").write_bytes(raw)
    out = run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--write"])
    assert out.code == 2 and "is not UTF-8 text (byte 0xff at offset 86): not changed" in out.err
    assert (claude / "settings.json").read_bytes() == raw and not (claude / "settings.json.bak").exists()


def test_a_link_loop_and_a_read_only_file_are_refused_before_anything_is_made(
    homes: tuple[Path, Path],
) -> None:
    claude, codex = homes
    settings = claude / "settings.json"
    settings.unlink()
    settings.symlink_to(claude / "loop.json")
    (claude / "loop.json").symlink_to(settings)
    for command in (
        ["apply", "claude-code", "autocompact_pct_override=70", "--write"],
        ["statusline", "--setup", "--write"],
    ):
        out = run_cli(command)
        assert out.code == 2 and "is a link that leads round in a loop: not changed" in out.err, out.err
    assert settings.is_symlink() and sorted(p.name for p in claude.iterdir()) == [
        "loop.json",
        "settings.json",
    ]
    toml = codex / "config.toml"
    toml.chmod(0o444)
    out = run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--write"])
    assert out.code == 2 and "config.toml is read-only: not replaced" in out.err
    assert toml.read_text() == CODEX and [p.name for p in codex.iterdir()] == ["config.toml"]


def _write(which: str, start: Any, out: Any) -> None:
    start.wait()
    if which == "apply":
        done = run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--write"])
    else:
        done = run_cli(["statusline", "--setup", "--write"])
    out.put((which, done.code, done.err))


def test_apply_and_the_status_line_setup_racing_never_lose_a_write(homes: tuple[Path, Path]) -> None:
    """Two real processes write the same settings file at once, ten times over: each ends
    written (and its change is in the file) or says it wrote nothing; never both told
    they wrote while one change is lost, never a raw OS error."""
    claude, _ = homes
    forked = multiprocessing.get_context("fork")
    for _ in range(10):
        (claude / "settings.json").write_text(CLAUDE)
        for backup in claude.glob("settings.json.bak*"):
            backup.unlink()
        start, out = forked.Barrier(2), forked.Queue()
        writers = [forked.Process(target=_write, args=(w, start, out)) for w in ("apply", "statusline")]
        for w in writers:
            w.start()
        ended = {which: (code, err) for which, code, err in (out.get(timeout=60) for _ in writers)}
        for w in writers:
            w.join()
        final = json.loads((claude / "settings.json").read_text())
        applied, status = ended["apply"], ended["statusline"]
        assert applied[0] in (0, 1) and status[0] in (0, 1), ended
        assert (final.get("env", {}).get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE") == "70") == (applied[0] == 0), (
            ended
        )
        assert ("statusLine" in final) == (status[0] == 0), ended
        assert "Errno" not in applied[1] + status[1]


def test_a_writer_that_cannot_have_the_lock_gives_up_with_a_plain_message(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("{}\n")
    told: list[str] = []
    forked = multiprocessing.get_context("fork")
    holding, release = forked.Event(), forked.Event()

    def hold() -> None:
        with locked(target):
            holding.set()
            release.wait(30)

    holder = forked.Process(target=hold)
    holder.start()
    try:
        holding.wait(30)
        with pytest.raises(
            Busy, match=f"another program kept writing in {tmp_path} for 0.3 s: nothing written"
        ):
            rewrite(target, b"{}\n", "{}", wait=0.3, waiting=lambda: told.append("waiting"))
    finally:
        release.set()
        holder.join()
    assert told == ["waiting"] and target.read_text() == "{}\n" and not list(tmp_path.glob("*.bak*"))


def test_codexs_limit_goes_where_it_takes_effect_the_default_profile_that_sets_it(
    homes: tuple[Path, Path],
) -> None:
    """A top-level value the default profile overrides would change nothing: the profile's
    is the one replaced, and only with --force, as it is set already."""
    _, codex = homes
    toml = 'profile = "work"\n\n[profiles.work]\nmodel_auto_compact_token_limit = 180000  # mine\n'
    (codex / "config.toml").write_text(toml)
    refused = run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--write"])
    assert refused.code == 2 and "sets model_auto_compact_token_limit to 180000 already" in refused.err
    assert run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--write", "--force"]).code == 0
    assert (codex / "config.toml").read_text() == toml.replace("180000", "200000")
    (codex / "config.toml").write_text('profile = "work"\n\n[profiles.work]\nmodel = "o4-mini"\n')
    assert run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--write"]).code == 0
    assert (
        (codex / "config.toml")
        .read_text()
        .startswith('profile = "work"\nmodel_auto_compact_token_limit = 200000\n')
    )  # the profile does not set it: the top level is what Codex reads


def test_claude_codes_layer_is_chosen_and_help_names_each_file(
    homes: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, _ = homes
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    out = run_cli(["apply", "claude-code", "autocompact_pct_override=70", "--layer", "local", "--write"])
    assert out.code == 0, out.err
    local = project / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}}
    assert (claude / "settings.json").read_text() == CLAUDE  # the user's file untouched
    wrong = run_cli(["apply", "codex", "auto_compact_token_limit=200000", "--layer", "project"])
    assert wrong.code == 2 and "Codex has no 'project' settings (it has: user)" in wrong.err
    told = "".join(run_cli(["apply", "--help"]).out.split())  # argparse wraps anywhere
    assert (
        "user$CLAUDE_CONFIG_DIR/settings.json,else~/.claude/settings.json,project.claude/settings.json"
        in told
    )
    assert "user$CODEX_HOME/config.toml,else~/.codex/config.toml(inthedefaultprofile'stable" in told


OPENCODE = '{\n  // mine\n  "model": "anthropic/claude-sonnet-4-5",\n  "compaction": {"auto": true,},\n}\n'


def test_opencodes_reserve_is_written_into_its_jsonc_keeping_its_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """opencode's `compaction.reserved` (its config schema), in the global `.jsonc` it
    has: its comment and trailing commas kept, the value read back as opencode reads it."""
    home = tmp_path / "config"
    (home / "opencode").mkdir(parents=True)
    jsonc = home / "opencode" / "opencode.jsonc"
    jsonc.write_text(OPENCODE)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    out = run_cli(["apply", "opencode", "trigger_reserve=30000", "--write"])
    assert out.code == 0, out.err
    assert jsonc.read_text() == OPENCODE.replace('{"auto": true,}', '{"reserved": 30000, "auto": true,}')
    assert (home / "opencode" / "opencode.jsonc.bak").read_text() == OPENCODE
    from compaction_inspector.core.agents.opencode import settings

    found = settings.read(None)
    assert found is not None and found.reserved is not None and found.reserved.value == 30_000
    again = run_cli(["apply", "opencode", "trigger_reserve=20000", "--write"])
    assert again.code == 2 and "sets compaction.reserved to 30000 already: --force" in again.err

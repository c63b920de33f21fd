"""The user's own Claude Code settings read into its point: the `env` of settings.json in
the user's folder, then the project's and the local layer (a later layer wins). The
files are built here from the documented keys."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.own.autocompact import Point
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.sample_sessions import path
from tests.helpers import load


def session_in(folder: Path) -> Session:
    """The sample Claude Code session (2.0.37: 32,000 reserved, 168,000 usable), run in `folder`."""
    session = load(path("claude_code_session.jsonl"))
    return dataclasses.replace(session, metadata={**session.metadata, "cwd": str(folder)})


def write(file: Path, env: dict[str, str]) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"permissions": {"allow": []}, "env": env}))


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def test_an_override_in_the_users_settings_lowers_the_point_and_says_whose(
    user: Path, tmp_path: Path
) -> None:
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"})
    config = Config(CATALOGUE).for_session(session_in(tmp_path / "project"))
    assert config.account.tokens == 168_000 * 70 // 100
    assert config.account.point is not None and config.account.point.rule == (
        f"your CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of 70 ({user / 'settings.json'}): 70 % of 168,000"
    )


def test_the_projects_local_layer_wins_and_a_damaged_file_is_left_out(user: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"})
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{not json")
    write(project / ".claude" / "settings.local.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"})
    assert Config(CATALOGUE).for_session(session_in(project)).account.tokens == 168_000 * 60 // 100


def test_disabled_auto_compaction_leaves_no_point(user: Path, tmp_path: Path) -> None:
    write(user / "settings.json", {"DISABLE_AUTO_COMPACT": "1"})
    config = Config(CATALOGUE).for_session(session_in(tmp_path))
    assert config.account.tokens is None
    assert config.account.point is not None and config.account.point.rule.endswith(
        ": it does not compact on its own"
    )


def test_a_smaller_auto_compact_window_is_the_window_its_point_is_worked_in(
    user: Path, tmp_path: Path
) -> None:
    write(user / "settings.json", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"})
    config = Config(CATALOGUE).for_session(session_in(tmp_path))
    assert config.window.context_window == 100_000 and config.account.tokens == 100_000 - 32_000 - 13_000
    assert "your CLAUDE_CODE_AUTO_COMPACT_WINDOW of 100,000" in str(config.window_source)


def test_the_inspectors_own_setting_comes_before_the_users_claude_settings(
    user: Path, tmp_path: Path
) -> None:
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"})
    config = Config(CATALOGUE)
    config = config.with_options(
        "claude-code", dataclasses.replace(config.options("claude-code"), auto_compact_tokens=90_000)
    )
    assert config.for_session(session_in(tmp_path)).account.tokens == 90_000


def test_no_settings_leave_the_window_as_the_session_says(user: Path, tmp_path: Path) -> None:
    config = Config(CATALOGUE).for_session(session_in(tmp_path))
    assert config.account.tokens == 155_000 and "settings" not in str(config.window_source)


def test_the_replay_fires_where_the_point_says_under_the_users_settings(user: Path, tmp_path: Path) -> None:
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"})
    config = Config(CATALOGUE).for_session(session_in(tmp_path))
    replay = CATALOGUE.strategy("claude-code")
    assert replay.in_force is not None
    in_force = replay.in_force(config.options("claude-code"), Context(window=config.window))
    assert in_force["auto_compact_tokens"] == config.account.tokens == 117_600
    assert config.strategies["claude-code"].autocompact_pct_override is None  # a save writes none of it


def test_a_1m_model_held_to_200000_by_the_users_setting(user: Path, tmp_path: Path) -> None:
    session = session_in(tmp_path)
    one_m = dataclasses.replace(session, metadata={**session.metadata, "model": "claude-sonnet-4-5[1m]"})
    assert Config(CATALOGUE).for_session(one_m).window.context_window == 1_000_000
    write(user / "settings.json", {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"})
    config = Config(CATALOGUE).for_session(one_m)
    assert config.window.context_window == 200_000 and config.account.tokens == 155_000
    assert "your CLAUDE_CODE_DISABLE_1M_CONTEXT of 1" in str(config.window_source)


def versioned(session: Session, version: str) -> Session:
    return dataclasses.replace(session, metadata={**session.metadata, "version": version})


def test_idle_compaction_runs_from_2_1_299_at_200000_or_at_the_users_size(user: Path, tmp_path: Path) -> None:
    """Changelog 2.1.299: a conversation of 200,000 or more left idle 54 minutes is
    compacted; `CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS` (at least 100,000) sets the size and
    `idleCompaction: false` turns it off."""
    session = session_in(tmp_path)
    older = Config(CATALOGUE).for_session(versioned(session, "2.1.298"))
    assert older.options("claude-code").idle_compact_tokens is None and older.account.idle is None
    newer = versioned(session, "2.1.299")
    assert Config(CATALOGUE).for_session(newer).options("claude-code").idle_compact_tokens == 200_000
    # the account says it, and analyze reads it there
    idle = Point(200_000, "Claude Code 2.1.299 compacts while idle, at 200,000")
    assert Config(CATALOGUE).for_session(newer).account.idle == idle
    analyzed = Inspection.of(newer, Config(CATALOGUE)).analysis().to_dict()
    assert analyzed["idle_compact"] == {"tokens": 200_000, "rule": idle.rule}
    assert (
        "idle_compact"
        not in Inspection.of(versioned(session, "2.1.298"), Config(CATALOGUE)).analysis().to_dict()
    )
    write(user / "settings.json", {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "120000"})
    config = Config(CATALOGUE).for_session(newer)
    assert config.options("claude-code").idle_compact_tokens == 120_000
    assert config.agent_settings.idle == (
        120_000,
        f"Claude Code 2.1.299 compacts while idle, at your CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS of 120,000 "
        f"({user / 'settings.json'})",
    )
    write(user / "settings.json", {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "50000"})  # under its least: unread
    assert Config(CATALOGUE).for_session(newer).options("claude-code").idle_compact_tokens == 200_000
    (user / "settings.json").write_text(json.dumps({"idleCompaction": False, "env": {}}))
    off = Config(CATALOGUE).for_session(newer)
    assert off.options("claude-code").idle_compact_tokens is None
    assert off.account.idle is not None and off.account.idle.tokens is None
    assert off.agent_settings.idle[1].startswith("your idleCompaction of false")
    # where the session compacted while idle, an earlier version had it on (its server flag)
    (user / "settings.json").unlink()
    from compaction_inspector.core.model import Compaction

    seen = dataclasses.replace(versioned(session, "2.1.290"), compactions=(Compaction(3, "idle", 210_000),))
    assert Config(CATALOGUE).for_session(seen).options("claude-code").idle_compact_tokens == 200_000


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on", " on "])
def test_disable_auto_compact_is_set_by_every_value_claude_code_takes_as_set(
    value: str, user: Path, tmp_path: Path
) -> None:
    write(user / "settings.json", {"DISABLE_AUTO_COMPACT": value})
    assert Config(CATALOGUE).for_session(session_in(tmp_path)).account.tokens is None


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("abc", "not a number"),
        ("-5", "not from 1 to 100"),
        ("0", "not from 1 to 100"),
        ("NaN", "not a number"),
        ("1e309", "not a finite number"),
        ("\uff17\uff10", "not a number"),  # full-width digits: JavaScript's parseFloat reads none
        ("70.5", "not a whole number"),
    ],
)
def test_an_override_that_cannot_be_used_is_named_with_its_file_and_why(
    value: str, why: str, user: Path, tmp_path: Path
) -> None:
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": value})
    config = Config(CATALOGUE).for_session(session_in(tmp_path))
    assert config.account.tokens == 155_000
    said = f"{user / 'settings.json'}: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of {value!r} not used: {why}"
    assert said in str(config.window_source)


def test_javascripts_parse_float_reads_the_number_a_value_starts_with(user: Path, tmp_path: Path) -> None:
    write(user / "settings.json", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": " 70%"})
    assert Config(CATALOGUE).for_session(session_in(tmp_path)).account.tokens == 168_000 * 70 // 100


@pytest.mark.parametrize("content", ["{not json", "\ufeff{}", "[1, 2]", None])
def test_a_settings_file_that_cannot_be_used_is_named(
    content: str | None, user: Path, tmp_path: Path
) -> None:
    """A malformed file, a byte-order mark, a value that is not an object, a directory."""
    file = user / "settings.json"
    if content is None:
        file.mkdir(parents=True)
    else:
        user.mkdir(parents=True, exist_ok=True)
        file.write_text(content)
    source = str(Config(CATALOGUE).for_session(session_in(tmp_path)).window_source)
    assert f"{file} not" in source


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('{"env": {"FOO": "1"}}', '{"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70", "FOO": "1"}}'),
        ('{"env":{"FOO":"1","B":"2"}}', '{"env":{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE":"70","FOO":"1","B":"2"}}'),
        ('{ "env": { "FOO": "1" } }', '{ "env": { "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70", "FOO": "1" } }'),
        (
            '{\n  "env": {\n    "FOO": "1"\n  }\n}\n',
            '{\n  "env": {\n    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70",\n    "FOO": "1"\n  }\n}\n',
        ),
    ],
)
def test_a_value_added_to_an_existing_env_keeps_the_files_own_layout(before: str, after: str) -> None:
    from compaction_inspector.core.agents.claude_code.settings import written

    assert written(before, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", 70) == after

import dataclasses
import os
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import COMMAND_LINE, KEY, Config, ConfigError, WindowSource
from compaction_inspector.core.config_file import from_dict, load, save
from compaction_inspector.core.measuring.pressure import Window


def test_defaults_and_round_trip(tmp_path: Path) -> None:
    config = Config(CATALOGUE)
    assert config.window.usable == 180_000 and config.account.tokens == 167_000
    path = save(config, tmp_path / "compaction.yaml")
    again = load(CATALOGUE, path)
    assert again.to_dict() == config.to_dict() and again.source == str(path)


def test_a_window_chosen_with_no_preset_reads_back_with_none(tmp_path: Path) -> None:
    """`preset: null` is no agent's rule: it read back as the default preset's."""
    config = replace(Config(CATALOGUE).with_window(COMMAND_LINE, 5000, 500), preset=None)
    again = load(CATALOGUE, save(config, tmp_path / "compaction.yaml"))
    assert (again.preset, again.window, again.account.tokens) == (None, Window(5000, 500), None)


def at(name: str) -> int | None:
    """A preset's point in its own window."""
    preset = CATALOGUE.presets[name]
    window = Window(preset.context_window, preset.reserved_output)
    return Config(CATALOGUE, window=window, preset=name).account.tokens


def test_presets_follow_the_real_tools() -> None:
    assert at("claude-code") == 200_000 - 20_000 - 13_000
    assert at("claude-code-1m") == 1_000_000 - 20_000 - 13_000
    # the window a rollout records is 95 % of the raw 272,000; the limit is 90 % of the raw one
    assert at("codex") == 244_800
    assert at("inspect-ai") == 180_000
    c = from_dict({"preset": "codex"}, Config(CATALOGUE))
    assert c.window.context_window == 258_400 and c.window.reserved_output == 0


def test_every_option_is_read() -> None:
    c = from_dict(
        {
            "context_window": 100_000,
            "reserved_output": 8_000,
            "tokenizer": "chars4",
            "trim": {"keep_recent_turns": 2, "trigger": {"tokens": 5000}},
            "ptl_retry": {"limit": 90_000},
            "hysteresis": {"thresholds": [60, 80, 90], "target": 50, "stage": "post-turn"},
            "microcompact": {"keep": {"tool_uses": 3}, "tools": ["Read"]},
            "keys": {"step_next": "j"},
        },
        Config(CATALOGUE),
    )
    assert c.window.usable == 92_000 and c.tokenizer == "chars4"
    trim = c.options("trim")
    assert (trim.keep_recent_turns, trim.trigger_turns, trim.trigger_tokens) == (2, None, 5000)
    assert c.options("ptl-retry").limit == 90_000
    assert c.options("hysteresis").thresholds == (60, 80, 90) and c.options("hysteresis").stage == "post-turn"
    assert c.options("microcompact").tools == frozenset({"Read"})
    assert c.options("microcompact").keep_tool_uses == 3
    assert c.keys == {"step_next": "j"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"colour": 1}, "unknown key 'colour'; allowed: preset, context_window"),
        (
            {"hysteresis": {"tiers": 3}},
            "unknown key 'hysteresis.tiers'; allowed: thresholds, target",
        ),
        (
            {"hysteresis": {"thresholds": [85, 75, 95]}},
            r"hysteresis.thresholds \[85, 75, 95\] and target 70 must satisfy",
        ),
        (
            {"hysteresis": {"summary_chars": 50}},
            "hysteresis.summary_chars must be an integer >= 200",
        ),
        ({"trim": {"trigger": {"turns": 0}}}, "trim.trigger.turns must be an integer >= 1"),
        ({"trim": {"trigger": {"later": 1}}}, "unknown key 'trim.trigger.later'"),
        ({"tokenizer": "gpt2"}, "tokenizer must be one of auto, cl100k_base, o200k_base, chars4"),
        ({"reserved_output": 300_000}, "reserved_output must be from 0 to 199999"),
        ({"preset": "vim"}, "preset must be one of claude-code"),
        ([1, 2], "the configuration must be a mapping"),
    ],
)
def test_invalid_values_name_the_key_and_what_is_allowed(data: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict(data, Config(CATALOGUE))


def test_load_uses_safe_load_and_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "compaction.yaml"
    bad.write_text("!!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(ConfigError, match=r"compaction\.yaml is not valid YAML"):
        load(CATALOGUE, bad)
    bad.write_text(yaml.safe_dump({"target": 3}))
    with pytest.raises(ConfigError, match=r"compaction.yaml: unknown key 'target'"):
        load(CATALOGUE, bad)


def test_working_directory_config_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compaction.yaml").write_text("context_window: 64000\n")
    assert load(CATALOGUE).window.context_window == 64_000


def test_the_auto_compact_point_follows_the_window() -> None:
    config = Config(CATALOGUE, window=Window(60_000, 20_000))  # the claude-code preset, a smaller window
    assert config.account.tokens == 60_000 - 20_000 - 13_000
    assert (
        from_dict({"preset": "codex", "context_window": 95_000}, Config(CATALOGUE)).account.tokens == 90_000
    )
    assert Config(CATALOGUE, window=Window(30_000, 20_000)).account.tokens is None  # 13,000 under 10,000


def test_a_codex_session_brings_its_window_unless_one_was_chosen(tmp_path: Path) -> None:
    from compaction_inspector.sample_sessions import path
    from tests.helpers import load as load_session

    rollout = load_session(path("codex_rollout.jsonl"))
    assert rollout.metadata["context_window"] == 272_000  # its token counts record the window
    session = dataclasses.replace(rollout, metadata={**rollout.metadata, "context_window": 121_600})
    own = Config(CATALOGUE).for_session(session)
    assert (own.window, own.preset, own.window_note) == (
        Window(121_600, 0),
        "codex",
        "set by the session's model_context_window",
    )
    assert own.account.tokens == 115_200  # Codex: 90 % of the raw window, 121,600 / 0.95
    assert "context_window" not in own.to_dict()  # the session's window is never saved as the user's
    chosen = Config(CATALOGUE).overridden(context_window=50_000)
    assert _untokenized(chosen.for_session(session)) == chosen and chosen.window_note == "set by command line"
    file = tmp_path / "compaction.yaml"
    file.write_text("context_window: 64000\n")
    from_file = load(CATALOGUE, file)
    assert (
        from_file.window_note == f"set by {file}"
        and _untokenized(from_file.for_session(session)) == from_file
    )


def test_the_overhead_assumed_is_the_users_else_the_agents_else_the_default() -> None:
    """A session that reports no usage starts at an overhead: Codex states its own
    (12,000, its context indicator's baseline), Claude Code and opencode none."""
    agents = {agent.name: agent for agent in CATALOGUE.agents}
    config = Config(CATALOGUE)
    assert config.overhead(agents["Codex"]) == 12_000
    assert config.overhead(agents["Claude Code"]) == config.overhead(None) == 12_000

    class Mine(type(agents["Codex"])):  # type: ignore[misc]
        overhead_tokens = 9_000

    assert config.overhead(Mine()) == 9_000
    assert config.overridden(overhead_tokens=5_000).overhead(Mine()) == 5_000  # the user's wins


def test_a_window_set_without_a_reserve_keeps_the_presets_share_at_most() -> None:
    small = Config(CATALOGUE).overridden(context_window=16_000)
    assert small.window == Window(16_000, 1_600)  # Claude Code's 20,000 of 200,000, scaled down
    assert Config(CATALOGUE).overridden(context_window=1_000_000).window == Window(1_000_000, 20_000)
    assert Config(CATALOGUE).overridden(context_window=16_000, reserved_output=500).window == Window(
        16_000, 500
    )
    assert Config(CATALOGUE).with_preset("codex").overridden(context_window=50_000).window == Window(
        50_000, 0
    )


def test_claude_code_reserved_its_whole_max_output_up_to_2_1_20() -> None:
    from compaction_inspector.core.model import Session

    def session(version: str) -> Session:
        return Session((), "claude-code", metadata={"version": version})

    older = Config(CATALOGUE).for_session(session("2.1.20"))
    assert older.window == Window(200_000, 32_000) and older.account.tokens == 155_000
    assert older.window_note == (
        "set by the session's Claude Code 2.1.20 reserves its whole max output (up to 2.1.20)"
    )
    assert older.account.note == (
        "auto-compact at 155,000: 13,000 under the effective window of 168,000 "
        "(200,000 less 32,000 reserved for output)"
    )
    assert "context_window" not in older.to_dict()
    newer = Config(CATALOGUE).for_session(session("2.1.21"))
    assert newer.window == Config(CATALOGUE).window and newer.account.tokens == 167_000
    assert (
        newer.window_note
        == "set by the session's Claude Code 2.1.21 reserves min(max output, 20,000) (from 2.1.21)"
    )
    assert _untokenized(Config(CATALOGUE).for_session(Session((), "claude-code"))) == Config(
        CATALOGUE
    )  # no version: the default
    chosen = Config(CATALOGUE, window=Window(60_000, 6_000))  # a window of its own is kept
    assert _untokenized(chosen.for_session(session("2.0.37"))) == chosen


def test_claude_code_has_a_1m_window_when_its_model_or_its_prompts_say_so() -> None:
    from compaction_inspector.core.model import Session, Usage, text_message

    named = Config(CATALOGUE).for_session(
        Session((), "claude-code", metadata={"version": "2.1.30", "model": "claude-sonnet-4-5[1m]"})
    )
    assert (named.preset, named.window, named.account.tokens) == (
        "claude-code-1m",
        Window(1_000_000, 20_000),
        967_000,
    )
    big = text_message("assistant", "ok", usage=Usage(input_tokens=250_000))
    seen = Config(CATALOGUE).for_session(Session((big,), "claude-code", metadata={"version": "2.1.30"}))
    assert seen.window.context_window == 1_000_000
    assert "a reported prompt of 250,000 is past 200,000: a 1M window" in seen.window_note


def test_the_changelogs_1m_windows_follow_the_model_and_the_version() -> None:
    from compaction_inspector.core.model import Compaction, Session

    def window(model: str, version: str, *compactions: Compaction) -> int:
        session = Session(
            (), "claude-code", metadata={"version": version, "model": model}, compactions=compactions
        )
        return Config(CATALOGUE).for_session(session).window.context_window

    # 2.1.117 fixed Opus 4.7 being computed against 200k; Sonnet 5 is natively 1M
    assert window("claude-opus-4-7", "2.1.116") == 200_000
    assert window("claude-opus-4-7", "2.1.117") == 1_000_000
    assert window("claude-sonnet-5-20270101", "2.1.197") == 1_000_000
    # 2.1.260 compacts 1M Opus and Fable shortly before 1M, as Sonnet 5 (2.1.247)
    assert window("claude-opus-5", "2.1.259") == 200_000
    assert window("claude-opus-5", "2.1.260") == 1_000_000
    assert window("claude-fable-5-20271001", "2.1.290") == 1_000_000
    assert window("claude-opus-4-6", "2.1.80") == 200_000  # 1M by plan only: the prompts must say
    # a session that compacted on its own under 200,000 had no 1M window, whatever its model
    assert window("claude-opus-4-7", "2.1.120", Compaction(3, "auto", 169_000)) == 200_000


def test_a_sonnet_5_transcript_compacts_at_967_000() -> None:
    """Claude Code 2.1.247's changelog: Sonnet 5 compacts at about 967,000: 13,000 under
    its 1M window less the 20,000 it reserves."""
    from compaction_inspector.core.model import Session

    session = Session((), "claude-code", metadata={"version": "2.1.247", "model": "claude-sonnet-5"})
    config = Config(CATALOGUE).for_session(session)
    assert config.account.tokens == 967_000
    assert config.window_note == (
        "set by the session's Claude Code 2.1.247 reserves min(max output, 20,000) (from 2.1.21); "
        "Sonnet 5 has a native 1M window"
    )


def test_the_percent_override_can_only_lower_claude_codes_point() -> None:
    config = from_dict({"claude_code": {"autocompact_pct_override": 50}}, Config(CATALOGUE))
    assert config.account.tokens == 90_000  # 50 % of the usable 180,000
    assert config.account.note == "auto-compact at 90,000: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE 50 % of 180,000"
    assert (
        from_dict({"claude_code": {"autocompact_pct_override": 99}}, Config(CATALOGUE)).account.tokens
        == 167_000
    )
    with pytest.raises(ConfigError, match="from 1 to 100"):
        from_dict({"claude_code": {"autocompact_pct_override": 101}}, Config(CATALOGUE))


def test_a_codex_session_reads_the_users_codex_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction_inspector.core.model import Session

    rollout = Session((), "codex", metadata={"context_window": 258_400})
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert Config(CATALOGUE).for_session(rollout).account.note == (
        "auto-compact at 244,800: 90 % of the raw window 272,000 (258,400 / 0.95)"
    )
    (tmp_path / "config.toml").write_text("model_auto_compact_token_limit = 200000\n")
    config = Config(CATALOGUE).for_session(rollout)
    assert config.account.tokens == 200_000
    assert config.account.note == (
        f"auto-compact at 200,000: model_auto_compact_token_limit 200,000 ({tmp_path / 'config.toml'})"
    )
    (tmp_path / "config.toml").write_text("model_auto_compact_token_limit = 900000\n")
    assert (
        Config(CATALOGUE).for_session(rollout).account.tokens == 244_800
    )  # never above 90 % of the raw window
    ours = from_dict({"codex": {"auto_compact_token_limit": 150_000}}, Config(CATALOGUE)).for_session(rollout)
    assert ours.account.tokens == 150_000  # compaction.yaml wins
    (tmp_path / "config.toml").write_text("not toml = = \n")
    unread = Config(CATALOGUE).for_session(rollout)
    assert unread.agent_settings.auto_compact_token_limit is None  # unreadable: Codex's own defaults, said
    why = "Expected '=' after a key in a key/value pair (at line 1, column 5)"
    assert unread.agent_settings.refused == (f"{tmp_path / 'config.toml'} not used: not TOML ({why})",)
    assert unread.account.tokens == 244_800
    # the profile it names as its default wins over the top level, and is named
    (tmp_path / "config.toml").write_text(
        'profile = "long"\nmodel_auto_compact_token_limit = 200000\n\n'
        '[profiles.long]\nmodel_auto_compact_token_limit = 220000\n\n[profiles.other]\nmodel = "o3"\n'
    )
    config = Config(CATALOGUE).for_session(rollout)
    assert config.account.tokens == 220_000
    assert config.account.note.endswith(f"({tmp_path / 'config.toml'} [profiles.long])")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"tokenizer: chars4\n\xff\xfe", r"compaction\.yaml is not UTF-8 text"),
        (b"\x00\x01\x02binary", r"compaction\.yaml is not valid YAML"),
        (b"a: " + b"[" * 2000 + b"]" * 2000, r"compaction\.yaml is not valid YAML: it nests deeper"),
        (
            b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + b"".join(
                f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n".encode()
                for p, n in zip("abcd", "bcde", strict=True)
            )
            + b"keys: {x: *e}\n",
            r"its aliases expand it by more than 100,000 nodes",
        ),
        (
            b"overhead_tokens: " + b"9" * 401,
            r"overhead_tokens must be an integer >= 0 and <= 2\*\*53, not a number",
        ),
        (b"trim:\n  keep_initial_user: 'no'\n", r"trim.keep_initial_user must be true or false, not 'no'"),
    ],
)
def test_a_config_that_cannot_be_used_says_why_and_names_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "compaction.yaml"
    bad.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load(CATALOGUE, bad)


def test_a_fifo_named_as_the_config_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "compaction.yaml")
    with pytest.raises(ConfigError, match="a FIFO, not a file to read"):
        load(CATALOGUE, tmp_path / "compaction.yaml")


def test_saving_keeps_comments_and_never_replaces_a_file_it_did_not_read(tmp_path: Path) -> None:
    mine = tmp_path / "compaction.yaml"
    mine.write_text("# my settings\ntokenizer: chars4  # fast\nhysteresis:\n  target: 60  # lower\n")
    config = load(CATALOGUE, mine)
    changed = config.with_options("hysteresis", replace(config.options("hysteresis"), target=55))
    save(changed, mine)
    text = mine.read_text()
    assert text.startswith("# my settings\ntokenizer: chars4  # fast\nhysteresis:\n  target: 55  # lower\n")
    assert load(CATALOGUE, mine).options("hysteresis").target == 55
    other = tmp_path / "broken.yaml"
    other.write_text("target: 3  # a key that stops it loading\n")
    with pytest.raises(ConfigError, match="were not read from it: not replaced"):
        save(Config(CATALOGUE), other)
    assert other.read_text() == "target: 3  # a key that stops it loading\n"


def test_saving_writes_through_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("tokenizer: chars4\n")
    link = tmp_path / "compaction.yaml"
    link.symlink_to(real)
    config = load(CATALOGUE, link)
    save(replace(config, tokenizer="cl100k_base"), link)
    assert link.is_symlink() and load(CATALOGUE, real).tokenizer == "cl100k_base"


def _untokenized(config: Config) -> Config:
    """`config` with the tokenizer `for_session` resolved put back to `auto`."""
    return replace(config, tokenizer="auto")


def test_the_auto_tokenizer_is_the_sessions_models() -> None:
    from compaction_inspector.core.model import Session

    codex = Session((), "codex", metadata={"model": "gpt-5.5"})
    claude = Session((), "claude-code", metadata={"model": "claude-opus-4-5"})
    assert [Config(CATALOGUE).for_session(s).tokenizer for s in (codex, claude)] == [
        "o200k_base",
        "cl100k_base",
    ]
    chosen = Config(CATALOGUE).overridden(tokenizer="chars4")
    assert chosen.for_session(codex).tokenizer == "chars4"


def test_a_saved_window_applies_to_the_sessions_it_was_tuned_for_only(tmp_path: Path) -> None:
    from compaction_inspector.core.config import Scope
    from compaction_inspector.core.config_file import as_yaml
    from compaction_inspector.core.model import Session

    tuned = Session((), "claude-code", metadata={"model": "claude-opus-4-5", "version": "2.1.30"})
    older = Session((), "claude-code", metadata={"model": "claude-sonnet-4", "version": "2.0.76"})
    codex = Session((), "codex", metadata={"model": "gpt-5.5", "context_window": 258_400})
    chosen = Config(CATALOGUE).overridden(context_window=181_818).scoped_to(tuned)
    assert chosen.window_for == Scope("claude-code", "claude-opus-4-5")
    file = tmp_path / "compaction.yaml"
    file.write_text(as_yaml(chosen))
    saved = load(CATALOGUE, file)
    assert saved.window_for == chosen.window_for
    assert saved.for_session(tuned).window.context_window == 181_818
    assert saved.for_session(codex).window == Window(258_400, 0)  # its own, recorded
    assert saved.for_session(older).window == Window(200_000, 32_000)  # its version's reserve
    with pytest.raises(ConfigError, match=r"window_for\.agent"):
        from_dict({"window_for": {"model": "x"}}, Config(CATALOGUE))


def test_the_window_is_set_one_way_and_who_set_it_is_typed() -> None:
    """`with_window` holds the reserve rule: a size from the command line takes its
    preset's share of it for output, a key keeps the reserve, a reserve alone keeps the
    size; who set it decides whether it is the user's choice (saved) or the session's."""
    base = Config(CATALOGUE)  # Claude Code's preset: 200,000 with 20,000 reserved
    assert base.with_window(COMMAND_LINE, 100_000).window == Window(100_000, 10_000)
    assert base.with_window(KEY, 100_000).window == Window(100_000, 20_000)
    assert base.with_window(COMMAND_LINE, reserved_output=8_000).window == Window(200_000, 8_000)
    session = base.with_window(WindowSource("session", "the session's model_context_window"), 258_400, 0)
    assert session.window_from_session and not session.window_chosen
    assert session.window_note == "set by the session's model_context_window"
    assert base.with_window(KEY, 150_000).window_chosen and not base.window_chosen

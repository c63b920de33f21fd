"""The registry is the one list of strategies: every option is declared, and the config
file, the command line and the panel all read the same declarations."""

from __future__ import annotations

import dataclasses

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.config_file import from_dict
from compaction_inspector.core.strategies import OptionError
from compaction_inspector.core.strategies.declaration import settings, with_values
from compaction_inspector.tui.cli.commandline import build_parser
from compaction_inspector.tui.cli.common import UsageError, with_flags


def test_every_option_field_is_declared() -> None:
    for strategy in CATALOGUE.strategies.values():
        fields = [f.name for f in dataclasses.fields(strategy.options)]
        assert [s.name for s in settings(strategy.options)] == fields, strategy.name


def test_flags_are_the_known_ones() -> None:
    flags = {s.flag for strategy in CATALOGUE.strategies.values() for s in strategy.settings}
    assert flags == {
        "--keep-recent-turns", "--no-keep-initial-user", "--trigger-turns", "--trigger-tokens", "--turn",
        "--limit", "--error", "--summary-prompt-tokens",
        "--thresholds", "--target", "--summary-chars", "--protect-volleys", "--stage",
        "--idle-gap-minutes", "--now", None,
        "--auto-compact-tokens", "--autocompact-pct-override", "--idle-compact-tokens",
        "--claude-code-no-auto-compact",
        "--claude-code-summary-prompt-tokens",
        "--claude-code-summary-chars",
        "--reread-files", "--reread-file-tokens", "--reread-total-tokens",
        "--auto-compact-token-limit", "--no-remote", "--user-message-tokens", "--reasoning-per-100",
        "--codex-summary-chars", "--codex-limit-scope",
        # the summarize family's, shared by its presets
        "--summarize-trigger-tokens", "--summarize-trigger-percent",
        "--summarize-trigger-percent-less-output", "--summarize-trigger-messages",
        "--summarize-trigger-reserve", "--summarize-trigger-min", "--summarize-trigger-max",
        "--summarize-keep-tokens", "--summarize-keep-percent", "--summarize-keep-history-percent",
        "--summarize-keep-messages", "--summarize-keep-message-percent", "--summarize-keep-min",
        "--summarize-keep-max", "--summarize-keep-first", "--summarize-keep-user",
        "--summarize-summary-tokens", "--summarize-summarize-tokens",
        # the clear family's
        "--clear-trigger-tokens", "--clear-keep-tool-uses", "--clear-keep-messages", "--clear-keep-tokens",
        "--clear-keep-turns", "--clear-at-least", "--clear-exclude-tools", "--clear-placeholder",
        "--no-clear-persist", "--summarize-tool-output-chars",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "value"),
    [("75,85,95", (75, 85, 95)), (" 12 ", 12), ("", None), ("Read, Bash", frozenset({"Read", "Bash"}))],
)
def test_parse_reads_what_show_writes(raw: str, value: object) -> None:
    kinds = {
        "75,85,95": "thresholds",
        " 12 ": "target",
        "": "idle_gap_minutes",
        "Read, Bash": "tools",
    }
    name = kinds[raw]
    setting = next(
        s for strategy in CATALOGUE.strategies.values() for s in strategy.settings if s.name == name
    )
    assert setting.parse(raw) == value
    assert setting.parse(setting.show(value)) == value


def test_a_group_given_replaces_the_whole_group() -> None:
    trim = CATALOGUE.strategies["trim"].options()
    assert trim.trigger_turns == 8
    changed = with_values(trim, {"trigger_tokens": 5000})
    assert (changed.trigger_turns, changed.trigger_tokens) == (None, 5000)


def test_config_round_trip_covers_every_strategy() -> None:
    config = Config(CATALOGUE)
    for name, strategy in CATALOGUE.strategies.items():
        saved = [s for s in strategy.settings if s.option.saved and s.option.kind in ("int", "int?")]
        if saved:
            s = saved[-1]
            value = (getattr(config.options(name), s.name) or s.option.minimum or 1) + 1
            config = config.with_options(name, with_values(config.options(name), {s.name: value}))
    again = from_dict(config.to_dict(), Config(CATALOGUE))
    assert again.strategies == config.strategies


def test_command_line_flags_set_the_options() -> None:
    args = build_parser().parse_args(
        ["simulate", "f.jsonl", "--strategy", "trim", "--compare", "hysteresis", "--trigger-tokens", "900",
         "--thresholds", "60,70,80", "--target", "50", "--no-keep-initial-user"]
    )  # fmt: skip
    config = with_flags(Config(CATALOGUE), args)
    trim, hys = config.options("trim"), config.options("hysteresis")
    assert (trim.trigger_turns, trim.trigger_tokens, trim.keep_initial_user) == (None, 900, False)
    assert (hys.thresholds, hys.target) == ((60, 70, 80), 50)
    args = build_parser().parse_args(
        [
            "compact",
            "f.jsonl",
            "--strategy",
            "ptl-retry",
            "--error",
            "prompt is too long: 5 tokens > 4 maximum",
        ]
    )
    assert (
        with_flags(Config(CATALOGUE), args).options("ptl-retry").error_text
        == "prompt is too long: 5 tokens > 4 maximum"
    )
    args = build_parser().parse_args(["compact", "f.jsonl", "--strategy", "trim", "--error", "x"])
    with pytest.raises(UsageError, match="--error is an option of ptl-retry, not of trim"):
        with_flags(Config(CATALOGUE), args)


def test_unknown_strategy_names_the_known_ones() -> None:
    with pytest.raises(OptionError, match="choose one of trim, ptl-retry, hysteresis, microcompact"):
        Config(CATALOGUE).options("summarize")

"""Codex after 0.142, as its issues describe it (docs/agents.md). No public rollout of
0.144.1 or later is at hand, so these rollouts are built from the fields 0.140-0.142
write (`session_meta.cli_version`, `turn_context.model`, `token_count` with
`model_context_window`), which the later versions keep.

- openai/codex#32483 (0.144.1 on): a turn's start resets the flag that says the server's
  usage holds the reasoning, so the check adds the local estimate of the encrypted
  reasoning on top; openai/codex#39767 shows a gpt-5.6-sol rollout of 0.148 compacting 76
  times with about a fifth of the window left, each only because of that term.
- gpt-5.6 windows are 272,000 from 0.144.6: `token_count` reports 95 % of it (258,400)
  and the limit is 90 % of the raw window (244,800).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.codex import rules
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.sample_sessions import path
from tests.helpers import load, load_text


def line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-11-02T10:00:00Z", "type": kind, "payload": payload})


def user(text: str) -> list[str]:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return [line("event_msg", {"type": "user_message", "message": text}), line("response_item", item)]


def tokens(total: int, thought: int) -> str:
    last = {
        "input_tokens": total - 1_000,
        "cached_input_tokens": 0,
        "output_tokens": 1_000,
        "reasoning_output_tokens": thought,
        "total_tokens": total,
    }
    info = {"last_token_usage": last, "total_token_usage": last, "model_context_window": 258_400}
    return line("event_msg", {"type": "token_count", "info": info})


def tool_round(call_id: str, total: int, thought: int) -> list[str]:
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": call_id}
    done = {"type": "function_call_output", "call_id": call_id, "output": "ok"}
    return [
        line("response_item", {"type": "reasoning", "summary": []}),
        line("response_item", call),
        line("response_item", done),
        tokens(total, thought),
    ]


def rollout(cli_version: str) -> str:
    """Turn one thinks hard (40,000 reasoning tokens); in turn two a response reports
    205,000 tokens, a fifth of the window left, and Codex compacts before its follow-up."""
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
    return "\n".join(
        [
            line("session_meta", {"id": "sol", "cli_version": cli_version}),
            line("turn_context", {"model": "gpt-5.6-sol"}),
            line("event_msg", {"type": "task_started"}),
            *user("port the parser"),
            *tool_round("c1", 150_000, 30_000),
            line("response_item", {"type": "reasoning", "summary": []}),
            line("response_item", answer),
            tokens(160_000, 10_000),
            line("event_msg", {"type": "task_complete"}),
            line("event_msg", {"type": "task_started"}),
            *user("now the tests"),
            *tool_round("c2", 205_000, 5_000),
            line("compacted", {"message": "", "replacement_history": [{"type": "compaction"}]}),
        ]
    )


def compaction(cli_version: str) -> Any:
    session = load_text(rollout(cli_version), "rollout.jsonl")
    inspection = Inspection.of(session, Config(CATALOGUE).for_session(session), make_counter("chars4"))
    (found,) = inspection.own_compactions()
    return found


def test_the_limit_of_a_gpt_5_6_window_is_90_percent_of_the_raw_window_not_of_the_reported_one() -> None:
    assert rules.codex_raw_window(258_400) == 272_000
    assert rules.codex_limit(Window(258_400, 0)).tokens == 244_800  # never 0.9 × 258,400 = 232,560
    # 0.144.4 reported 353,400 for gpt-5.6 before 0.144.6 fixed its window: a raw 372,000
    assert rules.codex_limit(Window(353_400, 0)).tokens == 334_800


def test_a_0_148_rollout_fires_where_the_reasoning_counted_twice_takes_it_and_says_so() -> None:
    """Turn two's mid-turn check: 205,000 reported + the new items + turn one's 40,000
    reasoning tokens at 120 per 100 (the documented guess): 253,000 and more, over
    244,800; counted once it is 205,000 and a few, under it."""
    found = compaction("0.148.0")
    count = found.count
    assert count is not None and count.fires and count.when == "mid-turn"
    assert count.point.tokens == 244_800
    assert dict(count.parts)["reasoning"] == 48_000
    single = count.total - 48_000
    assert single < 244_800
    assert found.policy_round_offset == 0  # the rule fires at the check where Codex compacted
    said = (
        "the reasoning decided it: Codex 0.148.0 adds it on top of the server's usage, which already "
        "holds it, as the server's usage does not say it holds it (openai/codex#39767); "
        f"counted once, {single:,} < 244,800"
    )
    assert count.line().endswith("; " + said)
    assert count.to_dict()["decided_by"] == said


def test_before_0_144_1_the_same_count_fires_without_saying_it_was_counted_twice() -> None:
    count = compaction("0.142.0").count
    assert count is not None and count.fires
    assert count.decided == "" and "decided_by" not in count.to_dict()


def test_a_turns_start_check_names_the_flag_it_resets() -> None:
    at = Point(244_800, "90 % of the raw window 272,000")
    pre = Count("Codex", (("reported", 200_000), ("new items", 0), ("reasoning", 50_000)), ("reasoning",), at,
                "pre-turn")  # fmt: skip
    said = rules.counted_twice(pre, "0.144.1").decided
    assert said.endswith(
        "as its turn's start resets the flag that says the server counted it (openai/codex#32483); "
        "counted once, 200,000 < 244,800"
    )
    # where the count is over the limit without the reasoning, or does not fire, nothing is said
    over = Count("Codex", (("reported", 250_000), ("reasoning", 1_000)), (), at, "pre-turn")
    under = Count("Codex", (("reported", 100_000), ("reasoning", 1_000)), (), at, "pre-turn")
    assert rules.counted_twice(over, "0.150.0").decided == ""
    assert rules.counted_twice(under, "0.150.0").decided == ""
    assert rules.counted_twice(pre, None).decided == ""


def scoped_rollout() -> str:
    """0.154: the window's first response reports 29,000 of input; the next 124,000 and
    then 130,000, when Codex compacts."""
    return "\n".join(
        [
            line("session_meta", {"id": "body", "cli_version": "0.154.0"}),
            line("turn_context", {"model": "gpt-5.5"}),
            line("event_msg", {"type": "task_started"}),
            *user("port the parser"),
            *tool_round("c1", 30_000, 0),
            *tool_round("c2", 125_000, 0),
            *tool_round("c3", 131_000, 0),
            line("compacted", {"message": "", "replacement_history": [{"type": "compaction"}]}),
        ]
    )


def test_a_body_after_prefix_limit_counts_from_the_windows_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`model_auto_compact_token_limit_scope = "body_after_prefix"` (0.154): Codex compares
    what the window added since its first request's input with the limit, the whole
    window a hard cap (core/src/session/context_window.rs). With a limit of 100,000 the
    rollout compacts at 130,000 + its new items, 29,000 + 100,000 being the point; counted
    whole, the limit would have fired a check earlier."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config_toml = tmp_path / "config.toml"
    config_toml.write_text(
        "# tuned for long sessions\nmodel_auto_compact_token_limit = 100000\n"
        'model_auto_compact_token_limit_scope = "body_after_prefix"\n'
    )
    session = load_text(scoped_rollout(), "rollout.jsonl")
    config = Config(CATALOGUE).for_session(session)
    assert config.options("codex").limit_scope == "body_after_prefix"
    # the window after the compaction has answered nothing yet: only the whole window caps it
    assert config.account.tokens == 258_400
    assert config.account.point is not None and config.account.point.rule == (
        f"the whole window 258,400 (model_auto_compact_token_limit_scope body_after_prefix ({config_toml}): "
        "no response in this window yet)"
    )
    inspection = Inspection.of(session, config, make_counter("chars4"))
    (found,) = inspection.own_compactions()
    assert found.count is not None and found.count.fires and found.count.point.tokens == 129_000
    assert found.count.point.rule == (
        f"100,000 past the window's first request of 29,000 (model_auto_compact_token_limit 100,000 "
        f"({config_toml}); model_auto_compact_token_limit_scope body_after_prefix ({config_toml}))"
    )
    assert found.policy_round_offset == 0  # the replay fires where Codex did
    # counted whole, the same limit fires at the check before
    config_toml.write_text("model_auto_compact_token_limit = 100000\n")
    whole = Config(CATALOGUE).for_session(session)
    (early,) = Inspection.of(session, whole, make_counter("chars4")).own_compactions()
    assert early.policy_round_offset == 1  # a round before Codex did


def test_the_whole_window_caps_a_body_after_prefix_limit() -> None:
    body = rules.codex_scope_limit(rules.BODY_AFTER_PREFIX, Window(258_400, 0), 250_000)
    assert body.tokens == 250_000  # not held to 90 % of the raw window
    assert rules.codex_scoped(body, 29_000, Window(258_400, 0)).tokens == 258_400
    assert rules.codex_scoped(body, None, Window(258_400, 0)).rule.startswith("the whole window 258,400")
    assert rules.codex_prefills([])[-1] is None


def test_the_scope_is_read_from_config_toml_and_its_default_profile(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'profile = "long"\nmodel_auto_compact_token_limit_scope = "total"\n\n'
        '[profiles.long]\nmodel_auto_compact_token_limit_scope = "body_after_prefix"\n'
    )
    found = rules.codex_settings({"CODEX_HOME": str(tmp_path)})
    assert found is not None and (found.scope, found.profile) == ("body_after_prefix", "long")
    (tmp_path / "config.toml").write_text('model_auto_compact_token_limit_scope = "everything"\n')
    unknown = rules.codex_settings({"CODEX_HOME": str(tmp_path)})
    assert unknown is not None and unknown.scope is None  # not a scope Codex has: its default


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('model_auto_compact_token_limit = "abc"\n', "model_auto_compact_token_limit of 'abc' not used"),
        ("model_auto_compact_token_limit = -5\n", "model_auto_compact_token_limit of '-5' not used"),
        ("model_context_window = 0\n", "model_context_window of '0' not used"),
        ("model_context_window = nan\n", "model_context_window of 'nan' not used"),
        ("model_context_window = true\n", "model_context_window of 'True' not used"),
        (
            'profile = "w"\n[profiles.w]\nmodel_auto_compact_token_limit = 1e309\n',
            "[profiles.w] model_auto_compact_token_limit of 'inf' not used",
        ),
        ('model_auto_compact_token_limit_scope = "everything"\n', "_scope of 'everything' not used"),
        ("model = [\n", "not used: not TOML"),
        ("\ufeffmodel = 1\n", "not used: not TOML"),
        (None, "not read:"),
    ],
)
def test_settings_codex_would_not_take_are_named_with_their_file(
    content: str | None, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value of the wrong kind, a malformed file, a byte-order mark, a folder where the
    file should be: the rollout's own window stands, and its line says what was left out."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    file = tmp_path / "config.toml"
    if content is None:
        file.mkdir()
    else:
        file.write_text(content)
    session = load(path("codex_rollout.jsonl"))
    config = Config(CATALOGUE).for_session(session)
    assert config.window.context_window == 272_000
    assert f"your settings {file}" in str(config.window_source) and said in str(config.window_source)


def test_a_top_level_key_is_not_credited_to_the_default_profile(tmp_path: Path) -> None:
    """The profile sets the scope only; the limit is the top level's, and says so."""
    (tmp_path / "config.toml").write_text(
        'profile = "work"\nmodel_auto_compact_token_limit = 200000\n\n'
        '[profiles.work]\nmodel_auto_compact_token_limit_scope = "total"\n'
    )
    found = rules.codex_settings({"CODEX_HOME": str(tmp_path)})
    assert found is not None and found.profile == "work" and found.in_profile == {rules.SCOPE_KEY}
    assert found.where(rules.LIMIT_KEY) == str(tmp_path / "config.toml")
    assert found.where(rules.SCOPE_KEY) == f"{tmp_path / 'config.toml'} [profiles.work]"


def test_todays_model_context_window_is_for_the_next_session_not_the_one_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rollout records the 272,000 it ran with; a config.toml that says 400,000 now
    moves neither its window nor its point, and the window's line names both."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    session = load(path("codex_rollout.jsonl"))
    before = Config(CATALOGUE).for_session(session)
    (tmp_path / "config.toml").write_text("model_context_window = 400000\n")
    config = Config(CATALOGUE).for_session(session)
    assert config.window.context_window == 272_000
    assert config.account.tokens == before.account.tokens
    assert (
        f"your model_context_window of 400,000 ({tmp_path / 'config.toml'}) is not what it ran with: "
        "it applies to the next session" in str(config.window_source)
    )
    (tmp_path / "config.toml").write_text("model_context_window = 286316\n")  # what it ran with: 272,000
    agrees = Config(CATALOGUE).for_session(session)
    assert agrees.account.tokens == 257_684 and "not what it ran with" not in str(agrees.window_source)

"""Codex's own count, term by term (docs/agents.md): where a rollout says Codex checked
it, what each term held there, and where the preset's rule fires from it.

The rollouts here follow the order Codex 0.140-0.142 writes, as
`codex_agentv_019efc87_v0.142.0_one-auto-compaction.jsonl` lines 910-913 record an
automatic compaction: the tool outputs, the `token_count` of the response that asked for
them, then `compacted`; a rollout from 0.58 (`codex_rollout-2025-11-17T15-30-28-…`) holds
the encrypted reasoning the third term reads.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from compaction_inspector.core.agents.codex import new_history as codex_history
from compaction_inspector.core.agents.codex import rules
from compaction_inspector.core.agents.codex.strategy import CodexOptions
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Check, Reasoning
from compaction_inspector.core.own.autocompact import Point
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies import run
from tests.helpers import load_text
from tests.hostile import run_cli


def line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-06-25T02:00:00Z", "type": kind, "payload": payload})


def user(text: str) -> str:
    return line(
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def reasoning(encrypted: str | None = None) -> str:
    item: dict[str, Any] = {"type": "reasoning", "summary": []}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return line("response_item", item)


def call(call_id: str) -> str:
    payload = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": call_id}
    return line("response_item", payload)


def output(call_id: str, text: str) -> str:
    return line("response_item", {"type": "function_call_output", "call_id": call_id, "output": text})


def tokens(total: int, thought: int, running: int) -> str:
    last = {
        "input_tokens": total - 100,
        "cached_input_tokens": 0,
        "output_tokens": 100,
        "reasoning_output_tokens": thought,
        "total_tokens": total,
    }
    info = {
        "last_token_usage": last,
        "total_token_usage": {"total_tokens": running},
        "model_context_window": 9_500,
    }
    return line("event_msg", {"type": "token_count", "info": info})


def event(kind: str) -> str:
    return line("event_msg", {"type": kind})


ANSWER = {"type": "output_text", "text": "ok"}
SUMMARY = {"type": "compaction", "encrypted_content": "e" * 4_000}
ROLLOUT = [
    line("session_meta", {"id": "r", "cli_version": "0.142.0"}),
    line("turn_context", {"model": "gpt-5.5"}),
    event("task_started"),
    user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
    line("event_msg", {"type": "user_message", "message": "fix the bug"}),
    user("fix the bug"),
    reasoning(),
    call("c1"),
    output("c1", "x" * 100),  # {"type":…,"call_id":"c1","output":"x…"}: 158 bytes, 40 tokens
    tokens(8_000, 100, 8_000),
    reasoning(),
    line("response_item", {"type": "message", "role": "assistant", "content": [ANSWER]}),
    tokens(8_700, 50, 16_700),
    event("task_complete"),
    event("task_started"),
    line("event_msg", {"type": "user_message", "message": "next"}),
    user("next"),
    reasoning(),
    call("c2"),
    output("c2", "y" * 1_000),  # 1,058 bytes: 265 tokens
    tokens(8_600, 10, 25_300),
    line("compacted", {"message": "", "replacement_history": [SUMMARY]}),
]  # fmt: skip


def test_the_loader_records_where_codex_checked_and_the_terms_it_read_there() -> None:
    session = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    mid_1, pre, mid_2 = session.checks
    assert (mid_1.when, mid_1.reported, mid_1.new_items) == ("mid-turn", 8_000, 40)
    assert (pre.when, pre.reported, pre.new_items) == ("pre-turn", 8_700, 0)
    assert (mid_2.when, mid_2.reported, mid_2.new_items) == ("mid-turn", 8_600, 265)
    # the mid-turn check sits before the follow-up request; the pre-turn one before the prompt
    assert session.messages[mid_1.index].reasoning is not None
    assert session.messages[pre.index].text == "next"
    # each response's reported reasoning tokens sit on its last reasoning item
    assert [m.reasoning.reported for m in session.messages if m.reasoning] == [100, 50, 10]


def test_a_live_rollout_that_ends_on_tool_outputs_is_counted_as_codex_counts_before_its_follow_up() -> None:
    """Cut just before its compaction, the rollout's latest check is the one Codex makes
    before the follow-up it sends next: `analyze` (and `watch`, which asks the same
    inspection) reads the count `compactions` shows before that compaction."""
    whole = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    config = Config(CATALOGUE, preset="codex", window=Window(9_500, 0))
    (compaction,) = Inspection.of(whole, config).own_compactions()
    assert compaction.count is not None
    cut = Inspection.of(load_text("\n".join(ROLLOUT[:-1]), "rollout.jsonl"), config)
    latest = cut.session.checks[-1]
    assert (latest.when, latest.index, latest.reported) == ("mid-turn", len(cut.messages), 8_600)
    assert cut.headroom is not None and cut.headroom.count == compaction.count.total
    analysis = cut.analysis().to_dict()
    assert analysis["compacts_in"]["count"] == analysis["agent_count"]["total"] == compaction.count.total


def test_the_count_reads_reasoning_before_the_last_user_message_only() -> None:
    session = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    point = Point(9_000, "90 % of the raw window 10,000")
    rate = rules.codex_reasoning_rate(session.messages)
    assert rate.per_100 == rules.CODEX_REASONING_PER_100  # nothing in the rollout to fit on
    counts = rules.codex_counts(session.messages, session.checks, point, rate)
    # turn one's reasoning comes after its prompt; in turn two it is history: 150 × 1.2
    assert [c.total for c in counts] == [8_040, 8_700, 8_600 + 265 + 180]
    assert [c.fires for c in counts] == [False, False, True]
    assert counts[-1].line() == (
        "Codex counted 9,045 ≥ 9,000 (90 % of the raw window 10,000): 8,600 reported + 265 new items "
        "+ 180 reasoning (estimated)"
    )
    assert counts[-1].to_dict()["parts"] == {"reported": 8_600, "new_items": 265, "reasoning": 180}
    assert counts[-1].to_dict()["estimated"] == ["reasoning"]


def test_where_the_reasoning_estimates_range_straddles_the_limit_it_fires_here_or_next() -> None:
    """The estimated reasoning at 110 and 130 per 100 (what public rollouts fit) puts the
    count at 9,030-9,060: under a limit of 9,040 at one end, over it at the other. A rate
    set or fitted has no range."""
    session = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    point = Point(9_040, "a limit between")
    rate = rules.codex_reasoning_rate(session.messages)
    last = rules.codex_counts(session.messages, session.checks, point, rate)[-1]
    assert last.spread == (9_030, 9_060) and last.fires and last.undecided
    assert last.line().endswith("; 9,030-9,060 over the estimate's range: it fires here or at the next check")
    assert last.to_dict()["fires_here_or_next"] is True
    high = rules.codex_counts(session.messages, session.checks, Point(9_000, "under"), rate)[-1]
    assert not high.undecided and "next check" not in high.line()
    set_to = rules.codex_reasoning_rate(session.messages, 120)
    assert rules.codex_counts(session.messages, session.checks, point, set_to)[-1].spread is None


def test_encrypted_reasoning_is_read_from_its_length_and_fits_the_rate() -> None:
    held = "A" * 4_000  # 3,000 bytes less 650 of overhead: 2,350 bytes, 588 tokens
    rollout = [*ROLLOUT[:6], reasoning(held), *ROLLOUT[7:]]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    first = next(m for m in session.messages if m.reasoning)
    assert first.reasoning is not None and first.reasoning.encrypted == 588
    # that response reported 100 reasoning tokens: the rollout's own rate is 588 per 100
    rate = rules.codex_reasoning_rate(session.messages)
    assert rate.per_100 == 588 and "fitted on 1 responses" in rate.source
    assert rules.codex_reasoning_rate(session.messages, 110).per_100 == 110
    # a redacted value is shorter than the encryption's own overhead: not held
    redacted = load_text("\n".join([*ROLLOUT[:6], reasoning("REDACTED"), *ROLLOUT[7:]]), "r.jsonl")
    assert next(m for m in redacted.messages if m.reasoning).reasoning == Reasoning(None, 100)


def test_where_the_preset_fires_is_read_from_codexs_own_count() -> None:
    session = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    inspection = Inspection.of(
        session, Config(CATALOGUE, preset="codex").for_session(session), make_counter("chars4")
    )
    (c,) = inspection.own_compactions()
    assert c.policy_round_offset == 0
    assert c.count is not None and c.count.total == 9_045
    # without the reasoning term the count stays under the limit and the rule never fires
    low = inspection.with_config(inspection.config.with_options("codex", CodexOptions(reasoning_per_100=1)))
    (c,) = low.own_compactions()
    assert c.policy_round_offset is None and c.count is not None and not c.count.fires


def test_compactions_and_the_replay_decide_with_one_count() -> None:
    """Codex counts a new item at its bytes / 4: 1,000 CJK characters are 3,000 bytes, 750
    of its tokens, where a tokenizer of the context counts far fewer. Where the rollout
    records the check, the replay takes Codex's own count, so it fires where `compactions`
    says the preset fires, and not where it says it does not."""
    rollout = [*ROLLOUT]
    rollout[-3] = output("c2", "中" * 1_000)
    session = load_text("\n".join(rollout), "rollout.jsonl")
    tried = (CodexOptions(), CodexOptions(reasoning_per_100=1), CodexOptions(auto_compact_token_limit=9_500))
    for options in tried:
        config = Config(CATALOGUE, preset="codex").for_session(session).with_options("codex", options)
        inspection = Inspection.of(session, config, make_counter("chars4"))
        (own,) = inspection.own_compactions()
        assert own.count is not None
        assert own.count.parts[1] == ("new items", 765)  # {"type":…,"output":"中…"}: 3,058 bytes
        replay = inspection.replay(inspection.policy("codex"))
        (event,) = [p.event for p in replay.points if p.event is not None]
        fires_there = event.source == "transcript" and event.policy_titles is not None
        assert fires_there == (own.policy_round_offset == 0) == own.count.fires


def test_a_check_is_a_plain_record() -> None:
    assert Check(3, "pre-turn", 10, 2).to_dict() == {
        "index": 3,
        "when": "pre-turn",
        "reported": 10,
        "new_items": 2,
    }


def test_the_codex_strategy_compares_the_same_count_with_its_limit() -> None:
    session = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    messages = session.messages[: session.compactions[0].index]
    context = Context(counter=make_counter("chars4"), window=Window(9_500, 0))
    held = context.tokens(messages)
    at = CodexOptions(auto_compact_token_limit=held + 100)
    # 180 of estimated reasoning before the last user message takes it over the limit
    result = run(CATALOGUE.strategies["codex"], messages, at, context)
    assert result.stats.triggered and result.stats.tokens_before == held + 180  # type: ignore[attr-defined]
    result = run(
        CATALOGUE.strategies["codex"], messages, dataclasses.replace(at, reasoning_per_100=1), context
    )
    assert not result.stats.triggered and result.stats.tokens_before == held + 2  # type: ignore[attr-defined]


def test_a_local_compaction_that_records_only_its_summary_gets_the_history_codexs_rule_makes() -> None:
    """Codex rollouts that compact locally record the summary (`compacted.message`) and
    not the new history: it is the initial context, the person's newest messages within
    20,000 of Codex's estimated tokens (the one that crosses it cut) and the summary."""
    long = "z" * 80_000  # 20,000 estimated tokens on its own
    rollout = [
        *ROLLOUT[:6],
        user(long),
        user("and this"),
        line("compacted", {"message": "what happened so far"}),
    ]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    boundary = session.compactions[0].index
    after = session.messages[boundary + 1 :]
    assert [m.text[:20] for m in after] == [
        "<environment_context",  # the initial context, built again
        "z" * 20,  # cut to the 19,998 estimated tokens "and this" leaves
        "and this",
        "what happened so far",
    ]
    assert len(after[1].text) == 4 * (20_000 - 2) and after[-1].is_compact_summary
    # copies: every message of a list is its own object
    assert not set(after) & set(session.messages[:boundary])


def test_codexs_own_wrappers_are_not_the_persons_messages() -> None:
    """`<turn_aborted>` (as `codex_agentv_019efc87_v0.142.0_…` line 72 records one) and
    Codex's other contextual fragments neither open a turn nor survive a compaction."""
    aborted = "<turn_aborted>\nThe user interrupted the previous turn on purpose."
    rollout = [
        *ROLLOUT[:6],
        user(aborted),
        user("<USER_SHELL_COMMAND>ls</USER_SHELL_COMMAND>"),
        user("go on"),
    ]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    assert [m.text[:8] for m in session.messages if m.is_human] == ["fix the ", "go on"]
    kept = codex_history.kept_user_messages(session.messages, codex_history.REMOTE_USER_TOKENS)
    assert [m.text for m in kept] == ["fix the bug", "go on"]


def test_a_compaction_item_the_rollout_lacks_is_read_from_codexs_own_estimate_after_it() -> None:
    """Codex's estimate after a compaction (the `token_count` with no request) is its
    instructions (bytes / 4) and every item of the new history, the encrypted compaction
    item by its length: what is left once the rest is taken off is that item, which a
    published rollout often redacts (`…019f03e0_v0.142.2…` line 272) or leaves out."""
    kept = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}
    redacted = {"type": "compaction", "encrypted_content": "REDACTED"}
    kept_tokens = -(-len(json.dumps(kept, separators=(",", ":"))) // 4)
    estimate = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "total_tokens": 3_000}
    rollout = [
        line("session_meta", {"id": "r", "base_instructions": {"text": "b" * 4_000}}),
        *ROLLOUT[1:-1],
        line("compacted", {"message": "", "replacement_history": [kept, redacted]}),
        line("event_msg", {"type": "token_count", "info": {"last_token_usage": estimate}}),
    ]  # fmt: skip
    (c,) = load_text("\n".join(rollout), "rollout.jsonl").compactions
    assert c.post_tokens == 3_000 and c.hidden_tokens == 3_000 - 1_000 - kept_tokens
    # where the item is held, its length says what it is
    held = [
        *rollout[:-2],
        line("compacted", {"message": "", "replacement_history": [kept, SUMMARY]}),
        rollout[-1],
    ]
    assert load_text("\n".join(held), "rollout.jsonl").compactions[0].hidden_tokens == 588


def test_the_prompts_a_codex_history_keeps_were_made_by_the_compaction_not_sent_after_it() -> None:
    kept = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]}
    rollout = [*ROLLOUT[:-1], line("compacted", {"message": "", "replacement_history": [kept, SUMMARY]})]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    (step,) = Inspection.of(session, Config(CATALOGUE), make_counter("chars4")).own_steps().steps
    assert "messages were replaced by 2;" in step.explanation
    assert "sent since" not in step.explanation


def test_an_item_whose_type_is_not_a_name_is_skipped_and_counted_as_nothing_else() -> None:
    """Found by the fuzzer: `{"type": []}` as a response item's payload."""
    rollout = [*ROLLOUT[:-3], line("response_item", {"type": []}), *ROLLOUT[-3:]]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    assert [c.new_items for c in session.checks] == [40, 0, 265]
    assert any("response_item" in d.message for d in session.diagnostics)


def test_the_rate_is_fitted_on_whole_responses() -> None:
    """A response may hold several reasoning items; its reported reasoning tokens are
    for all of them."""
    held = "A" * 4_000  # 588 tokens each
    rollout = [*ROLLOUT[:6], reasoning(held), reasoning(held), *ROLLOUT[7:]]
    rate = rules.codex_reasoning_rate(load_text("\n".join(rollout), "rollout.jsonl").messages)
    assert rate.per_100 == 1_176 and "fitted on 1 responses" in rate.source


def test_a_switch_to_a_model_with_a_smaller_window_is_a_check_of_its_own() -> None:
    """Codex compacts before the first request of a model whose window is smaller when
    its count is over the new limit (strictly); the checks before it keep the old
    model's limit."""
    small = json.loads(tokens(8_900, 0, 40_000))
    small["payload"]["info"]["model_context_window"] = 4_750  # raw 5,000: limit 4,500
    rollout = [
        *ROLLOUT[:-1],  # under gpt-5.5's 9,500 window, no compaction
        event("task_started"),
        line("turn_context", {"model": "gpt-5.5-mini"}),
        line("event_msg", {"type": "user_message", "message": "small"}),
        user("small"),
        json.dumps(small),
    ]
    session = load_text("\n".join(rollout), "rollout.jsonl")
    switch = session.checks[-1]
    assert (switch.when, switch.window, switch.reported) == ("model switch", 4_750, 8_600)
    inspection = Inspection.of(session, Config(CATALOGUE), make_counter("chars4"))
    counts = inspection.agent_counts.checks
    assert counts[-1].point.tokens == 4_500 and counts[-1].fires and counts[-1].strictly
    assert "> 4,500" in counts[-1].line()
    assert counts[0].point.tokens == 9_000  # the old model's limit before it
    # a switch to a model with a larger window is no check
    big = json.loads(tokens(8_900, 0, 40_000))
    big["payload"]["info"]["model_context_window"] = 20_000
    larger = load_text("\n".join([*rollout[:-1], json.dumps(big)]), "rollout.jsonl")
    assert [c.when for c in larger.checks] == ["mid-turn", "pre-turn", "pre-turn"]


def test_the_replays_pre_check_bounds_the_reasoning_term_of_any_history_made_of_the_messages() -> None:
    """Every reasoning item, read where encrypted, else at the highest rate any of the
    responses fits (175 per 100 here, above the 120 default): at least the third term of
    any request a replay rebuilds from these messages, so a request it rules out never fires."""
    from compaction_inspector.core.model import Block, Message

    def said(i: int, encrypted: int | None, reported: int) -> Message:
        return Message(
            "assistant", (Block("text", text="ok"),), id=f"r{i}", reasoning=Reasoning(encrypted, reported)
        )

    human = Message("user", (Block("text", text="go on"),))
    messages = [human, said(0, 350, 200), said(1, 100, 100), human, said(2, None, 40), human]
    assert rules.codex_reasoning_bound(messages) == [0, 0, 350, 450, 450, 520, 520]
    assert rules.codex_reasoning_bound(messages, set_to=100) == [0, 0, 350, 450, 450, 490, 490]
    for start in range(len(messages)):  # histories of some of them: the bound holds for each
        rate = rules.codex_reasoning_rate(messages[start:])
        read, estimated = rules.codex_reasoning(messages[start:], rate)
        bound = rules.codex_reasoning_bound(messages)[start:]
        assert all(r + e <= b for r, e, b in zip(read, estimated, bound, strict=True))


def test_a_codex_replay_runs_the_strategy_only_where_its_count_may_reach_its_limit() -> None:
    """After its first compaction a replay holds the history as messages; requests whose
    count (with the most its reasoning can add) stays under the limit are not run at all."""
    from compaction_inspector.core.agents.codex import strategy as codex
    from compaction_inspector.core.model import Block, Message
    from compaction_inspector.core.replaying import simulate as replaying
    from compaction_inspector.core.replaying.simulation import Policy

    calls: list[int] = []
    real = codex.run

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    messages = [
        m
        for n in range(60)
        for m in (
            Message("user", (Block("text", text=f"step {n} " + "words " * 40),)),
            Message("assistant", (Block("text", text="done " * 20),), id=f"a{n}"),
        )
    ]
    policy = Policy(
        dataclasses.replace(codex.STRATEGY, run=counted),
        CodexOptions(auto_compact_token_limit=1_500, user_message_tokens=200),
    )
    result = replaying.simulate(messages, policy, Context(window=Window(100_000, 1), session_id="s"))
    assert result.totals.compactions >= 2
    assert len(calls) < 3 * result.totals.compactions  # not once for every request after the first


def test_a_newer_rollouts_window_number_is_read_and_its_bookkeeping_lines_are_not_sent(tmp_path: Any) -> None:
    """Codex 0.142+ numbers the context window a compaction opens; 0.145+ writes a
    `world_state` snapshot and a `thread_settings_applied` event after it, neither of
    which is sent to the model (no message, a line of what was skipped)."""
    compacted = {"message": "", "replacement_history": [SUMMARY], "window_number": 3, "window_id": "w3"}
    compacted |= {"first_window_id": "w1", "previous_window_id": "w2"}
    rollout = [
        *ROLLOUT[:-1],
        line("compacted", compacted),
        line("world_state", {"full": True, "state": {"agents_md": "be brief"}}),
        line("event_msg", {"type": "thread_settings_applied", "model": "gpt-5.6-sol"}),
    ]
    plain = load_text("\n".join(ROLLOUT), "rollout.jsonl")
    session = load_text("\n".join(rollout), "rollout.jsonl")
    (c,) = session.compactions
    assert c.details is not None and c.details.said() == ["opened context window 3"]
    assert c.to_dict()["window_number"] == 3
    assert [m.text for m in session.messages] == [m.text for m in plain.messages]
    rollout_file = tmp_path / "rollout.jsonl"
    rollout_file.write_text("\n".join(rollout) + "\n")
    shown = run_cli(["compactions", str(rollout_file)]).out
    assert "opened context window 3" in shown
    said = {d.message for d in session.diagnostics} - {d.message for d in plain.diagnostics}
    assert said == {
        "skipped 1 world_state line (not conversation)",
        "skipped 1 event_msg/thread_settings_applied line (not conversation)",
    }


def test_an_earlier_compaction_bounds_the_reasoning_rate_for_the_checks_after_it() -> None:
    """Codex compacted where its count reached 9,000: at 120 per 100 our count there is
    8,845, so the rollout's reasoning runs at 224 per 100 at least (8,400 + 265 + 150 ×
    2.24 ≥ 9,000). The checks after that compaction count at that rate, and say where it
    comes from; the checks before it keep the documented guess."""
    first = [*ROLLOUT[:-2], tokens(8_400, 10, 25_100), ROLLOUT[-1]]
    second = [
        event("task_started"),
        line("event_msg", {"type": "user_message", "message": "a"}),
        user("a"),
        reasoning(),
        line("response_item", {"type": "message", "role": "assistant", "content": [ANSWER]}),
        tokens(2_000, 300, 27_100),
        event("task_complete"),
        event("task_started"),
        line("event_msg", {"type": "user_message", "message": "b"}),
        user("b"),
        reasoning(),
        call("c4"),
        output("c4", "z" * 100),  # 40 tokens
        tokens(8_400, 10, 35_500),
        line("compacted", {"message": "", "replacement_history": [SUMMARY]}),
    ]  # fmt: skip
    session = load_text("\n".join([*first, *second]), "rollout.jsonl")
    point = Point(9_000, "90 % of the raw window 10,000")
    rate = rules.codex_reasoning_rate(session.messages)
    counts = rules.codex_counts(session.messages, session.checks, point, rate, None, session.compactions)
    fired_first = next(
        c
        for c in counts
        if c.index is not None and c.index <= session.compactions[0].index and c.total == 8_845
    )
    assert not fired_first.fires and fired_first.note == rate.source  # before it: the guess
    last = counts[-1]
    line_at = session.messages[session.compactions[0].index].line
    assert last.parts == (("reported", 8_400), ("new items", 40), ("reasoning", 672))  # 300 × 2.24
    assert last.fires and not last.undecided
    assert (
        last.note
        == f"224 per 100 reasoning tokens (224-224: what its compaction at line {line_at} leaves possible)"
    )
    # without the compactions to go by, the same check stays under the limit at the guess
    plain = rules.codex_counts(session.messages, session.checks, point, rate)
    assert plain[-1].total == 8_400 + 40 + 360 and not plain[-1].fires
    # a rate set by the user is never moved
    set_to = rules.codex_reasoning_rate(session.messages, 120)
    kept = rules.codex_counts(session.messages, session.checks, point, set_to, None, session.compactions)
    assert kept[-1].total == 8_800

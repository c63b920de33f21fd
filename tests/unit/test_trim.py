"""Every worked case of docs/strategies.md#trim, with the exact stats."""

import pytest

from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import OptionError
from compaction_inspector.core.strategies.trim import TrimOptions, run
from tests.helpers import a, call, result, snapshot, texts, u

CTX = Context()  # chars/4, the default estimate (docs/strategies.md#trim)


def alternating(n: int) -> list:  # type: ignore[type-arg]
    """u1, a2, u3, a4, ... named by position, as in the worked cases."""
    return [u(f"u{i}") if i % 2 else a(f"a{i}", id=f"A{i}") for i in range(1, n + 1)]


def test_turn_trigger_keeps_first_user_and_last_2k() -> None:
    msgs = alternating(12)
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=5, turn=6), CTX)
    assert texts(r.messages) == ["u1", "u9", "a10", "u11", "a12"]
    assert r.stats.reason == "turn_pressure" and r.stats.triggered is True
    assert r.messages is not None and r.messages[0] is msgs[0] and r.messages[-1] is msgs[-1]


def test_turn_trigger_is_strict() -> None:
    msgs = alternating(12)
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=5, turn=5), CTX)
    assert r.messages == tuple(msgs)
    assert r.stats.to_dict() == {
        "enabled": True, "triggered": False, "strategy": "trim", "reason": None,
        "messages_before": 12, "messages_after": 12,
        "estimated_tokens_before": 12, "estimated_tokens_after": 12,
        "kept_initial_user?": False, "kept_recent_turns": 2, "over_budget?": False,
    }  # fmt: skip


def test_slice_starting_with_assistant_drops_one_more() -> None:
    msgs = [u("u0"), a("a0"), u("u1"), a("a1"), u("u2"), a("a2"), u("u3")]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=2), CTX)
    assert texts(r.messages) == ["u0", "u2", "a2", "u3"]


def test_first_message_not_user_is_not_kept() -> None:
    msgs = [a("a0"), u("u1"), a("a1"), u("u2"), a("a2"), u("u3"), a("a3"), u("u4")]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=2), CTX)
    assert texts(r.messages) == ["u3", "a3", "u4"]
    assert r.stats.kept_initial_user is False


def test_assistant_first_five_messages() -> None:
    msgs = [a("a1"), u("u1"), a("a2"), u("u2"), a("a3")]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=2), CTX)
    assert texts(r.messages) == ["u1", "a2", "u2", "a3"]


def test_token_trigger() -> None:
    msgs = [u("x" * 100) if i % 2 == 0 else a("y" * 100) for i in range(10)]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=None, trigger_tokens=200), CTX)
    assert r.messages == (msgs[0], *msgs[6:])
    assert r.stats.to_dict() == {
        "enabled": True, "triggered": True, "strategy": "trim", "reason": "token_pressure",
        "messages_before": 10, "messages_after": 5,
        "estimated_tokens_before": 250, "estimated_tokens_after": 125,
        "kept_initial_user?": True, "kept_recent_turns": 2, "over_budget?": False,
    }  # fmt: skip


def test_turns_is_checked_first_when_both_fire() -> None:
    msgs = alternating(12)
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, trigger_tokens=1, turn=3), CTX)
    assert r.stats.reason == "turn_pressure"


def test_at_or_below_the_minimum_is_unchanged_even_when_triggered() -> None:
    msgs = alternating(5)  # minimum 2k + 1 = 5 with a user first
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=9), CTX)
    assert r.messages == tuple(msgs) and r.stats.triggered is False
    assert r.steps[0].title == "Not triggered"


def test_over_budget_when_a_kept_message_exceeds_the_token_trigger() -> None:
    msgs = [u("x" * 4000), a("a"), u("u"), a("a"), u("u"), a("a")]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=None, trigger_tokens=500), CTX)
    assert r.stats.over_budget is True


def test_slice_never_starts_with_a_tool_result() -> None:
    msgs = [
        u("fix"),
        call("t1", id="A"),
        result("t1"),
        call("t2", id="B"),
        result("t2"),
        a("done", id="C"),
        u("next"),
    ]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=3), CTX)
    assert texts(r.messages) == ["fix", "next"]


def test_default_turn_is_human_turns_plus_one() -> None:
    msgs = alternating(20)  # 10 human turns: turn 11 > 8 fires
    assert run(msgs, TrimOptions(), CTX).stats.reason == "turn_pressure"
    assert run(alternating(14), TrimOptions(), CTX).stats.triggered is False  # turn 8


def test_input_is_never_modified() -> None:
    msgs = alternating(12)
    before = snapshot(msgs)
    run(msgs, TrimOptions(keep_recent_turns=1, trigger_turns=1, turn=2), CTX)
    assert snapshot(msgs) == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keep_recent_turns": 0}, "keep_recent_turns must be an integer >= 1"),
        ({"trigger_turns": None}, "trigger needs turns and/or tokens"),
        ({"trigger_tokens": -5}, "trigger.tokens must be an integer >= 1"),
    ],
)
def test_options_are_validated(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(OptionError, match=message):
        TrimOptions(**kwargs)


def test_the_turn_in_progress_is_never_dropped() -> None:
    # mid-turn: the last 2×k messages are all calls and results, so the seed's rule keeps none
    msgs = [u("old"), a("ok", id="O"), u("fix it")]
    for n in range(4):
        msgs += [call(f"t{n}", id=f"C{n}"), result(f"t{n}")]
    r = run(msgs, TrimOptions(keep_recent_turns=2, trigger_turns=1, turn=3), CTX)
    assert texts(r.messages)[:2] == ["old", "fix it"]
    assert len(texts(r.messages)) == 1 + 9  # the first user message and the whole turn from "fix it"
    assert r.stats.tokens_after > 0
    assert "the turn in progress is never dropped" in r.steps[0].explanation

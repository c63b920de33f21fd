"""docs/strategies.md#ptl-retry: gap sizing, the 20 % fallback, the marker, at most three truncations."""

from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import PTL_MARKER_TEXT
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.ptl_retry import (
    TOO_LONG_MESSAGE,
    PtlRetryOptions,
    provider_error,
    run,
    token_gap,
    truncate_head,
)
from tests.helpers import a, call, result, texts, u

CTX = Context()


def rounds(n: int, size: int = 400) -> list:  # type: ignore[type-arg]
    """A user prompt, then n API rounds of `size` characters (size/4 tokens) each."""
    msgs = [u("start")]
    for i in range(n):
        msgs.append(a("x" * size, id=f"R{i}"))
    return msgs


def test_token_gap_regex() -> None:
    assert token_gap("prompt is too long: 210000 tokens > 200000 maximum") == 10000
    assert token_gap("Error: Prompt Is Too Long (205000 token > 200000)") == 5000
    assert token_gap("prompt is too long: 100 tokens > 200 maximum") is None
    assert token_gap("request too large") is None
    assert provider_error(5, 3) == "prompt is too long: 5 tokens > 3 maximum"


def test_gap_drops_oldest_groups_until_crossed_including_the_crossing_one() -> None:
    msgs = rounds(5)  # group 0 = "start" (1 token), then 100 tokens per round
    cut = truncate_head(msgs, "prompt is too long: 1150 tokens > 1000 maximum", CTX)
    assert cut is not None
    # 1, then 101 < 150, then 201 >= 150: the prompt group and two rounds are dropped
    assert cut.groups_dropped == 3 and cut.gap == 150
    assert cut.marker_inserted and cut.messages[0].text == PTL_MARKER_TEXT
    assert cut.messages[0].is_meta and cut.messages[1] is msgs[3]


def test_fallback_drops_twenty_percent_of_groups() -> None:
    msgs = rounds(9)  # 10 groups: floor(10 * 0.2) = 2
    cut = truncate_head(msgs, "overloaded", CTX)
    assert cut is not None and cut.groups_dropped == 2 and cut.gap is None
    small = truncate_head(rounds(3), "nope", CTX)  # 4 groups: max(1, 0) = 1
    assert small is not None and small.groups_dropped == 1


def test_at_least_one_group_is_kept_and_one_group_gives_none() -> None:
    cut = truncate_head(rounds(2), "prompt is too long: 999999 tokens > 1 maximum", CTX)
    assert cut is not None and cut.groups_dropped == 2 and len(cut.messages) == 2
    assert truncate_head([u("only")], "prompt is too long: 9 tokens > 1 maximum", CTX) is None
    assert truncate_head([], "x", CTX) is None


def test_old_marker_is_stripped_before_regrouping() -> None:
    first = truncate_head(rounds(4), "no numbers", CTX)
    assert first is not None and first.marker_inserted
    second = truncate_head(first.messages, "no numbers", CTX)
    assert second is not None
    # without stripping, the marker alone would be group 0 and the only thing dropped
    assert texts(second.messages)[1:] == texts(first.messages)[2:]
    assert sum(m.is_ptl_marker for m in second.messages) == 1


def test_tool_results_stay_with_their_round() -> None:
    msgs = [
        u("go"),
        call("t1", id="A"),
        result("t1", text="r" * 800),
        call("t2", id="B"),
        result("t2"),
    ]
    cut = truncate_head(msgs, "prompt is too long: 300 tokens > 100 maximum", CTX)
    assert cut is not None and cut.messages[1:] == tuple(msgs[3:])


def test_run_simulates_the_provider_until_it_fits() -> None:
    msgs = rounds(10)  # 1001 tokens
    r = run(msgs, PtlRetryOptions(limit=700, summary_prompt_tokens=0), CTX)
    assert r.stats.outcome == "truncated"
    # the gap of 301 drops 4 groups; the 13-token marker then leaves it 13 over: once more
    assert r.stats.truncations == 2 and r.stats.attempts == 3
    assert [s.explanation.split(":")[0:2] for s in r.steps] == [
        ['Attempt 1 was refused ("prompt is too long', ' 1001 tokens > 700 maximum")'],
        ['Attempt 2 was refused ("prompt is too long', ' 713 tokens > 700 maximum")'],
    ]
    assert [s.diff.dropped for s in r.steps] == [(0, 1, 2, 3), (0, 1)]  # marker, R3
    assert r.stats.request_tokens_after == 613
    assert r.messages is not None and r.messages[0].is_ptl_marker


def test_run_fits_at_once_without_steps() -> None:
    r = run(rounds(2), PtlRetryOptions(limit=10_000), CTX)
    assert r.stats.outcome == "fits" and r.steps == () and r.stats.attempts == 1


def test_user_error_without_numbers_shows_the_fallback() -> None:
    r = run(rounds(9), PtlRetryOptions(error_text="context length exceeded", limit=10_000), CTX)
    assert r.stats.truncations == 1 and r.stats.groups_dropped == 2
    assert "20 % of 10 rounds" in r.steps[0].explanation


def test_gives_up_when_one_round_is_left_and_still_too_long() -> None:
    """The user's words (no numbers) size the first cut; the simulated provider's gap
    then leaves one round, still over the limit: nothing safe remains."""
    r = run(rounds(20), PtlRetryOptions(error_text="too long, no numbers", limit=1), CTX)
    assert r.messages is None and r.error == TOO_LONG_MESSAGE
    assert (r.stats.outcome, r.stats.truncations, r.stats.attempts) == ("too_long", 2, 3)
    assert [s.title for s in r.steps] == [
        "Retry 1: drop 4 oldest API rounds",
        "Retry 2: drop 16 oldest API rounds",
        "Give up",
    ]
    assert '("prompt is too long: 2713 tokens > 1 maximum")' in r.steps[1].explanation


def test_nothing_safe_left_is_too_long() -> None:
    r = run([u("x" * 4000)], PtlRetryOptions(limit=10), CTX)
    assert r.messages is None and r.stats.truncations == 0


def test_default_limit_is_the_usable_window() -> None:
    ctx = Context(window=Window(1200, 400))
    r = run(rounds(10), PtlRetryOptions(summary_prompt_tokens=0), ctx)
    assert r.stats.limit == 800 and (r.stats.request_tokens_after or 0) <= 800


def test_the_users_error_is_the_first_refusal_only() -> None:
    """docs/strategies.md#ptl-retry: later attempts are answered by the simulated provider from the
    request's own size, not by the user's words again."""
    error = "prompt is too long: 2100 tokens > 2000 maximum"
    r = run(rounds(9), PtlRetryOptions(error_text=error, limit=500, summary_prompt_tokens=0), CTX)
    assert [(s.title, s.tokens_before, s.tokens_after) for s in r.steps] == [
        ("Retry 1: drop 2 oldest API rounds", 901, 813),
        ("Retry 2: drop 4 oldest API rounds", 813, 413),
    ]
    assert r.steps[0].explanation.startswith(f'Attempt 1 was refused ("{error}"): a gap of 100 tokens')
    assert r.steps[1].explanation.startswith(
        'Attempt 2 was refused ("prompt is too long: 813 tokens > 500 maximum"): a gap of 313 tokens'
    )
    assert (r.stats.outcome, r.stats.attempts, r.stats.request_tokens_after) == ("truncated", 3, 413)

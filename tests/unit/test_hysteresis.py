"""docs/strategies.md#hysteresis: tiers, target, tail protection, summaries never summarized, the cap."""

import pytest

from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.replaying.summary import summary_text
from compaction_inspector.core.reporting.diff import diff
from compaction_inspector.core.strategies.base import OptionError
from compaction_inspector.core.strategies.hysteresis import run
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from tests.helpers import a, call, result, snapshot, u


def volley(n: int, size: int = 400) -> list[Message]:
    """One volley: a human prompt, a tool call with a result of `size` chars, a reply."""
    return [
        u(f"task {n}: fix the parser"),
        call(f"t{n}", name="Edit", id=f"A{n}", input={"file_path": f"src/m{n}.py"}),
        result(f"t{n}", text="x" * size + " 3 passed"),
        a(f"done {n}", id=f"B{n}"),
    ]


def session(volleys: int, size: int = 400) -> list[Message]:
    return [m for n in range(volleys) for m in volley(n, size)]


def ctx_for(messages: list[Message], pressure: float) -> Context:
    """A window sized so that `messages` sit at `pressure`."""
    tokens = Context().tokens(messages)
    return Context(window=Window(int(tokens / pressure) + 1, 1), session_id="s1")


def test_below_the_lowest_threshold_nothing_runs() -> None:
    msgs = session(5)
    r = run(msgs, HysteresisOptions(), ctx_for(msgs, 0.74))
    assert r.messages == tuple(msgs) and r.stats.tier == 0 and r.stats.triggered is False
    assert r.steps[0].title == "Below the lowest threshold"


def test_first_tier_summarizes_exactly_one_volley() -> None:
    msgs = session(5)
    r = run(msgs, HysteresisOptions(), ctx_for(msgs, 0.80))
    assert r.stats.tier == 1 and r.stats.volleys_summarized == 1
    assert r.messages is not None and r.messages[0].is_summary_item
    assert r.messages[1:] == tuple(msgs[4:])
    assert r.steps[0].title == "Summarize volley 0: “task 0: fix the parser”"
    assert r.steps[0].diff.summarized == ((0, 0), (1, 0), (2, 0), (3, 0))


def test_second_tier_summarizes_until_at_or_under_target() -> None:
    msgs = session(6)
    ctx = ctx_for(msgs, 0.90)
    r = run(msgs, HysteresisOptions(), ctx)
    assert r.stats.tier == 2
    assert r.stats.pressure_after <= 0.70
    n = r.stats.volleys_summarized
    assert n >= 2 and len(r.steps) == n
    # it stopped as soon as the target was reached: one fewer would still be above it
    assert r.steps[-2].pressure_after > 0.70


def test_protected_tail_and_existing_summaries_are_never_summarized() -> None:
    old_summary = u("[memory:context v1 | session=s0]\nearlier work")
    msgs = [old_summary, *session(4)]
    r = run(msgs, HysteresisOptions(protect_volleys=2), ctx_for(msgs, 0.99))
    assert r.messages is not None
    assert old_summary in r.messages
    assert all(m in r.messages for m in msgs[-8:]) or r.stats.protect_volleys == 1
    for m in r.messages:
        assert old_summary not in m.replaces


def test_third_tier_reduces_protection_then_shrinks_then_drops_meta() -> None:
    msgs = [u("injected context " * 40, is_meta=True), *session(4, size=2000)]
    r = run(msgs, HysteresisOptions(protect_volleys=2, summary_chars=600), ctx_for(msgs, 3.0))
    titles = [s.title for s in r.steps]
    assert titles[:2] == [
        "Summarize volley 1: “task 0: fix the parser”",
        "Summarize volley 2: “task 1: fix the parser”",
    ]
    assert "Reduce tail protection to 1 volley" in titles
    assert "Shrink summaries to 420 characters" in titles and "Shrink summaries to 200 characters" in titles
    assert "Drop 1 injected meta message" in titles
    assert r.stats.protect_volleys == 1 and r.stats.summary_chars == 200
    assert r.stats.meta_dropped == 1
    assert r.stats.over_target is True and r.stats.over_budget is False
    assert r.messages is not None and all(m in r.messages for m in msgs[-4:])  # last volley intact
    drop = next(s for s in r.steps if s.title.startswith("Drop"))
    n = len(drop.before)
    assert (drop.diff.dropped, drop.diff.kept_runs, drop.message_count) == ((0,), ((1, n),), n - 1)
    for step in r.steps:  # each made as a head and a slice, diffed over the head: the whole diff
        assert step.diff == diff(step.before, step.messages, step.tokens_before, step.tokens_after)


def test_over_budget_is_said_rather_than_sending_an_invalid_request() -> None:
    msgs = volley(0, size=8000)  # one volley: protected, nothing to summarize
    r = run(msgs, HysteresisOptions(), ctx_for(msgs, 2.0))
    assert [s.title for s in r.steps] == ["No candidates", "Over budget"]
    assert r.stats.over_budget is True and r.messages == tuple(msgs)


def test_summaries_are_deterministic_and_within_their_cap() -> None:
    v = volley(1, size=5000)
    text = summary_text(v, 400, "sess")
    assert text == summary_text(v, 400, "sess")
    assert len(text) <= 400
    assert text.splitlines()[0] == "[memory:context v1 | session=sess]"
    assert text.splitlines()[1] == "task 1: fix the parser"
    assert "- actions: Edit" in text and "- files: src/m1.py" in text
    assert "test result: 3 passed" in text
    assert len(summary_text(v, 200, "sess")) <= 200


def test_stage_is_recorded() -> None:
    msgs = session(5)
    r = run(msgs, HysteresisOptions(stage="post-turn"), ctx_for(msgs, 0.80))
    assert r.stats.stage == "post-turn" and r.stats.persisted is True


def test_input_is_never_modified() -> None:
    msgs = session(5)
    before = snapshot(msgs)
    run(msgs, HysteresisOptions(), ctx_for(msgs, 0.99))
    assert snapshot(msgs) == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"thresholds": (85, 75, 95)}, r"thresholds \[85, 75, 95\] and target 70 must satisfy"),
        ({"target": 80}, "0 < target < lowest"),
        ({"thresholds": (75, 85, 100)}, "highest < 100"),
        ({"summary_chars": 100}, "summary_chars must be an integer >= 200"),
        ({"protect_volleys": 0}, "protect_volleys must be an integer >= 1"),
        ({"stage": "later"}, "stage must be preflight or post-turn"),
    ],
)
def test_options_are_validated(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(OptionError, match=message):
        HysteresisOptions(**kwargs)


def test_a_summary_that_frees_under_one_percent_is_not_worth_its_cache() -> None:
    """The oldest volley is one short prompt: its summary would free almost nothing (or
    cost tokens), less than the cache it invalidates (docs/strategies.md#hysteresis), so nothing runs."""
    msgs = [u("ok"), a("fine", id="Z"), *session(4, size=4000)]
    r = run(msgs, HysteresisOptions(), ctx_for(msgs, 0.78))
    assert r.stats.tier == 1 and r.stats.volleys_summarized == 0 and r.messages == tuple(msgs)
    [step] = r.steps
    assert step.title == "Not worth it"
    assert "Summarizing volley 0 would free" in step.explanation
    assert "under 1% of the usable window" in step.explanation
    worth = run(session(5, size=4000), HysteresisOptions(), ctx_for(session(5, size=4000), 0.78))
    assert worth.stats.volleys_summarized == 1  # a volley with a large result is worth it

import pytest

from compaction_inspector.core.measuring.pairing import (
    INTERRUPTED_TEXT,
    MISSING_RESULT_TEXT,
    ORPHAN_TEXT,
    check,
    repair,
    repair_indexed,
    sent_order,
)
from compaction_inspector.core.measuring.tokens import chars4
from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies import base
from compaction_inspector.core.strategies.base import REPAIR_TITLE, Steps, each_step
from tests.helpers import a, call, result, snapshot, u


def kinds(messages: list[Message]) -> list[tuple[str, int, str | None]]:
    return [(p.kind, p.index, p.tool_use_id) for p in check(messages)]


def test_valid_request_has_no_problems_and_repair_keeps_every_object() -> None:
    msgs = [u(), call("t1", id="A"), result("t1"), a(id="B")]
    assert check(msgs) == []
    assert all(x is y for x, y in zip(repair(msgs), msgs, strict=True))


def test_parallel_results_on_separate_lines_are_one_user_turn() -> None:
    first = call("t1", id="A")
    second = Message("assistant", (Block.tool_use("t2", "Grep", {}),), id="A")
    assert check([u(), first, second, result("t1"), result("t2"), a(id="B")]) == []


def test_a_response_whose_call_lines_have_results_between_is_sent_as_one() -> None:
    """Parallel calls written a line each, each result as it came back (Claude Code
    2.1.x): merged into one assistant message before sending, the results after it."""
    lines = [u(), call("t1", id="A"), call("t2", id="A"), result("t1"), call("t3", id="A")]
    lines += [result("t2"), result("t3"), a(id="B")]
    assert sent_order(lines) == [0, 1, 2, 4, 3, 5, 6, 7]
    assert check(lines) == []
    sent = [lines[i] for i in [0, 1, 2, 4, 3, 5, 6, 7]]
    assert all(x is y for x, y in zip(repair(lines), sent, strict=True))
    # a call of that response nothing answers: its error result joins the results, sent after it
    cut = lines[:6]
    assert kinds(cut) == [("missing_result", 4, "t3")]
    fixed, ends = repair_indexed(cut)
    assert [m.tool_use_ids() or m.tool_result_ids() for m in fixed] == [
        [],
        ["t1"],
        ["t2"],
        ["t3"],
        ["t3", "t1"],
        ["t2"],
    ]
    assert check(fixed) == [] and ends == [0, 1, 2, 3, 3, 5, 6]
    # another response's id, or a typed message between, keeps the lines apart
    assert sent_order([u(), call("t1", id="A"), result("t1"), call("t2", id="B")]) is None
    assert sent_order([u(), call("t1", id="A"), result("t1"), u("stop"), call("t2", id="A")]) is None


def test_orphan_result_at_the_start_becomes_the_placeholder() -> None:
    msgs = [result("gone"), a(id="A")]
    assert kinds(msgs) == [("orphan_result", 0, "gone")]
    fixed = repair(msgs)
    assert [m.text for m in fixed] == [ORPHAN_TEXT, "a"]
    assert fixed[0].replaces == (msgs[0],)
    assert check(fixed) == []


def test_orphan_result_later_is_dropped() -> None:
    msgs = [u(), a(id="A"), result("gone"), u("more")]
    assert kinds(msgs) == [("orphan_result", 2, "gone")]
    assert [m.text for m in repair(msgs)] == ["u", "a", "more"]


def test_missing_result_goes_to_the_front_of_the_next_user_message() -> None:
    msgs = [u(), call("t1", id="A"), u("typed instead")]
    assert kinds(msgs) == [("missing_result", 1, "t1")]
    fixed = repair(msgs)
    assert fixed[2].blocks[0] == Block.tool_result("t1", MISSING_RESULT_TEXT, is_error=True)
    assert fixed[2].blocks[1].text == "typed instead"
    assert check(fixed) == []


def test_missing_result_at_the_end_gets_a_new_meta_message() -> None:
    msgs = [u(), call("t1", id="A")]
    fixed = repair(msgs)
    assert len(fixed) == 3 and fixed[2].is_meta and fixed[2].is_synthetic
    assert fixed[2].tool_result_ids() == ["t1"]
    assert check(fixed) == []


def test_duplicate_tool_use_is_removed_and_an_empty_reply_is_interrupted() -> None:
    msgs = [u(), call("t1", id="A"), result("t1"), call("t1", id="B"), u("x")]
    assert ("duplicate_tool_use", 3, "t1") in kinds(msgs)
    fixed = repair(msgs)
    assert fixed[3].text == INTERRUPTED_TEXT
    assert check(fixed) == []


def test_first_message_must_be_user_and_repair_does_not_invent_one() -> None:
    msgs = [a(id="A"), u()]
    assert kinds(msgs) == [("first_not_user", 0, None)]
    assert repair(msgs) == msgs


def test_system_markers_are_not_part_of_the_request() -> None:
    boundary = Message("system", (Block("text", text="compacted"),), is_compact_boundary=True)
    assert check([boundary, u(), a(id="A")]) == []


def test_repair_never_changes_its_input() -> None:
    msgs = [result("gone"), call("t1", id="A"), u("x"), call("t1", id="B")]
    before = snapshot(msgs)
    repair(msgs)
    assert snapshot(msgs) == before


def unanswered_twice() -> tuple[Message, ...]:
    """A call a typed message follows, then one nothing follows."""
    return (
        u("start"),
        call("t1", id="A"),
        u("typed instead"),
        a("ok", id="B"),
        u("more"),
        call("t2", id="C"),
    )


def test_a_repair_step_works_out_the_tokens_of_what_it_edited_and_added() -> None:
    msgs = unanswered_twice()
    ctx = Context()  # chars/4
    steps = Steps(msgs, ctx)
    fixed = steps.repair_pairing()
    [step] = steps.steps
    assert step.title == REPAIR_TITLE
    # the user message after t1 gains its missing result; a message answers t2 at the end
    edited = chars4(len(f"{MISSING_RESULT_TEXT}\n{'typed instead'}")) - chars4(len("typed instead"))
    assert step.tokens_after == ctx.tokens(msgs) + edited + chars4(len(MISSING_RESULT_TEXT))
    assert step.tokens_after == ctx.tokens(fixed)


def test_runs_from_one_request_check_it_twice_then_repair_each_edit_from_what_they_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compare's rows, a tuning key's options: many runs start from one request. From the
    second on, a run whose edit pairs alike with it (a typed message rewritten, a result
    cleared) is repaired from that request's repair, never checked whole."""
    msgs = unanswered_twice()
    ctx = Context()
    for _ in range(2):
        Steps(msgs, ctx).repair_pairing()
    monkeypatch.setattr(base, "check", lambda messages: pytest.fail("checked whole"))
    steps = Steps(msgs, ctx)
    edited = (msgs[0], msgs[1], u("typed, then rewritten"), *msgs[3:])
    steps.add("rewrite", "", edited)
    fixed = steps.repair_pairing()
    missing = Block.tool_result("t1", MISSING_RESULT_TEXT, is_error=True)
    assert fixed[2].blocks == (missing, Block("text", text="typed, then rewritten"))
    assert fixed[-1].blocks == (Block.tool_result("t2", MISSING_RESULT_TEXT, is_error=True),)
    assert [m is e for m, e in zip(fixed, edited, strict=False)] == [True, True, False, True, True, True]
    assert steps.steps[-1].title == REPAIR_TITLE and steps.tokens == ctx.tokens(fixed)
    other = (msgs[0], u("no call"), *msgs[2:])  # pairs otherwise: checked whole
    steps = Steps(msgs, ctx)
    steps.add("drop a call", "", other)
    with pytest.raises(pytest.fail.Exception, match="checked whole"):
        steps.repair_pairing()


def test_walking_the_steps_lets_go_of_all_but_the_latest() -> None:
    msgs = [u("go " * 50), call("t1", id="A"), result("t1", text="x" * 400), a("ok", id="B"), u("more")]
    ctx = Context()
    steps = Steps(msgs, ctx)
    steps.add("first", "", msgs[1:])
    steps.add("second", "", msgs[3:])
    steps.add("third", "", msgs[4:])
    seen = [(s.title, len(s.before), len(s.messages)) for s in each_step(steps.steps)]
    assert seen == [("first", 5, 4), ("second", 4, 2), ("third", 2, 1)]
    held = [s for s in steps.steps if {"messages", "before", "diff"} & set(s.__dict__)]
    assert held == steps.steps[-1:]
    assert steps.steps[1].messages == (msgs[3], msgs[4])  # asked again, made again


class Counted(list[Message]):
    """A request that counts how often its messages are read."""

    reads = 0

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        Counted.reads += 1
        return super().__getitem__(i)


def test_unanswered_calls_are_answered_with_each_message_read_a_few_times() -> None:
    """5,000 calls of one response, none answered: every one gets its error result after
    the turn, and repair reads each message a bounded number of times (it read the turn
    again for every call)."""
    n = 5000
    msgs = Counted([u(), *(call(f"t{i}", id="A") for i in range(n))])
    Counted.reads = 0
    fixed = repair(msgs, check(msgs))
    assert Counted.reads <= 10 * len(msgs)
    assert len(fixed) == n + 2 and fixed[-1].is_synthetic
    assert [b.tool_use_id for b in fixed[-1].blocks] == [f"t{i}" for i in range(n)]
    assert all(b.text == MISSING_RESULT_TEXT for b in fixed[-1].blocks)

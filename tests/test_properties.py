"""Invariants of every strategy on random valid transcripts (Hypothesis).

Checked: the output is a valid request (pairing check passes, first message is a user
message); PTL keeps at least one round and never grows across retries; hysteresis never
summarizes a summary, never touches the protected tail, ends at or under the target
while candidates remain, and keeps each summary within its cap; every strategy is
deterministic and leaves its input unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.grouping import (
    api_round_starts,
    api_rounds,
    regroup,
    volley_starts,
    volleys,
)
from compaction_inspector.core.measuring.pairing import (
    PairingProblem,
    Turn,
    api_turns,
    check,
    fixable,
    joins_cleanly,
    last_assistant_turn,
    pairs_alike,
    repair,
    repaired_like,
    repairs_of,
    sent_order,
)
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.replaying.spliced import Spliced
from compaction_inspector.core.reporting.diff import diff, sources
from compaction_inspector.core.strategies import Context, run
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.hysteresis import run as hysteresis_run
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from compaction_inspector.core.strategies.ptl_retry import PtlRetryOptions
from compaction_inspector.core.strategies.summarize import SummarizeOptions
from compaction_inspector.core.strategies.trim import TrimOptions
from tests.helpers import a, snapshot, u

TOOLS = ["Read", "Bash", "Edit", "TodoWrite", "Grep"]


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    msgs: list[Message] = []
    ids = iter(range(10**6))
    for v in range(draw(st.integers(1, 7))):
        if draw(st.booleans()) and v:
            msgs.append(Message("user", (Block("text", text=f"[memory:context v1 | session=x]\nold {v}"),)))
        if draw(st.integers(0, 5)) == 0:
            msgs.append(
                Message(
                    "user",
                    (Block("text", text="<system-reminder>ctx</system-reminder>"),),
                    is_meta=True,
                )
            )
        msgs.append(Message("user", (Block("text", text=f"request {v} " + "w" * draw(st.integers(0, 400))),)))
        for _ in range(draw(st.integers(0, 4))):
            rid = f"msg{next(ids)}"
            calls = [f"tu{next(ids)}" for _ in range(draw(st.integers(0, 2)))]
            text = "t" * draw(st.integers(0, 300))
            if draw(st.booleans()):  # streamed: one message per block, sharing the id
                msgs.append(Message("assistant", (Block("text", text=text),), id=rid))
                msgs += [
                    Message(
                        "assistant",
                        (Block.tool_use(c, draw(st.sampled_from(TOOLS)), {"file_path": f"f{c}.py"}),),
                        id=rid,
                    )
                    for c in calls
                ]
            else:
                blocks = [Block("text", text=text)] + [
                    Block.tool_use(c, draw(st.sampled_from(TOOLS)), {}) for c in calls
                ]
                msgs.append(Message("assistant", tuple(blocks), id=rid))
            if calls:
                results = [
                    Block.tool_result(c, "r" * draw(st.integers(0, 2000)), is_error=draw(st.booleans()))
                    for c in calls
                ]
                if draw(st.booleans()):
                    msgs.append(Message("user", tuple(results)))
                else:
                    msgs += [Message("user", (r,)) for r in results]
        msgs.append(
            Message(
                "assistant",
                (Block("text", text="done " + "d" * draw(st.integers(0, 200))),),
                id=f"msg{next(ids)}",
            )
        )
    return msgs


options = st.one_of(
    st.builds(
        TrimOptions,
        keep_recent_turns=st.integers(1, 4),
        keep_initial_user=st.booleans(),
        trigger_turns=st.integers(1, 6),
        trigger_tokens=st.none() | st.integers(1, 3000),
    ),
    st.builds(
        PtlRetryOptions,
        limit=st.integers(50, 5000),
        summary_prompt_tokens=st.integers(0, 300),
        error_text=st.none()
        | st.sampled_from(["overloaded", "prompt is too long: 9000 tokens > 1000 maximum"]),
    ),
    st.builds(
        HysteresisOptions,
        protect_volleys=st.integers(1, 3),
        summary_chars=st.integers(200, 600),
        stage=st.sampled_from(["preflight", "post-turn"]),
    ),
    st.builds(
        ClearOptions,
        keep_tool_uses=st.integers(0, 6),
        persist=st.booleans(),
        trigger_tokens=st.none() | st.integers(1, 3000),
    ),
    st.builds(
        SummarizeOptions,
        trigger_tokens=st.none() | st.integers(1, 3000),
        trigger_messages=st.none() | st.integers(2, 30),
        keep_tokens=st.none() | st.integers(0, 2000),
        keep_first=st.integers(0, 2),
        keep_user=st.sampled_from(["none", "last", "all"]),
        summary_tokens=st.integers(50, 200),
        tool_output_chars=st.none() | st.integers(1, 100),
    ),
)
NAMES = {s.options: name for name, s in CATALOGUE.strategies.items()}


def context(window: int) -> Context:
    return Context(window=Window(window, 1), session_id="prop")


def shape(messages: tuple[Message, ...] | None) -> list[tuple[str, str]] | None:
    return None if messages is None else [(m.role, m.text) for m in messages]


@given(transcripts(), options, st.integers(300, 20_000))
def test_every_strategy_emits_a_valid_request_deterministically(
    msgs: list[Message], opts: object, window: int
) -> None:
    name = NAMES[type(opts)]
    before = snapshot(msgs)
    ctx = context(window)
    first = run(CATALOGUE.strategies[name], msgs, opts, ctx)
    second = run(CATALOGUE.strategies[name], msgs, opts, context(window))
    assert snapshot(msgs) == before
    assert shape(first.messages) == shape(second.messages)
    assert first.stats == second.stats
    for step in first.steps:  # strategies work out a step's tokens rather than count them
        assert (step.tokens_before, step.tokens_after) == (ctx.tokens(step.before), ctx.tokens(step.messages))
        # a step made as a head and a slice is diffed over the head only: the same diff
        assert step.diff == diff(step.before, step.messages, step.tokens_before, step.tokens_after)
        assert step.message_count == len(step.messages)
    assert set(first.stats.to_dict()) == set(
        run(CATALOGUE.strategies[name], msgs[:1], opts, context(window)).stats.to_dict()
    )
    if first.messages:
        assert check(first.messages) == []
        assert next(m for m in first.messages if m.role != "system").role == "user"


@given(transcripts(), st.integers(50, 3000), st.sampled_from([None, "overloaded"]))
def test_ptl_keeps_a_round_and_never_grows(msgs: list[Message], limit: int, error: str | None) -> None:
    ctx = context(100_000)
    r = run(CATALOGUE.strategies["ptl-retry"], msgs, PtlRetryOptions(limit=limit, error_text=error), ctx)
    previous = ctx.tokens(msgs)
    for step in r.steps:
        kept = [m for m in step.messages if not m.is_ptl_marker]
        assert len(api_rounds(kept)) >= 1
        assert ctx.tokens(kept) <= previous
        previous = ctx.tokens(kept)


@given(transcripts(), st.integers(1, 3), st.integers(200, 600), st.integers(300, 8000))
def test_hysteresis_invariants(msgs: list[Message], protect: int, cap: int, window: int) -> None:
    ctx = context(window)
    opts = HysteresisOptions(protect_volleys=protect, summary_chars=cap)
    r = hysteresis_run(msgs, opts, ctx)
    assert r.messages is not None
    index = {m: i for i, m in enumerate(msgs)}
    input_summaries = {m for m in msgs if m.is_summary_item}
    for m in r.messages:
        if m.is_summary_item and m not in index:
            assert len(m.text) <= cap
            assert not any(msgs[i] in input_summaries for i in sources(m, index))
    spans = volleys(msgs)
    tail = spans[-min(r.stats.protect_volleys, len(spans))].start
    assert list(r.messages[len(r.messages) - (len(msgs) - tail) :]) == msgs[tail:] or r.stats.meta_dropped
    if r.stats.tier >= 2 and r.stats.over_target:
        again = hysteresis_run(
            r.messages,
            HysteresisOptions(protect_volleys=r.stats.protect_volleys, summary_chars=cap),
            ctx,
        )
        assert again.stats.volleys_summarized == 0


def _diff_by_walking(before: list[Message], after: list[Message]) -> tuple[Any, ...]:
    """The definition of a diff, message by message, to check the fast one against."""
    index = {m: i for i, m in enumerate(before)}
    kept, summarized, edited, inserted = [], [], [], []
    for j, m in enumerate(after):
        if m in index:
            kept.append(index[m])
            continue
        found = sources(m, index)
        if not found:
            inserted.append(j)
        elif m.is_summary_item and not all(before[i].is_summary_item for i in found):
            summarized += [(i, j) for i in found]
        else:
            edited += [(i, j) for i in found]
    accounted = set(kept) | {i for i, _ in summarized + edited}
    dropped = [i for i in range(len(before)) if i not in accounted]
    return tuple(tuple(x) for x in (kept, dropped, summarized, edited, inserted))


def _edited(before: list[Message], data: st.DataObject) -> list[Message]:
    """`before` as a step might leave it: messages kept, dropped, summarized, edited
    (once or twice over) and inserted."""
    after: list[Message] = []
    for m in before:
        what = data.draw(st.sampled_from(["keep"] * 6 + ["drop", "summarize", "edit", "insert"]))
        if what == "keep":
            after.append(m)
        elif what == "summarize":
            after.append(Message("user", (Block("text", text="[memory:x]\ns"),), replaces=(m,)))
        elif what == "edit":
            edit = Message(m.role, m.blocks, id=m.id, replaces=(m,))
            twice = data.draw(st.booleans())
            after.append(Message(m.role, m.blocks, id=m.id, replaces=(edit,)) if twice else edit)
        elif what == "insert":
            after += [Message("user", (Block("text", text="new"),)), m]
    return after


@given(transcripts(), st.data())
def test_regrouping_from_a_neighbour_matches_grouping(before: list[Message], data: st.DataObject) -> None:
    after = _edited(before, data)
    for this, other in ((after, before), (before, after)):
        expected = (api_round_starts(this), volley_starts(this))
        assert regroup(this, other, api_round_starts(other), volley_starts(other)) == expected


@given(transcripts(), st.data())
def test_diff_matches_its_definition(before: list[Message], data: st.DataObject) -> None:
    after = _edited(before, data)
    d = diff(before, after, 0, 0)
    assert (d.kept, d.dropped, d.summarized, d.edited, d.inserted) == _diff_by_walking(before, after)


@st.composite
def tangled(draw: st.DrawFn) -> list[Message]:
    """Any sequence of messages with tool blocks, valid or not: calls and results in
    either role, repeated and unanswered ids, streamed replies, system markers."""
    ids = st.sampled_from(["t1", "t2", "t3", None])
    block = st.one_of(
        st.builds(lambda t: Block("text", text=t), st.sampled_from(["x", ""])),
        st.builds(lambda i: Block("tool_use", id=i, name="Read", input_json="{}"), ids),
        st.builds(lambda i: Block("tool_result", text="r", tool_use_id=i), ids),
    )
    message = st.builds(
        lambda role, blocks, id: Message(role, tuple(blocks), id=id),
        st.sampled_from(["user", "assistant", "system", "tool"]),
        st.lists(block, max_size=3),
        st.sampled_from(["m1", "m2", None]),
    )
    return draw(st.lists(message, max_size=12))


def _check_by_turns(given: list[Message]) -> list[PairingProblem]:
    """The definition of the pairing check, reading each turn's blocks where it stands,
    the messages in the order they are sent (`sent_order`) and named by their places."""
    order = sent_order(given) or list(range(len(given)))
    msgs = [given[i] for i in order]
    turns = [Turn(t.side, tuple(order[i] for i in t.indices)) for t in api_turns(msgs)]
    msgs = given
    problems = []
    if turns and turns[0].side != "user":
        problems.append(
            PairingProblem(
                "first_not_user", turns[0].indices[0], None, "the first message is not a user message"
            )
        )

    def tools(t: int, kind: str) -> list[tuple[int, str]]:
        if not 0 <= t < len(turns) or turns[t].side != ("assistant" if kind == "tool_use" else "user"):
            return []
        return [
            (i, b.id if kind == "tool_use" else b.tool_use_id)  # type: ignore[misc]
            for i in turns[t].indices
            for b in msgs[i].blocks
            if b.type == kind and (b.id if kind == "tool_use" else b.tool_use_id) is not None
        ]

    seen: set[str] = set()
    for t, turn in enumerate(turns):
        if turn.side == "assistant":
            uses = tools(t, "tool_use")
            for i, tid in uses:
                if tid in seen:
                    problems.append(
                        PairingProblem("duplicate_tool_use", i, tid, f"tool_use {tid} is repeated")
                    )
                seen.add(tid)
            answered = {tid for _, tid in tools(t + 1, "tool_result")}
            first: dict[str, int] = {}
            for i, tid in uses:
                first.setdefault(tid, i)
            problems += [
                PairingProblem("missing_result", i, tid, f"tool_use {tid} has no tool_result after it")
                for tid, i in first.items()
                if tid not in answered
            ]
        else:
            calls = {tid for _, tid in tools(t - 1, "tool_use")}
            here: set[str] = set()
            for i, tid in tools(t, "tool_result"):
                if tid not in calls:
                    problems.append(
                        PairingProblem(
                            "orphan_result", i, tid, f"tool_result {tid} has no tool_use before it"
                        )
                    )
                elif tid in here:
                    problems.append(
                        PairingProblem("duplicate_result", i, tid, f"tool_use {tid} has more than one result")
                    )
                here.add(tid)
    return problems


@given(tangled())
def test_pairing_check_matches_its_definition(msgs: list[Message]) -> None:
    assert check(msgs) == _check_by_turns(msgs)
    turns = api_turns(msgs)
    final = max((t.indices[0] for t in turns if t.side == "assistant"), default=len(msgs))
    assert last_assistant_turn(msgs) == final


@given(st.one_of(tangled(), transcripts()), st.data())
def test_a_front_joins_a_valid_requests_tail_cleanly_as_the_whole_check_finds(
    msgs: list[Message], data: st.DataObject
) -> None:
    """Where messages[:end] needs no repair and goes in its own order, user messages put
    before messages[start:end] (a summary, the person's kept messages) need none exactly
    where checking the whole list finds none."""
    end = next(
        e for e in range(len(msgs), -1, -1) if not fixable(check(msgs[:e])) and sent_order(msgs[:e]) is None
    )
    start = data.draw(st.integers(0, end))
    block = st.one_of(
        st.builds(lambda t: Block("text", text=t), st.sampled_from(["summary", ""])),
        st.builds(lambda i: Block("tool_result", text="r", tool_use_id=i), st.sampled_from(["t1", "t2"])),
    )
    front = data.draw(st.lists(st.builds(lambda b: Message("user", (b,)), block), min_size=1, max_size=3))
    assert joins_cleanly(front, msgs, start, end) == (not fixable(check([*front, *msgs[start:end]])))


def _pairing_edit(m: Message, data: st.DataObject) -> Message:
    """`m` with its text and its results' text changed, or a message that pairs otherwise
    (a result or a call let go, another role), as a strategy's run may leave it."""
    kind = data.draw(st.sampled_from(["text", "text", "pairs otherwise"]))
    if kind == "text":
        return m.with_blocks(
            tuple(replace(b, text="[cleared]") if b.type in ("text", "tool_result") else b for b in m.blocks)
        )
    let_go: bool = data.draw(st.booleans())
    if m.blocks and let_go:
        return m.with_blocks(m.blocks[1:])
    return Message("user" if m.role == "assistant" else "assistant", m.blocks, id=m.id)


def _made(messages: Any) -> list[tuple[Any, ...]]:
    return [(m.role, m.blocks, m.id, m.is_meta, m.is_synthetic, m.is_tool_result) for m in messages]


@given(st.one_of(tangled(), transcripts()), st.data())
def test_a_request_that_pairs_alike_is_checked_and_repaired_as_its_whole_check_and_repair(
    msgs: list[Message], data: st.DataObject
) -> None:
    """A request (calls left unanswered where messages are let go) whose check and
    repair are known, and a run's edit of it: known from them, the edit's problems and
    repair are those its own check and repair make, what repair changed counts as their
    difference, and an edit that pairs otherwise is checked whole."""
    source = tuple(m for m in msgs if not (m.is_tool_result and data.draw(st.integers(0, 3)) == 0))
    known = repairs_of(source)
    problems = check(source)
    if known is None:
        assert sent_order(source) is not None or not {p.kind for p in problems} <= {
            "missing_result",
            "first_not_user",
        }
        return
    edited = list(source)
    for i in data.draw(st.lists(st.integers(0, max(len(source) - 1, 0)), max_size=4)) if source else []:
        edited[i] = _pairing_edit(edited[i], data)
    current = tuple(edited)
    like = repaired_like(known, current)
    alike = all(a is b or pairs_alike(a, b) for a, b in zip(current, source, strict=True))
    assert (like is not None) == alike
    if like is None:
        return
    whole = check(current)
    assert like.problems == whole
    repaired = repair(current, whole) if fixable(whole) else list(current)
    assert _made(like.messages) == _made(repaired)
    context = Context()
    assert context.tokens(like.added) - context.tokens(like.removed) == context.tokens(
        repaired
    ) - context.tokens(current)


@given(st.data())
def test_a_spliced_list_is_its_head_then_its_slice_and_two_share_their_end(
    data: st.DataObject,
) -> None:
    base = tuple(u(f"m{i}") for i in range(data.draw(st.integers(0, 30))))
    extra = [a(f"h{i}") for i in range(4)]
    end = data.draw(st.integers(0, len(base)))
    dropped = frozenset(data.draw(st.lists(st.sampled_from([*base, *extra]), max_size=4)) if base else [])

    def spliced() -> Spliced:
        head = tuple(data.draw(st.lists(st.sampled_from([*base[:end], *extra]), max_size=5, unique=True)))
        return Spliced(head, base, data.draw(st.integers(0, end)), end, dropped)

    one, two = spliced(), spliced()
    for s in (one, two):
        whole = [m for m in (*s.head, *base[s.start : end]) if m not in dropped]
        assert list(s.messages()) == whole and len(s) == len(whole) and list(s) == whole
        assert [s[i] for i in range(-len(whole), len(whole))] == whole + whole  # read in place
    shared = one.shared(two)
    assert shared is not None
    before, after, count = shared
    assert (
        before + one.messages()[len(before) :] == one.messages()
        and len(one.messages()) == len(before) + count
    )
    assert (
        after + two.messages()[len(after) :] == two.messages() and len(two.messages()) == len(after) + count
    )
    assert one.messages()[len(before) :] == two.messages()[len(after) :]
    assert Spliced(one.head, base, one.start, end, frozenset()).shared(two) is None or not dropped

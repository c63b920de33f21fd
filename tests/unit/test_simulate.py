from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from compaction_inspector.core import strategies
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.context_model import fit
from compaction_inspector.core.measuring.pairing import repair
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Block, Message, Session, Usage
from compaction_inspector.core.replaying.simulate import simulate, simulate_both
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import Context
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from compaction_inspector.core.strategies.variants import CLEARABLE_TOOLS
from compaction_inspector.sample_sessions import path
from tests.helpers import call, load, result, u


def agentic(rounds: int, size: int = 400) -> list[Message]:
    msgs: list[Message] = [u("start")]
    for i in range(rounds):
        msgs += [call(f"t{i}", id=f"A{i}"), result(f"t{i}", text="x" * size)]
    return msgs


def test_baseline_counts_every_request() -> None:
    msgs = agentic(3)  # tokens: 1, then per round 1 (the call "Read {}") + 100 (result)
    sim = simulate(msgs, Policy(), Context(window=Window(1000, 0)))
    assert [p.message_end for p in sim.points] == [1, 3, 5, 7]
    assert [p.tokens_before for p in sim.points] == [1, 102, 203, 304]
    assert sim.totals.compactions == 0 and sim.totals.peak_pressure == 0.304


def test_persisted_policy_builds_on_its_own_output() -> None:
    msgs = agentic(8)
    ctx = Context(window=Window(10_000, 0))
    sim = simulate(
        msgs,
        Policy(CATALOGUE.strategies["microcompact"], ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=2)),
        ctx,
    )
    events = [p.round for p in sim.points if p.event]
    assert events == [4, 5, 6, 7, 8, 9]  # one more result cleared each round once 3 exist
    assert all(p.tokens_after < p.tokens_before for p in sim.points if p.event)
    assert sim.totals.compactions == 6
    assert sim.points[-1].tokens_after == ctx.tokens(msgs) - 6 * (100 - 8)


def test_the_rounds_before_a_policy_first_fires_are_the_sessions_own_points_shared() -> None:
    """Until its trigger is reached a policy sends each request as it was: a replay takes
    those points from the replay of no policy on the same segments (each made once), and
    makes its own from the round it first fires."""
    from compaction_inspector.core.measuring.segment import Segments
    from compaction_inspector.core.strategies.summarize import SummarizeOptions

    msgs = agentic(8)
    ctx = Context(window=Window(10_000, 0))
    segments = Segments(tuple(msgs), ctx)
    plain = simulate(msgs, Policy(), ctx, segments=segments).points
    aider = CATALOGUE.strategies["aider"]
    early, late = (Policy(aider, SummarizeOptions(trigger_tokens=t, keep_messages=2)) for t in (500, 700))
    shared, later = (
        simulate(msgs, early, ctx, segments=segments),
        simulate(msgs, late, ctx, segments=segments),
    )
    assert shared.to_dict() == simulate(msgs, early, ctx, incremental=False).to_dict()
    assert [p.round for p in shared.points if p.event][:1] == [6]
    assert [p.round for p in later.points if p.event][:1] == [8]
    assert [p.to_dict() for p in shared.points[:5]] == [p.to_dict() for p in plain[:5]]
    assert all(a is b for a, b in zip(shared.points[:5], later.points[:5], strict=True))
    assert shared.points[5] is not later.points[5]


def test_ephemeral_policy_starts_from_the_full_history_each_round() -> None:
    msgs = []
    for v in range(6):
        msgs += [u(f"task {v}"), call(f"t{v}", id=f"A{v}"), result(f"t{v}", text="y" * 2000)]
    ctx = Context(window=Window(1600, 0))
    pre = simulate(msgs, Policy(CATALOGUE.strategies["hysteresis"]), ctx)
    post = simulate(
        msgs, Policy(CATALOGUE.strategies["hysteresis"], HysteresisOptions(stage="post-turn")), ctx
    )
    # preflight never stores its summaries: the request before compaction keeps growing
    assert pre.points[-1].tokens_before == ctx.tokens(msgs)
    assert post.points[-1].tokens_before < ctx.tokens(msgs)
    assert pre.totals.compactions >= 1 and post.totals.compactions >= 1


def test_the_transcripts_own_compaction_is_honoured() -> None:
    session = load(path("claude_code_session.jsonl"))
    sim = simulate(session.messages, Policy(), Context(window=Window(100_000, 0)))
    marks = [p for p in sim.points if p.event]
    assert len(marks) == 1 and marks[0].event is not None and marks[0].event.source == "transcript"
    assert sim.totals.transcript_compactions == 1
    assert sim.points[-1].tokens_before < Context().tokens(session.messages)


def test_compare_two_policies() -> None:
    msgs = agentic(10)
    a, b = simulate_both(
        msgs, Policy(), Policy(CATALOGUE.strategies["microcompact"]), Context(window=Window(2000, 0))
    )
    assert a.totals.rounds_exceeding_window == 0 and a.totals.peak_pressure > b.totals.peak_pressure
    assert a.policy.label == "as it ran" and b.policy.label == "microcompact"


def test_exceeding_rounds_are_counted() -> None:
    msgs = agentic(4)
    sim = simulate(msgs, Policy(), Context(window=Window(250, 0)))
    assert sim.totals.rounds_exceeding_window == 2


def test_meta_message_blocks_are_plain_messages() -> None:
    m = Message("user", (Block("text", text="x"),), is_meta=True)
    assert simulate([m], Policy(), Context()).points[0].tokens_before == 1


def test_an_ephemeral_policy_counts_each_compaction_once_not_once_per_request() -> None:
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.core.measuring.tokens import make_counter
    from compaction_inspector.core.replaying.context import context_of
    from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
    from compaction_inspector.sample_sessions import path
    from tests.helpers import load

    s = load(path())
    context = context_of(s, make_counter("chars4"), Window(5000, 500))
    totals = [
        simulate(
            s.messages, Policy(CATALOGUE.strategies["hysteresis"], HysteresisOptions(stage=stage)), context
        ).totals
        for stage in ("preflight", "post-turn")
    ]
    compacted = sum(
        p.tokens_after < p.tokens_before
        for p in simulate(s.messages, Policy(CATALOGUE.strategies["hysteresis"]), context).points
    )
    # preflight compacts the request the agent compacted too; post-turn already had
    assert [(t.compactions, t.tokens_removed) for t in totals] == [(3, 2755), (2, 2755)]
    assert compacted > 2  # preflight compacts many requests: the same summaries each time


def test_the_uncompacted_peak_is_the_session_with_no_policy_at_all() -> None:
    """Under a persisted policy a request's 'before' is built on the stored history the
    policy already shrank: the uncompacted peak is still the session's own."""
    msgs = [
        m
        for k in range(8)
        for m in (u(f"task {k}"), call(f"t{k}", id=f"A{k}"), result(f"t{k}", text="x" * 400))
    ]
    ctx = Context(window=Window(1000, 0))
    baseline = simulate(msgs, Policy(), ctx).totals.peak_pressure
    for options in (HysteresisOptions(stage="post-turn"), HysteresisOptions(stage="preflight")):
        totals = simulate(msgs, Policy(CATALOGUE.strategies["hysteresis"], options), ctx).totals
        assert totals.compactions > 0 and totals.peak_pressure < baseline
        assert totals.peak_pressure_uncompacted == baseline


def test_a_replay_counts_its_policy_firing_where_the_agent_itself_compacted() -> None:
    """The agent compacted at the request its boundary replaced (its own count 1,500, above
    the last report): a policy with a 1,400-token trigger fires there too, and says so."""
    from compaction_inspector.core.measuring.tokens import make_counter
    from compaction_inspector.core.model import Compaction, Session, Usage
    from compaction_inspector.core.replaying.context import context_of
    from compaction_inspector.core.strategies.trim import TrimOptions

    def reply(id: str, prompt: int) -> Message:
        return Message("assistant", (Block("text", "ok"),), id=id, usage=Usage(input_tokens=prompt))

    boundary = Message("system", (Block("text", "compacted"),), is_compact_boundary=True)
    summary = Message("user", (Block("text", "summary"),), is_compact_summary=True)
    messages = (
        u("a"),
        reply("A", 1100),
        u("b"),
        reply("B", 1200),
        u("c"),
        boundary,
        summary,
        u("d"),
        reply("C", 900),
    )
    s = Session(messages=messages, format="test", compactions=(Compaction(5, "auto", pre_tokens=1500),))
    context = context_of(s, make_counter("chars4"), Window(10_000, 0))
    model = context.model
    assert (
        model is not None and model.meter(5, None).tokens(model.prefix[5]) == 1500
    )  # what the agent recorded
    assert model.tokens(5) < 1500  # the model's own figure stays its own
    trim = TrimOptions(keep_recent_turns=1, trigger_turns=None, trigger_tokens=1400)
    sim = simulate(messages, Policy(CATALOGUE.strategies["trim"], trim), context)
    own = [p.event for p in sim.points if p.event is not None]
    assert [(e.source, e.policy_titles) for e in own] == [("transcript", ("Trim 3 messages",))]
    assert "the policy fires here too" in own[0].description
    t = sim.totals
    assert (t.compactions, t.transcript_compactions, t.at_agent_compactions) == (1, 1, 1)
    assert t.where == " (1 at the agent's own)"


def test_each_segments_last_request_kept_is_the_one_the_replay_counted() -> None:
    """`ends=True` keeps each segment's last request as sent (before the transcript's own
    compaction, and at the end): its counted tokens are the replay's figure for that
    request, whether the policy stores its history or edits each request anew."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.strategies.declaration import with_values

    inspection = Inspection.of(load(path()), Config(CATALOGUE, window=Window(3_000, 500)))
    messages = inspection.session.messages
    boundary = next(i for i, m in enumerate(messages) if m.is_compact_boundary)
    for strategy, values, persisted in (
        ("cline", {"trigger_tokens": 2_000, "keep_tokens": 500}, True),
        ("anthropic-context-editing", {"trigger_tokens": 1_500}, False),
        ("microcompact", {}, True),
        ("hysteresis", {}, False),
    ):
        policy = Policy(
            CATALOGUE.strategies[strategy],
            with_values(CATALOGUE.strategy(strategy).default_options(), values),
        )
        replay = inspection.replay(policy, ends=True)
        assert policy.persisted is persisted and replay.totals.compactions > 0, strategy
        assert replay.ends is not None and len(replay.ends) == 2
        first, last = replay.ends
        assert first.source == messages[:boundary] and last.source == messages[boundary + 1 :]
        assert last.sent != last.source, strategy
        meter = inspection.segments.at(boundary + 1).meter(len(last.source))
        assert meter.tokens(inspection.context.tokens(last.sent)) == replay.points[-1].tokens_after
    assert inspection.replay(Policy(CATALOGUE.strategies["cline"])).ends is None


def test_a_pairing_repair_is_what_the_agent_sends_never_a_compaction() -> None:
    """A session that ends on a call with no result is repaired before it is sent; a
    policy that never fires (Codex's, far under its limit) makes no compaction of that,
    and the requests it sends are the repaired ones."""
    msgs = [*agentic(3), call("t9", id="A9")]  # the last call unanswered
    ctx = Context(window=Window(100_000, 0))
    for name in ("codex", "opencode-prune", "microcompact"):
        sim = simulate(msgs, Policy(CATALOGUE.strategies[name] if name else None), ctx)
        assert sim.totals.compactions == 0 and sim.totals.tokens_removed == 0, name
        assert not [p.event for p in sim.points if p.event], name
        assert sim.points[-1].tokens_after >= sim.points[-1].tokens_before  # the result the repair adds


def test_an_ephemeral_policys_event_says_what_it_cut_and_the_total_what_it_cut_beyond_before() -> None:
    """Trim cuts each request anew: a new cut removes less than the one before (its
    request grew less than the cut it replaced), never a negative number of tokens."""
    msgs = []
    for v in range(14):
        msgs += [u(f"task {v}"), call(f"t{v}", id=f"A{v}"), result(f"t{v}", text="y" * (400 + 300 * (v % 3)))]
    sim = simulate(msgs, Policy(CATALOGUE.strategies["trim"]), Context(window=Window(100_000, 0)))
    events = [p.event for p in sim.points if p.event is not None]
    assert events and all(e.tokens_removed > 0 for e in events)
    assert sim.totals.tokens_removed == sum(e.new_removed for e in events)
    assert all(e.tokens_removed == p.tokens_before - p.tokens_after for p in sim.points if (e := p.event))


def unanswered(calls: int) -> list[Message]:
    """A prompt, then calls nothing answers under a few message ids: pairing breaks at once."""
    return [u("go"), *(call(f"t{i}", id=f"msg_{i % 5}", text=f"step {i}") for i in range(calls))]


def test_a_segment_broken_early_is_replayed_on_its_repaired_form(monkeypatch: Any) -> None:
    """Every request from the break on is what the agent sends, the repaired request:
    planned on that form, not repaired and run one by one (each a whole pairing check)."""
    msgs = unanswered(40)
    runs: list[int] = []
    real_run = strategies.run

    def counted_run(declared: Any, request: Sequence[Message], *rest: Any) -> Any:
        runs.append(len(request))
        return real_run(declared, request, *rest)

    monkeypatch.setattr("compaction_inspector.core.replaying.simulation.run", counted_run)
    ctx = Context(window=Window(100_000, 0))
    for name in ("microcompact", "codex", "hysteresis", None):
        runs.clear()
        sim = simulate(msgs, Policy(CATALOGUE.strategies[name] if name else None), ctx)
        assert len(runs) <= 1, name
        assert [p.repaired for p in sim.points] == [False] + [True] * 40
        assert sim.to_dict()["points"][-1]["pairing_repaired"] is True
    replay = simulate(msgs, Policy(), ctx)
    assert replay.to_dict()["totals"]["pairing_repaired_from_round"] == replay.repaired_from == 2
    assert replay.repaired_note == (
        "from round 2 the transcript's tool pairing is broken: requests are replayed as the "
        "agent sends them, with the pairing repaired"
    )
    sent = replay.points
    assert [p.tokens_before for p in sent] == [ctx.tokens(repair(msgs[:end])) for end in range(1, 42)]
    assert [p.messages_sent for p in sent] == [len(repair(msgs[:end])) for end in range(1, 42)]


def test_a_repaired_request_reads_what_the_transcript_reports() -> None:
    """The agent sent it repaired, so the reported prompt holds the repair already: an
    unedited request of the repaired form reads the same figure as the transcript's."""
    msgs = unanswered(6)
    msgs = [
        replace(m, usage=Usage(input_tokens=1000 + 50 * i, output_tokens=5)) if m.role == "assistant" else m
        for i, m in enumerate(msgs)
    ]
    counter = TokenCounter("chars4", None)
    model = fit(Session(tuple(msgs), "test"), counter)
    ctx = Context(counter, Window(200_000, 0), "replay", model.meter(len(msgs), None), model)
    sim = simulate(msgs, Policy(), ctx)
    reported = [p.reported for p in sim.points if p.reported is not None]
    assert reported and [p.tokens_before for p in sim.points if p.reported is not None] == reported

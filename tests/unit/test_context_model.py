"""The context model (docs/pressure.md) on small sessions whose every figure is worked out
by hand: chars/4 counts, so a text of 4n characters is n tokens."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.context_model import DEFAULT_OVERHEAD_TOKENS, fit, responses
from compaction_inspector.core.measuring.pressure import Meter, Window, live_start
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Block, Message, Session, Usage, text_message
from compaction_inspector.core.replaying.context import context_of
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import run
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from compaction_inspector.core.strategies.trim import TrimOptions
from compaction_inspector.sample_sessions import path
from tests.helpers import load

COUNTER = make_counter("chars4")


def user(tokens: int) -> Message:
    return text_message("user", "u" * (4 * tokens))


def reply(id: str, tokens: int, prompt: int | None = None, output: int = 0) -> Message:
    usage = Usage(input_tokens=prompt, output_tokens=output) if prompt is not None else None
    return Message("assistant", (Block("text", "a" * (4 * tokens)),), id=id, usage=usage)


def session(*messages: Message, **fields: object) -> Session:
    return Session(messages=messages, format="test", **fields)  # type: ignore[arg-type]


def test_measured_points_anchor_the_estimate_and_few_pairs_keep_scale_one() -> None:
    s = session(
        user(100),
        reply("A", 50, prompt=1100, output=50),
        user(200),
        reply("B", 20, prompt=1330, output=20),
        user(100),
        reply("C", 10, prompt=1470, output=10),
        user(50),
    )
    m = fit(s, COUNTER)
    assert [(r.number, r.start, r.end, r.prompt_tokens) for r in m.responses] == [
        (1, 1, 2, 1100),
        (2, 3, 4, 1330),
        (3, 5, 6, 1470),
    ]
    assert (m.scale, m.pairs, m.overhead, m.overhead_source, m.source) == (
        1.0,
        0,
        1000,
        "first response",
        "measured",
    )
    # at each response, its report exactly; after the last, report + output + what came since
    assert [m.tokens(i) for i in (1, 3, 5)] == [1100, 1330, 1470]
    assert m.tokens(7) == 1470 + 10 + 50
    assert m.tokens(0) == 1000 and m.tokens(1) == 1100
    # each response predicted without its own report: the first from the preset overhead
    assert [(p.estimated, p.anchored) for p in m.predictions] == [
        (DEFAULT_OVERHEAD_TOKENS + 100, False),
        (1100 + 50 + 200, True),
        (1330 + 20 + 100, True),
    ]
    assert m.next_response_error == (20 / 1330 + 20 / 1470) / 2
    r = m.reading(7)
    assert (r.tokens, r.source, r.response and r.response.number, r.output_tokens, r.estimated_since) == (
        1530,
        "measured",
        3,
        10,
        50,
    )
    assert (r.overhead, r.messages, r.attachments) == (1000, 530, 0)
    assert m.reading(5).exact and not r.exact


def test_scale_is_fitted_on_consecutive_responses_and_ignores_an_outlier() -> None:
    # each response adds 1.25 real tokens per counted token, except one that adds far more
    steps = [(400, 500), (200, 250), (800, 1000), (40, 50), (300, 5000)]
    messages: list[Message] = [user(100), reply("r0", 0, prompt=2000)]
    prompt = 2000
    for n, (counted, real) in enumerate(steps, 1):
        prompt += real
        messages += [user(counted), reply(f"r{n}", 0, prompt=prompt)]
    m = fit(session(*messages), COUNTER)
    assert m.scale == 1.25 and m.pairs == 4
    assert m.overhead == 2000 - 125
    # the request after everything: the last report, then 1.25 per counted token since
    messages.append(user(8))
    assert fit(session(*messages), COUNTER).tokens(len(messages)) == prompt + 10


def test_without_usage_the_figure_is_a_labelled_estimate_from_the_preset_or_the_body() -> None:
    plain = fit(session(user(100), reply("x", 50)), COUNTER, overhead_tokens=5000)
    assert (plain.source, plain.overhead_source, plain.scale) == ("estimated", "preset", 1.0)
    assert plain.tokens(2) == 5150
    r = plain.reading(2)
    assert (r.source, r.response, r.overhead, r.messages, r.estimated_since) == (
        "estimated",
        None,
        5000,
        150,
        150,
    )
    body = session(user(100), preamble=(("system prompt", "s" * 400), ("tool definitions (2)", "t" * 800)))
    model = fit(body, COUNTER)
    assert (model.source, model.overhead_source, model.overhead) == ("estimated", "request body", 300)
    assert model.preamble == (("system prompt", 100), ("tool definitions (2)", 200))
    assert model.tokens(1) == 400
    assert model.reading(1).holds() == (
        "outside the messages 300 (system prompt 100 + tool definitions (2) 200, counted) · messages 100"
    )


def test_a_request_body_with_its_logged_usage_is_measured_whole() -> None:
    s = session(user(100), reply("x", 50), user(10), request_usage=Usage(input_tokens=3000, output_tokens=7))
    m = fit(s, COUNTER)
    assert [(r.start, r.end, r.prompt_tokens) for r in m.responses] == [(3, 3, 3000)]
    assert m.tokens(3) == 3000 and m.overhead == 3000 - 160
    measured = fit(replace(s, preamble=(("system prompt", "s" * 2000),)), COUNTER).reading(3)
    assert measured.provenance() == "measured 3,000 at response 1"
    assert measured.holds() == (
        "outside the messages 2,840 (system prompt 500, counted; +2,340 the count misses) · messages 160"
    )


def test_a_streamed_reply_counts_once_with_its_last_lines_output_and_synthetic_zero_usage_is_none() -> None:
    def line(output: int) -> Message:
        usage = Usage(input_tokens=500, output_tokens=output)
        return Message("assistant", (Block("text", "a" * 40),), id="A", request_id="q", usage=usage)

    lines = [line(2), line(90), reply("Z", 5, prompt=0)]
    assert [
        (r.start, r.end, r.prompt_tokens, r.output_tokens) for r in responses(session(user(1), *lines))
    ] == [(1, 3, 500, 90)]


def test_each_segment_starts_from_the_overhead_and_pairs_never_cross_a_compaction() -> None:
    boundary = Message("system", (Block("text", "compacted"),), is_compact_boundary=True)
    s = session(
        user(100),
        reply("A", 0, prompt=1100),
        user(100),
        reply("B", 0, prompt=1200),
        boundary,
        user(40),
        reply("C", 0, prompt=1040),
    )
    m = fit(s, COUNTER)
    assert m.segment_starts == [0, 5]
    assert m.tokens(5) == 1000 and m.tokens(6) == 1040  # the overhead, then 40 counted
    assert [p.anchored for p in m.predictions] == [False, True, False]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 500), st.integers(0, 300), st.integers(0, 40)), min_size=1, max_size=12
    ),
    st.integers(0, 50_000),
)
def test_measured_points_come_back_exactly(rounds: list[tuple[int, int, int]], first: int) -> None:
    messages: list[Message] = []
    prompts = []
    prompt = first
    for n, (counted, added, output) in enumerate(rounds):
        messages.append(user(counted))
        prompt += added + 1
        prompts.append((len(messages), prompt))
        messages.append(reply(f"r{n}", output // 2, prompt=prompt, output=output))
    m = fit(session(*messages), COUNTER)
    assert [m.tokens(start) for start, _ in prompts] == [p for _, p in prompts]
    assert m.scale > 0
    if len(rounds) <= 3:  # fewer than three pairs: no fit
        assert m.scale == 1.0 and m.pairs == 0


@given(st.floats(0, 50_000), st.floats(0.2, 3.0), st.integers(0, 200_000))
def test_meter_counted_is_the_inverse_of_tokens(overhead: float, scale: float, tokens: int) -> None:
    meter = Meter(Window(), overhead, scale)
    c = meter.counted(tokens)
    assert meter.tokens(c) <= tokens < meter.tokens(c + 1)


def test_the_compacted_sample_measures_each_segment_and_reads_the_live_context() -> None:
    s = load(path("claude_code_compacted.jsonl"))
    m = fit(s, COUNTER)
    assert (round(m.scale, 6), m.pairs, m.overhead, m.segment_starts) == (1.891861, 6, 15164, [0, 15])
    # each response predicted without its own report; the first of each segment from an overhead
    assert [
        (p.response.number, p.estimated, p.anchored, p.response.prompt_tokens) for p in m.predictions
    ] == [
        (1, 12112, False, 15276),
        (2, 15462, True, 15475),
        (3, 15786, True, 15714),
        (4, 15912, True, 15893),
        (5, 16106, True, 16165),
        (6, 15629, False, 15555),
        (7, 15637, True, 15646),
        (8, 15745, True, 15734),
    ]
    assert m.tokens(15) == 15164  # after the compaction, before any response: the overhead
    r = m.reading(len(s.messages))
    assert (r.tokens, r.response and r.response.number, r.output_tokens, r.estimated_since) == (
        15755,
        8,
        21,
        0,
    )
    # the report is 79 under the overhead and the scaled messages: they stand for what it leaves
    assert (r.overhead, r.messages, r.attachments, r.shrunk) == (15164, 361, 230, True)
    assert r.provenance() == "measured 15,734 at response 8 + 21 output"


def test_strategies_trigger_on_the_context_sent_not_on_the_messages() -> None:
    s = load(path("claude_code_compacted.jsonl"))
    live = s.messages[live_start(s.messages) :]
    window = Window(17_000, 1_000)
    trim = TrimOptions(keep_recent_turns=1, trigger_turns=None, trigger_tokens=15_000)
    measured = run(CATALOGUE.strategies["trim"], live, trim, context_of(s, COUNTER, window))
    assert [(st.title, st.tokens_before, st.tokens_after) for st in measured.steps] == [
        ("Trim 2 messages", 15755, 15525)
    ]
    assert measured.stats.reason == "token_pressure"  # type: ignore[attr-defined]
    messages_only = run(CATALOGUE.strategies["trim"], live, trim, context_of(s, COUNTER, window, "messages"))
    assert [(st.title, st.tokens_before) for st in messages_only.steps] == [("Not triggered", 354)]
    # the system prompt and tools fill the window: nothing to summarize, the attachments go last
    h = run(CATALOGUE.strategies["hysteresis"], live, HysteresisOptions(), context_of(s, COUNTER, window))
    assert [(st.title, st.tokens_after) for st in h.steps] == [
        ("No candidates", 15755),
        ("Drop 2 injected meta messages", 15525),
    ]
    assert h.stats.tier == 3 and h.stats.over_target  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 300)), min_size=1, max_size=20), st.integers(0, 30_000)
)
def test_without_usage_every_figure_is_a_labelled_estimate(
    shape: list[tuple[bool, int]], preset: int
) -> None:
    messages = [reply(f"r{n}", tokens) if mine else user(tokens) for n, (mine, tokens) in enumerate(shape)]
    m = fit(session(*messages), COUNTER, overhead_tokens=preset)
    counted = sum(tokens for _, tokens in shape)
    r = m.reading(len(messages))
    assert (m.source, m.scale, m.overhead, m.overhead_source) == ("estimated", 1.0, preset, "preset")
    assert r.source == "estimated" and r.response is None and r.tokens == preset + counted
    assert r.provenance().startswith(f"estimated: ~{preset:,} overhead (preset)")


def test_the_samples_headline_is_the_replays_last_request() -> None:
    """The gauge and the timeline agree: the context the agent sends next is the last
    point of a replay without compaction, and a transcript's measured request is its report."""
    s = load(path())
    context = context_of(s, COUNTER, Window(5000, 500))
    assert context.model is not None
    replay = simulate(s.messages, Policy(), context)
    headline = context.model.reading(len(s.messages)).tokens
    assert replay.points[-1].tokens_before == headline == 4009
    assert all(p.tokens_before == p.reported for p in replay.points if p.reported is not None)
    assert sum(p.reported is not None for p in replay.points) == 23  # every response of the main chain


def test_a_transcript_holding_more_than_was_sent_never_takes_the_overhead_away() -> None:
    # the second request reports only 500 of a 5,000-token output: the agent cut it before sending
    s = session(
        user(100),
        reply("A", 50, prompt=1100, output=50),
        user(5000),
        reply("B", 10, prompt=1650, output=10),
    )
    m = fit(s, COUNTER)
    r = m.reading(3)
    assert (r.tokens, r.overhead, r.messages, r.attachments, r.unrecorded, r.shrunk) == (
        1650,
        1000,
        650,
        0,
        0,
        True,
    )
    assert sum(r.parts().values()) == r.tokens
    assert "the transcript holds more than was sent" in r.holds()
    # a step that removes every message but the last leaves the overhead, never less
    meter = m.meter(3, None)
    assert meter.tokens(0) == 1000 and meter.tokens(5150) == 1650
    assert r.after(meter.tokens(0)).parts() == {
        "overhead": 1000,
        "messages": 0,
        "attachments": 0,
        "unrecorded": 0,
    }


def test_a_report_beyond_the_overhead_and_the_messages_is_unrecorded_and_stays() -> None:
    s = session(user(100), reply("A", 50, prompt=1100, output=50), user(100), reply("B", 0, prompt=3250))
    r = fit(s, COUNTER).reading(3)
    assert r.parts() == {"overhead": 1000, "messages": 250, "attachments": 0, "unrecorded": 2000}
    assert r.holds().endswith("not in the transcript 2,000")
    assert r.after(2000).parts() == {"overhead": 1000, "messages": 0, "attachments": 0, "unrecorded": 2000}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3000), st.integers(1, 60_000), st.integers(0, 40)), min_size=1, max_size=10
    ),
)
def test_every_points_breakdown_sums_to_its_figure_and_never_goes_below_nothing(
    rounds: list[tuple[int, int, int]],
) -> None:
    messages: list[Message] = []
    for n, (counted, prompt, output) in enumerate(rounds):
        messages += [user(counted), reply(f"r{n}", output // 4, prompt=prompt, output=output)]
    m = fit(session(*messages), COUNTER)
    for end in range(len(messages) + 1):
        r = m.reading(end)
        parts = r.parts()
        assert sum(parts.values()) == r.tokens == m.tokens(end)
        assert min(parts.values()) >= 0 and r.overhead <= m.overhead
        meter = m.meter(end, None)
        assert meter.tokens(0) >= 0 and meter.scale > 0


def test_a_reply_whose_line_reports_less_output_than_it_holds_counts_what_it_holds() -> None:
    """A line reports its output as far as it had streamed (2.0.76 writes 1 on a reply of
    hundreds of tokens): the next request holds the whole reply, so the context after it
    is the prompt and the reply's own lines counted."""
    s = session(user(100), reply("A", 300, prompt=1100, output=1))
    m = fit(s, COUNTER)
    own = COUNTER.count(s.messages[-1])
    assert own > 1 and m.reading(len(s.messages)).tokens == 1100 + round(m.scale * own)

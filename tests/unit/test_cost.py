"""A session's real cost (core/pricing/): each response once, at the usage its last line
reports, priced by the genai-prices table part by part; checked against the table's own
price of each whole response."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

from genai_prices import Usage as Priced
from genai_prices import calc_price

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.pricing.cost import session_cost
from tests.helpers import load_text


def reply(message_id: str, model: str, output: int, **usage: Any) -> str:
    body = {
        "id": message_id,
        "model": model,
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 3, "output_tokens": output, **usage},
    }
    return json.dumps({"type": "assistant", "uuid": f"{message_id}-{output}", "message": body})


def prompt(text: str) -> str:
    return json.dumps({"type": "user", "uuid": text, "message": {"role": "user", "content": text}})


ONE_HOUR = {"cache_creation_input_tokens": 32_991, "cache_creation": {"ephemeral_1h_input_tokens": 32_991}}


def table(model: str, **usage: int) -> Decimal:
    return calc_price(Priced(**usage), model, provider_id="anthropic").total_price


def test_a_streamed_reply_is_priced_once_at_its_last_lines_output() -> None:
    """Claude Code writes a reply's lines as it streams: every line repeats the usage,
    and only the last holds the whole output (as `…v2.1.74…` lines 9-11 record, 9 then
    300 output tokens). Pricing the first undercounts the output."""
    transcript = [
        prompt("go"),
        reply("msg_a", "claude-opus-4-6", 9, **ONE_HOUR),
        reply("msg_a", "claude-opus-4-6", 300, **ONE_HOUR),
        prompt("more"),
        reply(
            "msg_b", "claude-opus-4-6", 100, cache_creation_input_tokens=1_859, cache_read_input_tokens=32_991
        ),
    ]
    cost = session_cost(load_text("\n".join(transcript), "s.jsonl"))
    assert cost.responses == 2 and not cost.unpriced
    first = table(
        "claude-opus-4-6",
        input_tokens=32_994,
        cache_write_tokens=32_991,
        cache_write_1h_tokens=32_991,
        output_tokens=300,
    )
    second = table(
        "claude-opus-4-6",
        input_tokens=34_853,
        cache_write_tokens=1_859,
        cache_read_tokens=32_991,
        output_tokens=100,
    )
    assert cost.total == first + second
    parts = {name: round(value, 9) for name, value in cost.parts.items()}
    assert parts == {
        "uncached input": table("claude-opus-4-6", input_tokens=6),
        "cache read": table("claude-opus-4-6", input_tokens=32_991, cache_read_tokens=32_991),
        "cache write 5m": table("claude-opus-4-6", input_tokens=1_859, cache_write_tokens=1_859),
        "cache write 1h": table(
            "claude-opus-4-6", input_tokens=32_991, cache_write_tokens=32_991, cache_write_1h_tokens=32_991
        ),
        "output": table("claude-opus-4-6", input_tokens=0, output_tokens=400),
    }  # each a whole price of the table, to the billionth of a dollar
    assert "genai-prices" in cost.line() and "over 2 responses" in cost.line()


def test_a_long_prompt_is_priced_at_its_tier_and_an_unknown_model_is_named() -> None:
    long = {"cache_read_input_tokens": 250_000}  # past the 200,000 where Sonnet 4.5's price steps up
    transcript = [
        prompt("go"),
        reply("msg_a", "claude-sonnet-4-5", 50, **long),
        prompt("and"),
        reply("msg_b", "claude-sonnet-4-5", 50, cache_read_input_tokens=1_000),
        prompt("then"),
        reply("msg_c", "claude-made-up-9", 50),
    ]
    cost = session_cost(load_text("\n".join(transcript), "s.jsonl"))
    assert cost.total == table(
        "claude-sonnet-4-5", input_tokens=250_003, cache_read_tokens=250_000, output_tokens=50
    ) + table("claude-sonnet-4-5", input_tokens=1_003, cache_read_tokens=1_000, output_tokens=50)
    assert cost.responses == 2 and cost.unpriced == {"claude-made-up-9": 1}
    assert "not priced: claude-made-up-9 (1 response)" in cost.line()


def tool_round(n: int, prompt_tokens: int, read: int, text: str) -> list[str]:
    """A reply calling Read, its result, as Claude Code writes them: the reply reports a
    prompt of `prompt_tokens`, `read` of it from the cache."""
    call = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"/f{n}.py"}}
    body = {
        "id": f"msg_{n}",
        "model": "claude-opus-4-6",
        "role": "assistant",
        "content": [call],
        "usage": {
            "input_tokens": 3,
            "output_tokens": 50,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": prompt_tokens - read - 3,
        },
    }
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": text}]}
    return [
        json.dumps({"type": "assistant", "uuid": f"a{n}", "message": body}),
        json.dumps({"type": "user", "uuid": f"r{n}", "message": result}),
    ]


def session_of_reads(config: Any = None) -> Any:
    """Six Read calls of 2,000 tokens each, the cache read as Claude Code reads it."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection

    lines, prompt_tokens, read = [prompt("read them all")], 20_000, 0
    for n in range(6):
        lines += tool_round(n, prompt_tokens, read, "x" * 8_000)
        read, prompt_tokens = prompt_tokens, prompt_tokens + 2_000
    return Inspection.of(load_text("\n".join(lines), "s.jsonl"), config or Config(CATALOGUE))


def test_a_replay_without_compaction_costs_what_the_session_did() -> None:
    """The same requests on the same pattern: each reads what the real one read and
    writes the rest as it wrote, so the no-compaction replay is the real cost."""
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy

    inspection = session_of_reads()
    real, replayed = (
        session_cost(inspection.session),
        replay_cost(inspection.session, inspection.replay(Policy())),
    )
    assert replayed.total == real.total and replayed.rewritten == 0 and replayed.responses == 6


def test_clearing_old_results_rewrites_the_cache_from_the_first_it_clears() -> None:
    """Microcompact keeping one result clears one more at each request from the third:
    the request reads only up to that result and writes the rest again (docs/cost.md#a-replay):
    about the 1,918 tokens of the result it clears now and what follows it, where the
    real request read everything the one before sent."""
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.core.strategies.clear import ClearOptions

    inspection = session_of_reads()
    base = replay_cost(inspection.session, inspection.replay(Policy()))
    policy = Policy(
        CATALOGUE.strategies["microcompact"], ClearOptions(tools=frozenset({"Read"}), keep_tool_uses=1)
    )
    replay = inspection.replay(policy)
    cleared = replay_cost(inspection.session, replay)
    assert [p.shared for p in replay.points] == [None, None, 20_082, 20_146, 20_210, 20_273, 20_337]
    assert [p.tokens_after for p in replay.points[1:-1]] == [22_000, 22_064, 22_127, 22_191, 22_255]
    # each: what the real request read of the one before (22,000, 22,064, ...) less what it shares
    assert cleared.rewritten == 1_918 + 1_918 + 1_917 + 1_918
    assert cleared.unreported == 1  # the next request: no response reports it
    assert cleared.parts["cache read"] < base.parts["cache read"]
    # each compaction of the replay: no summarize request; what its request sends again
    events = [p for p in replay.points if p.event is not None]
    assert [c.at for c in cleared.compactions] == [p.message_end for p in events]
    assert [c.call for c in cleared.compactions] == [None] * len(events)
    assert [c.sent_again for c in cleared.compactions[:4]] == [
        p.tokens_after - p.shared for p in events[:4] if p.shared is not None
    ]
    assert cleared.compactions[-1].sent_again is None  # the next request: nothing reports it
    assert cleared.to_dict()["compactions"]["compactions"] == len(events)


def test_a_replay_priced_after_another_goes_on_from_where_the_two_part_to_the_same_figures(
    monkeypatch: Any,
) -> None:
    """Replays of one session send the transcript's requests until their first compaction:
    the second priced reads the first's running figures there and prices only its own
    points after, to the digit of a price made alone."""
    from compaction_inspector.core.caching.memo import forget
    from compaction_inspector.core.pricing import replay as pricing
    from compaction_inspector.core.pricing.rates import rates_at as priced
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.core.strategies.clear import ClearOptions

    inspection = session_of_reads()
    session, found = inspection.session, inspection.model.responses
    policy = Policy(
        CATALOGUE.strategies["microcompact"], ClearOptions(tools=frozenset({"Read"}), keep_tool_uses=1)
    )
    base, cleared = inspection.replay(Policy()), inspection.replay(policy)
    forget()
    alone = pricing.replay_cost(session, cleared, found)
    asked: list[int] = []

    def rates_at(model: str, billing: Any, prompt: int, at: Any) -> Any:
        asked.append(prompt)
        return priced(model, billing, prompt, at)

    monkeypatch.setattr(pricing, "rates_at", rates_at)
    forget()
    assert pricing.replay_cost(session, base, found) == pricing.replay_cost(session, base, found)
    asked.clear()
    after = pricing.replay_cost(session, cleared, found)
    assert after == alone
    assert asked == [p.tokens_after for p in cleared.points[2:-1]]  # the first two are the baseline's


def side(line: str) -> str:
    """A line of an inline sub-agent (older Claude Code's sidechain)."""
    record = json.loads(line)
    return json.dumps({**record, "uuid": "side-" + record["uuid"], "isSidechain": True})


def test_an_inline_sub_agents_responses_are_priced_apart_from_the_main_chain() -> None:
    """Older Claude Code writes a Task sub-agent's lines into the session's own file
    (`isSidechain`): its responses cost money too, and are said apart."""
    transcript = [
        prompt("go"),
        reply("msg_a", "claude-sonnet-4-5", 10, cache_read_input_tokens=1_000),
        side(prompt("look around")),
        side(reply("msg_s1", "claude-sonnet-4-5", 20, cache_read_input_tokens=2_000)),
        side(reply("msg_s2", "claude-sonnet-4-5", 30, cache_read_input_tokens=3_000)),
    ]
    cost = session_cost(load_text("\n".join(transcript), "s.jsonl"))
    main = table("claude-sonnet-4-5", input_tokens=1_003, cache_read_tokens=1_000, output_tokens=10)
    sub = table("claude-sonnet-4-5", input_tokens=2_003, cache_read_tokens=2_000, output_tokens=20) + table(
        "claude-sonnet-4-5", input_tokens=3_003, cache_read_tokens=3_000, output_tokens=30
    )
    assert cost.total == main and cost.responses == 1
    assert cost.subagents is not None and cost.subagents.total == sub and cost.subagents.responses == 2
    assert cost.whole == main + sub
    assert "main chain $0.00" in cost.line() and "sub-agents $0.00 over 2 responses" in cost.line()
    out = cost.to_dict()
    assert out["subagents"]["responses"] == 2 and out["total_usd"] == str(
        (main + sub).quantize(Decimal("0.000001"))
    )
    assert out["main_chain_usd"] == out["recorded_usd"] == str(main.quantize(Decimal("0.000001")))


def test_a_sub_agents_own_transcript_the_session_names_is_priced(tmp_path: Any) -> None:
    """Newer Claude Code writes a sub-agent to `<session>/subagents/agent-<id>.jsonl` and
    its Task result names the id: that file's responses are the session's too; one it
    names that is not there is said, not priced as $0."""
    from compaction_inspector.core.sessions import whole_cost
    from tests.helpers import load

    call = {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "look"}}
    asks = {
        "id": "msg_a",
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "content": [call],
        "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 1_000},
    }
    result = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "done\nagentId: a1b2\nagentId: gone"}
        ],
    }
    session = tmp_path / "s1.jsonl"
    session.write_text(
        "\n".join(
            [
                prompt("go"),
                json.dumps({"type": "assistant", "uuid": "a1", "message": asks}),
                json.dumps({"type": "user", "uuid": "r1", "message": result}),
            ]
        )
    )
    folder = tmp_path / "s1" / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-a1b2.jsonl").write_text(
        "\n".join(
            [side(prompt("look")), side(reply("msg_s", "claude-sonnet-4-5", 40, cache_read_input_tokens=500))]
        )
    )
    cost = whole_cost(CATALOGUE, load(session))
    assert cost.subagents is not None and cost.subagents.responses == 1
    assert cost.subagents.total == table(
        "claude-sonnet-4-5", input_tokens=503, cache_read_tokens=500, output_tokens=40
    )
    assert cost.unread == (str(folder / "agent-gone.jsonl"),)
    assert "1 sub-agent transcript named but not read" in cost.line()


def test_a_model_without_a_price_is_not_priced_and_its_cache_rewritten_is_still_counted() -> None:
    """A cost the table cannot give is "not priced" (never $0.00); what a replay wrote
    again to the cache is a count of tokens and does not wait on a price."""
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.core.strategies.clear import ClearOptions

    inspection = session_of_reads()
    messages = tuple(
        dataclasses.replace(m, usage=dataclasses.replace(m.usage, model="made-up-model-9")) if m.usage else m
        for m in inspection.session.messages
    )
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection

    unpriced = Inspection.of(dataclasses.replace(inspection.session, messages=messages), Config(CATALOGUE))
    real = session_cost(unpriced.session)
    assert not real.priced and real.usd() == "not priced" and real.to_dict()["total_usd"] is None
    assert real.line() == f"not priced: made-up-model-9 (6 responses) · prices: {real.source}"
    policy = Policy(
        CATALOGUE.strategies["microcompact"], ClearOptions(tools=frozenset({"Read"}), keep_tool_uses=1)
    )
    cleared = replay_cost(unpriced.session, unpriced.replay(policy))
    assert cleared.rewritten == 1_918 + 1_918 + 1_917 + 1_918 and cleared.usd() == "not priced"


def test_a_real_request_that_read_more_than_the_one_before_sent_is_read_so_in_the_replay() -> None:
    """A provider's cache may hold more than the request before sent (a Codex round read
    31,616 cached tokens after a 26,931-token request): while the replay sends the real
    requests, each reads what the real one read, so no compaction costs what it did."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy

    lines, prompt_tokens = [prompt("read them all")], 20_000
    for n in range(4):  # each reads 1,000 tokens more than the request before it sent
        lines += tool_round(n, prompt_tokens, prompt_tokens - 1_000 if n else 0, "x" * 8_000)
        prompt_tokens += 2_000
    inspection = Inspection.of(load_text("\n".join(lines), "s.jsonl"), Config(CATALOGUE))
    replayed = replay_cost(inspection.session, inspection.replay(Policy()))
    real = session_cost(inspection.session)
    assert replayed.total == real.total and replayed.rewritten == 0


def test_the_agents_own_compaction_call_is_estimated_on_both_sides_alike() -> None:
    """No transcript reports usage for the agent's own summarize request: it is estimated
    (the context it recorded before, in, read from the prompt cache; the summary's text /
    4, out) and named so, apart from what was recorded, in the real cost and in every
    replay that keeps the compaction, so a replay is not dearer than reality for paying a
    call the real cost left out."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.pricing.cost import OWN_CALLS
    from compaction_inspector.core.pricing.own_calls import own_calls
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.sample_sessions import path

    inspection = Inspection.open(path(), Config(CATALOGUE))
    session = inspection.session
    (compaction,) = session.compactions
    (call,) = own_calls(session).values()
    summary = next(m for m in session.messages[compaction.index :] if m.is_compact_summary)
    assert (call.tokens_in, call.tokens_out) == (compaction.pre_tokens, len(summary.text) // 4)
    real = session_cost(session)
    assert (
        real.parts[OWN_CALLS]
        == real.estimated
        == table(
            str(call.model),
            input_tokens=call.tokens_in,
            cache_read_tokens=call.tokens_in,
            output_tokens=call.tokens_out,
        )
    )
    assert real.recorded == real.total - real.estimated
    assert f"recorded ${real.recorded:,.2f}" in real.line()
    assert f"+ compaction calls ${real.estimated:,.2f} (estimated)" in real.line()
    replayed = replay_cost(session, inspection.replay(Policy()))
    assert replayed.parts[OWN_CALLS] == real.parts[OWN_CALLS]


def test_sub_agents_costs_add_every_part_either_holds() -> None:
    """A sub-agent's own transcript may hold a compaction (its estimated call) that the
    inline sidechain does not: the sum keeps it."""
    from compaction_inspector.core.pricing.cost import OWN_CALLS, Cost

    inline = Cost({"output": Decimal(1)}, 1, {"m-x": 1})
    own = Cost({"output": Decimal(2), OWN_CALLS: Decimal(3)}, 2, {"m-x": 2, "m-y": 1})
    both = inline.plus(own)
    assert both.parts == {"output": Decimal(3), OWN_CALLS: Decimal(3)} and both.total == Decimal(6)
    assert both.responses == 3 and both.unpriced == {"m-x": 3, "m-y": 1}


def boundary(uuid: str, trigger: str = "auto", pre: int = 160_000, micro: bool = False) -> str:
    record: dict[str, Any] = {"type": "system", "uuid": uuid, "content": "Conversation compacted"}
    if micro:
        record["subtype"] = "microcompact_boundary"
        record["microcompactMetadata"] = {"trigger": "auto", "preTokens": pre, "tokensSaved": 9_000}
    else:
        record["subtype"] = "compact_boundary"
        record["compactMetadata"] = {"trigger": trigger, "preTokens": pre}
    return json.dumps(record)


def summary(text: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": "summary",
            "isCompactSummary": True,
            "message": {"role": "user", "content": text},
        }
    )


SONNET = "claude-sonnet-4-5"


def test_each_compaction_costs_its_summarize_request_and_what_the_request_after_sends_again() -> None:
    """A full compaction: its own summarize request (estimated: the context it recorded
    in, the summary / 4 out) and the first request after it, which reads only the fixed
    part from the cache and writes the rest. A microcompact just before a full one has
    no request of its own: the one after both is the full one's."""
    from compaction_inspector.core.pricing.cost import CompactionsCost
    from compaction_inspector.core.pricing.own_calls import compaction_costs

    lines = [
        prompt("start"),
        reply("m1", SONNET, 100, cache_read_input_tokens=150_000),
        boundary("micro", micro=True),
        boundary("full"),
        summary("s" * 8_000),
        reply("m2", SONNET, 50, cache_read_input_tokens=20_000, cache_creation_input_tokens=10_000),
        reply("m3", SONNET, 50, cache_read_input_tokens=30_000, cache_creation_input_tokens=500),
    ]
    session = load_text("\n".join(lines), "claude-code")
    micro, full = session.compactions
    costs = compaction_costs(session)
    assert costs[micro.index].line() == "no request of its own before the next compaction"
    assert costs[micro.index].usd is None and costs[micro.index].before_next
    cost = costs[full.index]
    assert cost.call is not None and not cost.call.recorded
    assert (cost.call.tokens_in, cost.call.tokens_out) == (160_000, 2_000)
    read = 160_000  # the history it summarizes, read from the cache
    assert cost.call_usd == table(SONNET, input_tokens=read, cache_read_tokens=read, output_tokens=2_000)
    # 3 uncached + 10,000 written (5 minutes): the first request after it read only 20,000
    assert cost.sent_again == 10_003
    assert cost.sent_again_usd == table(SONNET, input_tokens=10_003, cache_write_tokens=10_000)
    assert cost.line() == (
        f"${cost.usd:,.2f}: its summarize request ${cost.call_usd:,.2f} (estimated) · "
        f"10,003 tokens sent again after it ${cost.sent_again_usd:,.2f}"
    )
    together = CompactionsCost(tuple(costs.values()), session_cost(session))
    assert together.line().startswith(f"2 compactions cost ${cost.usd:,.2f} of $")
    assert together.to_dict()["calls_estimated"] is True


def test_a_codex_compaction_whose_request_is_recorded_is_priced_as_recorded() -> None:
    """Codex 0.154+ writes the compaction request's own usage (`token_usage_record`,
    named by the `compacted` line): priced as recorded, its cached input read."""
    from compaction_inspector.core.pricing.own_calls import compaction_costs

    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-11-01T00:00:00Z", "type": kind, "payload": payload})

    def counted(total: int, cached: int) -> str:
        usage = {
            "input_tokens": total,
            "cached_input_tokens": cached,
            "output_tokens": 40,
            "total_tokens": total + 40,
        }
        info = {"last_token_usage": usage, "total_token_usage": usage, "model_context_window": 258_400}
        return line("event_msg", {"type": "token_count", "info": info})

    rollout = [
        line("session_meta", {"id": "s", "cli_version": "0.154.0"}),
        line("turn_context", {"model": "gpt-5.5"}),
        line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        ),
        line(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        ),
        counted(240_000, 200_000),
        line(
            "token_usage_record",
            {
                "response_id": "compact-1",
                "usage": {"input_tokens": 240_500, "cached_input_tokens": 239_000, "output_tokens": 3_000},
            },
        ),
        line("compacted", {"compaction_response_id": "compact-1", "message": "", "replacement_history": []}),
        line(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "on"}]},
        ),
        counted(20_000, 4_000),
    ]
    session = load_text("\n".join(rollout), "codex")
    (compaction,) = session.compactions
    assert compaction.call is not None and compaction.call.prompt_tokens == 240_500
    (cost,) = compaction_costs(session).values()
    assert cost.call is not None and cost.call.recorded
    assert (cost.call.tokens_in, cost.call.cached, cost.call.tokens_out) == (240_500, 239_000, 3_000)
    rates = calc_price(
        Priced(input_tokens=240_500, cache_read_tokens=239_000, output_tokens=3_000),
        "gpt-5.5",
        provider_id="openai",
    ).total_price
    assert cost.call_usd == rates
    assert cost.sent_again == 16_000 and "(recorded)" in cost.line()


def test_a_replay_that_changes_nothing_costs_exactly_what_was_paid() -> None:
    """After the transcript's own compaction the replay sends the history it left, as the
    agent did: its cache reads are the real request's, part for part, not an estimate of
    what the request before shared (the request after this compaction read 14,000 from
    the cache, more than the fixed part, and was priced as writing them again)."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.sample_sessions import path
    from tests.helpers import load_text

    lines = [
        prompt("start"),
        reply("m1", SONNET, 50, cache_read_input_tokens=12_000, cache_creation_input_tokens=100),
        boundary("b1"),
        summary("the summary " * 400),
        prompt("next"),
        reply("m2", SONNET, 50, cache_read_input_tokens=14_000, cache_creation_input_tokens=600),
        prompt("more " * 300),
        reply("m3", SONNET, 50, cache_read_input_tokens=20_000, cache_creation_input_tokens=600),
    ]
    sessions = [load_text("\n".join(lines), "s.jsonl")]
    sessions.append(Inspection.open(path("claude_code_session.jsonl"), Config(CATALOGUE)).session)
    for session in sessions:
        inspection = Inspection.of(session, Config(CATALOGUE))
        real = session_cost(session)
        replayed = replay_cost(session, inspection.replay(Policy()))
        assert session.compactions
        assert {k: v for k, v in replayed.parts.items() if v} == {k: v for k, v in real.parts.items() if v}
        assert (replayed.recorded, replayed.estimated) == (real.recorded, real.estimated)
        assert replayed.rewritten == 0


def test_a_replay_that_compacts_before_the_transcripts_compaction_replaces_it_and_its_call() -> None:
    """The agent's own rule fired earlier in the replay: the transcript's compaction is
    replaced, so its estimated summarize request is not paid on top of the replay's."""
    from compaction_inspector.core.agents.registry import CATALOGUE
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.pricing.cost import CALLS, OWN_CALLS
    from compaction_inspector.core.pricing.replay import replay_cost
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.sample_sessions import path

    inspection = Inspection.open(path("claude_code_session.jsonl"), Config(CATALOGUE))
    (boundary,) = (c.index for c in inspection.session.compactions)
    options = CATALOGUE.strategies["claude-code"].options(auto_compact_tokens=3_000)
    replay = inspection.replay(Policy(CATALOGUE.strategies["claude-code"], options))
    ours = [p for p in replay.points if p.event is not None and p.event.source == "policy"]
    assert ours and ours[0].message_end <= boundary  # it fired before the agent did
    cost = replay_cost(inspection.session, replay)
    assert OWN_CALLS not in cost.parts and cost.parts[CALLS] == cost.estimated > 0
    assert [c.at for c in cost.compactions] == [p.message_end for p in ours]


def test_prices_follow_the_model_and_the_url_its_request_went_to_not_the_files_format(tmp_path: Any) -> None:
    """A gpt model written in Anthropic's format through a proxy is billed at OpenAI's
    prices; a proxy log whose request went to DeepSeek's Anthropic-compatible URL at
    DeepSeek's; a Claude model in its own format at Anthropic's, as before."""
    from datetime import UTC, datetime

    from compaction_inspector.core.pricing.rates import billed_by
    from tests.helpers import load

    assert billed_by("gpt-5.6-sol", "anthropic") == "openai"
    deepseek = "https://api.deepseek.com/anthropic/messages"
    assert billed_by("deepseek-v4-flash", "anthropic", deepseek) == "deepseek"
    assert billed_by("claude-sonnet-4-5", "anthropic") == "anthropic"
    assert billed_by("made-up-model-9", "anthropic", "https://example.invalid/v1") is None
    usage = {"input_tokens": 1_000, "output_tokens": 10}
    record = {
        "request": {
            "timestamp": 1781514968.751,  # 2026-06-15 09:16 UTC, in DeepSeek's peak hours
            "url": deepseek,
            "body": {
                "model": "deepseek-v4-flash",
                "max_tokens": 1_000,
                "system": [{"type": "text", "text": "You are an agent."}],
                "messages": [{"role": "user", "content": "hi"}],
            },
        },
        "response": {"body": {"model": "deepseek-v4-flash", "usage": usage}},
    }
    log = tmp_path / "proxy.jsonl"
    log.write_text(json.dumps(record) + "\n")
    session = load(log)
    assert session.format == "anthropic" and session.metadata["api_url"] == deepseek
    cost = session_cost(session)
    used = Priced(input_tokens=1_000, output_tokens=10)
    sent = datetime.fromtimestamp(1781514968.751, tz=UTC)
    expected = calc_price(used, "deepseek-v4-flash", provider_id="deepseek", genai_request_timestamp=sent)
    assert cost.priced and cost.total == expected.total_price


def test_the_tokens_reported_are_kept_by_model_and_kind_as_ccusage_counts_them(tmp_path: Any) -> None:
    """Each response once, by model, as input, cache read, cache write 5m and 1h, and
    output; sub-agents apart and in the whole; the session list's row carries the whole."""
    from compaction_inspector.core.contract.files import Found
    from compaction_inspector.core.sessions import scan, whole_cost
    from compaction_inspector.sample_sessions import path

    transcript = [
        prompt("go"),
        reply("msg_a", SONNET, 10, cache_read_input_tokens=1_000, **ONE_HOUR),
        reply("msg_b", "claude-opus-4-6", 20, cache_read_input_tokens=2_000, cache_creation_input_tokens=500),
        side(reply("msg_s", SONNET, 30, cache_read_input_tokens=3_000)),
    ]
    cost = session_cost(load_text("\n".join(transcript), "s.jsonl"))
    kinds = ("uncached input", "cache read", "cache write 5m", "cache write 1h", "output")
    assert cost.tokens == {
        SONNET: dict(zip(kinds, (3, 1_000, 0, 32_991, 10), strict=True)),
        "claude-opus-4-6": dict(zip(kinds, (3, 2_000, 500, 0, 20), strict=True)),
    }
    keys = ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
    assert cost.to_dict()["tokens"] == dict(zip(keys, (6, 3_000, 500, 32_991, 30), strict=True))
    assert cost.whole_tokens[SONNET]["cache read"] == 4_000 and cost.whole_tokens[SONNET]["output"] == 40
    assert cost.tokens_line() == (
        "input 9 · cache read 6,000 · cache write 5m 500 · cache write 1h 32,991 · output 60"
    )
    row = scan(CATALOGUE, Found(path("claude_code_session.jsonl"), "claude-code", "p"))
    whole = whole_cost(CATALOGUE, load_text(path("claude_code_session.jsonl").read_text(), "s.jsonl"))
    assert row.tokens is not None and sum(t["output"] for t in row.tokens.values()) == sum(
        t["output"] for t in whole.whole_tokens.values()
    )


def test_what_the_price_table_answered_is_kept_so_a_later_process_never_imports_it(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """The status line runs after every message: a call that prices what an earlier one
    did reads the rates kept under the table's version, not the table (0.1 s to import)."""
    import sys
    from datetime import UTC, datetime

    from compaction_inspector.core.pricing import rates as prices

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    forget_prices()
    from compaction_inspector.core.model import Usage

    usage = Usage(input_tokens=3, cache_read_input_tokens=1_000, output_tokens=10)
    peak, later = datetime(2026, 6, 15, 9, tzinfo=UTC), datetime(2026, 6, 15, 12, tzinfo=UTC)
    first = [prices.priced_parts(usage, m, ("anthropic", None), peak) for m in (SONNET, DEEPSEEK)]
    second = prices.priced_parts(usage, DEEPSEEK, ("anthropic", None), later)
    assert first[1] != second  # two of DeepSeek's prices, each kept
    prices._save(tmp_path / "prices.json")  # what the process's exit does
    forget_prices()
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # importing it now fails
    assert [prices.priced_parts(usage, m, ("anthropic", None), peak) for m in (SONNET, DEEPSEEK)] == first
    assert prices.priced_parts(usage, DEEPSEEK, ("anthropic", None), later) == second
    assert prices.billed_by(SONNET, "anthropic") == "anthropic"
    forget_prices()


def forget_prices() -> None:
    """A fresh process's price lookups: nothing answered in memory."""
    from compaction_inspector.core.pricing import rates as prices

    prices.billed_by.cache_clear()
    prices._schedule.cache_clear()
    prices._steps.cache_clear()
    prices._kept.cache_clear()
    prices._RATES.clear()


def stamped(line: str, at: str) -> str:
    return json.dumps({**json.loads(line), "timestamp": at})


DEEPSEEK = "deepseek-v4-flash"


def test_a_price_that_changes_by_the_hour_is_the_one_each_request_paid_whenever_it_is_computed(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """DeepSeek's table has a price for peak hours and prices from a date on: each
    response pays the one in force when it was sent, the same figure whatever the hour
    the session is priced at, on every surface; before, it was the price of the moment
    `analyze` ran, kept for later runs."""
    from datetime import UTC, datetime

    import genai_prices.types as table

    from compaction_inspector.core.agents.claude_code import statusline
    from compaction_inspector.core.config import Config

    usage = {"cache_read_input_tokens": 40_000, "cache_creation_input_tokens": 2_000}
    lines = [
        prompt("go"),
        stamped(reply("msg_a", DEEPSEEK, 300, **usage), "2026-06-15T09:16:10Z"),  # in peak hours
        prompt("more"),
        stamped(reply("msg_b", DEEPSEEK, 500, **usage), "2026-06-15T12:00:00+00:00"),  # outside them
    ]
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    paid = sum(
        calc_price(
            Priced(input_tokens=42_003, cache_read_tokens=40_000, cache_write_tokens=2_000, output_tokens=n),
            DEEPSEEK,
            provider_id="deepseek",
            genai_request_timestamp=datetime.fromisoformat(at),
        ).total_price
        for n, at in ((300, "2026-06-15T09:16:10+00:00"), (500, "2026-06-15T12:00:00+00:00"))
    )
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    for hour in (9, 17):  # the hour the session is priced at: in DeepSeek's peak window, then outside it

        class Clock(datetime):
            @classmethod
            def now(cls, tz: Any = None, hour: int = hour) -> Any:
                return datetime(2026, 7, 1, hour, 0, tzinfo=UTC)

        monkeypatch.setattr(table, "datetime", Clock)
        forget_prices()
        cost = session_cost(load_text(transcript.read_text(), "s.jsonl"))
        shown = statusline.figures(statusline.read(transcript, None), Config(CATALOGUE), {})
        assert cost.responses == 2 and cost.total == paid and shown.cost == paid
    forget_prices()


def test_the_price_in_force_is_the_last_whose_condition_holds_and_a_time_unknown_pays_the_standard() -> None:
    from datetime import UTC, datetime

    from compaction_inspector.core.pricing.rates import in_force

    schedule = (
        None,
        ("from", "2026-08-17"),
        ("daily", "06:00:00", "10:00:00"),
        ("daily", "22:00:00", "02:00:00"),
    )

    def at(text: str) -> int:
        return in_force(schedule, datetime.fromisoformat(text))

    assert at("2026-06-15T05:59:59+00:00") == 0
    assert at("2026-06-15T06:00:00+00:00") == 2 and at("2026-06-15T09:59:59+00:00") == 2
    assert at("2026-06-15T10:00:00+00:00") == 0
    assert at("2026-06-15T08:30:00+02:00") == 2  # 06:30 UTC
    assert at("2026-06-15T23:00:00+00:00") == 3 and at("2026-06-16T01:59:00+00:00") == 3
    assert at("2026-08-17T00:00:00+00:00") == 3 and at("2026-08-17T12:00:00+00:00") == 1
    assert at("2026-08-17T01:00:00+02:00") == 3  # 16 August, 23:00 UTC
    assert in_force(schedule, None) == (1 if datetime.now(UTC).date().isoformat() >= "2026-08-17" else 0)
    assert in_force((("from", "2027-01-01"),), datetime(2026, 1, 1, tzinfo=UTC)) == 0  # none holds: the first

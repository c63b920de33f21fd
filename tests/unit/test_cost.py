"""A session's real cost (core/cost.py): each response once, at the usage its last line
reports, priced by the genai-prices table part by part; checked against the table's own
price of each whole response."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from genai_prices import Usage as Priced
from genai_prices import calc_price

from compaction_inspector.core.cost import session_cost
from compaction_inspector.core.formats import load_text


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
    assert "not priced: claude-made-up-9 (1)" in cost.line()


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
    return Inspection.of(load_text("\n".join(lines), "s.jsonl"), config or Config())


def test_a_replay_without_compaction_costs_what_the_session_did() -> None:
    """The same requests on the same pattern: each reads what the real one read and
    writes the rest as it wrote, so the no-compaction replay is the real cost."""
    from compaction_inspector.core.cost import replay_cost
    from compaction_inspector.core.simulate import Policy

    inspection = session_of_reads()
    real, replayed = (
        session_cost(inspection.session),
        replay_cost(inspection.session, inspection.replay(Policy())),
    )
    assert replayed.total == real.total and replayed.rewritten == 0 and replayed.responses == 6


def test_clearing_old_results_rewrites_the_cache_from_the_first_it_clears() -> None:
    """Microcompact keeping one result clears one more at each request from the third:
    the request reads only up to that result and writes the rest again (SEMANTICS §15):
    about the 1,918 tokens of the result it clears now and what follows it, where the
    real request read everything the one before sent."""
    from compaction_inspector.core.cost import replay_cost
    from compaction_inspector.core.simulate import Policy
    from compaction_inspector.core.strategies.clear import ClearOptions

    inspection = session_of_reads()
    base = replay_cost(inspection.session, inspection.replay(Policy()))
    policy = Policy("microcompact", ClearOptions(tools=frozenset({"Read"}), keep_tool_uses=1))
    replay = inspection.replay(policy)
    cleared = replay_cost(inspection.session, replay)
    assert [p.shared for p in replay.points] == [None, None, 20_082, 20_146, 20_210, 20_273, 20_337]
    assert [p.tokens_after for p in replay.points[1:-1]] == [22_000, 22_064, 22_127, 22_191, 22_255]
    # each: what the real request read of the one before (22,000, 22,064, ...) less what it shares
    assert cleared.rewritten == 1_918 + 1_918 + 1_917 + 1_918
    assert cleared.unreported == 1  # the next request: no response reports it
    assert cleared.parts["cache read"] < base.parts["cache read"]

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

"""What Claude Code counts against its point before each request (its
`tokenCountWithEstimation`): the last response's reported usage, output included, and a
rough estimate (characters / 4) of what follows it; from 2.1.88 what follows the first of
the lines a response with parallel tool calls is split into. Built here from that rule."""

from __future__ import annotations

import dataclasses

from compaction_inspector.core.agents.claude_code.rules import claude_code_estimates
from compaction_inspector.core.model import Message, Usage
from tests.helpers import a, call, result, u


def reply(m: Message, prompt: int, output: int) -> Message:
    return dataclasses.replace(m, usage=Usage(input_tokens=prompt, output_tokens=output))


def test_the_last_response_and_a_rough_estimate_of_what_follows_it() -> None:
    messages = [
        u("go"),
        reply(a("first", id="r1"), 1_000, 50),
        u("x" * 400),  # 100 by the rough estimate
        u("y" * 40),  # 10
        reply(a("second", id="r2"), 1_200, 20),
    ]
    rough = [1, 2, 100, 10, 2]
    assert claude_code_estimates(messages, rough, "2.1.20") == {
        2: 1_050,
        3: 1_150,
        4: 1_160,
        5: 1_220,
    }


def test_from_2_1_88_it_estimates_what_follows_the_first_line_of_a_split_response() -> None:
    """Parallel tool calls: one response's two lines, a result between them; the second
    line repeats the response's usage. Before 2.1.88 the estimate starts after the last."""
    messages = [
        u("go"),
        reply(call("t1", id="r1"), 1_000, 60),
        result("t1"),
        reply(call("t2", id="r1"), 1_000, 60),
        result("t2"),
    ]
    rough = [1, 30, 40, 30, 40]
    assert claude_code_estimates(messages, rough, "2.1.88")[5] == 1_060 + 40 + 30 + 40
    assert claude_code_estimates(messages, rough, "2.1.87")[5] == 1_060 + 40

"""Claude Code's idle compaction, replayed (changelog 2.1.299): a context of at least the
idle size that sat 54 minutes (0.9 of the prompt cache's hour) without a request is
compacted before the next one. No public transcript of it is at hand: the session here is
built with the timestamps every Claude Code line carries."""

from __future__ import annotations

import dataclasses
import json

from compaction_inspector.core.agents.claude_code.strategy import ClaudeCodeOptions, ClaudeCodeStats
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import Context, run
from tests.helpers import a, load_text, u


def at(message: Message, minute: int) -> Message:
    return dataclasses.replace(message, timestamp=f"2026-11-02T{10 + minute // 60}:{minute % 60:02d}:00Z")


def session(gap: int) -> list[Message]:
    """Two turns of about 1,500 tokens; the second prompt comes `gap` minutes after the reply."""
    return [
        at(u("port the parser " + "x" * 3_000), 0),
        at(a("done " + "y" * 3_000, id="m1"), 1),
        at(u("now the tests"), 1 + gap),
    ]


def stats(gap: int, options: ClaudeCodeOptions) -> ClaudeCodeStats:
    found = run(CATALOGUE.strategies["claude-code"], session(gap), options, CONTEXT).stats
    assert isinstance(found, ClaudeCodeStats)
    return found


OPTIONS = ClaudeCodeOptions(auto_compact_tokens=50_000, idle_compact_tokens=1_000)
CONTEXT = Context(window=Window(60_000, 1))


def test_a_context_over_the_idle_size_that_sat_54_minutes_is_compacted_as_idle() -> None:
    result = run(CATALOGUE.strategies["claude-code"], session(55), OPTIONS, CONTEXT)
    assert stats(55, OPTIONS).triggered
    step = result.steps[-1]
    assert step.title == "Idle compaction"
    assert step.explanation.startswith(
        f"{stats(55, OPTIONS).tokens_before:,} tokens sat idle 55 minutes, past the 54 before the prompt "
        "cache expires, with idle compaction at 1,000:"
    )
    assert result.messages is not None and "(idle," in result.messages[0].text


def test_a_shorter_wait_or_idle_compaction_off_leaves_it_to_the_point() -> None:
    assert not stats(53, OPTIONS).triggered
    assert not stats(55, dataclasses.replace(OPTIONS, idle_compact_tokens=0)).triggered


def test_the_replay_compacts_before_the_request_after_the_wait() -> None:
    replay = simulate(session(60), Policy(CATALOGUE.strategies["claude-code"], OPTIONS), CONTEXT).to_dict()
    assert [p["message_end"] for p in replay["points"] if p["tokens_after"] < p["tokens_before"]] == [3]
    assert replay["totals"]["compactions"] == 1


BEFORE_IDLE = {"trigger": "auto", "preTokens": 210_500}
IDLE_NOTE = "Compacted while idle, before the prompt cache expired"


def idle_transcript() -> str:
    """A 2.1.299 session idle from 10:01 to 10:55 with 210,000 in context: its automatic
    boundary and the note after it make an idle compaction."""

    def line(uuid: str, kind: str, at: str, **fields: object) -> str:
        when = f"2026-11-02T{at}:00Z"
        head = {"type": kind, "uuid": uuid, "sessionId": "s", "version": "2.1.299", "timestamp": when}
        return json.dumps({**head, **fields})

    def reply(uuid: str, prompt: int, at: str) -> str:
        body = {"id": f"m{uuid}", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": prompt, "output_tokens": 5}}  # fmt: skip
        return line(uuid, "assistant", at, message=body)

    summary = {"role": "user", "content": "summary"}
    return "\n".join(
        [
            line("u1", "user", "10:00", message={"role": "user", "content": "hello"}),
            reply("a1", 210_000, "10:01"),
            line("b", "system", "10:55", subtype="compact_boundary", compactMetadata=BEFORE_IDLE),
            line("n", "system", "10:55", subtype="informational", content=IDLE_NOTE),
            line("s", "user", "10:55", isCompactSummary=True, message=summary),
            line("u2", "user", "11:10", message={"role": "user", "content": "back again"}),
            reply("a2", 30_000, "11:10"),
        ]
    )


def test_an_idle_compaction_in_the_transcript_is_named_idle_and_explained_by_its_rule() -> None:
    """Claude Code counted it against the 200,000 idle compaction waits for."""
    session = load_text(idle_transcript(), "s.jsonl")
    (found,) = Inspection.of(
        session, Config(CATALOGUE).for_session(session), make_counter("chars4")
    ).own_compactions()
    assert found.compaction.trigger == "idle"
    assert found.count is not None and found.count.fires
    assert found.count.line() == (
        "Claude Code counted 210,500 ≥ 200,000 (idle compaction at 200,000 after 54 minutes idle): "
        "210,000 reported + 500 added since"
    )

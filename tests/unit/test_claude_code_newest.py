"""Claude Code's newest compactions, built from the fields its transcripts write (no public
transcript of 2.1.282 or later is at hand). A proxy record of a 2.1.282 request after an
automatic compaction mid-turn holds, after the summary and the date, the last tool call
and its result as they ran: the prediction adds that round where the transcript does not
write it after the boundary."""

from __future__ import annotations

import json
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.tokens import make_counter
from tests.helpers import load_text


def line(uuid: str, kind: str, version: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s", "version": version, **fields})


BEFORE = {"trigger": "auto", "preTokens": 168_000}


def transcript(version: str, again: bool = False) -> str:
    """A turn that reads a file and runs the tests; Claude Code compacts before the
    response that would follow the test run's result. `again`: the transcript writes the
    kept round after the boundary too."""

    def reply(uuid: str, content: list[dict[str, Any]], prompt: int) -> str:
        usage = {"input_tokens": prompt, "output_tokens": 10}
        body = {"id": f"msg-{uuid}", "role": "assistant", "content": content, "usage": usage}
        return line(uuid, "assistant", version, message=body)

    call = {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "make test"}}
    result = {"type": "tool_result", "tool_use_id": "t2", "content": "FAILED test_parser " * 200}
    answered = line("r2", "user", version, message={"role": "user", "content": [result]})
    kept = [reply("a2", [call], 150_000), answered]
    lines = [
        line("u1", "user", version, message={"role": "user", "content": "fix the parser"}),
        reply("a1", [{"type": "text", "text": "Looking."}], 20_000),
        *kept,
        line("b", "system", version, subtype="compact_boundary", compactMetadata=BEFORE),
        line("s", "user", version, isCompactSummary=True, message={"role": "user", "content": "the summary"}),
        *(kept if again else []),
        reply("a3", [{"type": "text", "text": "The test fails on…"}], 30_000),
    ]
    return "\n".join(lines)


def inspected(version: str, again: bool = False) -> Inspection:
    session = load_text(transcript(version, again), "s.jsonl")
    return Inspection.of(session, Config(CATALOGUE).for_session(session), make_counter("chars4"))


def predicted(version: str, again: bool = False) -> dict[str, Any]:
    (found,) = inspected(version, again).own_compactions()
    parts: dict[str, Any] = {p.name: p for p in found.parts}
    return parts


def test_from_2_1_282_the_last_round_of_a_compaction_mid_turn_is_predicted_back_as_it_ran() -> None:
    parts = predicted("2.1.282")
    kept = parts["the last round, kept as it ran"]
    # the call and its result (lines 3 and 4), in the model's tokens
    inspection = inspected("2.1.282")
    call, result = inspection.session.messages[2:4]
    assert call.tool_use_ids() == result.tool_result_ids() == ["t2"]
    counted = inspection.counter.count(call) + inspection.counter.count(result)
    assert kept.tokens == round(inspection.model.scale * counted)
    assert kept.source == "read from the transcript before it: Claude Code 2.1.282 keeps it mid-turn"
    assert "the last round, kept as it ran" not in predicted("2.1.281")


def test_a_round_the_transcript_writes_again_after_the_boundary_is_counted_once() -> None:
    parts = predicted("2.1.290", again=True)
    assert "the last round, kept as it ran" not in parts
    assert "sent since" in parts or "the rest of its new history" in parts

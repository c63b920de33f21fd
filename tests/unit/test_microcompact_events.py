"""A microcompaction the transcript records (Claude Code's `microcompact_boundary`) is an
event: a marker in the transcript, its cleared results leave the context model from
there, and `real_compactions` measures and predicts it. Counts are chars/4."""

import json
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.context_model import fit
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.own.compactions import real_compactions
from compaction_inspector.core.own.steps import as_steps
from compaction_inspector.core.replaying.clearing import CLEARED_TEXT
from compaction_inspector.core.replaying.context import context_of
from tests.helpers import load_text

COUNTER = make_counter("chars4")


def line(kind: str, uuid: str, parent: str | None, **rest: Any) -> str:
    return json.dumps(
        {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "version": "2.1.22", **rest}
    )


def assistant(uuid: str, parent: str, mid: str, prompt: int, content: list[dict[str, Any]]) -> str:
    usage = {"input_tokens": prompt, "output_tokens": 10}
    return line(
        "assistant",
        uuid,
        parent,
        message={"id": mid, "role": "assistant", "content": content, "usage": usage},
    )


def transcript() -> str:
    read = [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}]
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "z" * 4_000}]  # 1,000 tokens
    return "\n".join(
        [
            line("user", "u1", None, message={"role": "user", "content": "read it"}),
            assistant("a1", "u1", "m1", 5_000, read),
            line("user", "u2", "a1", message={"role": "user", "content": result}),
            assistant("a2", "u2", "m2", 6_020, [{"type": "text", "text": "done"}]),
            line("user", "u3", "a2", message={"role": "user", "content": "more"}),
            line(
                "system",
                "s1",
                "u3",
                subtype="microcompact_boundary",
                content="Context microcompacted",
                microcompactMetadata={
                    "trigger": "auto",
                    "preTokens": 900,
                    "tokensSaved": 990,
                    "compactedToolIds": ["t1"],
                },
            ),
            assistant("a3", "s1", "m3", 5_050, [{"type": "text", "text": "ok"}]),
        ]
    )


def test_a_microcompaction_loads_as_an_event_with_its_cleared_ids() -> None:
    session = load_text(transcript(), "s.jsonl")
    (c,) = session.compactions
    assert c.to_dict() == {
        "index": 5, "kind": "microcompact", "trigger": "auto", "pre_tokens": 900, "post_tokens": None,
        "cleared": ["t1"], "tokens_saved": 990,
    }  # fmt: skip
    marker = session.messages[5]
    assert marker.kind == "marker" and marker.is_microcompact and not marker.is_compact_boundary
    assert marker.text == "microcompact · 1 tool result cleared · 6,020 before → 5,050 after, measured"


def test_the_cleared_results_leave_the_context_model_from_the_marker() -> None:
    session = load_text(transcript(), "s.jsonl")
    model = fit(session, COUNTER)
    more = COUNTER.count(session.messages[4])
    assert model.tokens(5) == 6_020 + 10 + more  # before the marker: the result still there
    prediction = model.predictions[-1]  # the response after it, from the one before
    cleared = 1_000 - len(CLEARED_TEXT) // 4  # the result's tokens less the placeholder's
    assert prediction.anchored and prediction.estimated == 6_020 + 10 + more - cleared


def test_real_compactions_measure_and_predict_it_and_o_steps_through_it() -> None:
    session = load_text(transcript(), "s.jsonl")
    model = fit(session, COUNTER)
    (found,) = real_compactions(session, model, COUNTER, Config(CATALOGUE))
    d = found.to_dict()
    assert (d["kind"], d["measured_before"], d["measured_after"], d["cleared"]) == (
        "microcompact",
        6_020,
        5_050,
        ["t1"],
    )
    assert d["predicted_after"] == model.predictions[-1].estimated and d["our_retention"] is None
    result = as_steps(session, [found], context_of(session, COUNTER, Config(CATALOGUE).window))
    (step,) = result.steps
    assert step.title == "microcompact, line 6: 6,020 → 5,050 measured"
    cleared = [b.text for m in step.messages for b in m.blocks if b.type == "tool_result"]
    assert cleared == [CLEARED_TEXT]
    kept = [b.text for m in step.before for b in m.blocks if b.type == "tool_result"]
    assert kept == ["z" * 4_000]


def codex_line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-06-01T00:00:00Z", "type": kind, "payload": payload})


def test_a_codex_compaction_in_a_turn_of_its_own_is_manual_and_its_encrypted_summary_counts() -> None:
    usage = {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": 910}
    info = {"last_token_usage": usage, "total_token_usage": usage, "model_context_window": 10_000}
    summary = {
        "type": "compaction",
        "encrypted_content": "e" * 4_000,
    }  # 3,000 bytes less 650: 2,350 bytes, 588 tokens (4 a token, rounded up)

    def said(kind: str, text: str) -> dict[str, str]:
        return {"type": f"{kind}_text", "text": text}

    def turn(text: str | None) -> list[str]:
        said = [codex_line("event_msg", {"type": "user_message", "message": text})] if text else []
        return [codex_line("event_msg", {"type": "task_started"}), *said]

    rollout = [
        codex_line("session_meta", {"id": "r", "cli_version": "0.142.0"}),
        *turn("hello"),
        codex_line("response_item", {"type": "message", "role": "user", "content": [said("input", "hello")]}),
        codex_line("response_item", {"type": "message", "role": "assistant", "content": []}),
        codex_line("event_msg", {"type": "token_count", "info": info}),
        *turn(None),  # /compact: a turn with no user message
        codex_line("compacted", {"message": "", "replacement_history": [summary]}),
        *turn("next"),
        codex_line("compacted", {"message": "", "replacement_history": [summary]}),  # in a turn with a prompt
    ]  # fmt: skip
    session = load_text("\n".join(rollout), "r.jsonl")
    assert [(c.trigger, c.hidden_tokens) for c in session.compactions] == [("manual", 588), ("auto", 588)]


def test_a_microcompaction_whose_cleared_results_the_file_lacks_is_not_modelled() -> None:
    """A slice that starts after the results a microcompaction cleared: nothing here says
    what they held, so no prediction (it once predicted the context would rise)."""
    text = transcript().replace('"compactedToolIds": ["t1"]', '"compactedToolIds": ["t0", "t9"]')
    s = load_text(text)
    model = fit(s, COUNTER)
    (c,) = real_compactions(s, model, COUNTER, Config(CATALOGUE))
    assert (c.predicted_after, c.cleared_found, c.measured_after) == (None, 0, 5050)
    assert c.to_dict()["predicted_after"] is None and c.to_dict()["cleared_in_file"] == 0
    (step,) = as_steps(s, [c], context_of(s, COUNTER, Config(CATALOGUE).window)).steps
    assert step.title.endswith("→ 5,050 measured")
    assert "cannot be modelled from it" in step.explanation and "predicts" not in step.explanation


def test_a_full_compaction_right_after_never_lends_its_own_count_to_the_microcompaction() -> None:
    """The agent's own count before a full compaction (here 9,999, far above the reports)
    is what the replay's request held, not the context the microcompaction left."""
    boundary = line(
        "system",
        "s2",
        "s1",
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 9_999},
    )
    lines = transcript().splitlines()
    text = "\n".join([*lines[:-1], boundary, lines[-1].replace('"s1"', '"s2"')])
    s = load_text(text)
    model = fit(s, COUNTER)
    micro = next(
        c for c in real_compactions(s, model, COUNTER, Config(CATALOGUE)) if c.kind == "microcompact"
    )
    assert micro.predicted_after is not None and micro.predicted_after < 6_020  # it cleared 1,000 tokens

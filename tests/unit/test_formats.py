import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.measuring.grouping import Span, api_rounds, volleys
from compaction_inspector.core.measuring.tokens import reported_usage
from compaction_inspector.sample_sessions import path
from tests.helpers import load, load_bytes, load_text


def ranges(spans: Sequence[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in spans]


def test_claude_code_sample_rounds_volleys_markers_and_sidechain() -> None:
    s = load(path("claude_code_session.jsonl"))
    assert s.format == "claude-code"
    assert len(s.messages) == 65
    assert len(s.sidechain) == 4 and all(m.is_sidechain for m in s.sidechain)
    assert ranges(volleys(s.messages)) == [(0, 1), (1, 15), (15, 32), (32, 54), (54, 65)]
    rounds = ranges(api_rounds(s.messages))
    assert len(rounds) == 24
    assert rounds[:3] == [(0, 2), (2, 6), (6, 9)]
    # parallel tool calls: one response on three lines, results on two lines, one round
    assert (16, 21) in rounds
    assert [m.kind for m in s.messages[28:33]] == [
        "message",
        "marker",
        "summary",
        "meta",
        "message",
    ]
    assert s.messages[29].is_compact_boundary
    assert s.messages[29].text == "manual compaction · 4,479 before → 2,093 after, measured"
    assert [c.to_dict() for c in s.compactions] == [
        {"index": 29, "kind": "compact", "trigger": "manual", "pre_tokens": 4479, "post_tokens": None}
    ]
    assert s.metadata["session_id"] == "7f3c2a91-5b8e-4d1a-9c6f-2e4b8a1d0c55"
    assert s.metadata["title"].startswith("Fix tinyparse")
    assert [d.message for d in s.diagnostics] == [
        "skipped 1 file-history-snapshot line (not conversation)",
        "skipped 1 queue-operation line (not conversation)",
        "skipped 1 summary line (not conversation)",
    ]


def test_repeated_usage_is_counted_once_per_response() -> None:
    s = load(path("claude_code_session.jsonl"))
    usage = reported_usage(s.messages)
    assert usage is not None
    responses = {m.id for m in s.messages if m.role == "assistant"}
    assert usage.responses == len(responses) == 23
    assert usage.latest_prompt_tokens == s.messages[-1].usage.prompt_tokens  # type: ignore[union-attr]


def test_agent_only_session_is_one_volley_of_many_rounds() -> None:
    s = load(path("agent_only_session.jsonl"))
    assert s.human_turns() == 1
    assert ranges(volleys(s.messages)) == [(0, 63)]
    assert len(api_rounds(s.messages)) == 21


def test_anthropic_body() -> None:
    s = load(path("anthropic_request.json"))
    assert s.format == "anthropic"
    assert ranges(api_rounds(s.messages)) == [(0, 1), (1, 3), (3, 5), (5, 7)]
    assert ranges(volleys(s.messages)) == [(0, 4), (4, 7)]
    assert s.metadata["tools"] == 2 and "coding agent" in s.metadata["system"]
    ids = [m.id for m in s.messages if m.role == "assistant"]
    assert len(set(ids)) == 3 and all(ids)


def test_openai_chat_list() -> None:
    s = load(path("openai_chat.json"))
    assert s.format == "openai-chat"
    assert [m.role for m in s.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert s.messages[2].tool_use_ids() == ["call_1", "call_2"]
    assert s.messages[2].blocks[0].input == {
        "query": "SELECT count(*) FROM orders WHERE shipped_at >= date('now','-7 day')"
    }
    assert ranges(api_rounds(s.messages)) == [(0, 2), (2, 5), (5, 7), (7, 9), (9, 10)]


def test_codex_rollout() -> None:
    s = load(path("codex_rollout.jsonl"))
    assert s.format == "codex"
    assert s.messages[0].is_meta  # environment context is injected, not typed
    assert ranges(volleys(s.messages)) == [(0, 1), (1, 18)]
    assert ranges(api_rounds(s.messages)) == [
        (0, 2),
        (2, 5),
        (5, 8),
        (8, 11),
        (11, 14),
        (14, 17),
        (17, 18),
    ]
    assert s.metadata["model"] == "gpt-5.1-codex"
    usage = reported_usage(s.messages)
    assert usage is not None and usage.responses == 5


def test_plain_yaml_and_json_give_the_same_messages() -> None:
    y = load(path("plain_session.yaml"))
    assert y.format == "plain" and len(y.messages) == 6
    assert y.messages[3].id == "resp_2"
    j = load_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    assert j.format == "plain" and [m.text for m in j.messages] == ["hi", "yo"]
    assert j.messages[1].id


def test_proxy_log_opens_the_largest_request_and_can_pick_another_counted_from_one() -> None:
    def body(n: int, i: int) -> dict[str, object]:
        return {"system": "s", "messages": [{"role": "user", "content": f"req {i}"}] * n}

    # the main conversation grows; the last call is a one-message side call (a title)
    records = [{"request": {"body": body(n, i)}, "response": {}} for i, n in enumerate((1, 3, 3, 1))]
    text = "\n".join(json.dumps(r) for r in records)
    largest = load_text(text)
    assert largest.messages[0].text == "req 2" and largest.request_index == 2
    picked = load_text(text, request=1)
    assert picked.messages[0].text == "req 0" and picked.request_count == 4 and picked.request_index == 0
    assert load_text(text, request=4).messages[0].text == "req 3"
    for wrong in (0, 5):
        with pytest.raises(LoadError, match=f"request {wrong} does not exist: the file holds 4 \\(1 to 4\\)"):
            load_text(text, request=wrong)
    with pytest.raises(
        LoadError, match=r"a request number picks a body of a proxy log .*; this is a claude-code file"
    ):
        load(path(), request=1)


def test_malformed_lines_are_skipped_with_line_numbers() -> None:
    good = path("claude_code_session.jsonl").read_text().splitlines()
    broken = [good[0], good[1], '{"type": "user", "message": {"role"', good[2], "[1, 2]", *good[3:]]
    s = load_text("\n".join(broken))
    assert len(s.messages) == 65
    lines = [(d.line, d.message.split(":")[0]) for d in s.diagnostics if d.line is not None]
    assert lines == [(3, "skipped"), (5, "skipped")]


def test_empty_and_unknown_files_say_so(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="the file is empty"):
        load_text("  \n")
    with pytest.raises(LoadError, match="tried Claude Code JSONL"):
        load_text("just some prose\nnot a transcript\n")
    with pytest.raises(LoadError, match="cannot read"):
        load(tmp_path / "missing.jsonl")


def test_invalid_utf8_is_replaced_and_reported() -> None:
    data = b'[{"role": "user", "content": "caf\xe9"}]'
    s = load_bytes(data)
    assert s.messages[0].text == "caf\ufffd"
    assert s.diagnostics[0].message == "invalid UTF-8 replaced with U+FFFD"


def test_the_opened_file_is_never_written(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(path("claude_code_session.jsonl").read_bytes())
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    load(target)
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before


def test_streamed_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    target = tmp_path / "bom.jsonl"
    target.write_bytes(b"\xef\xbb\xbf" + path().read_bytes())
    s = load(target)
    assert len(s.messages) == 65 and s.diagnostics == load(path()).diagnostics


def test_a_file_mixing_agents_reads_as_its_first_agent_line_whole_or_streamed(tmp_path: Path) -> None:
    """Found by the fuzzer: the whole read took any Claude Code line in the first 50 over
    a Codex line before it, the streamed read the first line's agent."""
    data = (
        b'{"type": "response_item", "payload": {"type": "user"}}\n'
        b'{"type": "user", "uuid": null, "message": {"role": "user", "id": "A", "content": []}}'
    )
    target = tmp_path / "mixed.jsonl"
    target.write_bytes(data)
    assert load_bytes(data).format == load(target).format == "codex"
    flipped = b"\n".join(reversed(data.split(b"\n")))
    target.write_bytes(flipped)
    assert load_bytes(flipped).format == load(target).format == "claude-code"


def _cc_line(kind: str, **fields: object) -> str:
    return json.dumps({"type": kind, "uuid": f"u-{kind}-{len(fields)}", "sessionId": "s", **fields})


def test_claude_code_attachments_are_meta_messages_of_what_the_model_was_sent() -> None:
    lines = [
        _cc_line("user", message={"role": "user", "content": "hi"}),
        _cc_line(
            "attachment",
            attachment={
                "type": "file",
                "filename": "/src/a.py",
                "content": {"type": "text", "file": {"filePath": "/src/a.py", "content": "print(1)"}},
            },
        ),
        _cc_line("attachment", attachment={"type": "task_reminder", "content": [{"subject": "write tests"}]}),
        _cc_line("attachment", attachment={"type": "hook_success", "hookEvent": "Stop", "content": "a"}),
        _cc_line(
            "attachment", attachment={"type": "hook_success", "hookEvent": "SessionStart", "content": ""}
        ),
        _cc_line(
            "attachment",
            attachment={"type": "hook_additional_context", "content": ["registered", "ready"]},
        ),
        _cc_line(
            "assistant",
            message={
                "id": "msg_1",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "No response requested."}],
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        ),
    ]
    s = load_text("\n".join(lines))
    kinds = [(m.kind, m.attachment, m.text) for m in s.messages]
    assert kinds == [
        ("message", None, "hi"),
        ("attachment", "file", "print(1)"),
        ("attachment", "task_reminder", "write tests"),
        ("attachment", "hook_additional_context", "registered\nready"),
        ("message", None, "No response requested."),
    ]
    assert all(m.is_meta and not m.is_human for m in s.messages[1:4])
    # Claude Code's own "<synthetic>" line is no API response: it reports nothing
    assert s.messages[-1].usage is None and "model" not in s.metadata
    assert [d.message for d in s.diagnostics] == ["skipped 2 unsent attachment lines (not conversation)"]


def _codex(kind: str, **payload: object) -> str:
    return json.dumps({"type": kind, "payload": payload})


def _count(prompt: int, output: int, total: int) -> str:
    last = {
        "input_tokens": prompt,
        "cached_input_tokens": 0,
        "output_tokens": output,
        "total_tokens": prompt + output,
    }
    info = {
        "last_token_usage": last,
        "total_token_usage": {"total_tokens": total},
        "model_context_window": 1000,
    }
    return _codex("event_msg", type="token_count", info=info)


def test_codex_usage_goes_to_the_response_it_reports_in_either_order_and_compactions_are_recorded() -> None:
    call = _codex("response_item", type="function_call", name="shell", arguments="{}", call_id="c")
    result = _codex("response_item", type="function_call_output", call_id="c", output="ok")
    lines = [
        _codex("session_meta", id="s"),
        _codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        # newer rollouts: the count after the response's items (and after its tool output)
        call, result, _count(100, 10, 110),
        # older ones: the count first, the items, then the same count again
        _count(130, 5, 245), call, result, _count(130, 5, 245),
        _codex("compacted", message="summary"),
        _count(0, 0, 245).replace('"total_tokens": 0}', '"total_tokens": 40}'),
        call, _count(60, 5, 310),
    ]  # fmt: skip
    s = load_text("\n".join(lines))
    reported = [(m.id, m.usage.prompt_tokens) for m in s.messages if m.usage is not None]
    assert reported == [("response-1", 100), ("response-2", 130), ("response-3", 60)]
    assert [c.to_dict() for c in s.compactions] == [
        {"index": 5, "kind": "compact", "trigger": "auto", "pre_tokens": 135, "post_tokens": 40}
    ]
    assert s.messages[5].is_compact_boundary and s.metadata["context_window"] == 1000


def test_a_proxy_log_request_brings_its_system_tools_and_the_usage_its_response_reported() -> None:
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    streamed = {
        "events": [
            {
                "data": {
                    "type": "message_start",
                    "message": {"usage": {"input_tokens": 9, "output_tokens": 1}},
                }
            },
            {"data": {"type": "message_delta", "usage": {"input_tokens": 3, "cache_read_input_tokens": 90}}},
            {"data": {"type": "message_stop"}},
        ]
    }
    chat = {"body": {"usage": {"prompt_tokens": 50, "completion_tokens": 7}}}
    body = {"system": "be brief", "tools": tools, "messages": [{"role": "user", "content": "a"}]}
    records = [
        {"request": {"body": body}, "response": streamed},
        {"request": {"body": {"messages": [{"role": "user", "content": "b"}]}}, "response": chat},
    ]  # fmt: skip
    text = "\n".join(json.dumps(r) for r in records)
    first = load_text(text, request=1)
    assert first.preamble == (
        ("system prompt", "be brief"),
        ("tool definitions (1)", '[{"input_schema":{"type":"object"},"name":"Bash"}]'),
    )
    assert first.request_usage is not None and first.request_usage.prompt_tokens == 93
    last = load_text(text)
    assert last.preamble == () and last.request_usage is not None
    assert (last.request_usage.prompt_tokens, last.request_usage.output_tokens) == (50, 7)


def test_the_compacted_sample_carries_attachments_usage_and_its_compaction() -> None:
    s = load(path("claude_code_compacted.jsonl"))
    assert [(i, m.attachment) for i, m in enumerate(s.messages) if m.kind == "attachment"] == [
        (0, "skill_listing"),
        (16, "file"),
        (17, "task_reminder"),
    ]
    assert s.messages[16].text.startswith("   1\timport time")  # the re-read file's content
    assert [c.to_dict() for c in s.compactions] == [
        {"index": 14, "kind": "compact", "trigger": "auto", "pre_tokens": 16194, "post_tokens": 343}
    ]
    assert s.messages[15].is_compact_summary and s.metadata["version"] == "2.1.40"
    usage = reported_usage(s.messages)
    assert usage is not None and (usage.responses, usage.latest_prompt_tokens) == (8, 15734)


def test_a_codex_compaction_brings_its_replacement_history_as_the_new_context() -> None:
    said = [{"type": "input_text", "text": "fix the login page"}]
    kept = {"type": "message", "role": "user", "content": said}
    summary = {"type": "compaction", "id": "cmp_1", "encrypted_content": "REDACTED"}
    lines = [
        _codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        _codex("compacted", message="", replacement_history=[kept, summary]),
    ]
    s = load_text("\n".join(lines))
    assert [(m.kind, m.text) for m in s.messages] == [
        ("message", "go"),
        ("marker", "auto compaction · before: not recorded → after: not measured"),
        ("message", "fix the login page"),
        ("summary", "[the compaction's summary: encrypted, not in the rollout]"),
    ]


def test_a_sub_agents_own_file_is_its_conversation_not_a_sidechain() -> None:
    lines = [
        _cc_line("user", isSidechain=True, message={"role": "user", "content": "explore the repo"}),
        _cc_line(
            "assistant",
            isSidechain=True,
            message={
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": "It is a parser."}],
            },
        ),
    ]
    s = load_text("\n".join(lines))
    assert [m.text for m in s.messages] == ["explore the repo", "It is a parser."] and s.sidechain == ()


def test_lines_appended_to_a_claude_code_file_read_as_the_whole_file_would() -> None:
    """Follow mode's incremental entry: the compaction in the new lines sits after the
    messages read before, and the new lines (whose first parent is in the part read
    before) do not make the session a slice."""
    lines = path("claude_code_compacted.jsonl").read_text().splitlines(keepends=True)
    whole = load_text("".join(lines), "s.jsonl")
    head = load_text("".join(lines[:10]), "s.jsonl")
    grown = CATALOGUE.formats.appended(head, "".join(lines[10:]), 11)
    assert grown is not None
    assert [(m.role, m.text, m.line) for m in grown.messages] == [
        (m.role, m.text, m.line) for m in whole.messages
    ]
    assert [c.index for c in grown.compactions] == [c.index for c in whole.compactions] != []
    assert "slice" not in grown.metadata and "slice" not in whole.metadata
    assert grown.content_hash is None  # no longer a file's bytes read whole
    assert CATALOGUE.formats.appended(load(path("codex_rollout.jsonl")), "", 1) is None  # read whole again


def test_codex_compactions_without_a_recorded_history_stay_linear_in_the_file() -> None:
    """Each local compaction puts back Codex's initial context: the one before the first
    prompt, not every copy an earlier compaction put back (20 such lines took 48 s and
    1.6 GB: each doubled the history)."""
    meta = {"type": "session_meta", "payload": {"id": "x", "cwd": "/w", "cli_version": "0.140.0"}}
    context = {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "rules"}],
        },
    }
    compacted = {"type": "compacted", "payload": {"message": "what happened"}}
    lines = [json.dumps(meta), json.dumps(context), *[json.dumps(compacted)] * 200]
    session = load_text("\n".join(lines), "rollout.jsonl")
    # each: the boundary, the initial context again, the summary (no prompt to keep)
    assert len(session.messages) == 1 + 3 * 200 and len(session.compactions) == 200
    assert [m.text for m in session.messages[-3:]][1:] == ["rules", "what happened"]
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection

    found = Inspection.of(session, Config(CATALOGUE)).own_compactions()
    # what came back after each: up to the next compaction, not the rest of the file
    assert [c.after for c in found[:2]] == [(2, 4), (5, 7)] and found[-1].after == (599, 601)


def test_a_slice_takes_its_overhead_only_from_a_session_of_its_project_model_and_version(
    tmp_path: Path,
) -> None:
    """A slice's system prompt and tools are not in the file: a complete session beside
    it lends them, but only one of the same project, model and agent version (a mixed
    folder holds others, whose overhead is another's)."""
    from compaction_inspector.core.measuring.slices import sibling_overhead
    from compaction_inspector.core.measuring.tokens import make_counter

    def session(name: str, cwd: str, model: str, version: str, prompt: int, parent: str | None) -> Path:
        base = {"cwd": cwd, "version": version, "sessionId": name}
        lines = [
            {**base, "type": "user", "uuid": f"{name}-u", "parentUuid": parent,
             "message": {"role": "user", "content": "go"}},
            {**base, "type": "assistant", "uuid": f"{name}-a", "parentUuid": f"{name}-u",
             "message": {"id": f"{name}-m", "role": "assistant", "model": model,
                         "content": [{"type": "text", "text": "ok"}],
                         "usage": {"input_tokens": prompt, "output_tokens": 1}}},
        ]  # fmt: skip
        out = tmp_path / f"{name}.jsonl"
        out.write_text("\n".join(json.dumps(line) for line in lines))
        return out

    sliced = load(session("slice", "/p/a", "claude-sonnet-4-5", "2.1.63", 90_000, "not-in-this-file"))
    assert sliced.metadata.get("slice") is True
    counter = make_counter("chars4")
    session("other-project", "/p/b", "claude-sonnet-4-5", "2.1.63", 30_000, None)
    session("other-model", "/p/a", "claude-opus-4-6", "2.1.63", 31_000, None)
    session("other-version", "/p/a", "claude-sonnet-4-5", "2.0.76", 32_000, None)
    assert sibling_overhead(sliced, counter, 1.0, load_text) is None
    session("same", "/p/a", "claude-sonnet-4-5", "2.1.63", 20_000, None)
    found = sibling_overhead(sliced, counter, 1.0, load_text)
    assert found is not None and found[0] == 20_000 - 1 and "same.jsonl" in found[1]


IDLE_NOTE = "Compacted while idle"


def newest_lines() -> list[str]:
    """A Claude Code session of the newest kind: a session-memory compaction that kept
    the last exchange, then an idle one."""

    def line(uuid: str, kind: str, **fields: object) -> str:
        return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s", **fields})

    def reply(uuid: str, text: str, prompt: int) -> str:
        usage = {"input_tokens": prompt, "output_tokens": 5}
        body = {
            "id": f"msg-{uuid}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": usage,
        }
        return line(uuid, "assistant", message=body)

    meta = {
        "trigger": "auto",
        "preTokens": 170_000,
        "postTokens": 31_000,
        "durationMs": 41_250,
        "preCompactDiscoveredTools": ["mcp__db__query", "WebFetch"],
        "cumulativeDroppedTokens": 139_000,
        "preservedSegment": {"headUuid": "u3", "anchorUuid": "summary", "tailUuid": "a3"},
        "someFieldFromTheFuture": {"x": 1},
    }
    lines = [
        line("u1", "user", message={"role": "user", "content": "old work"}),
        reply("a1", "done", 1_000),
        line("u3", "user", message={"role": "user", "content": "recent question"}),
        reply("a3", "recent answer", 160_000),
        line(
            "b", "system", subtype="compact_boundary", content="Conversation compacted", compactMetadata=meta
        ),
        line("summary", "user", isCompactSummary=True, message={"role": "user", "content": "the summary"}),
        line("u5", "user", message={"role": "user", "content": "next"}),
        reply("a5", "ok", 31_500),
        line("b2", "system", subtype="compact_boundary", compactMetadata={"trigger": "auto"}),
        line("n", "system", subtype="informational", content=f"{IDLE_NOTE}, before the prompt cache expired"),
    ]
    return lines


def test_the_newest_compaction_metadata_is_read_and_kept_messages_follow_the_summary() -> None:
    """Claude Code 2.1.17x+ writes how long a compaction took, the deferred tools it kept,
    what its compactions dropped so far and, for a session-memory compaction, the recent
    messages it kept (`preservedSegment`): the file holds those only before the boundary;
    read back, they follow the summary, as copies that stand for them and report nothing.
    An idle compaction (2.1.286) is an automatic boundary followed by its note ("Compacted
    while idle", as the changelog words it; the line's own form is not published, so its
    text is what is read); unknown fields are read without failing."""
    lines = newest_lines()
    session = load_text("\n".join(lines), "s.jsonl")
    first, idle = session.compactions
    assert [m.text for m in session.messages if not m.is_compact_boundary] == [
        "old work", "done", "recent question", "recent answer",
        "the summary", "recent question", "recent answer", "next", "ok",
    ]  # fmt: skip
    kept = session.messages[6:8]
    assert [m.replaces for m in kept] == [(session.messages[2],), (session.messages[3],)]
    assert kept[1].usage is None and first.index == 4 and idle.index == 10
    assert reported_usage(session.messages) is not None
    assert first.to_dict() == {
        "index": 4,
        "kind": "compact",
        "trigger": "auto",
        "pre_tokens": 170_000,
        "post_tokens": 31_000,
        "duration_ms": 41_250,
        "preserved_segment": ["u3", "a3"],
        "discovered_tools": ["mcp__db__query", "WebFetch"],
        "cumulative_dropped_tokens": 139_000,
    }
    assert idle.trigger == "idle"
    assert session.messages[idle.index].text.startswith("idle compaction")
    # the note names only the compaction before it, and only before its next response
    answer = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 9}}
    response = json.dumps({"type": "assistant", "uuid": "a6", "sessionId": "s", "message": answer})
    late = [*lines[:-1], response, lines[-1]]
    assert load_text("\n".join(late), "s.jsonl").compactions[-1].trigger == "auto"


def test_a_rollout_line_whose_type_is_not_a_name_is_skipped_and_said() -> None:
    """A line whose `type` is an object, not a name, is reported and skipped; the rest reads."""
    lines = [
        _codex("session_meta", id="s", cli_version="0.142.0"),
        json.dumps({"type": {"nested": True}, "payload": {}}),
        _codex("response_item", type="message", role="user", content=[{"type": "input_text", "text": "hi"}]),
    ]
    session = load_text("\n".join(lines), "rollout.jsonl")
    assert [m.text for m in session.messages] == ["hi"]
    assert any("{'nested': True}" in d.message for d in session.diagnostics)


def test_a_session_whose_compaction_kept_messages_is_written_with_each_line_its_own() -> None:
    """Written back, the kept messages after the summary are lines of their own (a uuid
    each), so the file reads back to the same messages."""
    from compaction_inspector.core.reporting.export import serialize

    session = load_text("\n".join(newest_lines()), "s.jsonl")
    recorded = {c.index: c for c in session.compactions}
    text, fmt = serialize(CATALOGUE.formats, session.messages, session.format, session.metadata, recorded)
    records = [json.loads(line) for line in text.splitlines()]
    uuids = [r["uuid"] for r in records]
    assert fmt == "claude-code" and len(uuids) == len(set(uuids)) == len(session.messages)
    again = load_text(text, "again.jsonl")
    assert [(m.role, m.text) for m in again.messages] == [(m.role, m.text) for m in session.messages]


def test_claude_code_keeps_the_plan_a_prompt_carries_out() -> None:
    lines = [
        _cc_line(
            "user",
            message={"role": "user", "content": "Implement the following plan: ..."},
            planContent="# Plan",
        ),
        _cc_line("user", message={"role": "user", "content": "and then"}),
    ]
    assert [m.plan for m in load_text("\n".join(lines)).messages] == ["# Plan", None]

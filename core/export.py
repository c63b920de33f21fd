"""Write a (compacted) message list back out: in the transcript's own format where that
is possible (Claude Code JSONL, Anthropic body, OpenAI chat body), else plain JSON.

A response's usage is what it reported of the prompt it was sent, so it is written where
that prompt is unchanged: up to the first message a compaction changed. There a compact
boundary marks the compaction (its figures before and after), and the usage after it,
which reported the uncompacted prompt, is left out: reopened, the figures after the
mark say they are estimates."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compaction_inspector.core.model import Block, Compaction, Message


def anthropic_block(block: Block) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "tool_result":
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": block.text,
        }
        if block.is_error:
            out["is_error"] = True
        return out
    return {"type": block.type}


# What a session says of itself that its figures depend on (its agent's window, prices,
# tokenizer): written with the messages so a written file, reopened, is read the same way.
SESSION_KEYS = ("session_id", "agent", "model", "version", "cwd", "context_window")


def plain_message(
    m: Message, compaction: Compaction | None = None, metadata: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": [anthropic_block(b) for b in m.blocks]}
    if m.role == "assistant" and m.id:
        out["id"] = m.id
    model = _model(m, metadata or {})
    if m.role == "assistant" and model:
        out["model"] = model
    if m.usage is not None:
        out["usage"] = m.usage.to_dict()
    if m.is_meta:
        out["meta"] = True
    if compaction is not None:
        out["compact_boundary"] = {
            "trigger": compaction.trigger,
            "pre_tokens": compaction.pre_tokens,
            "post_tokens": compaction.post_tokens,
        }
    return out


def _model(m: Message, metadata: Mapping[str, Any]) -> str | None:
    """The model that answered: the response's own, else the session's."""
    named = m.usage.model if m.usage is not None and m.usage.model else metadata.get("model")
    return named if isinstance(named, str) else None


def session_record(metadata: Mapping[str, Any], source_format: str) -> dict[str, Any]:
    """The session's own facts for a plain file (`SESSION_KEYS`), the agent by its format."""
    facts = {**metadata, "agent": source_format}
    return {k: facts[k] for k in SESSION_KEYS if isinstance(facts.get(k), str | int) and facts[k] != ""}


def marked(
    kept: Sequence[Message], original: Sequence[Message], strategy: str, before: int, after: int
) -> tuple[list[Message], Compaction | None]:
    """`kept` with a compact boundary where it first differs from `original` (None: it
    does not) and no usage after it: the responses there reported the uncompacted prompt."""
    first = next((i for i, (k, o) in enumerate(zip(kept, original, strict=False)) if k is not o), None)
    if first is None and len(kept) == len(original):
        return list(kept), None
    first = min(len(kept), len(original)) if first is None else first
    text = f"compacted by compaction-inspector ({strategy}): {before:,} → {after:,}"
    boundary = Message("system", (Block("text", text=text),), is_compact_boundary=True)
    rest = [replace(m, usage=None) if m.usage is not None else m for m in kept[first:]]
    return [*kept[:first], boundary, *rest], Compaction(first, "manual", before, after)


def _openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": b.input_json or "{}"},
                }
                for b in m.blocks
                if b.type == "tool_use"
            ]
            text = "\n".join(b.text for b in m.blocks if b.type == "text")
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif m.is_tool_result:
            out += [{"role": "tool", "tool_call_id": b.tool_use_id, "content": b.text} for b in m.blocks]
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def _claude_code_lines(
    messages: Sequence[Message], metadata: Mapping[str, Any], compactions: Mapping[int, Compaction]
) -> str:
    lines = []
    parent: str | None = None
    for i, m in enumerate(messages):
        line_uuid = m.uuid or str(uuid.uuid4())
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "sessionId": metadata.get("session_id"),
            "uuid": line_uuid,
            "timestamp": m.timestamp,
        }
        for key, name in (("version", "version"), ("cwd", "cwd")):  # its window and project depend on these
            if isinstance(metadata.get(name), str):
                record[key] = metadata[name]
        if m.is_compact_boundary:
            record.update(type="system", subtype="compact_boundary", content=m.text)
            c = compactions.get(i)
            if c is not None:
                record["compactMetadata"] = {"trigger": c.trigger, "preTokens": c.pre_tokens}
                if c.post_tokens is not None:
                    record["compactMetadata"]["postTokens"] = c.post_tokens
        else:
            body: dict[str, Any] = {
                "role": m.role,
                "content": [anthropic_block(b) for b in m.blocks],
            }
            if m.role == "assistant":
                body["id"] = m.id
                model = _model(m, metadata)
                if model:
                    body["model"] = model
                if m.usage is not None:
                    body["usage"] = m.usage.to_dict()
                if m.request_id is not None:
                    record["requestId"] = m.request_id
            record.update(type="assistant" if m.role == "assistant" else "user", message=body)
            if m.is_meta:
                record["isMeta"] = True
            if m.is_compact_summary:
                record["isCompactSummary"] = True
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        parent = line_uuid
    return "\n".join(lines) + "\n"


def serialize(
    messages: Sequence[Message],
    source_format: str,
    metadata: Mapping[str, Any],
    compactions: Mapping[int, Compaction] | None = None,
) -> tuple[str, str]:
    """The text to write and the format it is in; `compactions`: the recorded figures of
    the compact boundaries among `messages`, by index."""
    compactions = compactions or {}
    if source_format == "claude-code":
        return _claude_code_lines(messages, metadata, compactions), "claude-code"
    if source_format == "anthropic":
        body: dict[str, Any] = {
            "messages": [
                {
                    "role": "assistant" if m.role == "assistant" else "user",
                    "content": [anthropic_block(b) for b in m.blocks],
                }
                for m in messages
                if m.role != "system"
            ]
        }
        if metadata.get("model"):
            body = {"model": metadata["model"], **body}
        if metadata.get("system"):
            body["system"] = metadata["system"]
        return json.dumps(body, ensure_ascii=False, indent=2) + "\n", "anthropic"
    if source_format == "openai-chat":
        return json.dumps(
            {"messages": _openai_messages(messages)}, ensure_ascii=False, indent=2
        ) + "\n", "openai-chat"
    # a bare list: `{"messages": …}` reads as a request body, which has no per-message usage
    written = [plain_message(m, compactions.get(i), metadata) for i, m in enumerate(messages)]
    if written:
        written[0]["session"] = session_record(metadata, source_format)
    return json.dumps(written, ensure_ascii=False, indent=2) + "\n", "plain"


__all__ = ["anthropic_block", "marked", "plain_message", "serialize"]

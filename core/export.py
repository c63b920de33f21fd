"""Write a (compacted) message list back out: in the transcript's own format where that
is possible (Claude Code JSONL, Anthropic body, OpenAI chat body), else plain JSON."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from compaction_inspector.core.model import Block, Message


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


def plain_message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": [anthropic_block(b) for b in m.blocks]}
    if m.role == "assistant" and m.id:
        out["id"] = m.id
    if m.is_meta:
        out["meta"] = True
    return out


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


def _claude_code_lines(messages: Sequence[Message], metadata: Mapping[str, Any]) -> str:
    lines = []
    parent: str | None = None
    for m in messages:
        line_uuid = m.uuid or str(uuid.uuid4())
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "sessionId": metadata.get("session_id"),
            "uuid": line_uuid,
            "timestamp": m.timestamp,
        }
        if m.is_compact_boundary:
            record.update(type="system", subtype="compact_boundary", content=m.text)
        else:
            body: dict[str, Any] = {
                "role": m.role,
                "content": [anthropic_block(b) for b in m.blocks],
            }
            if m.role == "assistant":
                body["id"] = m.id
            record.update(type="assistant" if m.role == "assistant" else "user", message=body)
            if m.is_meta:
                record["isMeta"] = True
            if m.is_compact_summary:
                record["isCompactSummary"] = True
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        parent = line_uuid
    return "\n".join(lines) + "\n"


def serialize(
    messages: Sequence[Message], source_format: str, metadata: Mapping[str, Any]
) -> tuple[str, str]:
    """The text to write and the format it is in."""
    if source_format == "claude-code":
        return _claude_code_lines(messages, metadata), "claude-code"
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
    return json.dumps(
        {"messages": [plain_message(m) for m in messages]}, ensure_ascii=False, indent=2
    ) + "\n", "plain"


__all__ = ["anthropic_block", "plain_message", "serialize"]

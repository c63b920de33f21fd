"""Anthropic Messages API request bodies (`system`, `messages`, `tools`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compaction_inspector.core.formats.common import SyntheticIds, as_list, as_str, parse_content, result_text
from compaction_inspector.core.model import Block, Compaction, Message, Role

FORMAT = "anthropic"
PROVIDER = "anthropic"  # whose prices its responses are billed at
_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image"})


def looks_like(body: dict[str, Any]) -> bool:
    """A body in Anthropic's shape: its own top-level fields or its own block types.
    (Checked after the OpenAI shape, which also has `max_tokens`.)"""
    if "system" in body or "max_tokens" in body:
        return True
    return any(
        isinstance(block, dict) and isinstance(block.get("type"), str) and block["type"] in _BLOCK_TYPES
        for m in _messages(body)
        for block in as_list(m.get("content"))
    )


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def system_text(body: dict[str, Any]) -> str:
    return result_text(body.get("system"))


def messages(body: dict[str, Any], line: int | None = None) -> tuple[list[Message], dict[str, Any]]:
    ids = SyntheticIds()
    out: list[Message] = []
    for raw in _messages(body):
        role: Role = "assistant" if raw.get("role") == "assistant" else "user"
        out.append(
            Message(
                role=role,
                blocks=parse_content(raw.get("content")),
                id=(as_str(raw.get("id")) or ids.next()) if role == "assistant" else None,
                line=line,
            )
        )
    metadata: dict[str, Any] = {}
    if isinstance(body.get("model"), str):
        metadata["model"] = body["model"]
    if body.get("system"):
        metadata["system"] = system_text(body)
    if isinstance(body.get("tools"), list):
        metadata["tools"] = len(body["tools"])
    return out, metadata


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


def write(
    messages: Sequence[Message], metadata: Mapping[str, Any], compactions: Mapping[int, Compaction]
) -> str:
    """A request body of the messages (the unsent system lines left out)."""
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
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"

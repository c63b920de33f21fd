"""OpenAI chat-completions bodies: `messages` with `tool_calls` and `role: "tool"`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compaction_inspector.core.formats.common import (
    SyntheticIds,
    as_dict,
    as_list,
    as_str,
    result_text,
    tool_arguments,
)
from compaction_inspector.core.model import Block, Compaction, Message

FORMAT = "openai-chat"
PROVIDER = "openai"  # whose prices its responses are billed at


def looks_like(body: dict[str, Any]) -> bool:
    raw = body.get("messages")
    return isinstance(raw, list) and any(
        isinstance(m, dict) and ("tool_calls" in m or m.get("role") in ("tool", "function", "developer"))
        for m in raw
    )


def _parts(content: Any) -> tuple[Block, ...]:
    if content is None or content == "":
        return ()
    if isinstance(content, list):
        blocks = []
        for part in content:
            if isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                blocks.append(Block("image"))
            elif isinstance(part, dict):
                blocks.append(Block("text", text=as_str(part.get("text", part))))
            else:
                blocks.append(Block("text", text=as_str(part)))
        return tuple(blocks)
    return (Block("text", text=as_str(content)),)


def messages(body: dict[str, Any], line: int | None = None) -> tuple[list[Message], dict[str, Any]]:
    ids = SyntheticIds()
    out: list[Message] = []
    raw_messages = body.get("messages")
    for raw in raw_messages if isinstance(raw_messages, list) else []:
        if not isinstance(raw, dict):
            continue
        role = raw.get("role")
        if role in ("system", "developer"):
            out.append(Message(role="system", blocks=_parts(raw.get("content")), line=line))
        elif role == "assistant":
            blocks = list(_parts(raw.get("content")))
            for call in as_list(raw.get("tool_calls")):
                if not isinstance(call, dict):
                    continue
                function = as_dict(call.get("function"))
                blocks.append(
                    Block.tool_use(
                        as_str(call.get("id")),
                        as_str(function.get("name")),
                        tool_arguments(function.get("arguments")),
                    )
                )
            out.append(
                Message(
                    role="assistant",
                    blocks=tuple(blocks),
                    id=as_str(raw.get("id")) or ids.next(),
                    line=line,
                )
            )
        elif role in ("tool", "function"):
            tool_id = as_str(raw.get("tool_call_id") or raw.get("name"))
            out.append(
                Message(
                    role="tool",
                    blocks=(Block.tool_result(tool_id, result_text(raw.get("content"))),),
                    line=line,
                )
            )
        else:
            out.append(Message(role="user", blocks=_parts(raw.get("content")), line=line))
    metadata: dict[str, Any] = {}
    if isinstance(body.get("model"), str):
        metadata["model"] = body["model"]
    return out, metadata


def _messages_out(messages: Sequence[Message]) -> list[dict[str, Any]]:
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


def write(
    messages: Sequence[Message], metadata: Mapping[str, Any], compactions: Mapping[int, Compaction]
) -> str:
    """A request body of the messages, tool calls and results as chat completions holds them."""
    return json.dumps({"messages": _messages_out(messages)}, ensure_ascii=False, indent=2) + "\n"

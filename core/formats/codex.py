"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`).

Each `response_item` is one message here. Consecutive assistant-side items (reasoning,
assistant text, tool calls) are one API response and share a synthetic id. The usage of
a `token_count` event belongs to the response it precedes or is written inside.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from compaction_inspector.core.formats.common import (
    Records,
    Skipped,
    SyntheticIds,
    as_dict,
    as_str,
    iter_dicts,
    tool_arguments,
)
from compaction_inspector.core.model import Block, Message, Session, Usage

FORMAT = "codex"
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return isinstance(kind, str) and kind in LINE_TYPES and "payload" in record


def _text_parts(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block("text", text=content),)
    blocks = []
    for part in content if isinstance(content, list) else []:
        part = as_dict(part)
        if part.get("type") in ("input_image", "image"):
            blocks.append(Block("image"))
        else:
            blocks.append(Block("text", text=as_str(part.get("text"))))
    return tuple(blocks)


def _output_text(raw: Any) -> str:
    if isinstance(raw, dict):
        return as_str(raw.get("content", raw))
    return as_str(raw)


def _usage(info: Any) -> Usage | None:
    last = as_dict(as_dict(info).get("last_token_usage"))
    if not last:
        return None

    def number(key: str) -> int:
        value = last.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached = number("cached_input_tokens")
    return Usage(
        input_tokens=max(0, number("input_tokens") - cached),
        cache_read_input_tokens=cached,
        output_tokens=number("output_tokens"),
    )


def load(records: Records, path: str | None) -> Session:
    messages: list[Message] = []
    skipped = Skipped()
    ids = SyntheticIds("response")
    metadata: dict[str, Any] = {}
    response_id: str | None = None  # the open assistant response, if any
    pending_usage: Usage | None = None

    def assistant(number: int, blocks: tuple[Block, ...]) -> None:
        nonlocal response_id, pending_usage
        if response_id is None:
            response_id = ids.next()
        messages.append(
            Message(role="assistant", blocks=blocks, id=response_id, line=number, usage=pending_usage)
        )
        pending_usage = None

    for number, record in iter_dicts(records):
        kind = record.get("type")
        payload = as_dict(record.get("payload"))
        if kind == "session_meta":
            for key, name in (("id", "session_id"), ("cwd", "cwd"), ("cli_version", "version")):
                if isinstance(payload.get(key), str):
                    metadata.setdefault(name, payload[key])
            continue
        if kind == "turn_context":
            if isinstance(payload.get("model"), str):
                metadata["model"] = payload["model"]
            continue
        if kind == "event_msg":
            if payload.get("type") == "token_count" and payload.get("info"):
                usage = _usage(payload.get("info"))
                if response_id is not None and messages and messages[-1].usage is None:
                    messages[-1] = replace(messages[-1], usage=usage)
                else:
                    pending_usage = usage
            else:
                skipped.add(f"event_msg/{payload.get('type')}")
            continue
        if kind == "compacted":
            response_id = None
            messages.append(
                Message(
                    role="system",
                    blocks=(Block("text", text="Conversation compacted (codex)"),),
                    line=number,
                    is_compact_boundary=True,
                )
            )
            messages.append(
                Message(
                    role="user",
                    blocks=(Block("text", text=as_str(payload.get("message"))),),
                    line=number,
                    is_compact_summary=True,
                )
            )
            continue
        if kind != "response_item":
            skipped.add(str(kind))
            continue
        item = payload.get("type")
        if item == "message":
            role = payload.get("role")
            blocks = _text_parts(payload.get("content"))
            if role == "assistant":
                assistant(number, blocks)
                continue
            response_id = None
            text = blocks[0].text if blocks else ""
            messages.append(
                Message(
                    role="system" if role in ("developer", "system") else "user",
                    blocks=blocks,
                    line=number,
                    is_meta=text.lstrip().startswith(_INJECTED_PREFIXES),
                )
            )
        elif item == "reasoning":
            summary = "\n".join(as_str(as_dict(part).get("text")) for part in payload.get("summary") or [])
            assistant(number, (Block("thinking", text=summary),))
        elif item in ("function_call", "custom_tool_call", "local_shell_call"):
            name = as_str(payload.get("name")) or "local_shell"
            raw = payload.get("arguments", payload.get("input", payload.get("action")))
            assistant(number, (Block.tool_use(as_str(payload.get("call_id")), name, tool_arguments(raw)),))
        elif item in ("function_call_output", "custom_tool_call_output"):
            response_id = None
            messages.append(
                Message(
                    role="user",
                    blocks=(
                        Block.tool_result(
                            as_str(payload.get("call_id")), _output_text(payload.get("output"))
                        ),
                    ),
                    line=number,
                )
            )
        elif item == "web_search_call":
            query = as_str(as_dict(payload.get("action")).get("query"))
            assistant(number, (Block("text", text=f"[web search: {query}]"),))
        else:
            skipped.add(f"response_item/{item}")
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=(*records.diagnostics, *skipped.diagnostics()),
    )

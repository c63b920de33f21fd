"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`).

Each `response_item` is one message here. Consecutive assistant-side items (reasoning,
assistant text, tool calls) are one API response and share a synthetic id. A
`token_count` event reports the sampling request just finished: newer rollouts write it
after that response's items, older ones before them and again after (the repeat, with
the same running total, is ignored). The one right after a `compacted` line is the
context the compaction left (docs/pressure.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from compaction_inspector.core.formats.common import (
    Records,
    Skipped,
    SyntheticIds,
    as_dict,
    as_list,
    as_str,
    count,
    iter_dicts,
    name_compactions,
    tool_arguments,
)
from compaction_inspector.core.model import Block, Compaction, Message, Session, Usage, text_message

FORMAT = "codex"
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
# what stands for a compaction's summary that the rollout keeps encrypted
ENCRYPTED_SUMMARY = "[the compaction's summary: encrypted, not in the rollout]"
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


def _sent(role: Any, blocks: tuple[Block, ...], number: int) -> Message:
    """A message the user side sent: typed, or injected (environment, instructions)."""
    text = blocks[0].text if blocks else ""
    return Message(
        role="system" if role in ("developer", "system") else "user",
        blocks=blocks,
        line=number,
        is_meta=text.lstrip().startswith(_INJECTED_PREFIXES),
    )


def _replacement(item: dict[str, Any], number: int) -> Message:
    """An item of a compaction's `replacement_history`: a kept message, or the summary
    (a `compaction` item, whose content may be encrypted)."""
    if item.get("type") == "compaction" or item.get("role") == "assistant":
        text = as_str(item.get("summary") or item.get("content")) if item.get("type") != "compaction" else ""
        summary = text or ENCRYPTED_SUMMARY
        return text_message("user", summary, line=number, is_compact_summary=True)
    return _sent(item.get("role"), _text_parts(item.get("content")), number)


def _encrypted_tokens(content: Any) -> int:
    """What an encrypted item stands for, as Codex estimates it (docs/agents.md): the
    decoded bytes (3/4 of the base64, less 650 of overhead), 4 to a token."""
    if not isinstance(content, str):
        return 0
    return max(0, len(content) * 3 // 4 - 650) // 4


def _output_text(raw: Any) -> str:
    if isinstance(raw, dict):
        return as_str(raw.get("content", raw))
    return as_str(raw)


def _usage(info: Any) -> Usage | None:
    last = as_dict(as_dict(info).get("last_token_usage"))
    if not last:
        return None

    def number(key: str) -> int:
        return count(last.get(key)) or 0

    cached = number("cached_input_tokens")
    return Usage(
        input_tokens=max(0, number("input_tokens") - cached),
        cache_read_input_tokens=cached,
        output_tokens=number("output_tokens"),
    )


def _total(info: Any) -> Any:
    """The running total a token_count carries: the same again is a repeat."""
    return as_dict(info).get("total_token_usage")


def load(records: Records, path: str | None) -> Session:
    messages: list[Message] = []
    skipped = Skipped()
    ids = SyntheticIds("response")
    metadata: dict[str, Any] = {}
    compactions: list[Compaction] = []
    response_id: str | None = None  # the open assistant response, if any
    last_response = -1  # index of the last assistant message
    pending_usage: Usage | None = None  # reported before the response it belongs to
    reported: set[str] = set()  # responses that have their usage
    last_total: Any = None
    last_prompt: int | None = None  # the context last reported: a compaction's "before"
    # a compaction run as a turn of its own, with no user message, is a manual /compact
    turn, turns_with_user = 0, set()
    compaction_turns: list[int] = []

    def assistant(number: int, blocks: tuple[Block, ...]) -> None:
        nonlocal response_id, pending_usage, last_response
        if response_id is None:
            response_id = ids.next()
        messages.append(
            Message(role="assistant", blocks=blocks, id=response_id, line=number, usage=pending_usage)
        )
        if pending_usage is not None:
            reported.add(response_id)
        pending_usage = None
        last_response = len(messages) - 1

    def token_count(info: Any) -> None:
        nonlocal pending_usage, last_total, last_prompt
        window = count(info.get("model_context_window"))
        if window:
            metadata["context_window"] = window
        usage = _usage(info)
        if usage is None:
            return
        after = count(as_dict(info.get("last_token_usage")).get("total_tokens"))
        if usage.prompt_tokens == 0:  # no request: the context a compaction left
            if compactions and compactions[-1].post_tokens is None and after is not None:
                compactions[-1] = replace(compactions[-1], post_tokens=after)
            return
        total = _total(info)
        if total is not None and total == last_total:
            return
        last_total = total
        last_prompt = after if after is not None else usage.prompt_tokens + usage.output_tokens
        last = messages[last_response] if last_response >= 0 else None
        if last is not None and last.id not in reported and pending_usage is None:
            messages[last_response] = replace(last, usage=usage)
            reported.add(str(last.id))
        else:
            pending_usage = usage

    stamped = 0  # messages before this have their line's time
    stamp: str | None = None

    def date_new() -> None:
        """The messages the last line made carry its time (the rollout times lines, not messages)."""
        nonlocal stamped
        if stamp is not None:
            for i in range(stamped, len(messages)):
                messages[i] = replace(messages[i], timestamp=stamp)
        stamped = len(messages)

    for number, record in iter_dicts(records):
        date_new()
        stamp = record["timestamp"] if isinstance(record.get("timestamp"), str) else None
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
                token_count(as_dict(payload.get("info")))
            elif payload.get("type") == "task_started":
                turn += 1
            elif payload.get("type") == "user_message":
                turns_with_user.add(turn)
            else:
                skipped.add(f"event_msg/{payload.get('type')}")
            continue
        if kind == "compacted":
            response_id = None
            history = payload.get("replacement_history")
            hidden = sum(
                _encrypted_tokens(item.get("encrypted_content"))
                for item in as_list(history)
                if isinstance(item, dict) and item.get("type") == "compaction"
            )
            compactions.append(Compaction(len(messages), "auto", last_prompt, hidden_tokens=hidden))
            compaction_turns.append(turn)
            messages.append(
                Message(
                    role="system",
                    blocks=(Block("text", text="compaction"),),  # named once what followed is read
                    line=number,
                    is_compact_boundary=True,
                )
            )
            if isinstance(history, list) and history:  # the new history, as the model gets it
                messages.extend(_replacement(item, number) for item in history if isinstance(item, dict))
            else:
                text = as_str(payload.get("message"))
                messages.append(text_message("user", text, line=number, is_compact_summary=True))
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
            messages.append(_sent(role, blocks, number))
        elif item == "reasoning":
            summary = "\n".join(as_str(as_dict(part).get("text")) for part in as_list(payload.get("summary")))
            assistant(number, (Block("thinking", text=summary),))
        elif item in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
            name = as_str(payload.get("name")) or (
                "tool_search" if item == "tool_search_call" else "local_shell"
            )
            raw = payload.get("arguments", payload.get("input", payload.get("action")))
            assistant(number, (Block.tool_use(as_str(payload.get("call_id")), name, tool_arguments(raw)),))
        elif item in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            response_id = None
            messages.append(
                Message(
                    role="user",
                    blocks=(
                        Block.tool_result(
                            as_str(payload.get("call_id")),
                            _output_text(payload.get("output", payload.get("tools"))),
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
    date_new()
    compactions = [
        replace(c, trigger="manual") if t > 0 and t not in turns_with_user else c
        for c, t in zip(compactions, compaction_turns, strict=True)
    ]
    name_compactions(messages, compactions)
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=(*records.diagnostics, *skipped.diagnostics()),
        compactions=tuple(compactions),
    )

"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`).

Each `response_item` is one message here. Consecutive assistant-side items (reasoning,
assistant text, tool calls) are one API response and share a synthetic id. A
`token_count` event reports the sampling request just finished: newer rollouts write it
after that response's items, older ones before them and again after (the repeat, with
the same running total, is ignored). The one right after a `compacted` line is the
context the compaction left (docs/pressure.md). Codex 0.154 and later also write a
`token_usage_record` for the compaction request itself, which the running total leaves
out; the `compacted` line names it (`compaction_response_id`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import orjson

from compaction_inspector.core.agents.codex import new_history
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
from compaction_inspector.core.model import (
    ENCRYPTED_SUMMARY,
    Block,
    Check,
    Compaction,
    Message,
    Reasoning,
    Session,
    Usage,
    immutable,
    text_message,
)

FORMAT = "codex"
DESCRIBED = "Codex rollout JSONL"
PROVIDER = "openai"  # whose prices its responses are billed at
LINE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "token_usage_record"}
)
# what Codex injects as a user message and does not count as the person's (its contextual
# fragments; matched as it matches them, ignoring case)
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<plugins>",
    "<subagents>",
    "<subagent_notification>",
)
# What Codex's count makes of an item it did not generate (docs/agents.md, `history.rs`):
# its JSON's bytes, a tool output first cut as history cuts it (1.2 x the default
# 10,000-token policy, 4 bytes a token), an inline image as a fixed size.
TOOL_OUTPUT_BYTES = 48_000
IMAGE_BYTES = 7_373
ENCRYPTION_OVERHEAD = 650  # bytes of an encrypted item that are not its content
_IMAGE_DATA = re.compile(rb'"data:image/[^";,]*;base64,([A-Za-z0-9+/=]*)"')
_MODEL_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "tool_search_call",
        "web_search_call",
        "image_generation_call",
        "compaction",
        "context_compaction",
    }
)
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})


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


def _sent(role: Any, blocks: tuple[Block, ...], number: int, stamp: str | None) -> Message:
    """A message the user side sent: typed, or injected (environment, instructions)."""
    text = blocks[0].text if blocks else ""
    return Message(
        role="system" if role in ("developer", "system") else "user",
        blocks=blocks,
        line=number,
        timestamp=stamp,
        is_meta=text.lstrip()[:32].lower().startswith(_INJECTED_PREFIXES),
    )


def _replacement(item: dict[str, Any], number: int, stamp: str | None) -> Message:
    """An item of a compaction's `replacement_history`: a kept message, or the summary
    (a `compaction` item, whose content may be encrypted)."""
    if item.get("type") == "compaction" or item.get("role") == "assistant":
        text = as_str(item.get("summary") or item.get("content")) if item.get("type") != "compaction" else ""
        summary = text or ENCRYPTED_SUMMARY
        return text_message("user", summary, line=number, timestamp=stamp, is_compact_summary=True)
    return _sent(item.get("role"), _text_parts(item.get("content")), number, stamp)


def _encrypted_tokens(content: Any) -> int | None:
    """What an encrypted item stands for, as Codex estimates it (docs/agents.md): the
    decoded bytes (3/4 of the base64, less 650 of overhead), 4 to a token, rounded up.
    None when the rollout does not hold it: absent, or a value no longer than the
    encryption's own overhead, which only a redaction leaves."""
    if not isinstance(content, str) or len(content) * 3 // 4 <= ENCRYPTION_OVERHEAD:
        return None
    return -(-(len(content) * 3 // 4 - ENCRYPTION_OVERHEAD) // 4)


def _is_model_item(payload: dict[str, Any]) -> bool:
    """An item the model generated: what the last response's total already counts."""
    kind = payload.get("type")
    if not isinstance(kind, str):  # a hostile file: no item at all
        return False
    return kind in _MODEL_ITEMS or (kind == "message" and payload.get("role") == "assistant")


def _is_output(payload: dict[str, Any]) -> bool:
    """A tool's output: the request after it is a follow-up."""
    kind = payload.get("type")
    return isinstance(kind, str) and kind in _OUTPUT_ITEMS


def _item_tokens(payload: dict[str, Any]) -> int:
    """Codex's estimate of an item it did not generate: ceil(bytes of its JSON / 4), a
    tool output cut to what history keeps and an inline image at its fixed size."""
    output = payload.get("output")
    if _is_output(payload) and isinstance(output, str):
        raw = output.encode()
        if len(raw) > TOOL_OUTPUT_BYTES:
            payload = {**payload, "output": raw[:TOOL_OUTPUT_BYTES].decode(errors="ignore")}
    try:
        data = orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits: a hostile file
        return 0
    size = len(data)
    for image in _IMAGE_DATA.finditer(data):
        size += IMAGE_BYTES - len(image.group(1))
    return -(-size // 4)


def _output_text(raw: Any) -> str:
    if isinstance(raw, dict):
        return as_str(raw.get("content", raw))
    return as_str(raw)


def _usage(info: Any) -> Usage | None:
    return _usage_of(as_dict(as_dict(info).get("last_token_usage")))


def _usage_of(last: dict[str, Any]) -> Usage | None:
    """One request's usage as Codex writes it (its input holds the cached part)."""
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
    return _Rollout().read(records, path)


@immutable()
class Opened:
    """The context window a compaction opens, counted from the first (0.142 and later)."""

    window: int

    def to_dict(self) -> dict[str, Any]:
        return {"window_number": self.window}

    def said(self) -> list[str]:
        return [f"opened context window {self.window:,}"]


class _Rollout:
    """A rollout read line by line: a method per kind of line (`session_meta`,
    `turn_context`, `event_msg`, `token_usage_record`, `compacted`, `response_item`),
    each adding to the messages, the usage, the compactions and Codex's own checks."""

    KINDS = LINE_TYPES

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.skipped = Skipped()
        self.ids = SyntheticIds("response")
        self.metadata: dict[str, Any] = {}
        self.compactions: list[Compaction] = []
        self.response_id: str | None = None  # the open assistant response, if any
        self.last_response = -1  # index of the last assistant message
        self.pending_usage: Usage | None = None  # reported before the response it belongs to
        self.reported: set[str] = set()  # responses that have their usage
        self.last_total: Any = None
        self.last_prompt: int | None = None  # the context last reported: a compaction's "before"
        # a compaction run as a turn of its own, with no user message, is a manual /compact
        self.turn = 0
        self.turns_with_user: set[int] = set()
        self.compaction_turns: list[int] = []
        # Codex's own count (docs/agents.md): where it checks it, and its terms there
        self.checks: list[Check] = []
        self.total: int | None = None  # the last response's total tokens
        self.since_model = 0  # Codex's estimate of the items recorded since the last model-generated one
        self.follow_up = False  # tool outputs were recorded: the next request is a follow-up
        self.reasoning_of: dict[str, int] = {}  # reported reasoning tokens, by response
        self.base_instructions: str | None = None  # the system prompt, where the rollout records it
        self.pending_hidden: int | None = None  # Codex's estimate after a compaction, less its unread item
        self.switched: int | None = None  # the model-switch check waiting for the new model's window
        self.pending_reasoning = 0  # reported before the response it belongs to
        self.recorded: dict[str, Usage] = {}  # `token_usage_record` lines, by response id
        self.stamp: str | None = None  # the line's time, which each message it makes carries

    def read(self, records: Records, path: str | None) -> Session:
        for number, record in iter_dicts(records):
            self.stamp = record["timestamp"] if isinstance(record.get("timestamp"), str) else None
            kind = record.get("type")
            payload = as_dict(record.get("payload"))
            if isinstance(kind, str) and kind in self.KINDS:
                getattr(self, str(kind))(number, payload)
            else:
                self.skipped.add(str(kind))
        if self.switched is not None:  # the new model never answered: its window is not known
            del self.checks[self.switched]
        if self.follow_up:  # tool outputs end it: Codex counts now, before the follow-up it sends next
            self._check("mid-turn")
        _attach_reasoning(self.messages, self.reasoning_of)
        compactions = [
            replace(c, trigger="manual") if t > 0 and t not in self.turns_with_user else c
            for c, t in zip(self.compactions, self.compaction_turns, strict=True)
        ]
        name_compactions(self.messages, compactions)
        return Session(
            messages=tuple(self.messages),
            format=FORMAT,
            path=path,
            metadata=self.metadata,
            diagnostics=(*records.diagnostics, *self.skipped.diagnostics()),
            compactions=tuple(compactions),
            checks=tuple(self.checks),
        )

    # --- each kind of line ---------------------------------------------------------------

    def session_meta(self, number: int, payload: dict[str, Any]) -> None:
        text = as_dict(payload.get("base_instructions")).get("text")
        self.base_instructions = text if isinstance(text, str) else self.base_instructions
        for key, name in (("id", "session_id"), ("cwd", "cwd"), ("cli_version", "version")):
            if isinstance(payload.get(key), str):
                self.metadata.setdefault(name, payload[key])

    def turn_context(self, number: int, payload: dict[str, Any]) -> None:
        model = payload.get("model")
        if isinstance(model, str):
            if self.metadata.get("model") not in (None, model) and self.total is not None:
                self.switched = len(self.checks)  # kept once the new model's window is known
                self.checks.append(Check(len(self.messages), "model switch", self.total, self.since_model))
            self.metadata["model"] = model

    def event_msg(self, number: int, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "token_count" and payload.get("info"):
            self._token_count(as_dict(payload.get("info")))
        elif kind == "task_started":
            self._check("pre-turn")  # before the turn records its context and the user's message
            self.follow_up = False
            self.turn += 1
        elif kind == "user_message":
            self.turns_with_user.add(self.turn)
        else:
            self.skipped.add(f"event_msg/{kind}")

    def token_usage_record(self, number: int, payload: dict[str, Any]) -> None:
        usage = _usage_of(as_dict(payload.get("usage")))
        if usage is not None and isinstance(payload.get("response_id"), str):
            self.recorded[payload["response_id"]] = usage

    def compacted(self, number: int, payload: dict[str, Any]) -> None:
        if self.follow_up:
            self._check("mid-turn")
        self.follow_up, self.response_id = False, None
        history = payload.get("replacement_history")
        kept = [entry for entry in as_list(history) if isinstance(entry, dict)]
        items = [entry for entry in kept if entry.get("type") == "compaction"]
        read = [_encrypted_tokens(entry.get("encrypted_content")) for entry in items]
        hidden = sum(r or 0 for r in read)
        # An item the rollout lacks (redacted, or left out where a remote compaction made
        # one) is in Codex's own estimate after it: what is left of that once the
        # instructions and the other items are taken off (`_token_count`).
        unread = None
        if (not read or None in read) and self.base_instructions is not None:
            others = sum(_item_tokens(entry) for entry in kept if entry.get("type") != "compaction")
            unread = hidden + new_history.approx_tokens(self.base_instructions) + others
        self.since_model = 0
        for entry in kept:
            self.since_model = 0 if _is_model_item(entry) else self.since_model + _item_tokens(entry)
        called = payload.get("compaction_response_id")
        embedded = as_dict(payload.get("latest_token_usage_record"))
        call = self.recorded.get(called) if isinstance(called, str) else None
        if call is None and isinstance(called, str) and embedded.get("response_id") == called:
            call = _usage_of(as_dict(embedded.get("usage")))
        if call is not None and isinstance(self.metadata.get("model"), str):
            call = replace(call, model=self.metadata["model"])
        messages = self.messages
        window = count(payload.get("window_number"))
        self.compactions.append(
            Compaction(
                len(messages), "auto", self.last_prompt, hidden_tokens=hidden, call=call,
                details=Opened(window) if window is not None else None,
            )
        )  # fmt: skip
        self.pending_hidden = unread
        self.compaction_turns.append(self.turn)
        stamp = self.stamp
        messages.append(
            Message(
                role="system",
                blocks=(Block("text", text="compaction"),),  # named once what followed is read
                line=number,
                timestamp=stamp,
                is_compact_boundary=True,
            )
        )
        if isinstance(history, list) and history:  # the new history, as the model gets it
            messages.extend(_replacement(item, number, stamp) for item in history if isinstance(item, dict))
        else:  # compacted locally, the new history unrecorded: Codex's rule makes it
            since = next((i for i in range(len(messages) - 2, -1, -1) if messages[i].is_compact_boundary), -1)
            made = [
                *new_history.initial_context(messages),
                *new_history.kept_user_messages(messages[since + 1 :], new_history.LOCAL_USER_TOKENS),
            ]
            messages.extend(
                replace(m, line=number, timestamp=stamp if stamp is not None else m.timestamp) for m in made
            )
            text = as_str(payload.get("message"))
            messages.append(text_message("user", text, line=number, timestamp=stamp, is_compact_summary=True))

    def response_item(self, number: int, payload: dict[str, Any]) -> None:
        item = payload.get("type")
        if _is_model_item(payload):
            if self.follow_up:  # the follow-up request: Codex checked its count before sending it
                self._check("mid-turn")
            self.follow_up, self.since_model = False, 0
        elif _is_output(payload) or (item == "message" and payload.get("role") != "system"):
            self.since_model += _item_tokens(payload)  # what Codex sends as an item (a system message is not)
            self.follow_up = self.follow_up or _is_output(payload)
        if item == "message":
            role = payload.get("role")
            blocks = _text_parts(payload.get("content"))
            if role == "assistant":
                self._assistant(number, blocks)
                return
            self.response_id = None
            self.messages.append(_sent(role, blocks, number, self.stamp))
        elif item == "reasoning":
            summary = "\n".join(as_str(as_dict(part).get("text")) for part in as_list(payload.get("summary")))
            encrypted = _encrypted_tokens(payload.get("encrypted_content"))
            self._assistant(number, (Block("thinking", text=summary),), Reasoning(encrypted))
        elif item in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
            name = as_str(payload.get("name")) or (
                "tool_search" if item == "tool_search_call" else "local_shell"
            )
            raw = payload.get("arguments", payload.get("input", payload.get("action")))
            self._assistant(
                number, (Block.tool_use(as_str(payload.get("call_id")), name, tool_arguments(raw)),)
            )
        elif item in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            self.response_id = None
            result = Block.tool_result(
                as_str(payload.get("call_id")), _output_text(payload.get("output", payload.get("tools")))
            )
            self.messages.append(Message(role="user", blocks=(result,), line=number, timestamp=self.stamp))
        elif item == "web_search_call":
            query = as_str(as_dict(payload.get("action")).get("query"))
            self._assistant(number, (Block("text", text=f"[web search: {query}]"),))
        else:
            self.skipped.add(f"response_item/{item}")

    # --- what several kinds share --------------------------------------------------------

    def _check(self, when: str) -> None:
        if self.total is not None:
            window = self.metadata.get("context_window")
            self.checks.append(
                Check(
                    len(self.messages),
                    when,
                    self.total,
                    self.since_model,
                    window if isinstance(window, int) else None,
                )
            )

    def _assistant(self, number: int, blocks: tuple[Block, ...], reasoning: Reasoning | None = None) -> None:
        if self.response_id is None:
            self.response_id = self.ids.next()
        self.messages.append(
            Message(
                role="assistant",
                blocks=blocks,
                id=self.response_id,
                line=number,
                timestamp=self.stamp,
                usage=self.pending_usage,
                reasoning=reasoning,
            )
        )
        if self.pending_usage is not None:
            self.reported.add(self.response_id)
            self.reasoning_of[self.response_id] = self.pending_reasoning
        self.pending_usage, self.pending_reasoning = None, 0
        self.last_response = len(self.messages) - 1

    def _token_count(self, info: dict[str, Any]) -> None:
        metadata, checks = self.metadata, self.checks
        window = count(info.get("model_context_window"))
        if window and self.switched is not None:  # Codex compacts on a switch only to a smaller window
            before = metadata.get("context_window")
            if isinstance(before, int) and window < before:
                checks[self.switched] = replace(checks[self.switched], window=window)
            else:
                del checks[self.switched]
            self.switched = None
        if window:
            metadata["context_window"] = window
        usage = _usage(info)
        if usage is None:
            return
        if isinstance(metadata.get("model"), str):
            usage = replace(usage, model=metadata["model"])
        last_usage = as_dict(info.get("last_token_usage"))
        after = count(last_usage.get("total_tokens"))
        compactions = self.compactions
        if usage.prompt_tokens == 0:  # no request: the context a compaction left
            if compactions and compactions[-1].post_tokens is None and after is not None:
                known = self.pending_hidden
                hidden = compactions[-1].hidden_tokens if known is None else max(0, after - known)
                compactions[-1] = replace(compactions[-1], post_tokens=after, hidden_tokens=hidden)
            self.pending_hidden = None
            self.total = after  # Codex counts from its own estimate until a response reports
            return
        running = _total(info)
        if running is not None and running == self.last_total:
            return
        self.last_total = running
        self.last_prompt = after if after is not None else usage.prompt_tokens + usage.output_tokens
        self.total = self.last_prompt
        thought = count(last_usage.get("reasoning_output_tokens")) or 0
        last = self.messages[self.last_response] if self.last_response >= 0 else None
        if last is not None and last.id not in self.reported and self.pending_usage is None:
            self.messages[self.last_response] = replace(last, usage=usage)
            self.reported.add(str(last.id))
            self.reasoning_of[str(last.id)] = thought
        else:
            self.pending_usage, self.pending_reasoning = usage, thought


def _attach_reasoning(messages: list[Message], reasoning_of: dict[str, int]) -> None:
    """Each response's reported reasoning tokens onto its last reasoning item."""
    last: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.reasoning is not None and m.id is not None:
            last[m.id] = i
    for response, i in last.items():
        thought = reasoning_of.get(response, 0)
        m = messages[i]
        if thought and m.reasoning is not None:
            messages[i] = replace(m, reasoning=replace(m.reasoning, reported=thought))


def appended(session: Session, records: Records) -> Session | None:
    """None: a rollout is read whole (follow mode reads it again)."""
    return None

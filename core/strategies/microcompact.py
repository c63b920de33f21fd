"""Microcompact (SEMANTICS §8; Claude Code time-based microcompact, Inspect AI
`CompactionEdit`): clear the content of old tool results, keeping the most recent ones.

Only results of clearable tools (file reads, shells, search, web fetch, edits) are
cleared; the call and the result block stay, so pairing is untouched. Optionally it
runs only after an idle gap since the last assistant message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.model import Block, Message
from core.strategies.base import CompactionResult, Context, OptionError, Steps, positive_int

NAME = "microcompact"
CLEARED_TEXT = "[Old tool result content cleared]"
CLEARABLE_TOOLS = frozenset(
    {
        # Claude Code
        "Read", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Edit", "MultiEdit", "Write",
        "NotebookEdit", "BashOutput",
        # Codex and other agents
        "shell", "local_shell", "exec_command", "apply_patch", "read_file", "write_file",
        "edit_file", "grep", "glob", "list_dir", "web_fetch", "web_search", "bash",
    }
)  # fmt: skip


@dataclass(frozen=True)
class MicrocompactOptions:
    keep_recent: int = 5
    clearable_tools: frozenset[str] = CLEARABLE_TOOLS
    idle_gap_minutes: int | None = None  # None: always run; else only after such a gap
    now: str | None = None  # ISO time of the next request; default the last message's time

    def __post_init__(self) -> None:
        positive_int("keep_recent", self.keep_recent, minimum=0)
        if self.idle_gap_minutes is not None:
            positive_int("idle_gap_minutes", self.idle_gap_minutes)
        if not self.clearable_tools:
            raise OptionError("clearable_tools must name at least one tool")


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def idle_minutes(messages: Sequence[Message], now: str | None) -> float | None:
    """Minutes from the last assistant message to `now` (default the last message)."""
    last_reply = next((m for m in reversed(messages) if m.role == "assistant" and m.timestamp), None)
    end = _time(now) or _time(messages[-1].timestamp if messages else None)
    start = _time(last_reply.timestamp) if last_reply else None
    if start is None or end is None:
        return None
    return (end - start).total_seconds() / 60


def run(messages: Sequence[Message], options: MicrocompactOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    names = {
        b.id: b.name or "" for m in messages for b in m.blocks if b.type == "tool_use" and b.id is not None
    }
    clearable = [
        (i, j)
        for i, m in enumerate(messages)
        for j, b in enumerate(m.blocks)
        if b.type == "tool_result"
        and names.get(b.tool_use_id or "") in options.clearable_tools
        and b.text != CLEARED_TEXT
    ]
    old = clearable[: max(0, len(clearable) - options.keep_recent)]
    idle = idle_minutes(messages, options.now)
    steps = Steps(messages, context)
    reason: str | None = "always"
    if options.idle_gap_minutes is not None:
        reason = "idle_gap" if idle is not None and idle >= options.idle_gap_minutes else None

    if reason is None:
        gap = f"{idle:.0f} minutes" if idle is not None else "an unknown time"
        steps.add(
            "Not triggered",
            f"Only {gap} since the last assistant message; it runs after {options.idle_gap_minutes}.",
            messages,
        )
    elif not old:
        steps.add(
            "Nothing to clear",
            f"{len(clearable)} clearable tool results, all among the {options.keep_recent} most recent.",
            messages,
        )
    else:
        by_message: dict[int, set[int]] = {}
        for i, j in old:
            by_message.setdefault(i, set()).add(j)
        after = [
            m.with_blocks(
                tuple(
                    Block.tool_result(b.tool_use_id or "", CLEARED_TEXT, b.is_error)
                    if j in by_message[i]
                    else b
                    for j, b in enumerate(m.blocks)
                )
            )
            if i in by_message
            else m
            for i, m in enumerate(messages)
        ]
        steps.add(
            f"Clear {len(old)} old tool result{'s' if len(old) != 1 else ''}",
            f"Results of clearable tools are replaced by “{CLEARED_TEXT}”, keeping the "
            f"{min(options.keep_recent, len(clearable))} most recent intact.",
            after,
        )
    final = steps.repair_pairing()
    stats: dict[str, Any] = {
        "strategy": NAME,
        "triggered": reason is not None and bool(old),
        "reason": reason,
        "idle_minutes": round(idle, 1) if idle is not None else None,
        "results_clearable": len(clearable),
        "results_cleared": len(old) if reason is not None else 0,
        "keep_recent": options.keep_recent,
        "messages_before": len(messages),
        "messages_after": len(final),
        "tokens_before": context.tokens(messages),
        "tokens_after": context.tokens(final),
    }
    return CompactionResult(NAME, final, stats, tuple(steps.steps))

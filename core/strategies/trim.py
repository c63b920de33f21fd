"""Deterministic pressure-triggered trim (SEMANTICS §4; ptc_runner `Compaction.Trim`).

Keeps the first message when it is a user message, plus the last `2k` messages, and
drops everything between, once a turn or token trigger fires.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.model import Message
from core.strategies.base import CompactionResult, Context, OptionError, Steps, positive_int

NAME = "trim"


@dataclass(frozen=True)
class TrimOptions:
    keep_recent_turns: int = 3
    keep_initial_user: bool = True
    trigger_turns: int | None = 8
    trigger_tokens: int | None = None
    turn: int | None = None  # the turn about to start, 1-indexed; default human turns + 1

    def __post_init__(self) -> None:
        positive_int("keep_recent_turns", self.keep_recent_turns)
        if self.trigger_turns is None and self.trigger_tokens is None:
            raise OptionError("trigger needs turns and/or tokens (positive integers)")
        if self.trigger_turns is not None:
            positive_int("trigger.turns", self.trigger_turns)
        if self.trigger_tokens is not None:
            positive_int("trigger.tokens", self.trigger_tokens)
        if self.turn is not None:
            positive_int("turn", self.turn)


def run(messages: Sequence[Message], options: TrimOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    k = options.keep_recent_turns
    turn = options.turn if options.turn is not None else sum(m.is_human for m in messages) + 1
    tokens_before = context.tokens(messages)

    reason: str | None = None
    if options.trigger_turns is not None and turn > options.trigger_turns:
        reason = "turn_pressure"
    elif options.trigger_tokens is not None and tokens_before >= options.trigger_tokens:
        reason = "token_pressure"

    first_is_user = bool(messages) and messages[0].role == "user"
    minimum = 2 * k + (1 if options.keep_initial_user and first_is_user else 0)
    steps = Steps(messages, context)
    stats: dict[str, Any] = {
        "enabled": True,
        "triggered": False,
        "strategy": NAME,
        "reason": None,
        "messages_before": len(messages),
        "messages_after": len(messages),
        "estimated_tokens_before": tokens_before,
        "estimated_tokens_after": tokens_before,
        "kept_initial_user?": False,
        "kept_recent_turns": k,
        "over_budget?": False,
    }
    if reason is None or len(messages) <= minimum:
        why = (
            f"{len(messages)} messages are no more than the minimum of {minimum}"
            if reason
            else _not_fired(options, turn, tokens_before)
        )
        steps.add("Not triggered", f"Nothing to trim: {why}.", messages)
        final = steps.repair_pairing()  # a transcript that was already invalid still is not sent so
        if final != messages:
            stats.update(messages_after=len(final), estimated_tokens_after=context.tokens(final))
        return CompactionResult(NAME, final, stats, tuple(steps.steps))

    keep_first = options.keep_initial_user and first_is_user
    n = min(2 * k, len(messages) - (1 if keep_first else 0))
    recent = list(messages[len(messages) - n :])
    # A slice may not open with a reply, nor with tool results whose call was cut off.
    while recent and (recent[0].role == "assistant" or recent[0].is_tool_result):
        recent.pop(0)
    kept = ([messages[0]] if keep_first else []) + recent
    trigger = (
        f"turn {turn} > {options.trigger_turns}"
        if reason == "turn_pressure"
        else f"{tokens_before:,} tokens >= {options.trigger_tokens:,}"
    )
    dropped = len(messages) - len(kept)
    steps.add(
        f"Trim {dropped} message{'s' if dropped != 1 else ''}",
        f"The trigger fired ({trigger}): keeping "
        f"{'the first user message and ' if keep_first else ''}the last {len(recent)} "
        f"messages (up to 2×{k}, starting on a user message).",
        kept,
    )
    final = steps.repair_pairing()
    stats.update(
        {
            "triggered": True,
            "reason": reason,
            "messages_after": len(final),
            "estimated_tokens_after": context.tokens(final),
            "kept_initial_user?": keep_first,
            "over_budget?": options.trigger_tokens is not None
            and any(context.counter.count(m) > options.trigger_tokens for m in final),
        }
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


def _not_fired(options: TrimOptions, turn: int, tokens: int) -> str:
    parts = []
    if options.trigger_turns is not None:
        parts.append(f"turn {turn} is not past {options.trigger_turns}")
    if options.trigger_tokens is not None:
        parts.append(f"{tokens:,} tokens are under {options.trigger_tokens:,}")
    return " and ".join(parts)

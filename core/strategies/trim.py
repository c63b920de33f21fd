"""Deterministic pressure-triggered trim (SEMANTICS §4; ptc_runner `Compaction.Trim`).

Keeps the first message when it is a user message, plus the last `2k` messages, and
drops everything between, once a turn or token trigger fires.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from compaction_inspector.core.grouping import humans_before
from compaction_inspector.core.model import Message
from compaction_inspector.core.strategies.base import (
    CompactionResult,
    Context,
    OptionError,
    Outcome,
    Steps,
    Unmodelled,
)
from compaction_inspector.core.strategies.registry import Strategy, check, option

NAME = "trim"


@dataclass(frozen=True)
class TrimOptions:
    keep_recent_turns: int = option(3, "keep the last 2k messages", minimum=1, label="keep recent turns")
    keep_initial_user: bool = option(
        True, "keep the first message when it is a user message", kind="bool", label="keep initial user"
    )
    trigger_turns: int | None = option(
        8,
        "trim when the turn about to start is past this",
        kind="int?",
        minimum=1,
        label="trigger turns",
        group="trigger",
        key="turns",
    )
    trigger_tokens: int | None = option(
        None,
        "trim at this many tokens",
        kind="int?",
        minimum=1,
        label="trigger tokens",
        group="trigger",
        key="tokens",
    )
    turn: int | None = option(
        None, "the turn about to start, 1-indexed (default human turns + 1)", kind="int?", minimum=1,
        label="turn (default next)", saved=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        if self.trigger_turns is None and self.trigger_tokens is None:
            raise OptionError("trigger needs turns and/or tokens (positive integers)")
        check(self)


@dataclass(frozen=True, kw_only=True)
class TrimStats:
    """What a trim did; its JSON keeps ptc_runner's names (SEMANTICS §4)."""

    enabled: bool = True
    triggered: bool
    strategy: str = NAME
    reason: str | None  # turn_pressure, token_pressure, or None
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    kept_initial_user: bool
    kept_recent_turns: int
    over_budget: bool  # a tokens trigger is set and some kept message alone is over it

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("reason", "triggered", "over_budget")
    _JSON_NAMES: ClassVar[dict[str, str]] = {
        "tokens_before": "estimated_tokens_before",
        "tokens_after": "estimated_tokens_after",
        "kept_initial_user": "kept_initial_user?",
        "over_budget": "over_budget?",
    }

    def to_dict(self) -> dict[str, Any]:
        return {self._JSON_NAMES.get(k, k): v for k, v in dataclasses.asdict(self).items()}


def run(messages: Sequence[Message], options: TrimOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    k = options.keep_recent_turns
    turn = options.turn if options.turn is not None else sum(m.is_human for m in messages) + 1
    steps = Steps(messages, context)
    tokens_before = steps.start_tokens

    reason = _reason(options, turn, tokens_before)
    first_is_user = bool(messages) and messages[0].role == "user"
    minimum = 2 * k + (1 if options.keep_initial_user and first_is_user else 0)
    untouched = TrimStats(
        triggered=False,
        reason=None,
        messages_before=len(messages),
        messages_after=len(messages),
        tokens_before=tokens_before,
        tokens_after=tokens_before,
        kept_initial_user=False,
        kept_recent_turns=k,
        over_budget=False,
    )
    if reason is None or len(messages) <= minimum:
        why = (
            f"{len(messages)} messages are no more than the minimum of {minimum}"
            if reason
            else _not_fired(options, turn, tokens_before)
        )
        steps.add("Not triggered", f"Nothing to trim: {why}.", messages)
        final = steps.repair_pairing()  # a transcript that was already invalid still is not sent so
        stats = dataclasses.replace(untouched, messages_after=len(final), tokens_after=steps.tokens)
        return CompactionResult(NAME, final, stats, tuple(steps.steps))

    keep_first = options.keep_initial_user and first_is_user
    recent = messages[_recent_start(messages, len(messages), keep_first, k) :]
    kept = ([messages[0]] if keep_first else []) + list(recent)
    trigger = (
        f"turn {turn} > {options.trigger_turns}"
        if reason == "turn_pressure"
        else f"{tokens_before:,} tokens >= {options.trigger_tokens:,}"
    )
    steps.add(
        _title(len(messages) - len(kept)),
        f"The trigger fired ({trigger}): keeping "
        f"{'the first user message and ' if keep_first else ''}the last {len(recent)} "
        f"messages (up to 2×{k}, starting on a user message).",
        kept,
    )
    final = steps.repair_pairing()
    stats = dataclasses.replace(
        untouched,
        triggered=True,
        reason=reason,
        messages_after=len(final),
        tokens_after=steps.tokens,
        kept_initial_user=keep_first,
        over_budget=options.trigger_tokens is not None
        and any(context.counter.count(m) > options.trigger_tokens for m in final),
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


def _fires(options: TrimOptions, tokens: int, context: Context, humans: int) -> bool:
    """The trigger, for a replay's request with `humans` human messages before it."""
    turn = options.turn if options.turn is not None else humans + 1
    return _reason(options, turn, tokens) is not None


def _reason(options: TrimOptions, turn: int, tokens: int) -> str | None:
    if options.trigger_turns is not None and turn > options.trigger_turns:
        return "turn_pressure"
    if options.trigger_tokens is not None and tokens >= options.trigger_tokens:
        return "token_pressure"
    return None


def _recent_start(messages: Sequence[Message], end: int, keep_first: bool, k: int) -> int:
    """Where the kept recent messages of messages[:end] begin: up to 2k of them, but a
    slice may not open with a reply, nor with tool results whose call was cut off."""
    start = end - min(2 * k, end - (1 if keep_first else 0))
    while start < end and (messages[start].role == "assistant" or messages[start].is_tool_result):
        start += 1
    return start


def _cut_results(messages: Sequence[Message], start: int, end: int) -> bool:
    """Whether the kept slice may hold tool results whose call was cut off (`run`
    repairs those): results in the user turn it opens with (after a typed message, or
    mixed into it), or a reply right after an opening system message, which may
    continue a response whose calls were cut."""
    opening = True  # only system messages so far
    for i in range(start, end):
        if messages[i].role == "assistant":
            return opening and i > start
        if messages[i].tool_result_ids():
            return True
        opening = opening and messages[i].role == "system"
    return False


def _title(dropped: int) -> str:
    return f"Trim {dropped} message{'s' if dropped != 1 else ''}"


class Replay:
    """Trim on every request of a replay (`base.Replay`): what it keeps is the first
    message and a slice, so a request costs its kept messages, not its history."""

    def __init__(self, messages: tuple[Message, ...], options: TrimOptions, context: Context, tail: int):
        self.messages = messages
        self.tail = tail
        self.options = options
        self.context = context
        self.prefix = context.counter.running(messages)
        self.humans = humans_before(messages)
        self.safe = len(messages)

    def request(self, end: int) -> tuple[int, int]:
        return self.prefix[end], end

    def history(self, end: int) -> tuple[Message, ...]:
        return self.messages[:end]

    def compact(self, end: int) -> Outcome | None:
        messages, options = self.messages, self.options
        turn = options.turn if options.turn is not None else self.humans[end] + 1
        first_is_user = end > 0 and messages[0].role == "user"
        keep_first = options.keep_initial_user and first_is_user
        if (
            _reason(options, turn, self.prefix[end]) is None
            or end <= 2 * options.keep_recent_turns + keep_first
        ):
            return None
        start = _recent_start(messages, end, keep_first, options.keep_recent_turns)
        # `run` says what repair makes of results that lose their call, and of cut-off
        # calls the trim drops (the end repair modelled in `simulate` assumes them kept)
        if _cut_results(messages, start, end) or start > self.tail:
            raise Unmodelled
        first = self.context.counter.count(messages[0]) if keep_first else 0
        tokens = first + self.prefix[end] - self.prefix[start]
        kept = keep_first + end - start
        changed = tokens != self.prefix[end]
        titles = (_title(end - kept),) if changed else ()
        return Outcome(tokens, kept, titles, int(changed))


def _not_fired(options: TrimOptions, turn: int, tokens: int) -> str:
    parts = []
    if options.trigger_turns is not None:
        parts.append(f"turn {turn} is not past {options.trigger_turns}")
    if options.trigger_tokens is not None:
        parts.append(f"{tokens:,} tokens are under {options.trigger_tokens:,}")
    return " and ".join(parts)


STRATEGY = Strategy(
    name=NAME,
    label="Trim",
    description="keep the first user message and the last 2k messages once a trigger fires",
    options=TrimOptions,
    run=run,
    replay=Replay,
    fires=_fires,
    demo=(("step_end", "Trim's result: dropped messages are struck through.", 4),),
)

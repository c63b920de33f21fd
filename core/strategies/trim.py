"""Deterministic pressure-triggered trim (docs/strategies.md#trim; ptc_runner `Compaction.Trim`).

Keeps the first message when it is a user message, plus the last `2k` messages, and
drops everything between, once a turn or token trigger fires. The turn in progress (from
the last human message) is never dropped: an agent mid-turn needs the request it answers.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Sequence
from typing import ClassVar

from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import (
    NO_CALL,
    CompactionResult,
    OptionError,
    StatsRecord,
    Steps,
    finish,
)
from compaction_inspector.core.strategies.declaration import (
    TOKEN_STEP,
    TRIGGER,
    Strategy,
    check,
    first_set,
    option,
)

NAME = "trim"


@immutable()
class TrimOptions:
    keep_recent_turns: int = option(
        3, "k: keep the last 2×k messages (k turns of two)", minimum=1, label="keep recent turns"
    )
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


@immutable(kw_only=True)
class TrimStats(StatsRecord):
    """What a trim did; its JSON keeps ptc_runner's names (docs/strategies.md#trim)."""

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
    JSON_NAMES: ClassVar[dict[str, str]] = {
        "tokens_before": "estimated_tokens_before",
        "tokens_after": "estimated_tokens_after",
        "kept_initial_user": "kept_initial_user?",
        "over_budget": "over_budget?",
    }


@immutable(eq=False, slots=True)  # one per request of a replay
class TrimPlan:
    """Trim of messages[:end]: untouched unless a trigger fired and there are more than
    the minimum, else the first message (`keep_first`) and messages[start:end]."""

    call = NO_CALL

    end: int
    turn: int
    reason: str | None
    minimum: int
    keep_first: bool
    start: int
    tokens_before: int
    tokens: int
    messages: int
    changed: bool
    exact: bool
    sent: bool = True
    stored: None = None
    head: int = 0  # counted tokens of the first message when it is kept

    @property
    def kept_from(self) -> int:
        return self.start

    def shared(self, previous: TrimPlan | None) -> int | None:
        """A trim drops from the head: a request trimmed anew (or no longer trimmed) is
        the same as the one before only as far as the first message it keeps."""
        mine, before = self.drops, previous is not None and previous.drops
        same = mine and before and previous is not None and previous.start == self.start
        if not (mine or before) or same:
            return None
        return self.head if mine else previous.head if previous is not None else 0

    @property
    def drops(self) -> bool:
        """Whether it drops any message (a trim whose kept slice reaches back to the first
        message keeps them all)."""
        return self.changed and self.start > int(self.keep_first)

    @property
    def title(self) -> str:
        dropped = self.end - self.messages
        return f"Trim {dropped} message{'s' if dropped != 1 else ''}"

    def titles(self) -> tuple[str, ...]:
        return (self.title,) if self.changing() else ()

    def changing(self) -> int:
        return int(self.tokens != self.tokens_before)


def plan(segment: Segment, end: int, options: TrimOptions, stored: None = None) -> TrimPlan:
    messages = segment.messages
    k = options.keep_recent_turns
    # counting human messages reads every one: only when a turns trigger asks (0 otherwise)
    turn = _turn(options, segment.humans[end]) if options.trigger_turns is not None else 0
    tokens = segment.prefix[end]
    reason = _reason(options, turn, segment.meter(end).tokens(tokens))
    keep_first = options.keep_initial_user and end > 0 and messages[0].role == "user"
    minimum = 2 * k + (1 if keep_first else 0)
    if reason is None or end <= minimum:
        return TrimPlan(end, turn, reason, minimum, False, 0, tokens, tokens, end, False, True)
    start = _recent_start(segment, end, keep_first, k)
    first = segment.tokens(0, 1) if keep_first else 0
    return TrimPlan(
        end,
        turn,
        reason,
        minimum,
        keep_first,
        start,
        tokens,
        first + segment.tokens(start, end),
        keep_first + end - start,
        True,
        # repair says what becomes of results whose call the trim cut off
        exact=not _cut_results(messages, start, end),
        head=first,
    )


def run(messages: Sequence[Message], options: TrimOptions, context: Context) -> CompactionResult[TrimStats]:
    segment, steps = Steps.of(messages, context)
    messages = segment.messages
    p = plan(segment, len(messages), options)
    meter = context.meter
    before = meter.tokens(p.tokens_before)
    untouched = TrimStats(
        triggered=False,
        reason=None,
        messages_before=len(messages),
        messages_after=len(messages),
        tokens_before=before,
        tokens_after=before,
        kept_initial_user=False,
        kept_recent_turns=options.keep_recent_turns,
        over_budget=False,
    )
    if not p.changed:
        why = (
            f"{len(messages)} messages are no more than the minimum of {p.minimum}"
            if p.reason
            else _not_fired(options, p.turn, before)
        )
        steps.add("Not triggered", f"Nothing to trim: {why}.", messages)
        return finish(NAME, steps, untouched)

    recent = messages[p.start :]
    kept = (messages[0], *recent) if p.keep_first else recent
    trigger = (
        f"turn {p.turn} > {options.trigger_turns}"
        if p.reason == "turn_pressure"
        else f"{before:,} tokens >= {options.trigger_tokens:,}"
    )
    steps.add_planned(
        p.title,
        f"The trigger fired ({trigger}): keeping "
        f"{'the first user message and ' if p.keep_first else ''}the last {len(recent)} "
        f"messages ({_kept_rule(p, options)}).",
        lambda: kept,
        p.tokens,
    )
    final = steps.repair_pairing()
    stats = dataclasses.replace(
        untouched,
        triggered=True,
        reason=p.reason,
        messages_after=len(final),
        tokens_after=steps.context_tokens,
        kept_initial_user=p.keep_first,
        over_budget=options.trigger_tokens is not None
        and any(meter.removed(context.counter.count(m)) > options.trigger_tokens for m in final),
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


def _turn(options: TrimOptions, humans: int) -> int:
    """The turn about to start, after `humans` human messages (1-indexed)."""
    return options.turn if options.turn is not None else humans + 1


def _fires(options: TrimOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    """The trigger, for a replay's request of context `tokens` with `humans` human
    messages before it."""
    return _reason(options, _turn(options, humans), tokens) is not None


def _reason(options: TrimOptions, turn: int, tokens: int) -> str | None:
    if options.trigger_turns is not None and turn > options.trigger_turns:
        return "turn_pressure"
    if options.trigger_tokens is not None and tokens >= options.trigger_tokens:
        return "token_pressure"
    return None


def _recent_start(segment: Segment, end: int, keep_first: bool, k: int) -> int:
    """Where the kept recent messages of messages[:end] begin: up to 2k of them, but a
    slice may not open with a reply, nor with tool results whose call was cut off; and
    never after the last human message, whose turn is still in progress."""
    messages = segment.messages
    start = end - min(2 * k, end - (1 if keep_first else 0))
    while start < end and (messages[start].role == "assistant" or messages[start].is_tool_result):
        start += 1
    humans = segment.humans
    if humans[end] > humans[start]:  # the slice holds a human message: its turn is kept
        return start
    turn = bisect_left(humans, humans[end]) - 1  # the last human message before the slice
    return max(turn, 1 if keep_first else 0) if turn >= 0 else start


def _kept_rule(p: TrimPlan, options: TrimOptions) -> str:
    """Why the kept slice starts where it does, in words."""
    if p.end - p.start > 2 * options.keep_recent_turns:
        return f"more than 2×{options.keep_recent_turns}: the turn in progress is never dropped"
    return f"up to 2×{options.keep_recent_turns}, starting on a user message"


def _cut_results(messages: Sequence[Message], start: int, end: int) -> bool:
    """Whether the kept slice may hold tool results whose call was cut off (repair
    changes those): results in the user turn it opens with (after a typed message, or
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
    description="keep the first user message and the last 2×k messages (k turns) once a trigger fires",
    options=TrimOptions,
    run=run,
    plan=plan,
    fires=_fires,
    knob=lambda options, what: (
        first_set(options, [("trigger_turns", 1), ("trigger_tokens", TOKEN_STEP)])
        if what == TRIGGER
        else ("keep_recent_turns", 1)
    ),
)

"""Replay a session API round by API round under a compaction policy.

Before each round the policy runs on the context as it would be sent: the history so
far (from the transcript's own last compact boundary on). An ephemeral policy (trim,
hysteresis preflight) changes only that request; a persisted one (hysteresis post-turn,
microcompact) replaces the stored history, so later rounds build on its output. Token
counts come from the counter's cache: nothing already counted is encoded again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from core.grouping import api_rounds
from core.model import Message
from core.strategies import STRATEGIES, CompactionResult, Context, run
from core.strategies.hysteresis import HysteresisOptions
from core.strategies.trim import TrimOptions


@dataclass(frozen=True)
class Policy:
    """A strategy and its options; `strategy=None` is the baseline with no compaction."""

    strategy: str | None = None
    options: Any = None

    @property
    def persisted(self) -> bool:
        if self.strategy == "microcompact":
            return True
        return self.strategy == "hysteresis" and self._options().stage == "post-turn"

    def _options(self) -> Any:
        assert self.strategy is not None
        return self.options if self.options is not None else STRATEGIES[self.strategy][0]()

    @property
    def label(self) -> str:
        if self.strategy is None:
            return "no compaction"
        if self.strategy == "hysteresis":
            opts: HysteresisOptions = self._options()
            return f"hysteresis {'/'.join(map(str, opts.thresholds))}→{opts.target} ({opts.stage})"
        return self.strategy

    def would_run(self, tokens: int, context: Context, human_turns: int) -> bool:
        """Cheap pre-check: False only when the strategy certainly changes nothing."""
        if self.strategy is None:
            return False
        opts = self._options()
        if self.strategy == "hysteresis":
            return bool(context.window.pressure(tokens) * 100 >= opts.thresholds[0])
        if self.strategy == "trim":
            assert isinstance(opts, TrimOptions)
            turn = opts.turn if opts.turn is not None else human_turns + 1
            return bool(
                (opts.trigger_turns is not None and turn > opts.trigger_turns)
                or (opts.trigger_tokens is not None and tokens >= opts.trigger_tokens)
            )
        return True

    def apply(self, messages: Sequence[Message], context: Context) -> CompactionResult:
        assert self.strategy is not None
        return run(self.strategy, messages, self._options(), context)


@dataclass(frozen=True)
class Event:
    """A compaction during the replay: the policy's, or one the transcript itself records."""

    source: str  # "policy" or "transcript"
    titles: tuple[str, ...]
    tokens_removed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "titles": list(self.titles),
            "tokens_removed": self.tokens_removed,
        }


@dataclass(frozen=True)
class Point:
    """The request before one API round (the last point is the next request)."""

    round: int
    message_end: int  # the request holds the session's messages before this index
    messages_sent: int
    tokens_before: int
    tokens_after: int
    pressure_before: float
    pressure_after: float
    exceeded: bool
    event: Event | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "message_end": self.message_end,
            "messages_sent": self.messages_sent,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "pressure_before": round(self.pressure_before, 6),
            "pressure_after": round(self.pressure_after, 6),
            "exceeded": self.exceeded,
            "event": self.event.to_dict() if self.event else None,
        }


@dataclass(frozen=True)
class Simulation:
    policy: Policy
    points: tuple[Point, ...]
    usable_window: int
    totals: dict[str, Any] = field(default_factory=dict)
    every: int = 1  # rounds per point

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.label,
            "strategy": self.policy.strategy,
            "persisted": self.policy.persisted if self.policy.strategy else False,
            "usable_window": self.usable_window,
            "totals": self.totals,
            "points": [p.to_dict() for p in self.points],
        }


def _changed(result: CompactionResult, before: Sequence[Message]) -> bool:
    after = result.messages
    return after is not None and (
        len(after) != len(before) or any(x is not y for x, y in zip(after, before, strict=True))
    )


class Cancelled(Exception):
    """The replay was stopped by its caller (a newer replay supersedes it)."""


def simulate(
    messages: Sequence[Message],
    policy: Policy,
    context: Context,
    cancelled: Callable[[], bool] | None = None,
    every: int = 1,
) -> Simulation:
    """The replay; `cancelled` is asked before each round and stops it with `Cancelled`.

    `every` > 1 evaluates only every that many rounds (and the last), for a chart with
    fewer columns than rounds: each point is exact for an ephemeral policy, while a
    persisted one then compacts only at those points."""
    messages = tuple(messages)
    counts = context.counter.count_all(messages)
    prefix = [0, *accumulate(counts)]
    humans = [0, *accumulate(int(m.is_human) for m in messages)]
    ends = [g.start for g in api_rounds(messages)[1:]] + [len(messages)]
    numbered = list(enumerate(ends, start=1))
    if every > 1:
        numbered = numbered[every - 1 :: every] + ([numbered[-1]] if len(numbered) % every else [])
    points: list[Point] = []
    history: list[Message] = []  # what a persisted policy has stored so far
    live = 0  # where the transcript's own last compact boundary leaves the context
    done = 0
    for number, end in numbered:
        if cancelled is not None and cancelled():
            raise Cancelled
        if end == 0:
            continue
        boundary = next((i for i in range(end - 1, done - 1, -1) if messages[i].is_compact_boundary), None)
        event: Event | None = None
        if boundary is not None:
            removed = prefix[boundary] - prefix[live]
            live = boundary + 1
            history = []
            event = Event("transcript", ("The transcript records a compaction here",), removed)
        if policy.persisted:
            history.extend(messages[max(done, live) : end])
            tokens = context.tokens(history)
            sent = len(history)
        else:
            tokens = prefix[end] - prefix[live]
            sent = end - live
        after_tokens = tokens
        if policy.would_run(tokens, context, humans[end] - humans[live]):
            # The request is only copied out when the policy will look at it.
            request: Sequence[Message] = history if policy.persisted else messages[live:end]
            result = policy.apply(request, context)
            if _changed(result, request):
                assert result.messages is not None
                after_tokens = context.tokens(result.messages)
                sent = len(result.messages)
                titles = tuple(s.title for s in result.steps if s.tokens_after != s.tokens_before)
                event = Event("policy", titles, tokens - after_tokens)
                if policy.persisted:
                    history = list(result.messages)
        points.append(
            Point(
                round=number,
                message_end=end,
                messages_sent=sent,
                tokens_before=tokens,
                tokens_after=after_tokens,
                pressure_before=context.window.pressure(tokens),
                pressure_after=context.window.pressure(after_tokens),
                exceeded=after_tokens > context.window.usable,
                event=event,
            )
        )
        done = end
    policy_events = [p.event for p in points if p.event and p.event.source == "policy"]
    totals = {
        "rounds": len(ends),
        "points": len(points),
        "compactions": len(policy_events),
        "transcript_compactions": sum(1 for p in points if p.event and p.event.source == "transcript"),
        "peak_pressure": round(max((p.pressure_after for p in points), default=0.0), 6),
        "peak_pressure_uncompacted": round(max((p.pressure_before for p in points), default=0.0), 6),
        "tokens_removed": sum(e.tokens_removed for e in policy_events),
        "rounds_exceeding_window": sum(p.exceeded for p in points),
        "final_tokens": points[-1].tokens_after if points else 0,
    }
    return Simulation(policy, tuple(points), context.window.usable, totals, every)


def compare(
    messages: Sequence[Message], first: Policy, second: Policy, context: Context
) -> tuple[Simulation, Simulation]:
    """Two policies on one session, for one chart."""
    return simulate(messages, first, context), simulate(messages, second, context)

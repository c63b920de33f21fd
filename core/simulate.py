"""Replay a session API round by API round under a compaction policy.

Before each round the policy runs on the context as it would be sent: the history so
far (from the transcript's own last compact boundary on). An ephemeral policy (trim,
hysteresis preflight) changes only that request; a persisted one (hysteresis post-turn,
microcompact) replaces the stored history, so later rounds build on its output. Token
counts come from the counter's cache: nothing already counted is encoded again.

Each strategy's `Replay` applies its rules incrementally, so a request costs what changed
since the last one rather than the whole history. Where a segment holds a message whose
tool pairing the incremental form does not model (`Replay.safe`, or any pairing problem:
`run` would repair the request), the replay hands over to `run` itself from there on.
`incremental=False` runs `run` on every request: the reference the replays are tested
against.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

from compaction_inspector.core.grouping import humans_before, round_starts
from compaction_inspector.core.model import Message, record
from compaction_inspector.core.pairing import check, last_assistant_turn, repair
from compaction_inspector.core.strategies import (
    CompactionResult,
    Context,
    Outcome,
    Replay,
    Strategy,
    Unmodelled,
    lookup,
    run,
)


@dataclass(frozen=True)
class Policy:
    """A strategy and its options; `strategy=None` is the baseline with no compaction."""

    strategy: str | None = None
    options: Any = None

    @cached_property
    def declared(self) -> Strategy:
        assert self.strategy is not None
        return lookup(self.strategy)

    @cached_property
    def settings(self) -> Any:
        """`options`, or the strategy's defaults; made once, as every round asks."""
        return self.options if self.options is not None else self.declared.options()

    @property
    def persisted(self) -> bool:
        return self.strategy is not None and self.declared.persists(self.settings)

    @property
    def label(self) -> str:
        return "no compaction" if self.strategy is None else self.declared.label_of(self.settings)

    def would_run(self, tokens: int, context: Context, human_turns: int) -> bool:
        """Cheap pre-check: False only when the strategy certainly changes nothing."""
        return self.strategy is not None and self.declared.fires(self.settings, tokens, context, human_turns)

    def apply(self, messages: Sequence[Message], context: Context) -> CompactionResult:
        assert self.strategy is not None
        return run(self.strategy, messages, self.settings, context)


@record()
class Event:
    """A compaction during the replay: the policy's, or one the transcript itself records."""

    source: str  # "policy" or "transcript"
    titles: tuple[str, ...]  # of its first steps that changed the token count
    tokens_removed: int
    steps: int = 1  # how many steps changed it

    @property
    def description(self) -> str:
        more = self.steps - len(self.titles)
        return "; ".join(self.titles) + (
            f" (+{more} more step{'s' if more != 1 else ''})" if more > 0 else ""
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "titles": list(self.titles),
            "steps": self.steps,
            "tokens_removed": self.tokens_removed,
        }


@record()  # tens of thousands per replay
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
class Totals:
    """A replay in figures."""

    rounds: int
    points: int
    compactions: int  # the policy's
    transcript_compactions: int  # the transcript's own
    peak_pressure: float  # of what was sent
    peak_pressure_uncompacted: float  # of the requests before the policy changed them
    tokens_removed: int
    rounds_exceeding_window: int
    final_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Simulation:
    policy: Policy
    points: tuple[Point, ...]
    usable_window: int
    totals: Totals
    every: int = 1  # rounds per point

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.label,
            "strategy": self.policy.strategy,
            "persisted": self.policy.persisted if self.policy.strategy else False,
            "usable_window": self.usable_window,
            "totals": self.totals.to_dict(),
            "points": [p.to_dict() for p in self.points],
        }


def _changed(result: CompactionResult, before: Sequence[Message]) -> bool:
    after = result.messages
    return after is not None and (
        len(after) != len(before) or any(x is not y for x, y in zip(after, before, strict=True))
    )


class Cancelled(Exception):
    """The replay was stopped by its caller (a newer replay supersedes it)."""


class _Segment:
    """The requests between two of the transcript's own compactions, as `policy` sends
    them: through the strategy's incremental `Replay` while it vouches for them, then
    through `run` (with the history it stored so far, for a persisted policy).

    One pairing problem is modelled here rather than handed over: calls of the session's
    last assistant turn that nothing answers yet (a session cut off mid-tool, before or
    between parallel results). `run` repairs them with missing results, put first in the
    user message after the calls or in a message of their own; the replays keep those
    messages as they are, so the last request changes by what that repair changes."""

    def __init__(self, messages: tuple[Message, ...], policy: Policy, context: Context, incremental: bool):
        self.messages = messages
        self.policy = policy
        self.context = context
        self.prefix = context.counter.running(messages)
        self.replay: Replay | None = None
        self.safe = -1
        self.end_repair: tuple[int, int] | None = None  # tokens and messages it adds to the last request
        self.humans: list[int] = []
        if policy.strategy is not None:
            self.humans = humans_before(messages)
            limit, tail, repaired = _facts(messages)
            if incremental:
                self.replay = policy.declared.replay(messages, policy.settings, context, tail)
                self.safe = min(self.replay.safe, limit)
                if repaired is not None:
                    added = context.tokens(repaired) - (self.prefix[-1] - self.prefix[tail])
                    self.end_repair = added, len(repaired) - (len(messages) - tail)
        self.history: list[Message] | None = None  # stored by a persisted policy under `run`
        self.done = 0

    def request(self, end: int) -> tuple[int, int, Outcome | None]:
        """Tokens and messages of the request before messages[end], and what the policy made of it."""
        policy, context, replay = self.policy, self.context, self.replay
        if policy.strategy is None:
            return self.prefix[end], end, None
        if replay is not None and end <= self.safe:
            tokens, sent = replay.request(end)
            if not policy.would_run(tokens, context, self.humans[end]):
                self.done = end
                return tokens, sent, None
            try:
                outcome = replay.compact(end)
            except Unmodelled:
                return self._run(end)
            self.done = end
            if outcome is not None and not outcome.sent:
                return tokens, sent, None
            if end == len(self.messages) and self.end_repair is not None:
                outcome = (outcome or Outcome(tokens, sent, (), 0)).repaired(*self.end_repair)
            return tokens, sent, outcome
        return self._run(end)

    def _run(self, end: int) -> tuple[int, int, Outcome | None]:
        policy, context, replay = self.policy, self.context, self.replay
        request: Sequence[Message]
        if policy.persisted:
            if self.history is None:
                self.history = list(replay.history(self.done)) if replay is not None else []
            self.history.extend(self.messages[self.done : end])
            request = self.history
            tokens = context.tokens(request)
        else:
            request = replay.history(end) if replay is not None else self.messages[:end]
            tokens = self.prefix[end]
        self.done = end
        if not policy.would_run(tokens, context, self.humans[end]):
            return tokens, len(request), None
        result = policy.apply(request, context)
        if not _changed(result, request):
            return tokens, len(request), None
        assert result.messages is not None
        if policy.persisted:
            self.history = list(result.messages)
        return tokens, len(request), Outcome.of(result, context)


@lru_cache(maxsize=1)
def _rounds(messages: tuple[Message, ...]) -> tuple[list[int], list[int]]:
    """Where each API round of a session ends, and its compact boundaries: kept for the
    next replay of the same session, like `_facts`."""
    ends = [*round_starts(messages)[1:], len(messages)]
    return ends, [i for i, m in enumerate(messages) if m.is_compact_boundary]


@lru_cache(maxsize=1)
def _facts(messages: tuple[Message, ...]) -> tuple[int, int, tuple[Message, ...] | None]:
    """What every replay of a segment needs of it, whatever the policy: where the
    replays stop modelling it (its first pairing problem, or a message object given
    twice, which defeats identity); where its last assistant turn starts, and the
    messages from there as repair leaves them when the only problems there are calls
    nothing answers yet (`_Segment` models that repair; otherwise `tail` is the end
    and there is nothing to repair). A session is replayed again after every change of
    an option: the last segment's are kept."""
    problems = [p for p in check(messages) if p.kind != "first_not_user"]
    tail = last_assistant_turn(messages)
    at_end = [p for p in problems if p.index >= tail]
    repaired: tuple[Message, ...] | None = None
    if at_end and all(p.kind == "missing_result" for p in at_end):
        problems = [p for p in problems if p.index < tail]
        repaired = tuple(repair(messages[tail:], [replace(p, index=p.index - tail) for p in at_end]))
    else:
        tail = len(messages)
    repeat = len(messages)
    if len(set(messages)) != repeat:  # rare: find the first repeat only then
        first: dict[Message, int] = {}
        repeat = next(i for i, m in enumerate(messages) if first.setdefault(m, i) != i)
    return min([repeat, *(p.index for p in problems)]), tail, repaired


def simulate(
    messages: Sequence[Message],
    policy: Policy,
    context: Context,
    cancelled: Callable[[], bool] | None = None,
    every: int = 1,
    incremental: bool = True,
) -> Simulation:
    """The replay; `cancelled` is asked before each round and stops it with `Cancelled`.

    `every` > 1 evaluates only every that many rounds (and the last), for a chart with
    fewer columns than rounds: each point is exact for an ephemeral policy, while a
    persisted one then compacts only at those points."""
    messages = tuple(messages)
    ends, boundaries = _rounds(messages)
    numbered = list(enumerate(ends, start=1))
    if every > 1:
        numbered = numbered[every - 1 :: every] + ([numbered[-1]] if len(numbered) % every else [])
    points: list[Point] = []
    live = 0  # where the transcript's own last compact boundary leaves the context
    done = 0
    segment: _Segment | None = None
    for number, end in numbered:
        if cancelled is not None and cancelled():
            raise Cancelled
        if end == 0:
            continue
        last = bisect_left(boundaries, end) - 1
        boundary = boundaries[last] if last >= 0 and boundaries[last] >= done else None
        event: Event | None = None
        if boundary is not None:
            removed = context.tokens(messages[live:boundary])
            live = boundary + 1
            segment = None
            event = Event("transcript", ("The transcript records a compaction here",), removed)
        if segment is None:
            stop = next((i for i in boundaries if i >= live), len(messages))
            segment = _Segment(messages[live:stop], policy, context, incremental)
        tokens, sent, outcome = segment.request(end - live)
        after_tokens = tokens
        if outcome is not None:
            after_tokens, sent = outcome.tokens, outcome.messages
            event = Event("policy", outcome.titles, tokens - outcome.tokens, outcome.steps)
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
    totals = Totals(
        rounds=len(ends),
        points=len(points),
        compactions=len(policy_events),
        transcript_compactions=sum(1 for p in points if p.event and p.event.source == "transcript"),
        peak_pressure=round(max((p.pressure_after for p in points), default=0.0), 6),
        peak_pressure_uncompacted=round(max((p.pressure_before for p in points), default=0.0), 6),
        tokens_removed=sum(e.tokens_removed for e in policy_events),
        rounds_exceeding_window=sum(p.exceeded for p in points),
        final_tokens=points[-1].tokens_after if points else 0,
    )
    return Simulation(policy, tuple(points), context.window.usable, totals, every)


def compare(
    messages: Sequence[Message], first: Policy, second: Policy, context: Context
) -> tuple[Simulation, Simulation]:
    """Two policies on one session, for one chart."""
    return simulate(messages, first, context), simulate(messages, second, context)

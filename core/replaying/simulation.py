"""What a replay is and what it holds: the policy replayed, each request's outcome, the
points of the curve, the events, the totals."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import field
from functools import cached_property
from typing import Any

from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.strategies import CompactionResult, Context, Stats, Strategy, run
from compaction_inspector.core.strategies.base import REPAIR_TITLE, TITLES_KEPT
from compaction_inspector.core.strategies.declaration import Options

# the baseline replay: no strategy of ours, the transcript's own compactions kept where it made them
AS_IT_RAN = "as it ran"


@immutable()
class Policy:
    """A strategy and its options; no strategy is the baseline: the session as it ran,
    its own compactions kept and none of ours. Two policies are one where their
    strategies' names and their options are."""

    declared: Strategy[Any] | None = field(default=None, compare=False)
    options: Options | None = None
    strategy: str | None = field(init=False)  # the strategy's name (None: the baseline)

    def __post_init__(self) -> None:
        object.__setattr__(self, "strategy", self.declared.name if self.declared is not None else None)

    @cached_property
    def settings(self) -> Options:
        """`options`, or the strategy's defaults; made once, as every round asks."""
        assert self.declared is not None
        return self.options if self.options is not None else self.declared.default_options()

    @property
    def persisted(self) -> bool:
        return self.declared is not None and self.declared.persists(self.settings)

    @property
    def label(self) -> str:
        return AS_IT_RAN if self.declared is None else self.declared.label_of(self.settings)

    def apply(self, messages: Sequence[Message], context: Context) -> CompactionResult[Stats]:
        assert self.declared is not None
        return run(self.declared, messages, self.settings, context)


@immutable(slots=True)  # one per request of a replay
class Outcome:
    """What a policy made of one request of a replay."""

    tokens: int
    messages: int
    titles: tuple[str, ...]  # the first TITLES_KEPT steps that changed the token count
    steps: int  # how many steps changed it
    call: tuple[int, int] = (0, 0)  # the compaction's own summarize request: context tokens in, out
    repairs: int = 0  # of its steps, pairing repairs: what the agent sends, not a compaction

    @property
    def compacts(self) -> bool:
        """A step of the policy's own changed it (not only the pairing repair)."""
        return self.steps > self.repairs

    def repaired(self, tokens: int, messages: int) -> Outcome:
        """The same after a pairing repair changed it by `tokens` and `messages`."""
        titles = (*self.titles, REPAIR_TITLE) if len(self.titles) < TITLES_KEPT else self.titles
        return Outcome(
            self.tokens + tokens,
            self.messages + messages,
            titles,
            self.steps + 1,
            self.call,
            self.repairs + 1,
        )

    @staticmethod
    def of(result: CompactionResult[Stats], context: Context) -> Outcome:
        assert result.messages is not None
        changing = _changing(result)
        return Outcome(
            context.tokens(result.messages),
            len(result.messages),
            tuple(changing[:TITLES_KEPT]),
            len(changing),
            (result.call_input, result.call_output),
            changing.count(REPAIR_TITLE),
        )


def _changing(result: CompactionResult[Stats]) -> list[str]:
    """The titles of the steps that changed the token count, a pairing repair's among them."""
    return [s.title for s in result.steps if s.counted_delta]


def compacts(result: CompactionResult[Stats]) -> bool:
    """A step of the policy's own changed the count, not only the pairing repair."""
    return any(title != REPAIR_TITLE for title in _changing(result))


@immutable(slots=True)
class Event:
    """A compaction during the replay: the policy's, or one the transcript itself records."""

    source: str  # "policy" or "transcript"
    titles: tuple[str, ...]  # of its first steps that changed the token count
    tokens_removed: int  # what it took off the request it compacted
    steps: int = 1  # how many steps changed it
    recorded_tokens: int | None = None  # the context the transcript's own compaction recorded before it
    # the transcript's own: the policy fires at the request it replaced too (its titles)
    policy_titles: tuple[str, ...] | None = None
    # what it removed beyond the request before (a policy editing each request anew removes
    # most of it again each time): the replay's total sums these
    removed_since: int | None = None

    @property
    def counts(self) -> bool:
        """A compaction of the policy's: its own, or one at the agent's own point."""
        return self.source == "policy" or self.policy_titles is not None

    @property
    def new_removed(self) -> int:
        return self.tokens_removed if self.removed_since is None else self.removed_since

    @property
    def description(self) -> str:
        more = self.steps - len(self.titles)
        text = "; ".join(self.titles) + (
            f" (+{more} more step{'s' if more != 1 else ''})" if more > 0 else ""
        )
        return text + ("; the policy fires here too" if self.policy_titles is not None else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "titles": list(self.titles),
            "steps": self.steps,
            "tokens_removed": self.tokens_removed,
            "tokens_removed_beyond_the_request_before": self.new_removed,
            "recorded_tokens": self.recorded_tokens,
            "policy_fires_too": self.policy_titles is not None,
            "policy_titles": list(self.policy_titles) if self.policy_titles is not None else None,
        }


@immutable(slots=True)  # tens of thousands per replay
class RoundPoint:
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
    reported: int | None = None  # the prompt the transcript reports for this request
    # the context at its start the request before sent the same (a prompt cache reads it);
    # None: all of that request, which this one only adds to
    shared: int | None = None
    call: tuple[int, int] = (0, 0)  # a compaction's own summarize request: context tokens in, out
    # sent as tool-pairing repair leaves it: the transcript's pairing breaks before it, and
    # the replay plans the segment's requests on its repaired form, as the agent sends them
    repaired: bool = False

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
            "reported_prompt_tokens": self.reported,
            "shared_with_previous": self.shared,
            "compaction_call": {"input_tokens": self.call[0], "output_tokens": self.call[1]},
            "pairing_repaired": self.repaired,
        }


@immutable()
class Totals:
    """A replay in figures."""

    rounds: int
    points: int
    compactions: int  # the policy's, those at the agent's own points included
    transcript_compactions: int  # the transcript's own
    at_agent_compactions: int  # the policy's that fall where the agent itself compacted
    peak_pressure: float  # of what was sent
    peak_pressure_uncompacted: float  # of the session's requests as they were, no policy applied
    tokens_removed: int
    rounds_exceeding_window: int
    final_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def where(self) -> str:
        """Which of the policy's compactions fall where the agent itself compacted, in words."""
        if not self.transcript_compactions:
            return ""
        return f" ({self.at_agent_compactions} at the agent's own)"


@immutable()
class SegmentEnd:
    """A segment's last request as a policy sent it, and the messages it was made from."""

    sent: tuple[Message, ...]
    source: tuple[Message, ...]


@immutable()
class Simulation:
    policy: Policy
    points: tuple[RoundPoint, ...]
    usable_window: int
    totals: Totals
    # asked for (`segment_ends=True`): each segment's last request (before the transcript's own
    # compactions, and at the end) as the policy sent it, beside the messages it was made from
    ends: tuple[SegmentEnd, ...] | None = None

    @property
    def repaired_from(self) -> int | None:
        """The first round whose request is sent as tool-pairing repair leaves it."""
        return next((p.round for p in self.points if p.repaired), None)

    @property
    def repaired_note(self) -> str:
        """Where the replay sends requests repaired, in words ("" if none is)."""
        first = self.repaired_from
        if first is None:
            return ""
        return (
            f"from round {first} the transcript's tool pairing is broken: requests are replayed "
            "as the agent sends them, with the pairing repaired"
        )

    def to_dict(self, streamed: bool = False) -> dict[str, Any]:
        """`streamed`: the points as an iterator, each made when it is read."""
        points = (p.to_dict() for p in self.points)
        return {
            "policy": self.policy.label,
            "strategy": self.policy.strategy,
            "persisted": self.policy.persisted if self.policy.strategy else False,
            "usable_window": self.usable_window,
            "totals": {**self.totals.to_dict(), "pairing_repaired_from_round": self.repaired_from},
            "points": points if streamed else list(points),
        }


def shown_rounds(points: Sequence[RoundPoint], limit: int | None) -> tuple[list[int], bool]:
    """Which rounds of a replay a table shows, and whether its compactions had to be
    thinned too: all of them within `limit` (None: no limit); else the first and last
    rounds, the peak and every compaction, and rounds evenly spaced between them."""
    n = len(points)
    if limit is None or n <= limit:
        return list(range(n)), False
    peak = max(range(n), key=lambda i: points[i].pressure_after)
    ends = {0, n - 1, peak}
    events = [i for i, p in enumerate(points) if p.event is not None and i not in ends]
    thinned = len(ends) + len(events) > limit
    pool, room = (events, limit - len(ends)) if thinned else (range(n), limit - len(ends) - len(events))
    chosen = ends | (set() if thinned else set(events))
    spare = [i for i in pool if i not in chosen]
    if room > 0 and spare:
        step = len(spare) / room
        chosen |= {spare[int(k * step)] for k in range(min(room, len(spare)))}
    return sorted(chosen), thinned

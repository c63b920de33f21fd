"""Replay a session API round by API round under a compaction policy.

Before each round the policy runs on the context as it would be sent: the history so
far (from the transcript's own last compact boundary on). An ephemeral policy (trim,
hysteresis preflight) changes only that request; a persisted one (hysteresis post-turn,
microcompact) replaces the stored history, so later rounds build on its output. Token
counts come from the counter's cache: nothing already counted is encoded again.

Each request asks the strategy's one rule, its `plan`, over the segment's index: a
request costs what the plan costs, not the whole history. The plan's figures stand where
no pairing repair changes them; the repair of calls the session's last turn leaves
unanswered is modelled too. Elsewhere the request's messages are made and `run`, as a
strategy is defined. `incremental=False` runs `run` on every request: the reference the
plans are tested against.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, takewhile
from typing import Any
from weakref import WeakKeyDictionary

from compaction_inspector.core.measuring.pressure import Meter
from compaction_inspector.core.measuring.segment import Segment, Segments
from compaction_inspector.core.model import Message, alike_head, immutable
from compaction_inspector.core.replaying.simulation import (
    Event,
    Outcome,
    Policy,
    RoundPoint,
    SegmentEnd,
    Simulation,
    Totals,
    compacts,
)
from compaction_inspector.core.strategies import CompactionResult, Context, Stats


def _changed(result: CompactionResult[Stats], before: Sequence[Message]) -> bool:
    after = result.messages
    return after is not None and (
        len(after) != len(before) or any(x is not y for x, y in zip(after, before, strict=True))
    )


class Cancelled(Exception):
    """The replay was stopped by its caller (a newer replay supersedes it)."""


class _Requests:
    """The requests of one segment as `policy` sends them: each from the strategy's plan
    where its figures are exact, else made and `run` (with the history a persisted
    policy stored so far, kept as messages from then on)."""

    def __init__(self, segment: Segment, policy: Policy, incremental: bool):
        repaired = segment.repaired
        # the transcript's messages[:k] are sent as the repaired form's [:ends[k]], those
        # past where its pairing first breaks changed by the repair
        self.ends: list[int] | None = None
        self.breaks = len(segment)
        if repaired is not None:
            self.breaks = segment.pairing.valid_until
            segment, self.ends = repaired.segment.fresh(), repaired.ends
        self.segment = segment
        self.policy = policy
        self.incremental = incremental and policy.strategy is not None
        self.stored: Any = None  # a persisted policy's history, as its plans hold it
        self.history: list[Message] | None = None  # ... once made into messages
        self.history_tokens = 0  # ... and its counted tokens, kept as it grows
        self.done = 0
        self.previous: Any = None  # the plan of the request before, as a plan made it
        self.last_sent: tuple[Message, ...] | None = None  # ... or as `run` edited it
        self.last_tokens = 0  # counted tokens of the request before, as sent
        self.valid_until = -1
        self.end_repair: tuple[int, int] | None = None  # what repair adds to the last request
        self.tail = self.length = len(segment)
        self.asked = 0  # the end of the last request asked
        declared = policy.declared
        if declared is not None:  # asked of every request: looked up once
            self.plan, self.fires, self.options = declared.plan, declared.fires, policy.settings
            self.persisted = policy.persisted
            self.humans = segment.humans if self.fires is not None else []  # what a trigger reads
            self.beside = declared.beside(segment, self.options) if declared.beside is not None else None
        if self.incremental:
            pairing = segment.pairing
            self.valid_until = pairing.valid_until
            if pairing.repaired is not None:
                self.tail = pairing.tail
                added = segment.context.tokens(pairing.repaired) - segment.tokens(pairing.tail, len(segment))
                self.end_repair = added, len(pairing.repaired) - (len(segment) - pairing.tail)

    def request(self, end: int) -> tuple[int, int, Outcome | None, int | None]:
        """Tokens and messages of the request before messages[end], what the policy made
        of it, and the counted tokens at its start the request before sent the same (None:
        all of that request)."""
        segment = self.segment
        if self.ends is not None:
            end = self.ends[end]
        self.asked = end
        if self.policy.strategy is None:
            return segment.prefix[end], end, None, None
        if not self.incremental or self.history is not None or end > self.valid_until:
            return self._run(end)
        stored = self.stored
        tokens, sent = stored.request(segment, end) if stored is not None else (segment.prefix[end], end)
        # a request edited anew after one that was edited differs from it even unchanged
        undone = not self.persisted and self.previous is not None and self.previous.changed
        if not self._fires(tokens, end, sent) and not undone:
            self.done, self.previous, self.last_tokens = end, None, tokens
            return tokens, sent, None, None
        plan = self.plan(segment, end, self.options, stored)
        last = end == self.length and self.end_repair is not None
        # the last request goes repaired: what the policy makes of it is seen only by running it
        if not plan.exact or last:
            return self._run(end)
        self.done = end
        if not plan.sent:  # nothing can be sent: it stands as it was, unedited
            edited_before = self.previous is not None and self.previous.changed
            self.previous, self.last_tokens = None, tokens
            return tokens, sent, None, 0 if edited_before else None
        shared = plan.shared(self.previous)
        if shared is not None and shared >= self.last_tokens:  # what it changes is new since
            shared = None
        self.previous = plan
        outcome = None
        if plan.changed:
            outcome = Outcome(plan.tokens, plan.messages, plan.titles(), plan.changing(), plan.call)
            if self.persisted:
                self.stored = plan.stored
        if last and self.end_repair is not None:
            outcome = (outcome or Outcome(tokens, sent, (), 0)).repaired(*self.end_repair)
        self.last_tokens = outcome.tokens if outcome is not None else tokens
        return tokens, sent, outcome, shared

    def unfired(self, ends: Sequence[int], stop: int) -> int:
        """How many of the rounds ending at `ends` (before the round whose end is past
        `stop`, the transcript's first compaction) it sends as they were, planned, its
        pre-check certain it changes nothing: a fresh segment's first requests."""
        if not self.incremental or self.fires is None:
            return 0
        mapped, segment = self.ends, self.segment
        for r, end in enumerate(ends):
            if end > stop:
                return r
            at = mapped[end] if mapped is not None else end
            if at > self.valid_until or self._fires(segment.prefix[at], at, at):
                return r
        return len(ends)

    def went_on(self, end: int) -> None:
        """As if every request up to the one before the transcript's messages[end] were
        asked and left as it was (`unfired`)."""
        at = self.ends[end] if self.ends is not None else end
        self.asked = self.done = at
        self.last_tokens = self.segment.prefix[at]

    def meter(self, end: int) -> Meter:
        """The meter of the request before the transcript's messages[end]."""
        return self.segment.meter(self.ends[end] if self.ends is not None else end)

    def repaired(self, end: int) -> bool:
        """The request before the transcript's messages[end] is sent as repair leaves it."""
        return end > self.breaks

    def _fires(self, tokens: int, end: int, messages: int) -> bool:
        """The strategy's cheap pre-check: False only when it certainly changes nothing."""
        if self.fires is None:
            return True
        segment = self.segment
        counted = segment.meter(end).tokens(tokens) + (self.beside[end] if self.beside is not None else 0)
        return self.fires(self.options, counted, messages, segment.context, self.humans[end])

    def _run(self, end: int) -> tuple[int, int, Outcome | None, int | None]:
        policy, segment = self.policy, self.segment
        self.previous = None  # from here on the requests are made, and compared as sent
        context = segment.context
        request: Sequence[Message]
        if policy.persisted:
            if self.history is None:
                stored = self.stored
                self.history = list(
                    stored.history(segment, self.done)
                    if stored is not None
                    else segment.messages[: self.done]
                )
                self.history_tokens = context.tokens(self.history)
            prior = len(self.history)
            # a round adds the transcript's next messages: their tokens are the index's
            self.history.extend(segment.messages[self.done : end])
            self.history_tokens += segment.tokens(self.done, end)
            request = self.history
            tokens = self.history_tokens
        else:
            prior = self.done
            request = segment.messages[:end]
            tokens = segment.prefix[end]
            if self.incremental:  # the next request, planned, is told what this one was
                self.previous = self.plan(segment, end, self.options, None)
        self.done = end
        outcome, sent = None, None
        result = self._edited(request, tokens, end)
        if result is not None:
            assert result.messages is not None
            outcome, sent = Outcome.of(result, context), result.messages
            if policy.persisted:
                self.history = list(result.messages)
                self.history_tokens = outcome.tokens
        self.last_tokens = outcome.tokens if outcome is not None else tokens
        return tokens, len(request), outcome, self._shared(request, prior, sent)

    def ended(self) -> SegmentEnd:
        """The last request asked of it, as the policy sent it."""
        segment, end = self.segment, self.asked
        request = segment.messages[:end]
        return SegmentEnd(self._sent(request, end), request)

    def _sent(self, request: tuple[Message, ...], end: int) -> tuple[Message, ...]:
        segment = self.segment
        if self.policy.strategy is None:
            return request
        if self.history is not None:
            return tuple(self.history)
        if self.persisted:
            return self.stored.history(segment, end) if self.stored is not None else request
        result = self._edited(request, segment.prefix[end], end)  # edited anew: edited again
        if result is None or result.messages is None or not compacts(result):
            return request  # a pairing repair alone removes nothing the policy chose to
        return result.messages

    def _edited(self, request: Sequence[Message], tokens: int, end: int) -> CompactionResult[Stats] | None:
        """The policy's run on `request` (`tokens` counted, before messages[end]) when it
        changes it; None when it does not fire or changes nothing."""
        if not self._fires(tokens, end, len(request)):
            return None
        result = self.policy.apply(request, self.segment.context.at(self.segment.meter(end)))
        return result if _changed(result, request) else None

    def _shared(self, request: Sequence[Message], prior: int, sent: tuple[Message, ...] | None) -> int | None:
        """`RoundPoint.shared` of a request `run` made (`sent`: as it edited it, None: as it
        was). The request before is the history this one starts with, its `prior`
        messages (persisted); or as it was sent (edited anew per request), where an edit
        now or then can make the two part."""
        if self.policy.persisted:
            if sent is None:
                return None
            before = tuple(request[:prior])
        else:
            last, self.last_sent = self.last_sent, sent
            if sent is None and last is None:
                return None
            before = last if last is not None else tuple(request[:prior])
        now = sent if sent is not None else tuple(request)
        shared = self.segment.context.tokens(now[: alike_head(before, now, self.segment.members)])
        return None if shared >= self.segment.context.tokens(before) else shared


def simulate(
    messages: Sequence[Message],
    policy: Policy,
    context: Context,
    cancelled: Callable[[], bool] | None = None,
    incremental: bool = True,
    segments: Segments | None = None,
    segment_ends: bool = False,
) -> Simulation:
    """The replay; `cancelled` is asked before each round and stops it with `Cancelled`.

    `segments`, if the caller keeps
    them for these messages and context, saves making their indexes again. `segment_ends`
    keeps each segment's last request as sent (`Simulation.ends`)."""
    messages = tuple(messages)
    if segments is None or segments.messages != messages or segments.context != context:
        segments = Segments(messages, context)
    ends, boundaries = segments.round_ends, segments.boundaries
    points: list[RoundPoint] = []
    persisted = policy.persisted
    last_titles: tuple[str, ...] = ()  # of the request before, under an ephemeral policy
    last_saving = 0
    model = context.model
    reported = {r.start: r.prompt_tokens for r in model.responses} if model is not None else {}
    live = done = 0  # where the agent's own last compaction leaves the context; the last request's end
    segment: _Requests | None = None
    kept_ends: list[SegmentEnd] | None = [] if segment_ends else None
    uncompacted = 0  # the largest request as the transcript has it (a stored history shrinks the rest)
    skipped = 0  # the first rounds, sent as they were: their points are the session's own, shared
    if policy.strategy is not None and ends:
        segment = _Requests(segments.at(0).fresh(), policy, incremental)
        skipped = segment.unfired(ends, boundaries[0] if boundaries else len(messages))
        if skipped:
            plain = _plain(segments)
            made = bisect_right(plain.rounds, skipped)
            points += plain.points[:made]
            uncompacted = plain.peaks[made - 1] if made else 0
            done = ends[skipped - 1]
            segment.went_on(done)
    for number, end in enumerate(ends[skipped:], start=skipped + 1):
        if cancelled is not None and cancelled():
            raise Cancelled
        if end == 0:
            continue
        last = bisect_left(boundaries, end) - 1
        boundary = boundaries[last] if last >= 0 and boundaries[last] >= done else None
        event: Event | None = None
        if boundary is not None:
            if segment is None:
                segment = _Requests(segments.at(live).fresh(), policy, incremental)
            event = _own_compaction(segments, segment, live, done, boundary, context, messages)
            last_titles, last_saving = (), 0  # a new segment: its requests start afresh
            live = boundary + 1
            if kept_ends is not None:
                kept_ends.append(segment.ended())
            segment = None
        if segment is None:
            segment = _Requests(segments.at(live).fresh(), policy, incremental)
        counted, sent, outcome, same = segment.request(end - live)
        meter = segment.meter(end - live)
        shared = _shared(not points, boundary is not None, outcome is not None, same, meter)
        original = segments.at(live)
        uncompacted = max(uncompacted, original.meter(end - live).tokens(original.prefix[end - live]))
        tokens = after_tokens = meter.tokens(counted)
        saving = 0
        if outcome is not None:
            after_tokens, sent = meter.tokens(outcome.tokens), outcome.messages
        if outcome is not None and outcome.compacts:
            saving = tokens - after_tokens
            event = _policy_event(outcome, saving, persisted, last_titles, last_saving, event)
            last_titles = outcome.titles
        else:  # a pairing repair alone is what the agent sends: no compaction
            last_titles = ()
        last_saving = saving
        window, call = context.window, outcome.call if outcome is not None else (0, 0)
        points.append(RoundPoint(
            round=number, message_end=end, messages_sent=sent, tokens_before=tokens,
            tokens_after=after_tokens, pressure_before=window.pressure(tokens),
            pressure_after=window.pressure(after_tokens), exceeded=after_tokens > window.usable,
            event=event, reported=reported.get(end), shared=shared, call=call,
            repaired=segment.repaired(end - live),
        ))  # fmt: skip
        done = end
    totals = _totals(points, len(ends), context.window.pressure(uncompacted))
    if kept_ends is not None and segment is not None:
        kept_ends.append(segment.ended())
    found = tuple(kept_ends) if kept_ends is not None else None
    return Simulation(policy, tuple(points), context.window.usable, totals, found)


@immutable(eq=False, slots=True)
class _Plain:
    """The points of a session's requests as they were, before its first compaction (the
    replay of no policy), and the largest of them so far at each: what every replay sends
    until its policy first fires (a sweep replays one session at dozens of settings)."""

    points: tuple[RoundPoint, ...]
    rounds: list[int]  # each point's round
    peaks: list[int]


_PLAIN: WeakKeyDictionary[Segments, _Plain] = WeakKeyDictionary()
_PLAIN_MAKING = threading.Lock()


def _plain(segments: Segments) -> _Plain:
    found = _PLAIN.get(segments)
    if found is None:
        with _PLAIN_MAKING:
            found = _PLAIN.get(segments)
            if found is None:
                plain = simulate(segments.messages, Policy(), segments.context, segments=segments).points
                points = tuple(takewhile(lambda p: p.event is None, plain))
                first = segments.at(0)  # each as the transcript has it (its repaired form's are larger)
                sizes = (first.meter(p.message_end).tokens(first.prefix[p.message_end]) for p in points)
                found = _PLAIN[segments] = _Plain(
                    points, [p.round for p in points], list(accumulate(sizes, max))
                )
    return found


def _shared(first: bool, own: bool, changed: bool, same: int | None, meter: Meter) -> int | None:
    """What a request shares at its start with the request before, as sent: the first
    (`first`) as the real one found the cache unless the policy `changed` it; after the
    agent's `own` compaction only what precedes the messages; else up to `same` counted
    (None: all of it)."""
    if first:
        return None if not changed else meter.tokens(0)
    if own:
        return meter.tokens(0)
    return None if same is None else meter.tokens(same)


def _policy_event(
    outcome: Outcome,
    saving: int,
    persisted: bool,
    last_titles: tuple[str, ...],
    last_saving: int,
    event: Event | None,
) -> Event | None:
    """The request's event once the policy compacted it, saving `saving` (`event`: the
    transcript's own there, which it replaces). An ephemeral policy compacts each request
    anew: the same compaction again (the same steps as the request before, `last_titles`)
    is no new event, and a new one removes what it saves beyond the request before
    (`last_saving`)."""
    if not persisted and outcome.titles == last_titles and event is None:
        return None
    since = None if persisted else saving - last_saving
    return Event("policy", outcome.titles, saving, outcome.steps, removed_since=since)


def _own_compaction(
    segments: Segments,
    segment: _Requests,
    live: int,
    done: int,
    boundary: int,
    context: Context,
    messages: tuple[Message, ...],
) -> Event:
    """The transcript's own compaction at `boundary`, ending the segment from `live`
    (`segment`, its requests so far): what it removed, what the agent recorded, and
    whether the policy would have compacted the request the agent compacted at."""
    stop = live + len(segments.at(live))  # the first boundary since `live`: the segment's end
    agent = segment.request(stop - live)[2] if stop > done else None
    removed = segments.at(live).meter(boundary - live).removed(context.tokens(messages[live:boundary]))
    recorded = context.model.compactions.get(boundary) if context.model is not None else None
    titles = ("The transcript records a compaction here",)
    # a pairing repair alone is what the agent sends, not the policy compacting
    fired = agent.titles if agent is not None and agent.compacts else None
    return Event("transcript", titles, removed, 1, recorded, fired)


def _totals(points: Sequence[RoundPoint], rounds: int, peak_uncompacted: float) -> Totals:
    """A replay's totals over its points (`rounds`: its API rounds; `peak_uncompacted`:
    the largest request's pressure as the transcript has it)."""
    policy_events = [p.event for p in points if p.event and p.event.source == "policy"]
    own = [p.event for p in points if p.event and p.event.source == "transcript"]
    return Totals(
        rounds=rounds,
        points=len(points),
        compactions=len(policy_events) + sum(e.counts for e in own),
        transcript_compactions=len(own),
        at_agent_compactions=sum(e.counts for e in own),
        peak_pressure=round(max((p.pressure_after for p in points), default=0.0), 6),
        peak_pressure_uncompacted=round(peak_uncompacted, 6),
        tokens_removed=sum(e.new_removed for e in policy_events),
        rounds_exceeding_window=sum(p.exceeded for p in points),
        final_tokens=points[-1].tokens_after if points else 0,
    )


def simulate_both(
    messages: Sequence[Message], first: Policy, second: Policy, context: Context
) -> tuple[Simulation, Simulation]:
    """Two policies on one session, for one chart."""
    return simulate(messages, first, context), simulate(messages, second, context)

"""What a replay's requests would have cost, on the session's own request pattern."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from compaction_inspector.core.caching.memo import on_forget
from compaction_inspector.core.formats.common import answered_by
from compaction_inspector.core.measuring.context_model import Response, responses
from compaction_inspector.core.model import Session, immutable

if TYPE_CHECKING:
    from compaction_inspector.core.replaying.simulation import RoundPoint, Simulation
from compaction_inspector.core.pricing.cost import CALLS, OWN_CALLS, RECORDED_CALLS, Cost
from compaction_inspector.core.pricing.own_calls import CompactionCost, OwnCall, own_calls
from compaction_inspector.core.pricing.rates import (
    INPUT_PARTS,
    PARTS,
    Clock,
    billing_of,
    rates_at,
    source,
    token_parts,
)

_Key = tuple[int, int, int, int | None, tuple[int, int]]


def _key(point: RoundPoint) -> _Key:
    """What a point's price depends on, besides the session (a point with no event)."""
    return (point.message_end, point.tokens_before, point.tokens_after, point.shared, point.call)


@immutable(slots=True)
class _Running:
    """The pricing's running figures before a point: what the next points go on from."""

    before: int | None
    unchanged: bool
    parts: tuple[Decimal, ...]  # by `(*PARTS, CALLS)`
    priced: int
    unreported: int
    rewritten: int
    unpriced: tuple[tuple[str, int], ...]


def _running(
    before: int | None,
    unchanged: bool,
    parts: dict[str, Decimal],
    priced: int,
    unreported: int,
    rewritten: int,
    unpriced: dict[str, int],
) -> _Running:
    return _Running(
        before, unchanged, tuple(parts.values()), priced, unreported, rewritten, tuple(unpriced.items())
    )


_START = _Running(None, True, (Decimal(0),) * (len(PARTS) + 1), 0, 0, 0, ())
_PREFIX_MOST = 1 << 17  # points a prefix holds: a running figure each


@immutable(eq=False, slots=True)
class _Prefix:
    """The points a session's replays have priced before their first compaction (each
    replay is the transcript's requests until its policy or the transcript compacts), and
    the running figures before each and after the last: a replay that sends the same goes on from
    where it parts. Each replay of a sweep or a comparison prices only what it changed."""

    session: Session
    found: Sequence[Response]
    keys: tuple[_Key, ...]
    running: tuple[_Running, ...]  # one more than `keys`

    def reach(self, points: Sequence[RoundPoint]) -> int:
        """How many of `points`, from the first, are priced here."""
        keys, n = self.keys, min(len(points), len(self.keys))
        done = 0
        while done < n and points[done].event is None and _key(points[done]) == keys[done]:
            done += 1
        return done


# by the session's identity: the last few sessions priced (a sweep's worker reads one at a time)
_PREFIXES: dict[int, _Prefix] = {}
on_forget(_PREFIXES.clear)


def _shared_prefix(session: Session, found: Sequence[Response]) -> _Prefix | None:
    known = _PREFIXES.get(id(session))
    if known is not None and known.session is session and known.found is found:
        return known
    if len(_PREFIXES) >= 8:
        _PREFIXES.clear()
    return None


def replay_cost(session: Session, replay: Simulation, found: Sequence[Response] | None = None) -> Cost:
    """What the replay's requests would have cost (docs/cost.md#a-replay): each request
    priced where the transcript reports the response it stands for, at that response's
    model, as that response's usage splits it. What it shares at its start with the
    request before is read from the cache, up to what the real request read (a cache
    expires, or holds less); the rest is written as the real request wrote (5 minutes,
    1 hour, or uncached where the provider has no write price); the output is the real one.
    A compaction's own summarize request is priced apart (`OwnCall.estimated`). Where the
    replay compacted on its own since the transcript's last compaction, the transcript's
    next one is replaced, and its summarize request with it; a request the transcript's
    own compaction left, sent as it was, finds the cache as the real one did. `found`: the
    session's responses, where the caller has them."""
    billing = billing_of(session)
    found = responses(session) if found is None else found
    usage = {r.start: r.usage for r in found}
    clock = Clock(session)
    points = replay.points
    # a compaction's request, by its point: what it sent again, its price, its model and time
    sent_again: dict[int, tuple[int, Decimal, str | None, datetime | None]] = {}
    known = _shared_prefix(session, found)
    done = known.reach(points) if known is not None else 0
    running = known.running[done] if known is not None else _START
    before, unchanged = running.before, running.unchanged
    parts = dict(zip((*PARTS, CALLS), running.parts, strict=True))
    priced, unreported, rewritten = running.priced, running.unreported, running.rewritten
    unpriced = dict(running.unpriced)
    # where a replay goes on from every point the shared prefix holds, its own are added
    recording = known is None or done == len(known.keys)
    keys: list[_Key] = []
    states: list[_Running] = []
    for point in points[done:]:
        if recording:
            states.append(_running(before, unchanged, parts, priced, unreported, rewritten, unpriced))
            if point.event is not None or done + len(keys) >= _PREFIX_MOST:
                recording = False
            else:
                keys.append(_key(point))
        sent, before_sent = point.tokens_after, before if before is not None else point.tokens_after
        shared = before_sent if point.shared is None else min(point.shared, before_sent)
        before = sent
        if point.event is not None and point.event.source == "transcript":
            unchanged = sent == point.tokens_before  # the history the agent's compaction left, as it was
        else:
            unchanged = unchanged and point.event is None and sent == point.tokens_before
        u = usage.get(point.message_end)
        if u is None:
            unreported += 1
            continue
        if unchanged:  # the real request, whose cache may hold more than the request before sent
            read = min(sent, u.cache_read_input_tokens)
        else:  # never more than the real request read: its cache may have expired, or held less
            read = min(shared, sent, u.cache_read_input_tokens)
        # a count of tokens, whether or not the model has a price
        rewritten += max(0, min(before_sent, sent, u.cache_read_input_tokens) - read)
        model = answered_by(u, session.metadata)
        at = clock.at(point.message_end)
        rates = rates_at(model, billing, sent, at) if model else None
        if rates is None:
            unpriced[model or ""] = unpriced.get(model or "", 0) + 1
            continue
        priced += 1
        _, _, five, hour, _ = token_parts(u)
        rest, fresh = sent - read, u.input_tokens + five + hour
        # what it pays for the input it does not read from the cache: split as the real
        # request's was (a part it had none of adds nothing), else all of it uncached
        again = Decimal(0)
        for name, share in zip(INPUT_PARTS, (u.input_tokens, five, hour), strict=True):
            if share:
                paid = rates[name] * rest * share / fresh
                again += paid
                parts[name] += paid
        if not fresh:  # the real request was read whole
            again += rates["uncached input"] * rest
            parts["uncached input"] += rates["uncached input"] * rest
        parts["cache read"] += rates["cache read"] * read
        parts["output"] += rates["output"] * u.output_tokens
        call_in, call_out = point.call
        parts[CALLS] += rates["cache read"] * call_in + rates["output"] * call_out
        if point.event is not None:
            sent_again[id(point)] = (rest, again, model, at)
    if recording:
        states.append(_running(before, unchanged, parts, priced, unreported, rewritten, unpriced))
    if keys and (known is None or done + len(keys) > len(known.keys)):
        head = known.running[:done] if known is not None else []
        _PREFIXES[id(session)] = _Prefix(
            session, found, (*(known.keys[:done] if known is not None else ()), *keys), (*head, *states)
        )
    costs = _compaction_costs(session, replay, found, sent_again, parts)
    return Cost(parts, priced, unpriced, source(), unreported, rewritten, compactions=tuple(costs))


def _compaction_costs(
    session: Session,
    replay: Simulation,
    found: Sequence[Response],
    sent_again: dict[int, tuple[int, Decimal, str | None, datetime | None]],
    parts: dict[str, Decimal],
) -> list[CompactionCost]:
    """Each compaction of the replay: its summarize request (the replay's estimated, the
    transcript's own as in the real cost, added to `parts`, so the two compare like for
    like) and what its point sent again (`sent_again`, by point)."""
    billing = billing_of(session)
    kept = [p for p in replay.points if p.event is not None and p.event.source == "transcript"]
    calls = own_calls(session, found) if kept else {}
    boundaries = sorted(calls)
    costs: list[CompactionCost] = []
    replayed = False  # the replay compacted on its own since the transcript's last compaction
    for point in replay.points:
        event = point.event
        if event is None:
            continue
        entry = sent_again.get(id(point))
        not_read: int | None = entry[0] if entry is not None else None
        paid_again: Decimal | None = entry[1] if entry is not None else None
        model, at = (entry[2], entry[3]) if entry is not None else (None, None)
        call: OwnCall | None = None
        if event.source == "policy":
            replayed = True
            if point.call != (0, 0):
                call = OwnCall.estimated(model, point.call[0], point.call[1], at)
        elif replayed:  # the replay's own compaction replaced it: its history is the transcript's, unpaid
            replayed = False
            continue
        else:
            k = bisect_left(boundaries, point.message_end)
            call = calls[boundaries[k - 1]] if k else None
            if call is not None:
                name = RECORDED_CALLS if call.recorded else OWN_CALLS
                parts[name] = parts.get(name, Decimal(0)) + call.price(billing)
        call_usd = call.price(billing) if call is not None and call.rates(billing) is not None else None
        costs.append(CompactionCost(call, call_usd, not_read, paid_again, at=point.message_end))
    return costs

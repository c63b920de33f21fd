"""Hysteresis planned with token arithmetic over a segment's `Table`: one run of the
tiers on a request (`plan_run`), the request's plan after the history before it (`plan`,
`HysteresisPlan`) and the history post-turn keeps (`Summarized`); the steps of a run
(`expand`) for `run` and a replay alike."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from compaction_inspector.core.measuring.pressure import Meter
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.strategies.base import NO_CALL, TITLES_KEPT
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions, persists
from compaction_inspector.core.strategies.hysteresis.table import Table, droppable, untouchable

# A run of summaries that frees less than this share of the usable window (about as much
# of the context, which is 75 % of it or more when a run starts) is not worth the prompt
# cache it invalidates from the first changed message on (docs/strategies.md#hysteresis): it is skipped.
WORTH = 0.01


@immutable(slots=True)  # a few for every request of a replay
class Phase:
    """A stretch of one run: `summarize` candidates first..last-1, reduce `protect`ion,
    `shrink` to a cap level, or `drop` meta messages."""

    kind: Literal["summarize", "protect", "shrink", "drop"]
    first: int = 0
    last: int = 0
    level: int = 0
    dropped: frozenset[Message] = frozenset()
    dropped_tokens: int = 0
    why: str = ""  # empty: the tier's reason (`Run.reason`), written only when shown


@dataclass
class Run:
    """One run planned over a table: candidates `lo`..`done`-1 summarized at cap `level`."""

    tier: int
    tokens_before: int
    tokens: int
    lo: int
    done: int
    level: int
    protect: int
    options: HysteresisOptions
    meter: Meter  # the request's: its counted tokens to the context it holds
    phases: list[Phase] = field(default_factory=list)
    candidates: bool = True  # were there any when it started
    unworthy: tuple[int, int, int] | None = None  # candidates first..last-1 skipped, and what they'd free

    @property
    def dropped(self) -> frozenset[Message]:
        return next((p.dropped for p in self.phases if p.kind == "drop"), frozenset())

    @property
    def changed(self) -> bool:
        return bool(self.phases) and any(p.kind != "protect" for p in self.phases)

    def reason(self) -> str:
        """Why the run summarizes: the tier its pressure is in."""
        low, middle, high = self.options.thresholds
        band = {1: f"{low}–{middle} %", 2: f"{middle}–{high} %", 3: f"{high} %+"}[self.tier]
        goal = "one volley" if self.tier == 1 else f"down to {self.options.target} %"
        return f"Pressure {self.meter.pressure(self.tokens_before):.1%} is in the {band} tier: {goal}."


def plan_run(
    table: Table,
    tokens: int,
    lo: int,
    pre_tail: Callable[[int], int],
    meta: Callable[[int], tuple[frozenset[Message], int]],
    options: HysteresisOptions,
    meter: Meter,
) -> Run:
    """The run of docs/strategies.md#hysteresis on a request of `tokens` (counted; `meter` says the context
    they hold) whose candidates are `lo` up to `pre_tail(protect)` and whose droppable
    meta messages (with their tokens) are `meta(protect)`."""
    target = options.target / 100
    tier = options.tier(meter.pressure(tokens))
    plan = Run(tier, tokens, tokens, lo, lo, 0, options.protect_volleys, options, meter)
    if tier == 0:
        return plan
    plan.candidates = pre_tail(plan.protect) > lo

    def summarize_until(last: int, why: str = "", limit: int | None = None) -> None:
        """Summarize oldest first while above the target (or `limit` of them)."""
        first, now = plan.done, plan.tokens
        table.fill(last)
        if limit is not None:
            stop = min(last, first + limit)
        elif first == 0:  # the running maximum of the savings finds the first sufficient run
            stop = min(last, bisect_left(table.savings_best, _least_saving(meter, now, target), 0, last + 1))
        else:  # each candidate looked at here is summarized: linear in what is summarized
            stop = first
            while stop < last and meter.pressure(now - saved(table, first, stop)) > target:
                stop += 1
        if stop > first:
            freed = meter.tokens(now) - meter.tokens(now - saved(table, first, stop))
            if freed < WORTH * meter.window.usable:
                plan.unworthy = (first, stop, freed)
                return
            plan.tokens = now - saved(table, first, stop)
            plan.phases.append(Phase("summarize", first, stop, why=why))
            plan.done = stop

    if tier == 1:
        summarize_until(pre_tail(plan.protect), limit=1)
        return plan
    summarize_until(pre_tail(plan.protect))
    if tier < 3 or meter.pressure(plan.tokens) <= target:
        return plan
    if plan.protect > 1:
        plan.protect = 1
        plan.phases.append(Phase("protect"))
        summarize_until(pre_tail(1), "With less of the tail protected,")
    while meter.pressure(plan.tokens) > target and plan.level + 1 < len(table.caps) and plan.done > lo:
        plan.level += 1
        table.fill(plan.done, plan.level)
        plan.tokens += shrunk(table, plan.level, lo, plan.done)
        plan.phases.append(Phase("shrink", level=plan.level))
    if meter.pressure(plan.tokens) > target:
        dropped, dropped_tokens = meta(plan.protect)
        if dropped:
            plan.tokens -= dropped_tokens
            plan.phases.append(Phase("drop", dropped=dropped, dropped_tokens=dropped_tokens))
    return plan


def _least_saving(meter: Meter, tokens: int, target: float) -> int:
    """The least counted saving that brings `tokens` to the target pressure, compared
    exactly as `meter.pressure` compares (the estimate is a few tokens off at most)."""
    s = tokens - meter.counted(target * meter.window.usable)
    while meter.pressure(tokens - s) > target:
        s += 1
    while meter.pressure(tokens - (s - 1)) <= target:
        s -= 1
    return s


def shrunk(table: Table, level: int, first: int, stop: int) -> int:
    """Tokens candidates first..stop-1 change by when their summaries shrink to `level`."""
    now, was = table.summary_tokens[level], table.summary_tokens[level - 1]
    return (now[stop] - now[first]) - (was[stop] - was[first])


def saved(table: Table, first: int, stop: int) -> int:
    """Tokens saved by summarizing candidates first..stop-1 at the first cap."""
    sums = table.summary_tokens[0]
    return (table.raw_tokens[stop] - table.raw_tokens[first]) - (sums[stop] - sums[first])


def table_of(segment: Segment, options: HysteresisOptions) -> Table:
    """The segment's table for this summary cap (the caps after it follow from it)."""
    return segment.memo(("hysteresis", options.summary_chars), lambda: Table(segment, options.caps()))


@dataclass
class _Kept:
    """What the plans over one table keep for the requests after theirs."""

    titles: dict[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)  # `HysteresisPlan.titles`
    runs: dict[tuple[HysteresisOptions, int, bool, Meter], Run] = field(default_factory=dict)  # see `plan`


def _kept(segment: Segment, summary_chars: int) -> _Kept:
    return segment.memo(("hysteresis kept", summary_chars), _Kept)


@immutable(eq=False, slots=True)
class Summarized:
    """A history under hysteresis post-turn: the table's candidates 0..kept-1 replaced by
    `summaries[:kept]` (a list later histories append to), the prelude's meta messages
    `dropped`."""

    table: Table = field(repr=False)
    summaries: list[Message] = field(default_factory=list, repr=False)
    kept: int = 0
    summary_tokens: int = 0
    dropped: frozenset[Message] = frozenset()
    dropped_tokens: int = 0

    def request(self, segment: Segment, end: int) -> tuple[int, int]:
        t, kept = self.table, self.kept
        tokens = t.prefix[end] - t.raw_tokens[kept] + self.summary_tokens - self.dropped_tokens
        return tokens, end - t.raw_messages[kept] + kept - len(self.dropped)

    def history(self, segment: Segment, end: int) -> tuple[Message, ...]:
        return self.table.build(end, self.summaries[: self.kept], self.dropped)


@immutable(eq=False, slots=True)  # one per request of a replay
class HysteresisPlan:
    """Hysteresis of messages[:end] (after the history `was`): the run `plan` of
    docs/strategies.md#hysteresis, over the segment's table; candidate c is volley
    c + `shift` of the request."""

    call = NO_CALL

    segment: Segment
    table: Table
    plan: Run
    end: int
    was: Summarized
    shift: int
    messages_before: int
    persisted: bool
    sent: bool = True

    @property
    def exact(self) -> bool:
        """Asked by a replay only: the scan for what a plan does not model reads every block."""
        return self.end <= self.segment.memo("hysteresis hazard", lambda: _hazard(self.segment))

    @property
    def tokens(self) -> int:
        return self.plan.tokens

    @property
    def changed(self) -> bool:
        return self.plan.changed

    @property
    def messages(self) -> int:
        t, p, kept = self.table, self.plan, self.was.kept
        summarized = p.done - kept
        return (
            self.messages_before
            - (t.raw_messages[p.done] - t.raw_messages[kept])
            + summarized
            - len(p.dropped)
        )

    @property
    def kept_from(self) -> int:
        """After the last volley it summarizes, and after the prelude if it drops from it."""
        t, p = self.table, self.plan
        after = t.span(t.candidates[p.done - 1])[1] if p.done > self.was.kept else 0
        return max(after, t.prelude if p.dropped else 0)

    @property
    def stored(self) -> Summarized | None:
        """The history after it, post-turn (its summaries appended to the list the
        history before it shares, when that history is the list's last)."""
        if not self.persisted or not self.changed:
            return self.was if self.persisted else None
        t, p, was = self.table, self.plan, self.was
        summaries = was.summaries if len(was.summaries) == was.kept else was.summaries[: was.kept]
        summaries += [t.summary(c, p.level) for c in range(was.kept, p.done)]
        t.fill(p.done, p.level)
        sums = t.summary_tokens[p.level]
        return Summarized(
            t,
            summaries,
            p.done,
            was.summary_tokens + sums[p.done] - sums[was.kept],
            was.dropped | p.dropped,
            was.dropped_tokens + sum(x.dropped_tokens for x in p.phases if x.kind == "drop"),
        )

    def titles(self) -> tuple[str, ...]:
        """When its first phase summarizes TITLES_KEPT candidates that change the count,
        the titles depend only on where it starts: kept, as the next requests start there."""
        t, first = self.table, self.plan.phases[0]
        key = (first.first, self.shift)
        alone = first.kind == "summarize" and t.changing[first.last] - t.changing[first.first] >= TITLES_KEPT
        kept: dict[tuple[int, int], tuple[str, ...]] = self.segment.memo(
            ("hysteresis titles", t.caps[0]), dict
        )
        if alone and key in kept:
            return kept[key]
        titles: list[str] = []
        before = self.plan.tokens_before
        for title, _, after, _ in expand(self.plan, t, lambda c: c + self.shift):
            if after != before:
                titles.append(title)
            before = after
            if len(titles) == TITLES_KEPT:
                break
        if alone:
            kept[key] = tuple(titles)
        return tuple(titles)

    def changing(self) -> int:
        """How many steps change the token count, without expanding them."""
        t, p, n = self.table, self.plan, 0
        for phase in p.phases:
            if phase.kind == "summarize":
                n += t.changing[phase.last] - t.changing[phase.first]
            elif phase.kind == "shrink":
                n += shrunk(t, phase.level, p.lo, p.done) != 0
            elif phase.kind == "drop":
                n += phase.dropped_tokens != 0
        return n

    def _state(self) -> tuple[int, int, frozenset[Message]]:
        """What the request it makes summarizes: candidates below, at which cap, and the
        prelude's messages it drops."""
        p = self.plan
        if not p.changed:
            return self.was.kept, 0, self.was.dropped
        return p.done, p.level, self.was.dropped | p.dropped

    def shared(self, previous: HysteresisPlan | None) -> int | None:
        """The request is the same as the one before up to the first volley whose summary
        differs (post-turn: its first new or shrunk summary; preflight, each request
        summarized anew: the first where this request's summaries and the last one's
        part), or the first prelude message one of them drops and the other keeps."""
        t, p, was = self.table, self.plan, self.was
        done, level, dropped = self._state()
        if self.persisted:
            if not p.changed:
                return None
            before = was.summaries[: was.kept]
            c = next(
                (k for k in range(p.lo, was.kept) if before[k].blocks != t.summary(k, level).blocks), was.kept
            )
            summaries = t.context.counter.count_all(before[:c])
            then_dropped = was.dropped
        else:
            then_done, then_level, then_dropped = (
                previous._state() if previous is not None else (0, 0, frozenset[Message]())
            )
            if (done, level, dropped) == (then_done, then_level, then_dropped):
                return None
            c = min(done, then_done)
            if level != then_level:
                c = next(
                    (k for k in range(c) if t.summary(k, level).blocks != t.summary(k, then_level).blocks), c
                )
            if c == done == then_done:
                c = len(t.candidates)  # the same summaries: only the prelude can part
            t.fill(c, level)
            summaries = [t.summary_tokens[level][min(c, len(t.summary_tokens[level]) - 1)]]
        shared = None
        if c < len(t.candidates):
            start = t.span(t.candidates[c])[0]
            t.fill(c, level)
            shared = t.prefix[start] - t.raw_tokens[c] + sum(summaries)
        parted = dropped ^ then_dropped
        if parted:
            first = min(i for i in range(t.prelude) if t.messages[i] in parted)
            shared = t.prefix[first] if shared is None else min(shared, t.prefix[first])
        return shared


def plan(
    segment: Segment, end: int, options: HysteresisOptions, stored: Summarized | None = None
) -> HysteresisPlan:
    t = table_of(segment, options)
    was = stored or Summarized(t)
    kept = was.kept
    # the first volley is no candidate: summaries, or what the third tier left of the prelude
    opened = kept > 0 or len(was.dropped) < min(t.prelude, end)
    count = opened + bisect_left(t.candidates, t.volley_count(end)) - kept  # volleys of the request
    tokens, messages = was.request(segment, end)
    persisted = persists(options)

    def planned(p: Run) -> HysteresisPlan:
        return HysteresisPlan(segment, t, p, end, was, opened - kept, messages, persisted)

    # Preflight: a run that ended above the target at the top tier made every choice
    # "still above the target, go on"; a request over the same volleys with more tokens
    # makes the same choices, so its plan is that one shifted by the tokens added.
    meter = segment.meter(end)
    runs: dict[tuple[HysteresisOptions, int, bool, Meter], Run] = segment.memo(
        ("hysteresis over", id(t)), dict
    )
    over = runs.get((options, count, opened, meter)) if not persisted else None
    if over is not None and tokens >= over.tokens_before:
        return planned(replace(over, tokens_before=tokens, tokens=over.tokens + tokens - over.tokens_before))

    def pre_tail(protect: int) -> int:
        return kept + max(0, count - protect - opened)

    def meta(protect: int) -> tuple[frozenset[Message], int]:
        # a drop takes every meta message of the prelude at once: once is all there is
        if count - protect < 1 or not opened or was.dropped:
            return frozenset(), 0
        return prelude_meta(t)

    p = plan_run(t, tokens, kept, pre_tail, meta, options, meter)
    if not persisted and p.tier == 3 and meter.pressure(p.tokens) > options.target / 100:
        runs[options, count, opened, meter] = p
    return planned(p)


def prelude_meta(table: Table) -> tuple[frozenset[Message], int]:
    """The meta messages of the volley before the first human message: once every
    candidate is summarized, the only volley before the tail that still has any."""
    found = [m for m in table.messages[: table.prelude] if droppable(m)]
    return frozenset(found), sum(table.context.counter.count_all(found))


State = tuple[int, int, frozenset[Message]]  # candidates summarized, cap level, meta dropped


def expand(plan: Run, table: Table, number: Callable[[int], int]) -> Iterator[tuple[str, Phase, int, State]]:
    """Each step of a planned run: title, the phase it is part of, tokens after, state
    after. A replay only wants the titles: `_explanation` writes the rest for `run`."""
    tokens, level, dropped = plan.tokens_before, 0, frozenset[Message]()
    done = plan.lo
    for phase in plan.phases:
        if phase.kind == "summarize":
            for c in range(phase.first, phase.last):
                tokens -= saved(table, c, c + 1)
                yield table.title(c, number(c)), phase, tokens, (c + 1, level, dropped)
            done = phase.last
        elif phase.kind == "protect":
            yield "Reduce tail protection to 1 volley", phase, tokens, (done, level, dropped)
        elif phase.kind == "shrink":
            level = phase.level
            tokens += shrunk(table, level, plan.lo, done)
            yield f"Shrink summaries to {table.caps[level]} characters", phase, tokens, (done, level, dropped)
        else:
            dropped = phase.dropped
            tokens -= phase.dropped_tokens
            title = f"Drop {len(dropped)} injected meta message{'s' if len(dropped) != 1 else ''}"
            yield title, phase, tokens, (done, level, dropped)


def _hazard(segment: Segment) -> int:
    """The first message whose tool pairing a plan's arithmetic does not model: a result
    whose call is in another volley, tool blocks in a message that is never summarized
    or may be dropped, a system message that may be dropped. A request holding it has
    its messages made and repaired."""
    messages = segment.messages
    volley_of_use: dict[str, int] = {}
    bounds = [*segment.volley_starts[1:], len(messages)]
    n = 0
    for i, m in enumerate(messages):
        while i >= bounds[n]:
            n += 1
        if m.role == "system" or m.is_meta or m.is_summary_item:
            if m.role == "system" and droppable(m):
                return i
            if (untouchable(m) or droppable(m)) and any(
                b.type in ("tool_use", "tool_result") for b in m.blocks
            ):
                return i
        # blocks read inline, not through a method: this reads every message
        if m.role == "assistant":
            for b in m.blocks:
                if b.type == "tool_use" and b.id is not None:
                    volley_of_use[b.id] = n
        else:
            for b in m.blocks:
                tid = b.tool_use_id
                if b.type == "tool_result" and tid is not None and volley_of_use.get(tid) != n:
                    return i
    return len(messages)

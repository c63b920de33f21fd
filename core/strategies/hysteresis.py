"""Volley-aware hysteresis compaction (docs/strategies.md#hysteresis; seed 003), all three tiers.

Below the lowest threshold nothing happens. In the first tier one volley (the oldest
candidate) is summarized; in the second, oldest candidates one at a time until pressure
is at or under the target; in the third, as in the second, then tail protection is
reduced, summaries are shrunk (x0.7, floor 200 characters) and injected meta messages
are dropped, last. The protected tail and existing summaries are never summarized.

`preflight` compacts the request about to be sent (ephemeral); `post-turn` prunes the
stored history (persisted). The messages are the same; `simulate` carries them over or not.

Every volley but the first opens with a human message, so the candidates are those
volleys, oldest first, before the protected tail; summarizing one never changes which
later ones are candidates (a summary is not a human message). A run is therefore planned
with token arithmetic over a `Table` of the candidates, and the same plan serves `run`
(which then builds each step's messages when shown) and `Replay` (thousands of requests,
one table).
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from compaction_inspector.core import topic
from compaction_inspector.core.measuring.pressure import Meter
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, record
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.replaying.spliced import Spliced
from compaction_inspector.core.replaying.summary import MIN_SUMMARY_CHARS, shrink, summarize
from compaction_inspector.core.strategies.base import (
    TITLES_KEPT,
    CompactionResult,
    OptionError,
    StatsRecord,
    Steps,
)
from compaction_inspector.core.strategies.declaration import Strategy, check, option

NAME = "hysteresis"
SHRINK = 0.7
# A run of summaries that frees less than this share of the usable window (about as much
# of the context, which is 75 % of it or more when a run starts) is not worth the prompt
# cache it invalidates from the first changed message on (docs/strategies.md#hysteresis): it is skipped.
WORTH = 0.01
Stage = Literal["preflight", "post-turn"]


STAGES: tuple[Stage, ...] = ("preflight", "post-turn")


@dataclass(frozen=True)
class HysteresisOptions:
    thresholds: tuple[int, int, int] = option(
        (75, 85, 95),
        "three whole percents of the usable window, e.g. 75,85,95",
        kind="percents",
        label="thresholds %",
    )
    target: int = option(70, "the percent compaction brings pressure down to", label="target %")
    summary_chars: int = option(
        400, "characters per volley summary", minimum=MIN_SUMMARY_CHARS, label="summary chars"
    )
    protect_volleys: int = option(
        1, "the most recent volleys never summarized", minimum=1, label="protect volleys"
    )
    stage: Stage = option(
        "preflight", "preflight changes the request only; post-turn the stored history",
        kind="choice", choices=STAGES, label="stage",
    )  # fmt: skip

    def __post_init__(self) -> None:
        values = [self.target, *self.thresholds]
        if len(self.thresholds) != 3 or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise OptionError("thresholds must be three whole percents, e.g. 75,85,95")
        if not (0 < self.target < self.thresholds[0] < self.thresholds[1] < self.thresholds[2] < 100):
            raise OptionError(
                f"thresholds {list(self.thresholds)} and target {self.target} must satisfy "
                "0 < target < lowest < middle < highest < 100"
            )
        check(self)

    def tier(self, pressure: float) -> int:
        """0 below the lowest threshold, else 1, 2 or 3."""
        percent = pressure * 100
        low, middle, high = self.thresholds
        return (percent >= low) + (percent >= middle) + (percent >= high)

    def caps(self) -> list[int]:
        """The summary cap, then each shrink of it (x0.7) down to the floor."""
        caps = [self.summary_chars]
        while caps[-1] > MIN_SUMMARY_CHARS:
            caps.append(max(MIN_SUMMARY_CHARS, int(caps[-1] * SHRINK)))
        return caps


def _untouchable(m: Message) -> bool:
    return m.is_summary_item or m.role == "system"


def _droppable(m: Message) -> bool:
    """An injected meta message, the last thing the third tier gives up."""
    return m.is_meta and not m.is_summary_item and not m.is_tool_result


class Table:
    """The volleys of a segment and, for each candidate (a volley opening with a human
    message), its raw messages and tokens and its summary at every cap. Prefix sums over
    candidates make any run of them O(1) to plan; filled lazily, once per segment."""

    def __init__(self, segment: Segment, caps: list[int]):
        self.messages = messages = segment.messages
        self.context = segment.context
        self._whose = (segment.context.session_id, segment.context.facts)  # a summary's session and its facts
        self.caps = caps
        self.prefix = segment.prefix
        self.starts = segment.volley_starts
        self.leading: dict[tuple[int, int], tuple[str, ...]] = {}  # `HysteresisPlan.titles` kept
        self.over: dict[tuple[HysteresisOptions, int, bool, Meter], _Plan] = {}  # see `plan`
        self.candidates = [n for n, i in enumerate(self.starts) if messages[i].is_human]
        self.candidate_of = {n: c for c, n in enumerate(self.candidates)}
        # where the prelude (the volley before the first human message) ends; 0: none
        self.prelude = self.span(0)[1] if self.starts and self.candidate_of.get(0) != 0 else 0
        self.raws: list[tuple[Message, ...]] = []
        self.raw_tokens = [0]  # prefix sums over candidates
        self.raw_messages = [0]
        self.savings_best = [0]  # running maximum of (raw - summary) tokens at the first cap
        self.changing = [0]  # candidates whose summary changes the token count
        self.summary_tokens: list[list[int]] = [[0] for _ in self.caps]  # per cap level
        self._summaries: list[list[Message]] = [[] for _ in self.caps]
        self._titles: dict[tuple[int, int], str] = {}  # by candidate and the number shown
        # the last walk of `build`: (end, level, volleys walked, the messages they became)
        self._last_walk: tuple[int, int, int, list[Message]] | None = None

    def span(self, n: int) -> tuple[int, int]:
        end = self.starts[n + 1] if n + 1 < len(self.starts) else len(self.messages)
        return self.starts[n], end

    def volley_count(self, end: int) -> int:
        """Volleys of the request messages[:end]."""
        return bisect_left(self.starts, end)

    def pre_tail(self, end: int, protect: int) -> int:
        """Candidates of messages[:end] before its protected tail: c < this."""
        return bisect_left(self.candidates, self.volley_count(end) - protect)

    def _fill_raws(self, upto: int) -> None:
        counter = self.context.counter
        while len(self.raws) < upto:
            start, end = self.span(self.candidates[len(self.raws)])
            volley = self.messages[start:end]
            # `_untouchable` spelled out: asked of every message of a long session
            raw = tuple([m for m in volley if not (m.is_summary_item or m.role == "system")])
            self.raws.append(raw)
            tokens = self.prefix[end] - self.prefix[start]
            if len(raw) < len(volley):
                tokens -= sum(counter.count(m) for m in volley if _untouchable(m))
            self.raw_tokens.append(self.raw_tokens[-1] + tokens)
            self.raw_messages.append(self.raw_messages[-1] + len(raw))

    def fill(self, upto: int, level: int = 0) -> None:
        """Make the prefix sums of candidates below `upto` (at cap `level`) available."""
        sums = self.summary_tokens[level]
        if len(sums) > upto:  # asked again on every request of a replay
            return
        # A replay asks for a candidate or two more, request after request: they are
        # made ahead, in batches that double, for the counter to encode many at once.
        upto = min(len(self.candidates), max(upto, 2 * (len(sums) - 1)))
        self._fill_raws(upto)
        counter = self.context.counter
        self.summary(upto - 1, level)
        counts = counter.count_all(self._summaries[level][len(sums) - 1 : upto])  # one batch
        for n in counts:
            c = len(sums) - 1
            sums.append(sums[-1] + n)
            if level == 0:
                saved = self.raw_tokens[c + 1] - self.raw_tokens[c] - n
                self.savings_best.append(max(self.savings_best[-1], self.raw_tokens[c + 1] - sums[-1]))
                self.changing.append(self.changing[-1] + (saved != 0))

    def summary(self, c: int, level: int) -> Message:
        """Candidate c's summary at cap `level`. A shrunk summary is an edit of the larger
        one, so a diff shows it rewritten rather than replaced."""
        made = self._summaries[level]
        while len(made) <= c:
            k = len(made)
            self._fill_raws(k + 1)
            if level == 0:
                made.append(summarize(self.raws[k], self.caps[0], *self._whose))
            else:
                larger = self.summary(k, level - 1)
                made.append(shrink(larger, self.raws[k], self.caps[level], *self._whose))
        return made[c]

    def title(self, c: int, number: int) -> str:
        title = self._titles.get((c, number))
        if title is None:  # a replay asks for the same few titles request after request
            request = topic.title(self.messages[self.starts[self.candidates[c]]].text, 40)
            title = self._titles[c, number] = f"Summarize volley {number}: “{request}”"
        return title

    def builder(self, end: int, done: int, level: int, dropped: frozenset[Message]) -> Callable[[], Spliced]:
        """What builds a step's messages when it is first shown: the first `done`
        candidates summarized at `level`, `dropped` left out. A run's steps are built one
        after another, so each goes on from the walk of the one before (`_last_walk`)."""

        def made() -> Spliced:
            last, walked = self._last_walk, self._walked(end, done)
            if last is None or last[:2] != (end, level) or last[2] > walked:
                last = (end, level, 0, [])
            # copied, never extended in place: another thread may build from the same walk
            out = self._walk(end, done, lambda c: self.summary(c, level), last[2], list(last[3]))
            self._last_walk = (end, level, walked, out)
            return self._finish(end, out, done, dropped)

        return made

    def build(
        self, end: int, summaries: Sequence[Message], dropped: frozenset[Message]
    ) -> tuple[Message, ...]:
        """messages[:end] with the first candidates replaced by `summaries` (a volley's
        system messages and earlier summaries stay) and `dropped` left out."""
        out = self._walk(end, len(summaries), summaries.__getitem__, 0, [])
        return self._finish(end, out, len(summaries), dropped).messages()

    def _walked(self, end: int, done: int) -> int:
        """The volleys of messages[:end] up to the last of the first `done` candidates:
        only these are walked, the rest is one slice."""
        return min(self.candidates[done - 1] + 1 if done else 0, self.volley_count(end))

    def _walk(
        self, end: int, done: int, summary: Callable[[int], Message], start: int, out: list[Message]
    ) -> list[Message]:
        """`out` (the volleys before `start`, walked) with the walked volleys from `start`
        on, the first `done` candidates as their summaries."""
        for n in range(start, self._walked(end, done)):
            begin, stop = self.span(n)
            volley = self.messages[begin : min(stop, end)]
            c = self.candidate_of.get(n)
            if c is None or c >= done:
                out += volley
                continue
            raw = self.raws[c]  # made with its summary
            if len(raw) == len(volley):  # the usual volley: only its summary stays
                out.append(summary(c))
                continue
            out += [summary(c) if m is raw[0] else m for m in volley if _untouchable(m) or m is raw[0]]
        return out

    def _finish(self, end: int, out: list[Message], done: int, dropped: frozenset[Message]) -> Spliced:
        """The walked volleys, then the rest of messages[:end] as one slice; `dropped`
        messages (the prelude's, never in a summarized volley) left out once."""
        walked = self._walked(end, done)
        rest = self.starts[walked] if walked < len(self.starts) else end
        return Spliced(tuple(out), self.messages, min(rest, end), end, dropped)


@record()  # a few for every request of a replay
class _Phase:
    """A stretch of one run: `summarize` candidates first..last-1, reduce `protect`ion,
    `shrink` to a cap level, or `drop` meta messages."""

    kind: Literal["summarize", "protect", "shrink", "drop"]
    first: int = 0
    last: int = 0
    level: int = 0
    dropped: frozenset[Message] = frozenset()
    dropped_tokens: int = 0
    why: str = ""  # empty: the tier's reason (`_Plan.reason`), written only when shown


@dataclass
class _Plan:
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
    phases: list[_Phase] = field(default_factory=list)
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


def _plan(
    table: Table,
    tokens: int,
    lo: int,
    pre_tail: Callable[[int], int],
    meta: Callable[[int], tuple[frozenset[Message], int]],
    options: HysteresisOptions,
    meter: Meter,
) -> _Plan:
    """The run of docs/strategies.md#hysteresis on a request of `tokens` (counted; `meter` says the context
    they hold) whose candidates are `lo` up to `pre_tail(protect)` and whose droppable
    meta messages (with their tokens) are `meta(protect)`."""
    target = options.target / 100
    tier = options.tier(meter.pressure(tokens))
    plan = _Plan(tier, tokens, tokens, lo, lo, 0, options.protect_volleys, options, meter)
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
            while stop < last and meter.pressure(now - _saved(table, first, stop)) > target:
                stop += 1
        if stop > first:
            freed = meter.tokens(now) - meter.tokens(now - _saved(table, first, stop))
            if freed < WORTH * meter.window.usable:
                plan.unworthy = (first, stop, freed)
                return
            plan.tokens = now - _saved(table, first, stop)
            plan.phases.append(_Phase("summarize", first, stop, why=why))
            plan.done = stop

    if tier == 1:
        summarize_until(pre_tail(plan.protect), limit=1)
        return plan
    summarize_until(pre_tail(plan.protect))
    if tier < 3 or meter.pressure(plan.tokens) <= target:
        return plan
    if plan.protect > 1:
        plan.protect = 1
        plan.phases.append(_Phase("protect"))
        summarize_until(pre_tail(1), "With less of the tail protected,")
    while meter.pressure(plan.tokens) > target and plan.level + 1 < len(table.caps) and plan.done > lo:
        plan.level += 1
        table.fill(plan.done, plan.level)
        plan.tokens += _shrunk(table, plan.level, lo, plan.done)
        plan.phases.append(_Phase("shrink", level=plan.level))
    if meter.pressure(plan.tokens) > target:
        dropped, dropped_tokens = meta(plan.protect)
        if dropped:
            plan.tokens -= dropped_tokens
            plan.phases.append(_Phase("drop", dropped=dropped, dropped_tokens=dropped_tokens))
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


def _shrunk(table: Table, level: int, first: int, stop: int) -> int:
    """Tokens candidates first..stop-1 change by when their summaries shrink to `level`."""
    now, was = table.summary_tokens[level], table.summary_tokens[level - 1]
    return (now[stop] - now[first]) - (was[stop] - was[first])


def _saved(table: Table, first: int, stop: int) -> int:
    """Tokens saved by summarizing candidates first..stop-1 at the first cap."""
    sums = table.summary_tokens[0]
    return (table.raw_tokens[stop] - table.raw_tokens[first]) - (sums[stop] - sums[first])


def _table(segment: Segment, options: HysteresisOptions) -> Table:
    """The segment's table for this summary cap (the caps after it follow from it)."""
    return segment.memo(("hysteresis", options.summary_chars), lambda: Table(segment, options.caps()))


@record(eq=False)
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


@record(eq=False)  # one per request of a replay
class HysteresisPlan:
    """Hysteresis of messages[:end] (after the history `was`): the run `plan` of
    docs/strategies.md#hysteresis, over the segment's table; candidate c is volley
    c + `shift` of the request."""

    segment: Segment
    table: Table
    plan: _Plan
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
        if alone and key in t.leading:
            return t.leading[key]
        titles: list[str] = []
        before = self.plan.tokens_before
        for title, _, after, _ in _expand(self.plan, t, lambda c: c + self.shift):
            if after != before:
                titles.append(title)
            before = after
            if len(titles) == TITLES_KEPT:
                break
        if alone:
            t.leading[key] = tuple(titles)
        return tuple(titles)

    def changing(self) -> int:
        """How many steps change the token count, without expanding them."""
        t, p, n = self.table, self.plan, 0
        for phase in p.phases:
            if phase.kind == "summarize":
                n += t.changing[phase.last] - t.changing[phase.first]
            elif phase.kind == "shrink":
                n += _shrunk(t, phase.level, p.lo, p.done) != 0
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
    t = _table(segment, options)
    was = stored or Summarized(t)
    kept = was.kept
    # the first volley is no candidate: summaries, or what the third tier left of the prelude
    opened = kept > 0 or len(was.dropped) < min(t.prelude, end)
    count = opened + bisect_left(t.candidates, t.volley_count(end)) - kept  # volleys of the request
    tokens, messages = was.request(segment, end)
    persisted = _persists(options)

    def planned(p: _Plan) -> HysteresisPlan:
        return HysteresisPlan(segment, t, p, end, was, opened - kept, messages, persisted)

    # Preflight: a run that ended above the target at the top tier made every choice
    # "still above the target, go on"; a request over the same volleys with more tokens
    # makes the same choices, so its plan is that one shifted by the tokens added.
    meter = segment.meter(end)
    over = t.over.get((options, count, opened, meter)) if not persisted else None
    if over is not None and tokens >= over.tokens_before:
        return planned(replace(over, tokens_before=tokens, tokens=over.tokens + tokens - over.tokens_before))

    def pre_tail(protect: int) -> int:
        return kept + max(0, count - protect - opened)

    def meta(protect: int) -> tuple[frozenset[Message], int]:
        # a drop takes every meta message of the prelude at once: once is all there is
        if count - protect < 1 or not opened or was.dropped:
            return frozenset(), 0
        return _prelude_meta(t)

    p = _plan(t, tokens, kept, pre_tail, meta, options, meter)
    if not persisted and p.tier == 3 and meter.pressure(p.tokens) > options.target / 100:
        t.over[options, count, opened, meter] = p
    return planned(p)


def run(
    messages: Sequence[Message], options: HysteresisOptions, context: Context
) -> CompactionResult[HysteresisStats]:
    segment = Segment(messages, context)
    messages, end = segment.messages, len(segment)
    planned = plan(segment, end, options)
    table, p = planned.table, planned.plan
    steps = Steps(messages, context, p.tokens_before)
    meter = context.meter
    if p.tier == 0:
        low = options.thresholds[0]
        steps.add(
            "Below the lowest threshold",
            f"Pressure {meter.pressure(p.tokens):.1%} is under {low} %: "
            f"nothing runs until it crosses {low} % again.",
            messages,
        )
    elif not p.candidates:
        steps.add("No candidates", "Every older volley is a summary or protected.", messages)
    elif p.unworthy is not None and not p.changed:
        first, last, freed = p.unworthy
        which = (
            f"volley {first + planned.shift}"
            if last == first + 1
            else f"volleys {first + planned.shift}–{last - 1 + planned.shift}"
        )
        steps.add(
            "Not worth it",
            f"{p.reason()} Summarizing {which} would free {freed:,} tokens, under {WORTH:.0%} of the "
            f"usable window's {meter.window.usable:,}: less than the prompt cache it would "
            "invalidate. Nothing runs.",
            messages,
        )
    for title, phase, tokens, state in _expand(p, table, lambda c: c + planned.shift):
        done, level, dropped = state
        steps.add_planned(
            title,
            _explanation(p, table, phase, state),
            table.builder(end, done, level, dropped),
            tokens,
        )
    final = tuple(steps.repair_pairing())
    after_tokens = steps.context_tokens
    over_budget = after_tokens > context.window.usable
    if over_budget:
        steps.add(
            "Over budget",
            f"{after_tokens:,} tokens still exceed the usable window of {context.window.usable:,}: "
            "the request cannot be made to fit.",
            final,
        )
    stats = HysteresisStats(
        stage=options.stage,
        persisted=_persists(options),
        triggered=p.tier > 0,
        tier=p.tier,
        thresholds=options.thresholds,
        target=options.target,
        pressure_before=round(meter.pressure(p.tokens_before), 6),
        pressure_after=round(context.window.pressure(after_tokens), 6),
        tokens_before=meter.tokens(p.tokens_before),
        tokens_after=after_tokens,
        messages_before=len(messages),
        messages_after=len(final),
        volleys_summarized=p.done,
        protect_volleys=p.protect,
        summary_chars=table.caps[p.level],
        meta_dropped=len(p.dropped),
        over_target=context.window.pressure(after_tokens) > options.target / 100,
        over_budget=over_budget,
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


@dataclass(frozen=True, kw_only=True)
class HysteresisStats(StatsRecord):
    strategy: str = NAME
    stage: Stage
    persisted: bool
    triggered: bool
    tier: int  # 0 below the lowest threshold, else 1, 2 or 3
    thresholds: tuple[int, int, int]
    target: int
    pressure_before: float
    pressure_after: float
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    volleys_summarized: int
    protect_volleys: int  # as the run left it (the third tier may lower it)
    summary_chars: int  # the cap the run ended at
    meta_dropped: int
    over_target: bool
    over_budget: bool  # still over the usable window

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("tier", "triggered", "volleys_summarized", "over_budget")


def _persists(options: HysteresisOptions) -> bool:
    return options.stage == "post-turn"


def _fires(options: HysteresisOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    return options.tier(context.window.pressure(tokens)) > 0  # `tokens`: the context's


def _label(options: HysteresisOptions) -> str:
    return f"hysteresis {'/'.join(map(str, options.thresholds))}→{options.target} ({options.stage})"


def _prelude_meta(table: Table) -> tuple[frozenset[Message], int]:
    """The meta messages of the volley before the first human message: once every
    candidate is summarized, the only volley before the tail that still has any."""
    found = [m for m in table.messages[: table.prelude] if _droppable(m)]
    return frozenset(found), sum(table.context.counter.count_all(found))


_State = tuple[int, int, frozenset[Message]]  # candidates summarized, cap level, meta dropped


def _expand(
    plan: _Plan, table: Table, number: Callable[[int], int]
) -> Iterator[tuple[str, _Phase, int, _State]]:
    """Each step of a planned run: title, the phase it is part of, tokens after, state
    after. A replay only wants the titles: `_explanation` writes the rest for `run`."""
    tokens, level, dropped = plan.tokens_before, 0, frozenset[Message]()
    done = plan.lo
    for phase in plan.phases:
        if phase.kind == "summarize":
            for c in range(phase.first, phase.last):
                tokens -= _saved(table, c, c + 1)
                yield table.title(c, number(c)), phase, tokens, (c + 1, level, dropped)
            done = phase.last
        elif phase.kind == "protect":
            yield "Reduce tail protection to 1 volley", phase, tokens, (done, level, dropped)
        elif phase.kind == "shrink":
            level = phase.level
            tokens += _shrunk(table, level, plan.lo, done)
            yield f"Shrink summaries to {table.caps[level]} characters", phase, tokens, (done, level, dropped)
        else:
            dropped = phase.dropped
            tokens -= phase.dropped_tokens
            title = f"Drop {len(dropped)} injected meta message{'s' if len(dropped) != 1 else ''}"
            yield title, phase, tokens, (done, level, dropped)


def _explanation(plan: _Plan, table: Table, phase: _Phase, state: _State) -> str:
    """Why a step of `_expand` was taken."""
    if phase.kind == "summarize":
        c = state[0] - 1
        return (
            f"{phase.why or plan.reason()} {len(table.raws[c])} messages "
            f"become one summary of {len(table.summary(c, 0).text)} characters."
        )
    if phase.kind == "protect":
        return "Still above the target at the highest tier: only the latest volley stays protected."
    if phase.kind == "shrink":
        return (
            f"Still above the target: every summary of this run is rewritten at ×{SHRINK} "
            f"of its budget (never below {MIN_SUMMARY_CHARS})."
        )
    return "Non-essential injections go last, when nothing else brings pressure down."


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
            if m.role == "system" and _droppable(m):
                return i
            if (_untouchable(m) or _droppable(m)) and any(
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


def _tune(options: HysteresisOptions, what: str, points: int) -> HysteresisOptions:
    """A tuning key moves the target, or the three thresholds together, by `points`."""
    if what == "target":
        return dataclasses.replace(options, target=options.target + points)
    low, middle, high = options.thresholds
    return dataclasses.replace(options, thresholds=(low + points, middle + points, high + points))


STRATEGY = Strategy(
    name=NAME,
    label="Hysteresis",
    description="summarize old volleys when pressure crosses 75 / 85 / 95 %",
    options=HysteresisOptions,
    run=run,
    plan=plan,
    fires=_fires,
    persists=_persists,
    policy_label=_label,
    contrast=lambda options: dataclasses.replace(options, stage="post-turn"),
    bands=lambda options: (options.thresholds, options.target),
    tune=_tune,
)

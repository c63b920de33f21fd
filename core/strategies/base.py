"""What every strategy shares: its context, its steps and its one result type.

A strategy's rule is one function, `plan(segment, end, options, stored) -> Plan`: the
arithmetic of what it does to a request. `run(messages, options, context)` is that plan
made into messages and steps, with the one pairing repair; `core.replaying.simulate` asks the same
plan of every request of a replay. Nothing mutates its input; kept messages are passed
on as the same objects, so token counts are reused and diffs are exact.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from functools import cached_property
from threading import Lock
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from compaction_inspector.core.caching.memo import on_forget
from compaction_inspector.core.measuring.pairing import (
    Repairs,
    check,
    fixable,
    repair,
    repaired_like,
    repairs_of,
)
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import MAX_COUNT, Message, immutable, shared_ends
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.replaying.spliced import Made, Spliced, made_messages
from compaction_inspector.core.reporting.diff import Diff, diff
from compaction_inspector.core.text import shown


class OptionError(ValueError):
    """An option is out of range; the message names the key and what is allowed."""


@immutable(eq=False)
class Step:
    """One visible change: what it did, why, the messages after it and the diff.

    The message lists are built when first asked for: a replay runs many steps and
    shows none of them, and a strategy that plans its steps arithmetically (hysteresis)
    need not copy the whole transcript once per step."""

    title: str
    explanation: str
    build_after: Callable[[], Made] = field(repr=False)
    build_before: Callable[[], Made] = field(repr=False)
    tokens_before: int
    tokens_after: int
    pressure_before: float
    pressure_after: float
    counted_delta: int = 0  # counted tokens it changes the messages by (the figures above are rounded)

    @cached_property
    def made(self) -> Made:
        return self.build_after()

    @cached_property
    def made_before(self) -> Made:
        return self.build_before()

    @cached_property
    def messages(self) -> tuple[Message, ...]:
        return made_messages(self.made)

    @cached_property
    def before(self) -> tuple[Message, ...]:
        return made_messages(self.made_before)

    @property
    def message_count(self) -> int:
        return len(self.made)

    @cached_property
    def diff(self) -> Diff:
        before, after = self.made_before, self.made
        if isinstance(before, Spliced) and isinstance(after, Spliced):
            shared = before.shared(after)
            if shared is not None:  # only what comes before the slice both end with is walked
                return diff(shared[0], shared[1], self.tokens_before, self.tokens_after, shared[2])
        return diff(self.before, self.messages, self.tokens_before, self.tokens_after)

    def forget(self) -> None:
        """Let go of the lists and diff built on demand (on a long session a step's are
        megabytes); asking again rebuilds them from the same messages."""
        for name in ("made", "made_before", "messages", "before", "diff"):
            self.__dict__.pop(name, None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "explanation": self.explanation,
            "message_count": self.message_count,
            "diff": self.diff.to_dict(),
            "pressure_before": round(self.pressure_before, 6),
            "pressure_after": round(self.pressure_after, 6),
        }


def each_step(steps: Sequence[Step]) -> Iterator[Step]:
    """The steps in order, each let go of (`Step.forget`) once the next is done with it
    (a step's lists are the next one's `before`): a report over thousands of steps of a
    long session holds two steps' lists at a time rather than all of them."""
    previous: Step | None = None
    for step in steps:
        yield step
        if previous is not None:
            previous.forget()
        previous = step


class Stats(Protocol):
    """A strategy's figures for one run: a frozen dataclass of its own, with the same
    fields on every run."""

    HIGHLIGHTS: ClassVar[tuple[str, ...]]  # the fields a one-line summary shows
    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass: a run's figures are replaced, not set

    def to_dict(self) -> dict[str, Any]: ...


class StatsRecord:
    """The `to_dict` every strategy's stats share: each field by its JSON name
    (`JSON_NAMES`, else its own), a tuple as a list."""

    JSON_NAMES: ClassVar[Mapping[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        fields = dataclasses.asdict(self)  # type: ignore[call-overload]
        return {self.JSON_NAMES.get(k, k): list(v) if isinstance(v, tuple) else v for k, v in fields.items()}


def highlights(stats: Stats) -> dict[str, Any]:
    """The fields of a one-line summary that say something (not None, False or 0)."""
    values = {k: getattr(stats, k) for k in stats.HIGHLIGHTS}
    return {k: v for k, v in values.items() if v not in (None, False, 0)}


S = TypeVar("S", bound=Stats, covariant=True)  # a strategy's own stats
ST = TypeVar("ST", bound=Stats)


@immutable()
class CompactionResult(Generic[S]):
    """What a run made: the request after it (None when nothing safe remains), its own
    typed stats and its steps."""

    strategy: str
    messages: tuple[Message, ...] | None  # None when nothing safe remains
    stats: S
    steps: tuple[Step, ...]
    error: str | None = None  # why nothing can be sent, when `messages` is None
    # the compaction's own call, a summarize request: context tokens sent and written (none: 0)
    call_input: int = 0
    call_output: int = 0


TITLES_KEPT = 3
NO_CALL = (0, 0)  # a plan that makes no summarize request of its own
REPAIR_TITLE = "Repair tool pairing"


class Plan(Protocol):
    """What a strategy makes of one request, `segment.messages[:end]` (as a persisted
    strategy's stored history has it), worked out without making the messages.

    `run` makes the messages from it and repairs their pairing once; a replay uses the
    figures as they are where they are exact (`exact`, and nothing the last request's
    missing results are put beside is changed: `kept_from`), else makes the messages."""

    @property
    def tokens(self) -> int:
        """Of the request after it, before any pairing repair."""
        ...

    @property
    def messages(self) -> int:
        """How many messages that request holds."""
        ...

    @property
    def changed(self) -> bool:
        """False: the request goes as it is."""
        ...

    @property
    def sent(self) -> bool:
        """False: nothing can be sent (a retry refused for good)."""
        ...

    @property
    def exact(self) -> bool:
        """The messages it makes need no pairing repair of their own."""
        ...

    @property
    def kept_from(self) -> int:
        """messages[kept_from:end] stay as they are, at the end of the request."""
        ...

    @property
    def stored(self) -> Any:
        """A persisted strategy's history after it (None for an ephemeral one)."""
        ...

    @property
    def call(self) -> tuple[int, int]:
        """The context tokens its own summarize request sends and writes (`NO_CALL`: none)."""
        ...

    def titles(self) -> tuple[str, ...]:
        """The first TITLES_KEPT steps that change the token count."""
        ...

    def changing(self) -> int:
        """How many steps change the token count."""
        ...

    def shared(self, previous: Any) -> int | None:
        """Counted tokens at the start of the request it makes that the request before it
        sent the same (`previous`: the strategy's plan of that request, or None), where a
        prompt cache stops being read (docs/cost.md#a-replay); None: that whole request, which
        this one only adds to."""
        ...


@immutable()
class AtPointPlan:
    """The plan of an agent's own auto-compact (docs/agents.md): the request goes as it is
    until its context reaches the point; then the run makes the new history, and a replay
    makes the messages (`exact` is False)."""

    call = NO_CALL

    tokens: int
    messages: int
    changed: bool
    exact: bool
    sent: bool = True
    kept_from: int = 0
    stored: None = None

    @staticmethod
    def of(
        segment: Segment, end: int, point: int | None, beside: int = 0, count: int | None = None
    ) -> AtPointPlan:
        """`point` None: the agent's rule leaves none in this window, so it never fires.
        `beside`: what the agent counts besides the context the request holds; `count`:
        what it counted, where the transcript records it (both are then left aside)."""
        tokens = segment.prefix[end]
        counted = count if count is not None else segment.meter(end).tokens(tokens) + beside
        fires = point is not None and counted >= point
        return AtPointPlan(tokens, end, fires, exact=not fires)

    def titles(self) -> tuple[str, ...]:
        return ("Auto-compact",) if self.changed else ()

    def changing(self) -> int:
        return int(self.changed)

    def shared(self, previous: Any) -> int | None:
        return None  # when it changes the request a replay makes the messages and compares them


class Steps:
    """Builds the step list of one run, each step diffed against the one before."""

    def __init__(self, messages: Sequence[Message], context: Context, tokens: int | None = None) -> None:
        """`tokens`, if the caller knows it, is the messages' counted total."""
        self.context = context
        self.meter = context.meter
        self.source = tuple(messages)
        start = Spliced.whole(self.source)
        self._latest: Callable[[], Made] = lambda: start
        self.start_tokens = self._tokens = context.tokens(start.base) if tokens is None else tokens
        self.steps: list[Step] = []

    @classmethod
    def of(cls, messages: Sequence[Message], context: Context) -> tuple[Segment, Steps]:
        """A run's start: the index of `messages` (a run plans over it) and the steps from
        them, at the counted total it knows."""
        segment = Segment(messages, context)
        return segment, cls(segment.messages, context, segment.prefix[len(segment)])

    @property
    def current(self) -> tuple[Message, ...]:
        return made_messages(self._latest())

    @property
    def tokens(self) -> int:
        """Counted tokens of the current messages, known without counting them again."""
        return self._tokens

    @property
    def context_tokens(self) -> int:
        """The context the current messages hold (`Context.meter`)."""
        return self.meter.tokens(self._tokens)

    def add(self, title: str, explanation: str, after: Sequence[Message]) -> None:
        frozen = tuple(after)
        self.add_planned(title, explanation, lambda: frozen, self.context.tokens(frozen))

    def add_planned(self, title: str, explanation: str, build: Callable[[], Made], tokens_after: int) -> None:
        """A step whose messages `build` makes on demand (as a `Spliced` list when it can:
        its diff is then quick); `tokens_after` must be their total."""
        step = Step(
            title=title,
            explanation=explanation,
            build_after=build,
            build_before=self._latest,
            tokens_before=self.meter.tokens(self._tokens),
            tokens_after=self.meter.tokens(tokens_after),
            pressure_before=self.meter.pressure(self._tokens),
            pressure_after=self.meter.pressure(tokens_after),
            counted_delta=tokens_after - self._tokens,
        )
        self.steps.append(step)
        self._latest = lambda: step.made
        self._tokens = tokens_after

    def repair_pairing(self) -> tuple[Message, ...]:
        """Make the current messages a valid request, as a step of its own if needed."""
        current = self.current
        known = _known_repairs(self.source)
        like = repaired_like(known, current) if known is not None else None
        problems = like.problems if like is not None else check(current)
        mended = fixable(problems)
        if mended:
            kinds = Counter(p.kind.replace("_", " ") for p in mended)
            what = ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items()))
            added: Sequence[Message]
            removed: Sequence[Message]
            if like is not None:
                repaired = tuple(like.messages)
                added, removed = like.added, like.removed
            else:
                repaired = tuple(repair(current, problems))
                # only what lies between the shared ends changed: most often one message
                # added near the end of a long request, not worth counting the request again
                head, tail = shared_ends(current, repaired)
                added, removed = repaired[head : len(repaired) - tail], current[head : len(current) - tail]
            delta = self.context.tokens(added) - self.context.tokens(removed)
            self.add_planned(
                REPAIR_TITLE,
                f"The request would be invalid ({what}); "
                "repaired before sending, as an agent's client repairs it.",
                lambda: repaired,
                self._tokens + delta,
            )
        return self.current


# The requests runs started from lately, each one's check and repair made once a second
# run starts from it (`repaired_like`): a session's request, which every row of compare,
# each option a tuning key tries and the strategy view run on. Each of a replay's
# requests is run on once, so it is never checked twice to make them.
_STARTED: OrderedDict[tuple[Message, ...], Repairs | bool] = OrderedDict()  # True: seen once
_STARTED_KEPT = 4
_STARTED_LOCK = Lock()  # the app's workers run strategies in threads
on_forget(_STARTED.clear)


def _known_repairs(source: tuple[Message, ...]) -> Repairs | None:
    """`source`'s `Repairs` from the second run that starts from it (None before, or
    where it has none)."""
    with _STARTED_LOCK:
        found = _STARTED.get(source)
        if found is None:
            _STARTED[source] = True
            if len(_STARTED) > _STARTED_KEPT:
                _STARTED.popitem(last=False)
            return None
        _STARTED.move_to_end(source)
    if found is True:
        found = repairs_of(source) or False
        with _STARTED_LOCK:
            _STARTED[source] = found
    return found if isinstance(found, Repairs) else None


def ready(messages: Sequence[Message]) -> Callable[[], tuple[Message, ...]]:
    """A step's message list already made, for `Step`'s builders (a loop's current list,
    bound now rather than when the step is first shown)."""
    made = tuple(messages)
    return lambda: made


def finish(
    name: str, steps: Steps, stats: ST, call: tuple[int, int] = (0, 0), **fields: Any
) -> CompactionResult[ST]:
    """A run's result: the current messages made a valid request (a transcript already
    invalid is still not sent so), and `stats` (a dataclass with `messages_after` and
    `tokens_after`) with what they leave, and `fields`; `call`, the context tokens its
    own summarize request sent and wrote."""
    final = steps.repair_pairing()
    stats = replace(stats, messages_after=len(final), tokens_after=steps.context_tokens, **fields)
    return CompactionResult(name, final, stats, tuple(steps.steps), call_input=call[0], call_output=call[1])


def positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise OptionError(f"{name} must be an integer >= {minimum} and <= 2**53, not {shown(value)}")
    return value

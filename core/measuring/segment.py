"""One index per segment: what every strategy and replay reads of a message list, made
once and passed explicitly.

A segment is the messages between two of the transcript's own compactions (or any list a
strategy runs on). Its index holds the prefix sums of the token counts, where API rounds
and volleys start, the human messages before each index, where tool pairing first goes
wrong and where the last assistant turn starts. Strategies keep their own tables of a
segment (hysteresis's candidate volleys, microcompact's clearable results) in `memo`, so
a replay's thousands of requests, and the runs made while tuning, share them.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from itertools import accumulate
from operator import attrgetter
from typing import Any, TypeVar

from compaction_inspector.core.measuring.grouping import api_round_starts, volley_starts
from compaction_inspector.core.measuring.pairing import (
    check,
    fixable,
    last_assistant_turn,
    repair,
    repair_indexed,
    sent_order,
)
from compaction_inspector.core.measuring.pressure import Meter
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.context import Context

T = TypeVar("T")
_is_human = attrgetter("is_human")


@immutable()
class Pairing:
    """Where a segment's tool pairing stands.

    `valid_until`: a request of the messages before this index needs no pairing repair
    (its first problem, or a message object given twice, which defeats identity).
    `tail`: where the last assistant turn starts when the only problems from there are
    calls nothing answers yet (a session cut off mid-tool), else the end. `repaired`:
    the messages from `tail` as repair leaves them, when there is such a turn. `broken`:
    a problem before `tail`, so every request from there is repaired before it is sent."""

    valid_until: int
    tail: int
    repaired: tuple[Message, ...] | None
    broken: bool


class Segment:
    """The index of one message list (see the module's docstring)."""

    def __init__(self, messages: Sequence[Message], context: Context, base: int | None = None) -> None:
        """`base`: where the messages begin in the session whose context model
        `context` holds (None: a list of its own, every request measured by `context.meter`)."""
        self.messages = tuple(messages)
        self.context = context
        self.base = base
        # [i] is the tokens of messages[:i]
        self.prefix: list[int] = list(accumulate(context.counter.count_all(self.messages), initial=0))
        self._made: dict[str, Any] = {}  # the index's parts, shared by `fresh` copies
        self._meters: dict[int, Meter] = {}  # each request's, asked by every replay: shared too
        self._memo: dict[Hashable, Any] = {}  # strategies' tables, a copy's own

    def __len__(self) -> int:
        return len(self.messages)

    def tokens(self, start: int, end: int) -> int:
        return self.prefix[end] - self.prefix[start]

    def meter(self, end: int) -> Meter:
        """What the counted tokens of the request messages[:end] stand for (docs/pressure.md)."""
        model = self.context.model
        if model is None or self.base is None:
            return self.context.meter
        found = self._meters.get(end)
        if found is None:
            found = self._meters[end] = model.meter(self.base + end, self.context.window)
        return found

    def _index(self, name: str, make: Callable[[], T]) -> T:
        """A part of the index, made when first asked for and shared with `fresh` copies."""
        return _once(self._made, name, make)

    @property
    def round_starts(self) -> list[int]:
        return self._index("round_starts", lambda: api_round_starts(self.messages))

    @property
    def round_ends(self) -> list[int]:
        return self._index("round_ends", lambda: [*self.round_starts[1:], len(self.messages)])

    @property
    def volley_starts(self) -> list[int]:
        return self._index("volley_starts", lambda: volley_starts(self.messages))

    @property
    def humans(self) -> list[int]:
        """[i] is how many human messages come before messages[i] (trim's turn count)."""
        return self._index("humans", lambda: list(accumulate(map(_is_human, self.messages), initial=0)))

    @property
    def members(self) -> frozenset[Message]:
        """Its messages, to ask whether one is the transcript's."""
        return self._index("members", lambda: frozenset(self.messages))

    @property
    def in_order(self) -> bool:
        """Sent in its own order: no response's lines have tool results between them."""
        return self._index("in_order", lambda: sent_order(self.messages) is None)

    @property
    def pairing(self) -> Pairing:
        return self._index("pairing", self._pairing)

    def _pairing(self) -> Pairing:
        messages = self.messages
        problems = fixable(check(messages))
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
        return Pairing(min([repeat, *(p.index for p in problems)]), tail, repaired, bool(problems))

    @property
    def repaired(self) -> Repaired | None:
        """The segment as the agent sends it when its pairing breaks before the last
        turn (None when it does not): the agent repairs every request from the break
        on, so a replay plans them on this form instead of repairing each anew."""
        made = self._index("repaired", self._repaired)
        return made if isinstance(made, Repaired) else None

    def _repaired(self) -> Repaired | bool:
        if not self.pairing.broken:
            return False  # not None: made once, like the other parts
        messages, ends = repair_indexed(self.messages)
        return Repaired(_RepairedSegment(self, messages, ends), ends)

    def fresh(self) -> Segment:
        """The same index (shared, as it is made) without strategy tables, for a replay
        of its own: tables grow as they are asked, so two replays (in two workers) never
        share one."""
        other = copy.copy(self)
        other._memo = {}
        return other

    def memo(self, key: Hashable, make: Callable[..., T], *args: Any) -> T:
        """A strategy's table of this segment, `make(*args)` made once for `key`."""
        return _once(self._memo, key, make, *args)


def _once(store: dict[Any, Any], key: Hashable, make: Callable[..., T], *args: Any) -> T:
    found = store.get(key)
    if found is None:
        found = store[key] = make(*args)
    return found


class _RepairedSegment(Segment):
    """A repaired segment's index. A request the transcript reports is measured as that
    report: the agent sent it repaired, so what repair adds is already in the reported
    prompt the meter was fitted to."""

    def __init__(self, original: Segment, messages: Sequence[Message], ends: Sequence[int]) -> None:
        super().__init__(messages, original.context, original.base)
        self.original = original
        self.back = [0] * (len(messages) + 1)  # [j]: the transcript's prefix messages[:j] comes of
        for k, j in enumerate(ends):
            self.back[j] = k
        for j in range(1, len(self.back)):
            self.back[j] = max(self.back[j], self.back[j - 1])

    def meter(self, end: int) -> Meter:
        original = self.original
        if original.context.model is None or original.base is None:
            return original.meter(self.back[end])
        found = self._meters.get(end)
        if found is None:
            k = self.back[end]
            meter = original.meter(k)
            added = self.prefix[end] - original.prefix[k]
            found = self._meters[end] = replace(meter, overhead=meter.overhead - meter.scale * added)
        return found


@immutable()
class Repaired:
    """A segment as tool-pairing repair leaves it (`Segment.repaired`)."""

    segment: Segment
    ends: list[int]  # [k]: how many of its messages the transcript's messages[:k] become


class Segments:
    """A session's messages cut at the transcript's own compactions, each part's index
    made when first asked for. The app keeps one per session and context, so the replay
    after each change of an option reuses the indexes (each replay `fresh` copies)."""

    def __init__(self, messages: Sequence[Message], context: Context) -> None:
        self.messages = tuple(messages)
        self.context = context
        self.round_starts = api_round_starts(self.messages)
        self.round_ends = [*self.round_starts[1:], len(self.messages)]
        self.boundaries = [i for i, m in enumerate(self.messages) if m.is_compact_boundary]
        self._made: dict[int, Segment] = {}
        # the last replays of these segments and what they cost, by policy (core.inspection)
        self.replayed: OrderedDict[Hashable, Any] = OrderedDict()

    def at(self, start: int) -> Segment:
        """The segment from `start` to the next compact boundary (or the end)."""
        made = self._made.get(start)
        if made is None:
            stop = next((i for i in self.boundaries if i >= start), len(self.messages))
            made = self._made[start] = Segment(self.messages[start:stop], self.context, start)
            if start == 0:  # a list's round starts are those of the list it begins
                made._made["round_starts"] = [s for s in self.round_starts if s < stop]
        return made

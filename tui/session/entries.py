"""What the transcript pane lists: messages (or a step's before/after merged into one
list), each with its fate in the current diff and the boundaries that open before it.

A `Listing` is described by runs over at most three message lists (the list shown,
the messages a step removed, sub-agent messages), so building one costs time in
proportion to what a step changed, not to the length of the transcript, and an
`Entry` is made only when a row on screen asks for it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import overload

from compaction_inspector.core import topic
from compaction_inspector.core.measuring.grouping import api_round_starts, regroup, volley_starts
from compaction_inspector.core.model import Message, immutable, shared_ends
from compaction_inspector.core.own.counts import AgentCounts
from compaction_inspector.core.reporting.diff import Diff, origin, run_end, sources

# How a message fares in the step being shown.
KEPT, DROPPED, SUMMARIZED, EDITED_OLD = "kept", "dropped", "summarized", "replaced"
INSERTED, SUMMARY, EDITED_NEW = "inserted", "summary", "edited"
REMOVED = frozenset({DROPPED, SUMMARIZED, EDITED_OLD})
ADDED = frozenset({INSERTED, SUMMARY, EDITED_NEW})

# The lists a listing's runs read from.
SHOWN, GONE, SIDE = 0, 1, 2
# Tool calls and their results are usually a few messages apart: look there first.
PAIR_REACH = 200


@immutable(slots=True)
class Entry:
    message: Message
    index: int | None  # position in the list it belongs to (before for removed ones)
    fate: str = KEPT
    tokens: int = 0
    round_band: str | None = None  # label of the API round that opens here
    volley_band: str | None = None  # label of the volley that opens here
    sidechain: bool = False
    origin: int | None = None  # position in the opened transcript; None for new messages

    def status(self, counts: AgentCounts | None, point: int | None = None) -> str:
        """The entry as the status line names it; at an agent's own compaction, why it
        fired there (`counts`: the agent's own count before each), with the rule where its
        point is not the one the gauge marks (`point`)."""
        m = self.message
        where = f"#{self.origin}" if self.origin is not None else "sidechain" if self.sidechain else "new"
        line = f" · line {m.line}" if m.line else ""
        text = f"{where} {m.role} {m.kind} · {self.tokens:,} tokens{line} · {self.fate}"
        why = (
            counts.before.get(self.origin)
            if counts and m.is_compact_boundary and self.origin is not None
            else None
        )
        if why is None:
            return text
        return text + f" · why: {why.line(rule=why.point.tokens != point)}"


class Listing(Sequence[Entry]):
    """Entries over `shown` (with fates from `fates`, and its rounds and volleys),
    interleaved by `runs` of (list, first index, length) with removed messages from
    `gone` (fates from `gone_fates`) and sub-agent messages from `side`."""

    def __init__(
        self,
        shown: Sequence[Message],
        count: Callable[[Message], int],
        origins: dict[Message, int] | None = None,
        *,
        fates: dict[int, str] | None = None,
        gone: Sequence[Message] = (),
        gone_fates: dict[int, str] | None = None,
        side: Sequence[Message] = (),
        runs: Sequence[tuple[int, int, int]] | None = None,
        like: Sequence[Listing] = (),
    ) -> None:
        self.shown, self.gone, self.side = shown, gone, side
        self.tokens_of = count
        self.origins = origins  # None: `shown` is the opened transcript itself
        self.fates, self.gone_fates = fates or {}, gone_fates or {}
        runs = [r for r in (runs if runs is not None else [(SHOWN, 0, len(shown))]) if r[2]]
        self._starts: list[int] = []  # position of each run
        self._shown_before: list[int] = []  # entries of `shown` before each run
        position = shown_count = 0
        for source, _first, length in runs:
            self._starts.append(position)
            self._shown_before.append(shown_count)
            position += length
            shown_count += length if source == SHOWN else 0
        self._runs = runs
        self._len = position
        self._by_source: dict[int, list[int]] = {}  # run numbers of each list, in order
        for k, r in enumerate(runs):
            self._by_source.setdefault(r[0], []).append(k)
        # Indexes in `shown`; from a listing of a neighbouring step when there is one.
        self.round_starts, self.volley_starts = _grouped(shown, like)
        self._labels: dict[tuple[str, int], str] = {}
        self._made: dict[int, Entry] = {}  # the rows on screen ask for theirs again and again

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, k: int) -> Entry: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[Entry]: ...
    def __getitem__(self, k: int | slice) -> Entry | Sequence[Entry]:
        if isinstance(k, slice):
            return [self._entry(i) for i in range(*k.indices(self._len))]
        if not -self._len <= k < self._len:
            raise IndexError(k)
        k %= self._len
        entry = self._made.get(k)
        if entry is None:
            if len(self._made) > 4096:
                self._made.clear()
            entry = self._made[k] = self._entry(k)
        return entry

    def __iter__(self) -> Iterator[Entry]:
        return (self._entry(k) for k in range(self._len))

    # --- where things are -----------------------------------------------------------

    def locate(self, k: int) -> tuple[int, int]:
        """(list, index in it) of position `k`."""
        r = bisect_right(self._starts, k) - 1
        source, first, _ = self._runs[r]
        return source, first + k - self._starts[r]

    def message(self, k: int) -> Message:
        source, i = self.locate(k)
        return (self.shown, self.gone, self.side)[source][i]

    def shown_before(self, k: int) -> int:
        """How many entries of `shown` come before position `k` (k may be len)."""
        if k >= self._len:
            return len(self.shown)
        r = bisect_right(self._starts, k) - 1
        inside = k - self._starts[r] if self._runs[r][0] == SHOWN else 0
        return self._shown_before[r] + inside

    def position_of_shown(self, i: int) -> int:
        """Position of `shown[i]`."""
        k = self._position_in(SHOWN, i)
        assert k is not None
        return k

    def position(self, message: Message, near: int = 0) -> int | None:
        """Where `message` is listed, or else a message standing for it (an edit of it,
        or one it condensed). Looked for around `near` first, since a view keeps its
        cursor on one message from step to step, then by its place in the opened
        transcript, which every list keeps the order of."""
        for k in range(max(0, near - PAIR_REACH), min(self._len, near + PAIR_REACH)):
            if self.message(k) is message:
                return k
        target = self._origin_of(message)
        if target is None:
            return None
        for source, lst in ((SHOWN, self.shown), (GONE, self.gone)):
            found = self._by_origin(lst, target)
            at = self._position_in(source, found) if found is not None else None
            if at is not None:
                return at
        return None

    def _position_in(self, source: int, i: int) -> int | None:
        runs = self._by_source.get(source, [])
        n = bisect_right(runs, i, key=lambda r: self._runs[r][1]) - 1
        if n < 0:
            return None
        _, first, length = self._runs[runs[n]]
        return self._starts[runs[n]] + i - first if i < first + length else None

    def _origin_of(self, message: Message) -> int | None:
        """Its position in the opened transcript, or that of the first message it
        stands for."""
        if self.origins is None:
            return None
        if message in self.origins:
            return self.origins[message]
        found = sources(message, self.origins)
        return found[0] if found else None

    def _by_origin(self, lst: Sequence[Message], target: int) -> int | None:
        """Index in `lst` of the transcript's message `target`: a bisection, stepping
        over new messages (they have no place in the transcript)."""
        assert self.origins is not None
        get = self.origins.get
        lo, hi = 0, len(lst)
        while lo < hi:
            mid = k = (lo + hi) // 2
            found = None
            while k < hi and (found := get(lst[k])) is None:
                k += 1
            if found is None:
                hi = mid
            elif found == target:
                return k
            elif found < target:
                lo = k + 1
            else:
                hi = mid
        return None

    def bands_at(self, k: int) -> tuple[str | None, str | None]:
        """(volley, round) labels of the groups of `shown` that open at position `k`."""
        source, i = self.locate(k)
        if source != SHOWN:
            return None, None
        return self._band(self.volley_starts, i, "volley"), self._band(self.round_starts, i, "round")

    def partner(self, k: int, tool_id: str, result: bool) -> int | None:
        """Position of the tool result (result=True) or the tool call with `tool_id`."""
        wanted = Message.tool_result_ids if result else Message.tool_use_ids
        if result:
            near = range(k + 1, min(self._len, k + PAIR_REACH))
        else:
            near = range(k - 1, max(-1, k - PAIR_REACH), -1)
        for q in near:
            if tool_id in wanted(self.message(q)):
                return q
        return (self._results if result else self._uses).get(tool_id)

    @cached_property
    def _uses(self) -> dict[str, int]:
        return self._first_of(Message.tool_use_ids)

    @cached_property
    def _results(self) -> dict[str, int]:
        return self._first_of(Message.tool_result_ids)

    def _first_of(self, ids: Callable[[Message], Sequence[str]]) -> dict[str, int]:
        out: dict[str, int] = {}
        lists = (self.shown, self.gone, self.side)
        for (source, first, length), start in zip(self._runs, self._starts, strict=True):
            for k, m in enumerate(lists[source][first : first + length], start):
                for tid in ids(m):
                    out.setdefault(tid, k)
        return out

    # --- entries --------------------------------------------------------------------

    def _entry(self, k: int) -> Entry:
        source, i = self.locate(k)
        if source == SIDE:
            m = self.side[i]
            return Entry(m, None, KEPT, self.tokens_of(m), sidechain=True)
        if source == GONE:
            m = self.gone[i]
            return Entry(m, i, self.gone_fates[i], self.tokens_of(m), origin=self._origin(m, i))
        m = self.shown[i]
        volley, round_ = self.bands_at(k)
        return Entry(
            m, i, self.fates.get(i, KEPT), self.tokens_of(m), round_, volley, origin=self._origin(m, i)
        )

    def _origin(self, m: Message, i: int) -> int | None:
        return i if self.origins is None else origin(m, self.origins)

    def _band(self, starts: list[int], i: int, what: str) -> str | None:
        n = bisect_left(starts, i)
        if n == len(starts) or starts[n] != i:
            return None
        label = self._labels.get((what, n))
        if label is None:
            label = self._labels[what, n] = self._label(starts, n, what)
        return label

    def _label(self, starts: list[int], n: int, what: str) -> str:
        """A group's label: its token total reads the whole group, so it is kept."""
        i = starts[n]
        end = starts[n + 1] if n + 1 < len(starts) else len(self.shown)
        group = self.shown[i:end]
        tokens = _k(sum(map(self.tokens_of, group)))
        if what == "round":
            return f"round {n} · {len(group)} msgs · {tokens} tok"
        first = group[0]
        title = topic.title(first.text, 48) if first.is_human else "prelude"
        return f"volley {n} · “{title}” · {len(group)} msgs · {tokens} tok"


def _grouped(shown: Sequence[Message], like: Sequence[Listing]) -> tuple[list[int], list[int]]:
    """Round and volley starts of `shown`, taken from a listing of the same list or
    regrouped from one of a list sharing most of it (the step before or after)."""
    for other in like:
        if other.shown is shown:
            return other.round_starts, other.volley_starts
    a = tuple(shown)
    for other in like:
        b = tuple(other.shown)
        ends = shared_ends(a, b)
        if 2 * sum(ends) >= len(a):
            return regroup(a, b, other.round_starts, other.volley_starts, ends)
    return api_round_starts(shown), volley_starts(shown)


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def plain_listing(
    messages: Sequence[Message],
    count: Callable[[Message], int],
    sidechain: Sequence[Message] = (),
    origins: dict[Message, int] | None = None,
    like: Sequence[Listing] = (),
) -> Listing:
    """The opened transcript, with sub-agent messages merged in by line number (where
    they were written) when `sidechain` is given. `origins` (each message's index)
    lets a view find its cursor's message again from afar."""
    if not sidechain:
        return Listing(messages, count, origins, like=like)
    lines = [m.line or 0 for m in messages]
    runs: list[tuple[int, int, int]] = []
    done = 0
    for s, m in enumerate(sidechain):
        at = bisect_right(lines, m.line or 0)  # a tie goes to the transcript's message
        if at > done:
            _add(runs, SHOWN, done, at - done)
            done = at
        _add(runs, SIDE, s, 1)
    _add(runs, SHOWN, done, len(messages) - done)
    return Listing(messages, count, origins, side=sidechain, runs=runs, like=like)


def diff_listing(
    before: Sequence[Message],
    after: Sequence[Message],
    diff: Diff,
    count: Callable[[Message], int],
    origins: dict[Message, int],
    pane: str = "merged",
    like: Sequence[Listing] = (),
) -> Listing:
    """A step's messages. `merged`: before and after in one list, removed messages where
    they stood, new ones where they land, a summary right after the messages it
    condenses. `before` or `after`: one side of a split diff. Strategies keep the order
    of the messages they keep, which is what lets the merge be computed run by run."""
    gone_fates = {i: DROPPED for i in diff.dropped}
    gone_fates.update({i: SUMMARIZED for i, _ in diff.summarized})
    gone_fates.update({i: EDITED_OLD for i, _ in diff.edited})
    if pane == "before":
        return Listing(before, count, origins, fates=gone_fates, like=like)
    last_source: dict[int, int] = {}
    for i, j in (*diff.summarized, *diff.edited):
        last_source[j] = max(i, last_source.get(j, i))
    fates = {j: INSERTED for j in diff.inserted}
    fates.update({j: SUMMARY if after[j].is_summary_item else EDITED_NEW for j in last_source})
    if pane == "after":
        return Listing(after, count, origins, fates=fates, like=like)
    gone = sorted(gone_fates)
    kept = diff.kept
    runs: list[tuple[int, int, int]] = []
    flushed = 0  # how many of `gone` are listed

    def flush(upto: int) -> None:
        """List the removed messages at or before index `upto` of `before`."""
        nonlocal flushed
        end = bisect_right(gone, upto, lo=flushed)
        while flushed < end:
            stop = run_end(gone, flushed, end)
            _add(runs, GONE, gone[flushed], stop - flushed)
            flushed = stop

    j = q = 0  # next message of `after`, next of `kept`
    for new in (*sorted(fates), len(after)):
        while j < new:
            flush(kept[q] - 1)
            upto = q + new - j
            if flushed < len(gone):
                upto = max(q + 1, bisect_left(kept, gone[flushed], q, upto))
            _add(runs, SHOWN, j, upto - q)
            j, q = j + upto - q, upto
        if new < len(after):
            if new in last_source:
                flush(last_source[new])
            _add(runs, SHOWN, new, 1)
            j = new + 1
    flush(len(before))
    return Listing(
        after, count, origins, fates=fates, gone=before, gone_fates=gone_fates, runs=runs, like=like
    )


def _add(runs: list[tuple[int, int, int]], source: int, first: int, length: int) -> None:
    """Append a run, extending the last one when it continues it."""
    if length <= 0:
        return
    if runs and runs[-1][0] == source and runs[-1][1] + runs[-1][2] == first:
        runs[-1] = (source, runs[-1][1], runs[-1][2] + length)
    else:
        runs.append((source, first, length))

"""Before/after of a compaction step, by message identity.

A message present in both lists is kept. A new message that `replaces` source messages
is a summary of them (when it is a summary item) or an edit of one (a cleared tool
result, a repaired message). Any other new message was inserted (a marker, a synthetic
tool result). Source messages that nothing accounts for were dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction_inspector.core.model import Message, immutable, shared_ends


@immutable(slots=True)
class Diff:
    # kept indexes of before, as runs (start, end): a long list is a few runs, and a
    # step of a long session need not spell out the hundred thousand it keeps
    kept_runs: tuple[tuple[int, int], ...]
    dropped: tuple[int, ...]
    summarized: tuple[tuple[int, int], ...]  # (index before, index of its summary after)
    edited: tuple[tuple[int, int], ...]  # (index before, index of the edited copy after)
    inserted: tuple[int, ...]  # indexes after
    tokens_before: int
    tokens_after: int

    @property
    def kept(self) -> tuple[int, ...]:
        """Every kept index of before, ascending."""
        return tuple(i for start, end in self.kept_runs for i in range(start, end))

    @property
    def token_delta(self) -> int:
        return self.tokens_after - self.tokens_before

    def fate(self) -> dict[int, str]:
        """What happened to each message before: kept, dropped, summarized or edited."""
        out = dict.fromkeys(self.kept, "kept")
        out.update({i: "dropped" for i in self.dropped})
        out.update({i: "summarized" for i, _ in self.summarized})
        out.update({i: "edited" for i, _ in self.edited})
        return out

    def to_dict(self) -> dict[str, Any]:
        """Index lists as runs `[start, end]` (end exclusive): a step of a long session
        keeps a hundred thousand messages, and listing each would make a step megabytes."""
        return {
            "kept": [list(r) for r in self.kept_runs],
            "dropped": runs(self.dropped),
            "summarized": [{"before": b, "after": a} for b, a in self.summarized],
            "edited": [{"before": b, "after": a} for b, a in self.edited],
            "inserted": runs(self.inserted),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "token_delta": self.token_delta,
        }


def run_end(indices: Sequence[int], start: int, stop: int | None = None) -> int:
    """Where the run of consecutive values from indices[start] ends (exclusive, at most
    `stop`) in ascending distinct `indices`: by bisection, as indices[x] - x is the
    same along a run and larger after it. A long list is a few runs."""
    lo, hi, base = start, len(indices) if stop is None else stop, indices[start] - start
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if indices[mid] - mid == base else (lo, mid)
    return lo + 1


def runs(indices: Sequence[int]) -> list[list[int]]:
    """Ascending distinct indices as runs of consecutive ones, `[start, end]`, end exclusive."""
    out: list[list[int]] = []
    p = 0
    while p < len(indices):
        q = run_end(indices, p)
        out.append([indices[p], indices[q - 1] + 1])
        p = q
    return out


def sources(message: Message, before: dict[Message, int]) -> list[int]:
    """Indexes in `before` that `message` stands for, following edits of edits."""
    found: list[int] = []
    pending = list(message.replaces)
    for source in pending:  # in the order met; a summary stands for up to the whole session
        if source in before:
            found.append(before[source])
        else:
            pending.extend(source.replaces)
    return found


def origin(message: Message, index: dict[Message, int]) -> int | None:
    """The position in `index`'s list a message comes from: itself, or the source of an
    edit. None for new messages (summaries, markers, synthetic results)."""
    if message in index:
        return index[message]
    if message.is_summary_item or message.is_synthetic:
        return None
    found = sources(message, index)
    return found[0] if found else None


def label(message: Message, index: dict[Message, int]) -> str:
    """A message as every view numbers it: `#N`, its place in the opened transcript (or
    that of the message it edits), else "new" (a summary or marker a step made)."""
    found = origin(message, index)
    return f"#{found}" if found is not None else "new"


def numbered(messages: Sequence[Message], positions: Sequence[int], index: dict[Message, int]) -> list[int]:
    """The transcript's numbers of `messages` at `positions` (a step's positions are in
    the request it worked on), leaving out messages a step made."""
    found = (origin(messages[i], index) for i in positions)
    return [n for n in found if n is not None]


def diff(
    before: Sequence[Message],
    after: Sequence[Message],
    tokens_before: int,
    tokens_after: int,
    shared_tail: int = 0,
) -> Diff:
    """Messages of one list are distinct objects. A step usually changes a few messages
    of a long list, so the unchanged head and tail are matched by tuple comparison (in
    C) and only the middle is walked message by message: a message there can only be
    kept from the middle of `before`, since the head and tail are already matched.
    `shared_tail`: both lists go on with that many same messages, not given (`Spliced`)."""
    before, after = tuple(before), tuple(after)
    head, tail = shared_ends(before, after)
    end_before, end_after = len(before) - tail, len(after) - tail
    index = _Index(before, head, end_before)
    middle: list[int] = []
    summarized: list[tuple[int, int]] = []
    edited: list[tuple[int, int]] = []
    inserted: list[int] = []
    for j in range(head, end_after):
        m = after[j]
        i = index.get(m)
        if i is not None:
            middle.append(i)
            continue
        origins = sources(m, index)
        if not origins:
            inserted.append(j)
        elif m.is_summary_item and not all(before[i].is_summary_item for i in origins):
            summarized.extend((i, j) for i in origins)
        else:
            edited.extend((i, j) for i in origins)
    accounted = set(middle) | {i for i, _ in summarized} | {i for i, _ in edited}
    dropped = tuple(i for i in range(head, end_before) if i not in accounted)
    kept = [(0, head)] if head else []
    kept += [(a, b) for a, b in runs(middle)]
    if tail or shared_tail:
        kept.append((end_before, len(before) + shared_tail))
    return Diff(
        kept_runs=_joined(kept),
        dropped=dropped,
        summarized=tuple(summarized),
        edited=tuple(edited),
        inserted=tuple(inserted),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
    )


def _joined(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Ascending runs with those that touch made one."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return tuple(out)


class _Index(dict[Message, int]):
    """Positions in `before`, built for the middle that differs; the rest is indexed
    only if a membership test misses there (a source outside the middle, or an edit
    of an edit whose intermediate message is in neither list)."""

    def __init__(self, before: tuple[Message, ...], start: int, end: int) -> None:
        super().__init__(zip(before[start:end], range(start, end), strict=True))
        self._before = before
        self._complete = start == 0 and end == len(before)

    def __contains__(self, message: object) -> bool:
        if dict.__contains__(self, message):
            return True
        if not self._complete:
            self._complete = True
            self.update(zip(self._before, range(len(self._before)), strict=True))
            return dict.__contains__(self, message)
        return False

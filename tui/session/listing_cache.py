"""The listings the transcript panes show, kept and prepared ahead.

Building the listing of a step of a long session (the step's messages, its diff, the
rounds and volleys of a 100k-message list) takes tens of milliseconds, more than a
keypress may. So the app asks for the steps next to the one shown in the background
while the user reads it, and the most recent listings are kept for stepping back.
One lock covers building: a step computes its messages and diff once, in whichever
thread asks first, and the other waits for that result instead of racing it. A step
whose listings are all let go forgets its message lists too, so stepping through
thousands of steps holds memory for a few.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Message, Session
from compaction_inspector.core.strategies import CompactionResult, Stats
from compaction_inspector.tui.session.entries import Listing, diff_listing, plain_listing

# How many of the most recent listings a new one may take its grouping from.
LIKE = 3


class Source(NamedTuple):
    """What listings are made of; a new source (another result, exact counts) starts
    the cache afresh."""

    session: Session
    result: CompactionResult[Stats] | None
    counter: TokenCounter
    origins: dict[Message, int]


class Key(NamedTuple):
    step: int  # -1: the transcript itself
    split: bool  # before and after side by side (steps only)
    sidechain: bool  # sub-agent messages merged in (the transcript only)


def build(source: Source, key: Key, like: Sequence[Listing] = ()) -> tuple[Listing, ...]:
    """One listing per pane: the transcript, a step merged, or a step's two sides.
    `like`: listings of neighbouring steps, whose grouping the new ones start from."""
    count = source.counter.count
    if key.step < 0:
        side = source.session.sidechain if key.sidechain else ()
        return (plain_listing(source.session.messages, count, side, source.origins, like),)
    assert source.result is not None
    step = source.result.steps[key.step]
    panes = ("before", "after") if key.split else ("merged",)
    return tuple(
        diff_listing(step.before, step.messages, step.diff, count, source.origins, pane, like)
        for pane in panes
    )


class ListingCache:
    def __init__(self, kept: int = 8) -> None:
        self.kept = kept
        self._lock = threading.Lock()
        self._source: Source | None = None
        self._made: OrderedDict[Key, tuple[Listing, ...]] = OrderedDict()

    def get(self, source: Source, key: Key) -> tuple[Listing, ...]:
        with self._lock:
            if not self._current(source):
                self._source, self._made = source, OrderedDict()
            return self._get(source, key)

    def prepare(self, source: Source, keys: Iterable[Key], cancelled: Callable[[], bool]) -> None:
        """Build `keys` ahead, unless the source has moved on or the caller gives up."""
        for key in keys:
            with self._lock:
                if cancelled() or not self._current(source):
                    return
                self._get(source, key)

    def __contains__(self, key: Key) -> bool:
        return key in self._made

    def _current(self, source: Source) -> bool:
        held = self._source
        return held is not None and all(a is b for a, b in zip(held[:3], source[:3], strict=True))

    def _get(self, source: Source, key: Key) -> tuple[Listing, ...]:
        made = self._made.get(key)
        if made is None:
            recent = [listing for made in reversed(self._made.values()) for listing in made]
            made = self._made[key] = build(source, key, recent[:LIKE])
            if len(self._made) > self.kept:
                gone, _ = self._made.popitem(last=False)
                if (
                    source.result is not None
                    and gone.step >= 0
                    and all(k.step != gone.step for k in self._made)
                ):
                    source.result.steps[gone.step].forget()
        else:
            self._made.move_to_end(key)
        return made

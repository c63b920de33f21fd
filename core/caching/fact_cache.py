"""The facts of a session's messages (`retention`: paths, commands, identifiers, numbers,
URLs), kept between runs beside their token counts, under the same key and so with the
same invalidation (`token_cache.entry_path`).

A message's facts are found the first time a replay or a sweep asks for them (a summary
ranks its span's facts; a retention asks what a request still holds), or, for `compare`
spread over processes, all at once before it forks; and never again: a warm replay reads
no session message's text to find them. `analyze` never asks, so it never pays for them.

The entry is a run of chunks (`core.caching.chunks`), each added by the run that found what it
holds: the facts of some of the session's messages, each kind's as numbers into the
chunk's own table of distinct facts. A message's facts are decoded only when asked for
(a 20 MB session's entry reads in 0.06 s; decoding every message's would take 0.3 s). An
entry that does not hold is removed, and its facts found again.
"""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.caching import chunks
from compaction_inspector.core.caching.token_cache import entry_path
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Session
from compaction_inspector.core.replaying.retention import KINDS, Facts, Known, Met

MAGIC = b"CIFC2"


class _Kept:
    """One message's facts as the entry keeps them: each kind's as numbers into its
    chunk's table, decoded when first asked for (`Facts.met` calls it)."""

    __slots__ = ("items", "kinds")

    def __init__(self, items: list[str], kinds: list[list[int]]) -> None:
        self.items, self.kinds = items, kinds

    def __call__(self) -> Met:
        get = self.items.__getitem__  # mapped in C: every message a replay's summaries read
        return {kind: tuple(map(get, ks)) for kind, ks in zip(KINDS, self.kinds, strict=True)}


def load_facts(session: Session, counter: TokenCounter, facts: Facts) -> None:
    """Give the session's `facts` (`retention.Facts`, of its messages and sidechain)
    those kept of its messages where there are any; once."""
    if facts.taken:
        return
    entry = entry_path(session, counter, ".facts")
    found: list[Known] = [None] * len(facts.messages)
    if entry is not None and not chunks.read(entry, MAGIC, lambda chunk: _taken(chunk, found)):
        found = [None] * len(facts.messages)  # none kept, or damaged: found again
    facts.take(found)


def store_facts(session: Session, counter: TokenCounter, facts: Facts, every: bool = False) -> None:
    """Add to the entry the session's `facts` found since it was last asked (`every`:
    first find those of all its messages not known yet), as a chunk appended under a
    lock. Best effort: a disk that cannot be written only means finding them again."""
    entry = entry_path(session, counter, ".facts")
    if entry is None:
        return
    messages = facts.messages
    if every:
        for m, f in zip(messages, facts.known(messages), strict=True):
            if f is None:
                facts.met(m)
    new = [(k, f) for k, f in facts.found_since() if k not in facts.held]
    if not new:
        return
    numbers: dict[str, int] = {}
    table = [[k, _as_numbers(f, numbers)] for k, f in new]
    if chunks.append(entry, MAGIC, {"n": len(messages), "items": list(numbers), "met": table}):
        facts.held.update(k for k, _ in new)


def _as_numbers(facts: Met, numbers: dict[str, int]) -> list[list[int]]:
    """A message's facts as numbers into the table being written (`numbers`)."""
    return [[numbers.setdefault(x, len(numbers)) for x in facts[kind]] for kind in KINDS]


def _taken(chunk: Any, found: list[Known]) -> bool:
    """`chunk`'s messages put into `found`, where it is shaped as this version writes it
    (its checksum held: its numbers are those written, each within its table)."""
    items, table = chunk["items"], chunk["met"]
    if chunk["n"] != len(found) or not isinstance(items, list) or not isinstance(table, list):
        return False
    if not all(isinstance(x, str) for x in items):
        return False
    for k, kinds in table:
        if not 0 <= k < len(found) or not isinstance(kinds, list) or len(kinds) != len(KINDS):
            return False
        found[k] = _Kept(items, kinds)
    return True

"""The facts of a session's messages (`retention`: paths, commands, identifiers, numbers,
URLs), kept between runs beside their token counts, under the same key and so with the
same invalidation (`token_cache.entry_path`).

A message's facts are found the first time a replay or a sweep asks for them (a summary
ranks its span's facts; a retention asks what a request still holds), or, for `compare`
spread over processes, all at once before it forks; and never again: a warm replay reads
no session message's text to find them. `analyze` never asks, so it never pays for them.

The entry is a run of chunks, each appended under a lock by the run that found what it
holds: the facts of some of the session's messages, each kind's as numbers into the
chunk's own table of distinct facts. A write costs what it adds, whatever the entry
already holds, and processes replaying the session at once each add theirs. A message's
facts are decoded only when asked for (a 20 MB session's entry reads in 0.06 s; decoding
every message's would take 0.3 s). An entry with a chunk whose length, checksum or shape
does not hold (a write cut short) is removed, and its facts found again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.files import locked
from compaction_inspector.core.memo import on_forget
from compaction_inspector.core.model import Session
from compaction_inspector.core.retention import KINDS, Known, Met, met, own, own_found, written, written_new
from compaction_inspector.core.token_cache import entry_path
from compaction_inspector.core.tokens import TokenCounter

MAGIC = b"CIFC2"
CHUNK = struct.Struct("<I16s")  # a chunk's payload length and its checksum
SAID_MOST = 32 << 20  # the facts of texts replays wrote: an entry past this is begun afresh
_HELD: dict[Path, set[int]] = {}  # each entry read or written: the messages whose facts it holds
on_forget(_HELD.clear)


class _Kept:
    """One message's facts as the entry keeps them: each kind's as numbers into its
    chunk's table, decoded when first asked for (`retention.met` calls it)."""

    __slots__ = ("items", "kinds")

    def __init__(self, items: list[str], kinds: list[list[int]]) -> None:
        self.items, self.kinds = items, kinds

    def __call__(self) -> Met:
        items = self.items
        return {kind: tuple(items[k] for k in ks) for kind, ks in zip(KINDS, self.kinds, strict=True)}


def load_facts(session: Session, counter: TokenCounter) -> None:
    """Take the session's messages as its own (`retention.own`), with the facts kept of
    them where there are any, and the facts kept of the texts its replays wrote."""
    messages = (*session.messages, *session.sidechain)
    entry = entry_path(session, counter, ".facts")
    if entry is None or entry in _HELD:  # none kept, or already taken
        own(messages, [None] * len(messages))
        return
    found: list[Known] = [None] * len(messages)
    if not _read(entry, lambda chunk: _taken(chunk, found)):
        found = [None] * len(messages)
    own(messages, found)
    _HELD[entry] = {k for k, f in enumerate(found) if f is not None}
    said = entry.with_suffix(".said")
    texts: dict[bytes, Known] = {}
    if _read(said, lambda chunk: _texts(chunk, texts)):
        written(texts)


def store_facts(session: Session, counter: TokenCounter, every: bool = False) -> None:
    """Add to the entry the facts found of the session's messages that it does not hold
    (`every`: of all of them, each found now where it was not yet), and to the entry of
    the texts its replays wrote those found since, each as a chunk appended under a lock.
    Best effort: a disk that cannot be written only means finding them again."""
    entry = entry_path(session, counter, ".facts")
    if entry is None:
        return
    messages = (*session.messages, *session.sidechain)
    found: Sequence[Known] = own_found(messages)
    if every:
        found = [f if f is not None else met(m) for m, f in zip(messages, found, strict=True)]
    held = _HELD.setdefault(entry, set())
    new = [k for k, f in enumerate(found) if f is not None and k not in held]
    if new:
        numbers: dict[str, int] = {}
        table = [[k, _as_numbers(found[k], numbers)] for k in new]
        if _append(entry, {"n": len(messages), "items": list(numbers), "met": table}):
            held.update(new)
    said = written_new()
    if said:
        numbers = {}
        table = [[key.hex(), _as_numbers(f, numbers)] for key, f in said]
        _append(entry.with_suffix(".said"), {"items": list(numbers), "texts": table}, SAID_MOST)


def _as_numbers(found: Known, numbers: dict[str, int]) -> list[list[int]]:
    """A message's facts as numbers into the table being written (`numbers`)."""
    if isinstance(found, _Kept):  # read and never asked for: renumbered, not decoded
        items = found.items
        return [[numbers.setdefault(items[k], len(numbers)) for k in ks] for ks in found.kinds]
    facts = found if isinstance(found, dict) else found() if found is not None else {}
    return [[numbers.setdefault(x, len(numbers)) for x in facts[kind]] for kind in KINDS]


def _append(entry: Path, chunk: dict[str, Any], most: int | None = None) -> bool:
    """`chunk` added to the end of `entry` under a lock (an entry past `most` bytes
    begun afresh); whether it was written."""
    payload = json.dumps(chunk, separators=(",", ":")).encode()
    framed = CHUNK.pack(len(payload), hashlib.blake2b(payload, digest_size=16).digest()) + payload
    with contextlib.suppress(OSError), locked(entry):
        with open(entry, "ab") as f:
            if most is not None and f.tell() > most:
                f.truncate(0)
            if f.tell() == 0:
                f.write(MAGIC)
            f.write(framed)
        return True
    return False


def _read(entry: Path, take: Callable[[Any], bool]) -> bool:
    """Each chunk of `entry` to `take` (which says whether it is shaped as this version
    writes it); False where there is no entry, or it does not hold (it is then removed)."""
    try:
        data = entry.read_bytes()
    except OSError:
        return False
    ok, at = data[: len(MAGIC)] == MAGIC, len(MAGIC)
    while ok and at < len(data):
        try:
            size, digest = CHUNK.unpack_from(data, at)
        except struct.error:
            ok = False
            break
        payload = data[at + CHUNK.size : at + CHUNK.size + size]
        at += CHUNK.size + size
        ok = len(payload) == size and hashlib.blake2b(payload, digest_size=16).digest() == digest
        if ok:
            try:
                ok = take(json.loads(payload))
            except (ValueError, TypeError, KeyError):
                ok = False
    if not ok:
        entry.unlink(missing_ok=True)  # cut short or damaged: found again and rewritten
    return ok


def _taken(chunk: Any, found: list[Known]) -> bool:
    """`chunk`'s messages put into `found`, where it is shaped as this version writes it
    (its checksum held: its numbers are those written, each within its table)."""
    items, table = chunk["items"], chunk["met"]
    if chunk["n"] != len(found) or not _table(items, table):
        return False
    for k, kinds in table:
        if not 0 <= k < len(found):
            return False
        found[k] = _Kept(items, kinds)
    return True


def _texts(chunk: Any, found: dict[bytes, Known]) -> bool:
    """`chunk`'s texts put into `found` by their digests, as `_taken` puts messages."""
    items, table = chunk["items"], chunk["texts"]
    if not _table(items, table):
        return False
    for key, kinds in table:
        found[bytes.fromhex(key)] = _Kept(items, kinds)
    return True


def _table(items: Any, table: Any) -> bool:
    """A chunk's table of facts and its rows are shaped as this version writes them."""
    return (
        isinstance(items, list)
        and isinstance(table, list)
        and all(isinstance(x, str) for x in items)
        and all(isinstance(kinds, list) and len(kinds) == len(KINDS) for _, kinds in table)
    )

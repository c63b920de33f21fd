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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.files import locked
from compaction_inspector.core.memo import on_forget
from compaction_inspector.core.model import Session
from compaction_inspector.core.retention import KINDS, Known, Met, met, own, own_found
from compaction_inspector.core.token_cache import entry_path
from compaction_inspector.core.tokens import TokenCounter

MAGIC = b"CIFC2"
CHUNK = struct.Struct("<I16s")  # a chunk's payload length and its checksum
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
    them where there are any."""
    messages = (*session.messages, *session.sidechain)
    entry = entry_path(session, counter, ".facts")
    if entry is None or entry in _HELD:  # none kept, or already taken
        own(messages, [None] * len(messages))
        return
    found = _read(entry, len(messages)) or [None] * len(messages)
    own(messages, found)
    _HELD[entry] = {k for k, f in enumerate(found) if f is not None}


def store_facts(session: Session, counter: TokenCounter, every: bool = False) -> None:
    """Add to the entry the facts found of the session's messages that it does not hold
    (`every`: of all of them, each found now where it was not yet), as a chunk appended
    under a lock. Best effort: a disk that cannot be written only means finding them
    again."""
    entry = entry_path(session, counter, ".facts")
    if entry is None:
        return
    messages = (*session.messages, *session.sidechain)
    found: Sequence[Known] = own_found(messages)
    if every:
        found = [f if f is not None else met(m) for m, f in zip(messages, found, strict=True)]
    held = _HELD.setdefault(entry, set())
    new = [k for k, f in enumerate(found) if f is not None and k not in held]
    if not new:
        return
    numbers: dict[str, int] = {}
    table = [[k, _as_numbers(found[k], numbers)] for k in new]
    payload = json.dumps(
        {"n": len(messages), "items": list(numbers), "met": table}, separators=(",", ":")
    ).encode()
    chunk = CHUNK.pack(len(payload), hashlib.blake2b(payload, digest_size=16).digest()) + payload
    with contextlib.suppress(OSError), locked(entry):
        with open(entry, "ab") as f:
            if f.tell() == 0:
                f.write(MAGIC)
            f.write(chunk)
        held.update(new)


def _as_numbers(found: Known, numbers: dict[str, int]) -> list[list[int]]:
    """A message's facts as numbers into the table being written (`numbers`)."""
    if isinstance(found, _Kept):  # read and never asked for: renumbered, not decoded
        items = found.items
        return [[numbers.setdefault(items[k], len(numbers)) for k in ks] for ks in found.kinds]
    facts = found if isinstance(found, dict) else found() if found is not None else {}
    return [[numbers.setdefault(x, len(numbers)) for x in facts[kind]] for kind in KINDS]


def _read(entry: Path, n: int) -> list[Known] | None:
    """The entry's facts of `n` messages, each decoded when asked for; None where there
    is none, or it does not hold."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    found: list[Known] | None = [None] * n if data[: len(MAGIC)] == MAGIC else None
    at = len(MAGIC)
    while found is not None and at < len(data):
        try:
            size, digest = CHUNK.unpack_from(data, at)
        except struct.error:
            found = None
            break
        payload = data[at + CHUNK.size : at + CHUNK.size + size]
        at += CHUNK.size + size
        if len(payload) != size or hashlib.blake2b(payload, digest_size=16).digest() != digest:
            found = None
            break
        with contextlib.suppress(ValueError, TypeError, KeyError):
            if _taken(json.loads(payload), found):
                continue
        found = None
    if found is None:
        entry.unlink(missing_ok=True)  # cut short or damaged: found again and rewritten
    return found


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

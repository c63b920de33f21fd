"""The facts of a session's messages (`retention`: paths, commands, identifiers, numbers,
URLs), kept between runs beside their token counts, under the same key and so with the
same invalidation (`token_cache.entry_path`).

A message's facts are found the first time a replay or a sweep asks for them (a summary
ranks its span's facts; a retention asks what a request still holds), or, for `compare`,
which asks for nearly all, all at once before its replays; and never again: a warm
replay reads no session message's text to find them. `analyze` never asks, so it never
pays for them. What is kept is a table of the distinct facts and, for each message, each
kind's facts as numbers into it (null: not found yet); a message's are decoded only when
asked for (a 20 MB session's entry reads in 0.06 s; decoding every message's would take
0.3 s). A write is atomic; an entry whose checksum or shape does not hold is removed and
found again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.files import locked, write_atomic
from compaction_inspector.core.memo import on_forget
from compaction_inspector.core.model import Session
from compaction_inspector.core.retention import KINDS, Known, Met, met, own, own_found
from compaction_inspector.core.token_cache import entry_path
from compaction_inspector.core.tokens import TokenCounter

MAGIC = b"CIFC1"
_DIGEST = 16
_LOADED: dict[Path, int] = {}  # each entry read or written: how many messages' facts it holds
on_forget(_LOADED.clear)


class _Kept:
    """One message's facts as the entry keeps them: each kind's as numbers into the
    entry's table, decoded when first asked for (`retention.met` calls it)."""

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
    if entry is None or entry in _LOADED:  # none kept, or already taken
        own(messages, [None] * len(messages))
        return
    found = _read(entry, len(messages)) or [None] * len(messages)
    own(messages, found)
    _LOADED[entry] = sum(f is not None for f in found)


def store_facts(session: Session, counter: TokenCounter, every: bool = False) -> None:
    """Keep the facts found of the session's messages (`every`: all of them, each found
    now where it was not yet), where more are known than the entry held when it was last
    read or written: added to what it holds, under a lock, as processes replaying the
    same session at once each keep theirs. Best effort: a disk that cannot be written
    only means finding them again."""
    entry = entry_path(session, counter, ".facts")
    if entry is None:
        return
    messages = (*session.messages, *session.sidechain)
    found: Sequence[Known] = own_found(messages)
    if every:
        found = [f if f is not None else met(m) for m, f in zip(messages, found, strict=True)]
    if sum(f is not None for f in found) <= _LOADED.get(entry, 0):
        return
    with contextlib.suppress(OSError), locked(entry):
        kept = _read(entry, len(messages)) or [None] * len(messages)
        merged = [f if f is not None else k for f, k in zip(found, kept, strict=True)]
        numbers: dict[str, int] = {}
        table = [_as_numbers(f, numbers) for f in merged]
        payload = json.dumps({"items": list(numbers), "met": table}, separators=(",", ":")).encode()
        write_atomic(entry, MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload)
        _LOADED[entry] = sum(f is not None for f in merged)


def _as_numbers(found: Known, numbers: dict[str, int]) -> list[list[int]] | None:
    """A message's facts as numbers into the table being written (`numbers`)."""
    if found is None:
        return None
    if isinstance(found, _Kept):  # read and never asked for: renumbered, not decoded
        items = found.items
        return [[numbers.setdefault(items[k], len(numbers)) for k in ks] for ks in found.kinds]
    facts = found if isinstance(found, dict) else found()
    return [[numbers.setdefault(x, len(numbers)) for x in facts[kind]] for kind in KINDS]


def _read(entry: Path, n: int) -> list[Known] | None:
    """The entry's facts of `n` messages, each decoded when asked for; None where there
    is none, or it does not hold."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    payload = data[head:]
    found: list[Known] | None = None
    if (
        data[: len(MAGIC)] == MAGIC
        and hashlib.blake2b(payload, digest_size=_DIGEST).digest() == data[len(MAGIC) : head]
    ):
        with contextlib.suppress(ValueError, TypeError, KeyError):
            found = _shaped(json.loads(payload), n)
    if found is None:
        entry.unlink(missing_ok=True)  # corrupt or stale: found again and rewritten
    return found


def _shaped(data: Any, n: int) -> list[Known] | None:
    """The entry's messages, where it is shaped as this version writes it (its checksum
    held: its numbers are those written, each within the table)."""
    items, table = data["items"], data["met"]
    if not isinstance(items, list) or not isinstance(table, list) or len(table) != n:
        return None
    if not all(isinstance(x, str) for x in items):
        return None
    out: list[Known] = []
    for kinds in table:
        if kinds is not None and (not isinstance(kinds, list) or len(kinds) != len(KINDS)):
            return None
        out.append(None if kinds is None else _Kept(items, kinds))
    return out

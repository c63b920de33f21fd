"""A cache entry that grows: a run of checksummed JSON chunks, each appended under a
lock by the run that has something to add (`fact_cache`, `token_cache`'s written
counts). A write costs what it adds, whatever the entry holds, and processes that work
on one session at once each add theirs. An entry with a chunk whose length or checksum
does not hold (a write cut short), or that its reader refuses, is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compaction_inspector.core.files import locked

FRAME = struct.Struct("<I16s")  # a chunk's payload length and its checksum


def append(entry: Path, magic: bytes, chunk: Any, most: int | None = None) -> bool:
    """`chunk` added to the end of `entry` under a lock (an entry past `most` bytes, or
    of another `magic`, begun afresh); whether it was written."""
    payload = json.dumps(chunk, separators=(",", ":")).encode()
    framed = FRAME.pack(len(payload), hashlib.blake2b(payload, digest_size=16).digest()) + payload
    with contextlib.suppress(OSError), locked(entry):
        with open(entry, "a+b") as f:
            size = f.seek(0, 2)
            f.seek(0)
            if size and (f.read(len(magic)) != magic or (most is not None and size > most)):
                f.truncate(0)
                size = 0
            f.write(framed if size else magic + framed)  # appended: the file is opened to append
        return True
    return False


def read(entry: Path, magic: bytes, take: Callable[[Any], bool]) -> bool:
    """Each chunk of `entry`, in order, to `take` (which says whether it is shaped as
    this version writes it); False where there is no entry, or it does not hold (it is
    then removed, and what `take` was given of it is the caller's to drop)."""
    try:
        data = entry.read_bytes()
    except OSError:
        return False
    ok, at = data[: len(magic)] == magic, len(magic)
    while ok and at < len(data):
        try:
            size, digest = FRAME.unpack_from(data, at)
        except struct.error:
            ok = False
            break
        payload = data[at + FRAME.size : at + FRAME.size + size]
        at += FRAME.size + size
        ok = len(payload) == size and hashlib.blake2b(payload, digest_size=16).digest() == digest
        if ok:
            try:
                ok = take(json.loads(payload))
            except (ValueError, TypeError, KeyError, AttributeError):
                ok = False
    if not ok:
        entry.unlink(missing_ok=True)  # cut short or damaged: made again
    return ok

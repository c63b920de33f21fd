"""Token counts that survive between runs, so re-opening a session skips encoding: its
messages' counts, and the counts of the texts its replays wrote (summaries, placeholders),
so a warm replay never loads the encoding.

One file per (file content, request, encoding, media allowance, loader version) in the
user cache directory; the chars/4 estimate is an encoding here too (an agent's own rough
count of 100,000 messages is 0.35 s to make, a few milliseconds to read). Loading is
deterministic, so the same bytes give the same messages in the same order, and an array
of counts is all that needs keeping. Writes are atomic (concurrent runs at worst both
write the same file); a short, truncated or corrupted entry fails its checksum and is
ignored, never trusted.
`COMPACTION_INSPECTOR_CACHE_DIR` moves the cache; setting it to `off` disables it.
"""

from __future__ import annotations

import contextlib
import hashlib
import struct
import weakref
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compaction_inspector.core.caching import chunks
from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.formats.common import LOADER_VERSION
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Session

WRITTEN_MAGIC = b"CITW2"
WRITTEN_MOST = 32 << 20  # an entry of written texts past this many bytes is begun afresh
MAGIC = b"CITC1"
HEADER = struct.Struct("<5sI16s")


def cache_dir() -> Path | None:
    root = cache_root()
    return root / "tokens" if root is not None else None


def entry_path(session: Session, counter: TokenCounter, kind: str = ".counts") -> Path | None:
    """Where what is kept of this session's messages as `counter` counts them lives (its
    counts; `kind` ".facts": their facts, kept under the same key); None: not kept."""
    folder = cache_dir()
    if folder is None or session.content_hash is None:
        return None
    parts = (session.content_hash, session.request_index, counter.name, counter.media_tokens, LOADER_VERSION)
    key = "-".join(map(str, parts))
    return folder / (hashlib.blake2b(key.encode(), digest_size=16).hexdigest() + kind)


def _expected(session: Session) -> int:
    return len(session.messages) + len(session.sidechain)


def load_counts(session: Session, counter: TokenCounter) -> bool:
    """Prime `counter` with this session's stored counts; False when there are none."""
    entry = entry_path(session, counter)
    if entry is None:
        return False
    try:
        data = entry.read_bytes()
    except OSError:
        return False
    try:
        magic, n, digest = HEADER.unpack_from(data)
    except struct.error:
        entry.unlink(missing_ok=True)
        return False
    payload = data[HEADER.size :]
    if (
        magic != MAGIC
        or n != _expected(session)
        or len(payload) != 4 * n
        or hashlib.blake2b(payload, digest_size=16).digest() != digest
    ):
        entry.unlink(missing_ok=True)  # corrupt or stale: recount and rewrite
        return False
    counts = array("I")
    counts.frombytes(payload)
    messages = (*session.messages, *session.sidechain)
    counter.prime(messages, counts.tolist())
    return True


def store_counts(session: Session, counter: TokenCounter) -> None:
    """Keep this session's counts (already in `counter`) for the next run. Best effort:
    a read-only or full disk only means the next open counts again."""
    entry = entry_path(session, counter)
    if entry is None:
        return
    counts = array("I", counter.count_all((*session.messages, *session.sidechain)))
    payload = counts.tobytes()
    header = HEADER.pack(MAGIC, len(counts), hashlib.blake2b(payload, digest_size=16).digest())
    with contextlib.suppress(OSError):
        write_atomic(entry, header + payload)


def count_session(
    session: Session, counter: TokenCounter, progress: Callable[[int, int], None] | None = None
) -> tuple[list[int], list[int], bool]:
    """Counts of the main messages and the sidechain, and whether they came from the cache;
    `progress(done, total)` hears of the main messages' counting when there is any."""
    hit = load_counts(session, counter)
    tokens = counter.count_all(session.messages, progress=None if hit else progress)
    side = counter.count_all(session.sidechain)
    counter.written_since()  # the session's own texts are kept as its counts, not as written ones
    if not hit:
        store_counts(session, counter)
    return tokens, side, hit


_TAKEN: weakref.WeakSet[TokenCounter] = weakref.WeakSet()  # counters primed with the written texts


def load_written(session: Session, counter: TokenCounter) -> None:
    """Prime `counter` with the counts of the texts this session's replays wrote before
    (once per counter)."""
    entry = entry_path(session, counter, ".written")
    if entry is None or counter in _TAKEN:
        return
    _TAKEN.add(counter)
    counts: dict[str, int] = {}
    if chunks.read(entry, WRITTEN_MAGIC, lambda chunk: _texts(chunk, counts)):
        counter.take_texts(counts)


def _texts(chunk: Any, counts: dict[str, int]) -> bool:
    texts = chunk["texts"]
    if not isinstance(texts, dict) or not all(isinstance(n, int) for n in texts.values()):
        return False
    counts.update(texts)
    return True


def store_written(session: Session, counter: TokenCounter) -> None:
    """Add to the entry the counts of the texts a strategy wrote that the counter encoded
    since last asked (`core.caching.chunks`: processes replaying the same session at once each
    add theirs). Best effort, as `store_counts`."""
    entry = entry_path(session, counter, ".written")
    if entry is None:
        return
    texts = counter.written_since()
    if texts:
        chunks.append(entry, WRITTEN_MAGIC, {"texts": texts}, WRITTEN_MOST)

"""Where the tool keeps what it caches between runs: the user cache directory, moved by
`COMPACTION_INSPECTOR_CACHE_DIR` (`off`: nothing is cached). What is kept there is each
kept thing's own module's (token counts, the session list's index, sweeps); the
tokenizer's decoded table is kept here, below the counter that loads it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from compaction_inspector.core.files import write_atomic


def cache_root() -> Path | None:
    """The user cache directory the tool keeps its caches in (None: caching is off)."""
    configured = os.environ.get("COMPACTION_INSPECTOR_CACHE_DIR")
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("compaction-inspector"))


def kept_ranks(key: str, decode: Callable[[], dict[bytes, int]]) -> dict[bytes, int]:
    """An encoding's table of ranks as kept in the cache under `key` (the hash its source
    file is checked against), else `decode()`d from that file and kept: decoding takes
    about 0.1 s of every process that counts, reading it back a fifth of that. A kept
    table that fails its checksum is decoded again, never trusted."""
    import hashlib  # here: the status line, which finds the cache folder, loads no table
    import marshal

    root = cache_root()
    version = f"py{sys.version_info[0]}{sys.version_info[1]}"  # marshal's format is the interpreter's
    path = root / "encodings" / f"{key}-{version}.marshal" if root is not None else None
    if path is not None:
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            data = path.read_bytes()
            digest, payload = data[:32], data[32:]
            if hashlib.blake2b(payload, digest_size=32).digest() == digest:
                ranks = marshal.loads(payload)
                if isinstance(ranks, dict) and ranks:
                    return ranks
    ranks = decode()
    if path is not None:
        payload = marshal.dumps(ranks)
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the decoding next time
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, hashlib.blake2b(payload, digest_size=32).digest() + payload)
    return ranks

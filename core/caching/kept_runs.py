"""What replays came to, kept between runs in the cache (docs/performance.md): the sweep's
points and `compare`'s rows. One file holds one session's under one set of settings, by
the options each was replayed with. Its name is a hash of the session (its file's
identity, or its bytes' hash and the request read), what was run, every setting of the
config a replay reads besides the options (`config_key`) and the program's version
(`made_by`): any of them changed, the file is another, and the replays are made afresh."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.config import Config
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.formats.common import LOADER_VERSION
from compaction_inspector.core.installed import ours
from compaction_inspector.core.pricing.rates import source
from compaction_inspector.core.strategies.declaration import to_config


@cache  # asked of every session; the installed program does not change while it runs
def made_by() -> tuple[str, str]:
    return ours(), LOADER_VERSION


def policy_key(options: Any) -> str:
    """A strategy's options as a key: its settings as `compaction.yaml` writes them."""
    return json.dumps(to_config(options), sort_keys=True, default=str)


def config_key(config: Config) -> str:
    """What of the config changes a replay besides the strategy's options: the window,
    the counting, the agent's own settings read for the session and what its record
    bounds, the user's summarizer (its command, timeout and script) and the prices."""
    summarizer = config.summarizer.fingerprint() if config.summarizer is not None else None
    return json.dumps(
        [config.window.context_window, config.window.reserved_output, config.tokenizer, config.pressure,
         config.overhead_tokens, config.media_tokens, config.preset, summarizer, source(),
         repr(config.agent_settings), repr(config.bounds)],
        default=str,
    )  # fmt: skip


@dataclass
class KeptRuns:
    """One session's kept replays under one set of settings (`of`), by key (`policy_key`),
    each as its owner encodes it; written back (`save`) only when one was added."""

    file: Path | None
    entries: dict[str, Any]
    changed: bool = False

    @staticmethod
    def of(folder: str, session: Sequence[Any], run: Sequence[Any], config: Config) -> KeptRuns:
        """The kept replays of `session` (what tells it: a file's identity, or its bytes'
        hash) under `run` (what was run, and its owner's format version) and `config`,
        in the cache's `folder`; none (and nothing kept) where the cache is off."""
        root = cache_root()
        if root is None:
            return KeptRuns(None, {})
        fingerprint = json.dumps([*session, *run, config_key(config), *made_by()], default=str)
        file = root / folder / (hashlib.blake2b(fingerprint.encode(), digest_size=16).hexdigest() + ".json")
        try:
            entries = json.loads(file.read_text())
        except (OSError, ValueError, RecursionError):  # damaged: made afresh
            entries = {}
        return KeptRuns(file, entries if isinstance(entries, dict) else {})

    def get(self, key: str) -> Any:
        return self.entries.get(key)

    def put(self, key: str, value: Any) -> None:
        self.entries[key] = value
        self.changed = True

    def save(self) -> None:
        if self.file is None or not self.changed:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs a replay next time
            self.file.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.file, json.dumps(self.entries))
        self.changed = False

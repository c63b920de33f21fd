"""What the transcript cannot show of the context after its agent compacts, measured on
the user's other sessions (docs/agents.md).

After each compaction of another complete session of the same agent and version, the
prompt its next request reported less our prediction of it is what our model of the
parts misses there. The sessions beside it come first (in the same folder: for Claude
Code, the same project, so the same system prompt, CLAUDE.md, tools and hooks), then,
where it is kept in its agent's own folder, the user's other sessions there. A session
that has not compacted yet, or not before this compaction, takes the median of those as
a correction of its fixed part, and the range they span as the part's range; the figure
says "calibrated on
3 compactions of 2.1.49 in your sessions". What a session measures after its own earlier
compaction wins over this (`core.compactions`).

Each session's figures are kept in the cache directory by path, size and modification
time, so a session beside it is read and counted once.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compaction_inspector.core.agents import AGENTS
from compaction_inspector.core.cache import cache_root
from compaction_inspector.core.files import open_regular, write_atomic
from compaction_inspector.core.model import Session
from compaction_inspector.core.slices import is_slice, sessions_beside

MAX_SESSIONS = 5  # the nearest in time that hold a compaction: each is read and counted once
MAX_LOOKED_AT = 50  # files beside it looked into for their version and a compaction
HEAD_BYTES = 64_000  # enough of a file to find its agent version
MAX_BYTES = 20_000_000  # larger sessions are not read and counted for this (seconds each, first time)
# bumped whenever what a prediction is made of changes: figures kept under another key are redone
RULES = "1"


@dataclass(frozen=True)
class Calibration:
    """What was measured after compactions of the user's other sessions over our
    prediction there (`residuals`, in the model's tokens), and of which version."""

    residuals: tuple[int, ...]
    version: str

    @property
    def correction(self) -> int:
        return round(statistics.median(self.residuals))

    @property
    def span(self) -> tuple[int, int]:
        return min(self.residuals), max(self.residuals)

    @property
    def source(self) -> str:
        n = len(self.residuals)
        return f"calibrated on {n} compaction{'s' if n != 1 else ''} of {self.version} in your sessions"


def across_sessions(
    session: Session, measure: Callable[[Path], tuple[int, ...]], key: str
) -> Calibration | None:
    """The calibration from the complete sessions of `session`'s agent and version
    (`candidates`): `measure(path)` gives what was measured over
    predicted after each compaction of one (kept under `key` with the file's size and
    time). None where no such session has a compaction with a response after it."""
    version = session.metadata.get("version")
    agent = AGENTS.get(session.format)
    if session.path is None or not isinstance(version, str) or agent is None:
        return None
    beside = candidates(session)
    kept = _Kept(key)
    residuals: list[int] = []
    used = 0
    for path in beside[:MAX_LOOKED_AT]:
        if used == MAX_SESSIONS:
            break
        found = kept.get(path)
        if found is None:
            if not _may_hold(path, version, agent.compaction_mark):
                continue
            try:
                found = measure(path)
            except Exception:  # a neighbour's failure is the neighbour's: this session reads on
                found = ()
            kept.put(path, found)
        if found:
            residuals += found
            used += 1
    kept.save()
    return Calibration(tuple(residuals), version) if residuals else None


def candidates(session: Session) -> list[Path]:
    """The sessions that may calibrate `session`: those beside it (for Claude Code, its
    project's), then, where it is kept in its agent's own folder, the user's other sessions
    of that agent there; each lot the nearest in time first."""
    if session.path is None:
        return []
    own = Path(session.path)
    beside = sessions_beside(own)
    agent = AGENTS.get(session.format)
    if agent is None:
        return beside
    try:
        home = agent.home().resolve()
        if not own.resolve().is_relative_to(home):
            return beside
        mine = own.stat().st_mtime
        known = {own.resolve(), *(p.resolve() for p in beside)}
        others = [f.path for f in agent.find(home) if f.subagent_of is None and f.path.resolve() not in known]
        others.sort(key=lambda p: abs(p.stat().st_mtime - mine))
    except OSError:
        return beside
    return beside + others


def usable(other: Session, session: Session) -> bool:
    """Whether `other`, beside `session`, can calibrate it: complete, of its agent and version."""
    version = session.metadata.get("version")
    return (
        not is_slice(other)
        and other.format == session.format
        and version is not None
        and other.metadata.get("version") == version
    )


def _may_hold(path: Path, version: str, mark: bytes) -> bool:
    """Whether `path` names `version` near its start and holds its agent's `mark` of a
    compaction, read as bytes (the whole file is read and counted only when it may)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return False
        with open_regular(path) as f:
            head = f.read(HEAD_BYTES)
            if f'"{version}"'.encode() not in head:  # as each agent writes its version: a string
                return False
            seen = head
            while mark not in seen:
                chunk = f.read(1 << 20)
                if not chunk:
                    return False
                seen = seen[1 - len(mark) :] + chunk  # a mark may straddle two reads
    except OSError:
        return False
    return True


class _Kept:
    """The figures measured on sessions, kept in the cache directory by path, size,
    modification time and key."""

    def __init__(self, key: str) -> None:
        root = cache_root()
        self.path = root / "calibration.json" if root is not None else None
        self.key = f"{RULES}:{key}"
        self.entries: dict[str, dict[str, object]] = {}
        self.changed = False
        if self.path is not None:
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    self.entries = {k: v for k, v in data.items() if isinstance(v, dict)}

    def _stamp(self, path: Path) -> list[object] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns, self.key]

    def get(self, path: Path) -> tuple[int, ...] | None:
        entry = self.entries.get(str(path))
        if entry is None or entry.get("stamp") != self._stamp(path):
            return None
        figures = entry.get("residuals")
        if isinstance(figures, list) and all(isinstance(x, int) for x in figures):
            return tuple(figures)
        return None

    def put(self, path: Path, residuals: tuple[int, ...]) -> None:
        stamp = self._stamp(path)
        if stamp is not None:
            self.entries[str(path)] = {"stamp": stamp, "residuals": list(residuals)}
            self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the measuring next time
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps(self.entries))

"""What the transcript cannot show of the context after its agent compacts, measured on
the user's other sessions (docs/agents.md).

After each compaction of another complete session of the same agent and version, the
prompt its next request reported less our prediction of it is what our model of the
parts misses there (its residual). The sessions beside it come first (in the same
folder: for Claude Code, the same project, so the same system prompt, CLAUDE.md, tools
and hooks), then, where it is kept in its agent's own folder, the user's other sessions
there. A session that has not compacted yet, or not before this compaction, may take the
median residual of those of the same kind (automatic or manual, and after the same
hooks whose output the transcript does not hold) as a correction of its
fixed part, and the range they span as the part's range ("calibrated on 3 compactions of
2.1.49 in your sessions"), but only where that would have helped them: each of those
sessions in turn is corrected by the others' median, and the correction is applied only
if that lowers their median error against the plain model. Otherwise the plain model is
shown and says why it was not calibrated. What a session measures after its own earlier
compaction wins over this (`core.own.compactions`).

What a session measured is kept in the cache directory by path, size and modification
time, together with its agent and version, so a session beside it is read and counted
once, and the same question gets the same answer whatever was opened before.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.contract.files import Files
from compaction_inspector.core.files import open_regular, write_atomic
from compaction_inspector.core.measuring.slices import sessions_beside
from compaction_inspector.core.model import Session, immutable
from compaction_inspector.core.text import counted

MAX_SESSIONS = 5  # the nearest in time that hold a compaction: each is read and counted once
MAX_LOOKED_AT = 50  # files beside it looked into for their version and a compaction
HEAD_BYTES = 64_000  # enough of a file to find its agent version
MAX_BYTES = 20_000_000  # larger sessions are not read and counted for this (seconds each, first time)
# bumped whenever what a prediction or a kept entry is made of changes: entries kept otherwise are redone
RULES = "4"
KINDS = {"auto": "automatic", "manual": "manual"}


@immutable()
class Measured:
    """What one session measured after its own compactions, whoever asks: its agent
    (format) and version, whether it is complete (not a slice of a longer one), and for
    each full compaction a response reported after, its trigger, the hooks that ran on it
    unrecorded (`Compaction.unrecorded`) and its residual (measured less predicted, in the
    model's tokens)."""

    format: str
    version: str | None
    complete: bool
    residuals: tuple[tuple[str | None, tuple[str, ...], int], ...]
    fixed: int | None = None  # what its first request held beyond its messages (None: not measured)

    def to_json(self) -> dict[str, object]:
        return {
            "format": self.format,
            "version": self.version,
            "complete": self.complete,
            "residuals": [[t, list(h), r] for t, h, r in self.residuals],
            "fixed": self.fixed,
        }

    @classmethod
    def from_json(cls, data: object) -> Measured | None:
        if not isinstance(data, dict):
            return None
        fmt, version, complete, residuals, fixed = (
            data.get("format"),
            data.get("version"),
            data.get("complete"),
            data.get("residuals"),
            data.get("fixed"),
        )
        if not (
            (fixed is None or (isinstance(fixed, int) and not isinstance(fixed, bool)))
            and isinstance(fmt, str)
            and (version is None or isinstance(version, str))
            and isinstance(complete, bool)
            and isinstance(residuals, list)
            and all(
                isinstance(x, list)
                and len(x) == 3
                and (x[0] is None or isinstance(x[0], str))
                and isinstance(x[1], list)
                and all(isinstance(h, str) for h in x[1])
                and isinstance(x[2], int)
                and not isinstance(x[2], bool)
                for x in residuals
            )
        ):
            return None
        return cls(fmt, version, complete, tuple((t, tuple(h), r) for t, h, r in residuals), fixed)


@immutable()
class Calibration:
    """The residuals of one kind of compaction (`trigger`, after `hooks` unrecorded) in the
    user's other sessions of one version, grouped by session, and whether correcting by
    their median helps."""

    by_session: tuple[tuple[int, ...], ...]
    version: str
    trigger: str | None
    hooks: tuple[str, ...] = ()

    @property
    def residuals(self) -> tuple[int, ...]:
        return tuple(r for own in self.by_session for r in own)

    @property
    def correction(self) -> int:
        return round(statistics.median(self.residuals))

    @property
    def span(self) -> tuple[int, int]:
        return min(self.residuals), max(self.residuals)

    @property
    def errors(self) -> tuple[int, int] | None:
        """The median error of the plain model on these sessions, and of the model
        corrected by the other sessions' median, each session left out in turn (None:
        fewer than two sessions, nothing to check a correction on)."""
        groups = self.by_session
        if len(groups) < 2:
            return None
        plain, corrected = [], []
        for k, own in enumerate(groups):
            others = [r for j, g in enumerate(groups) if j != k for r in g]
            shift = statistics.median(others)
            plain += [abs(r) for r in own]
            corrected += [abs(r - shift) for r in own]
        return round(statistics.median(plain)), round(statistics.median(corrected))

    @property
    def helps(self) -> bool:
        errors = self.errors
        return errors is not None and errors[1] < errors[0]

    @property
    def _what(self) -> str:
        kind = KINDS.get(self.trigger or "", "")
        noun = f"{kind} compaction" if kind else "compaction"
        after = " after the same hooks (their output not in the transcripts)" if self.hooks else ""
        return f"{counted(len(self.residuals), noun)} of {self.version}{after}"

    @property
    def source(self) -> str:
        """Where an applied correction comes from."""
        return f"calibrated on {self._what} in your sessions"

    @property
    def declined(self) -> str:
        """Why the correction was not applied (where `helps` is false)."""
        errors = self.errors
        if errors is None:
            return (
                f"not calibrated: {self._what} in 1 other session of yours, too few to check a correction on"
            )
        return (
            f"not calibrated: corrected by each other, your {self._what} would have been "
            f"{errors[1]:,} off at the median, against {errors[0]:,} for the plain model"
        )


@immutable()
class Siblings:
    """What the user's other complete sessions of a session's agent and version measured
    after their compactions, each session's residuals by trigger; `beside`: those in its
    own folder (for Claude Code, its project: the same system prompt, tools, CLAUDE.md)."""

    sessions: tuple[Measured, ...]
    version: str
    beside: tuple[Measured, ...] = ()

    def startup_only(self, fixed: int) -> int:
        """What of a first request's `fixed` part the sessions beside it did not carry at
        theirs (0: as much as one of them did): content sent at start only, such as a
        SessionStart hook's output at startup, which may not be sent after a compaction."""
        theirs = [m.fixed for m in self.beside if m.fixed is not None]
        return max(0, fixed - min(theirs)) if theirs else 0

    def of(self, trigger: str | None, hooks: tuple[str, ...] = ()) -> Calibration | None:
        """The calibration for a compaction of `trigger`'s kind after `hooks` whose output
        the transcript does not hold (what they sent is in the residual only alike): None
        where none such was measured."""
        kind = (trigger, hooks)
        groups = tuple(
            own for s in self.sessions if (own := tuple(r for t, h, r in s.residuals if (t, h) == kind))
        )
        return Calibration(groups, self.version, trigger, hooks) if groups else None


def across_sessions(
    session: Session, agent: Files | None, measure: Callable[[Path], Measured], key: str
) -> Siblings | None:
    """What the complete sessions of `session`'s agent and version (`candidates`)
    measured: `measure(path)` reads one (kept under `key` with the file's size and time,
    whatever it holds). None where no such session has a compaction with a response
    after it."""
    version = session.metadata.get("version")
    if session.path is None or not isinstance(version, str) or agent is None:
        return None
    kept = _Kept(key)
    found: list[Measured] = []
    near: list[Measured] = []
    folder = Path(session.path).parent.resolve()
    for path in candidates(session, agent)[:MAX_LOOKED_AT]:
        if len(found) == MAX_SESSIONS:
            break
        measured = kept.get(path)
        if measured is None:
            if not _may_hold(path, version, agent.compaction_mark):
                continue
            try:
                measured = measure(path)
            except Exception:  # a neighbour's failure is the neighbour's: this session reads on
                continue
            kept.put(path, measured)
        same = measured.format == session.format and measured.version == version
        if same and measured.complete and measured.residuals:
            found.append(measured)
            near += [measured] if path.parent.resolve() == folder else []
    kept.save()
    return Siblings(tuple(found), version, tuple(near)) if found else None


def candidates(session: Session, agent: Files | None) -> list[Path]:
    """The sessions that may calibrate `session`: those beside it (for Claude Code, its
    project's), then, where it is kept in its agent's own folder, the user's other sessions
    of that agent there; each lot the nearest in time first."""
    if session.path is None:
        return []
    own = Path(session.path)
    beside = sessions_beside(own)
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
    """What sessions measured, kept in the cache directory by path, size, modification
    time and key."""

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

    def get(self, path: Path) -> Measured | None:
        entry = self.entries.get(str(path))
        if entry is None or entry.get("stamp") != self._stamp(path):
            return None
        return Measured.from_json(entry.get("measured"))

    def put(self, path: Path, measured: Measured) -> None:
        stamp = self._stamp(path)
        if stamp is not None:
            self.entries[str(path)] = {"stamp": stamp, "measured": measured.to_json()}
            self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the measuring next time
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps(self.entries))

"""The session list's index: a row for each session (`Row`), kept between runs in the
user cache directory by path, size and modification time (or, in a file that holds many
sessions, the session's own stamp), so a session is scanned again only when it changed;
and the agents' places the list was last made in, so a list whose every row is kept is
made again without the agents (`tui.cli.kept_sessions`). Imports neither the agents nor
the reading of a session."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.files import read_text, write_atomic
from compaction_inspector.core.forked import spread
from compaction_inspector.core.formats.common import LOADER_VERSION, as_dict, loads
from compaction_inspector.core.formats.kinds import stored_in
from compaction_inspector.core.model import MAX_COUNT, immutable

INDEX_VERSION = f"13.{LOADER_VERSION}"  # rows change when the loaders or the rows do
AGENTS = "compaction_inspector.core.agents."  # where every agent's `places` module is
REGISTRY = AGENTS + "registry"  # the modules it says are registered, read where the program is

# An agent's places as the index keeps them: its format, its `places` module, the command
# line's option naming its folder and the module of its class (which names that option)
Place = tuple[str, str, str, str]


@immutable()
class Row:
    """What a list of sessions shows of one."""

    path: str
    agent: str
    project: str
    title: str
    started: str | None
    last_activity: str | None
    model: str | None
    messages: int
    api_rounds: int
    peak_context_tokens: int | None  # the largest prompt a response reported
    peak_pressure: float | None  # ... over the usable window the session's agent had
    compactions: int
    bytes: int
    subagents: int
    problem: str | None = None  # why it could not be read, when it could not
    subagent_of: str | None = None  # a sub-agent's: the session (file stem) it ran in
    # what its responses cost, its sub-agents' included, priced from their usage (None: none priced)
    cost_usd: float | None = None
    subagents_cost_usd: float | None = None  # of that, its sub-agents' (None: it ran none)
    unpriced: str | None = None  # the models the price table lacks, with how many responses each
    # the tokens its responses reported, sub-agents included, by model and kind (`uncached_input`,
    # `cache_read`, `cache_write_5m`, `cache_write_1h`, `output`), as ccusage counts them
    tokens: dict[str, dict[str, int]] | None = None

    @property
    def cost(self) -> str:
        """What a list shows: "$2.39", "not priced" (a model the table lacks) or "—" (no usage)."""
        if self.cost_usd is not None:
            return f"${self.cost_usd:,.2f}"
        return "not priced" if self.unpriced else "—"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Row | None:
        """The row an index kept, or None when the entry is not one (any field missing,
        extra or of the wrong type): such an entry is scanned again."""
        if not isinstance(data, dict) or set(data) != {*_ROW_TYPES, "tokens"}:
            return None
        if not _token_table(data["tokens"]):
            return None
        for name, types in _ROW_TYPES.items():
            value = data[name]
            if isinstance(value, bool) or not isinstance(value, types):
                return None
            if isinstance(value, int) and not 0 <= value <= MAX_COUNT:
                return None
        return cls(**data)


# what each field of a kept row may hold
_ROW_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("path", "agent", "project", "title"), (str,)),
    **dict.fromkeys(
        ("started", "last_activity", "model", "problem", "subagent_of", "unpriced"), (str, type(None))
    ),
    **dict.fromkeys(("messages", "api_rounds", "compactions", "bytes", "subagents"), (int,)),
    "peak_context_tokens": (int, type(None)),
    **dict.fromkeys(("cost_usd", "subagents_cost_usd"), (float, int, type(None))),
    "peak_pressure": (float, int, type(None)),
}


def _token_table(value: Any) -> bool:
    """Whether a kept row's `tokens` is one `scan` writes: None, or counts by model and kind."""
    return value is None or (
        isinstance(value, dict)
        and all(
            isinstance(model, str)
            and isinstance(kinds, dict)
            and all(
                isinstance(k, str) and isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_COUNT
                for k, n in kinds.items()
            )
            for model, kinds in value.items()
        )
    )


def problem(found: Found, problem: str) -> Row:
    """The row of a session file that cannot be read: its name, its size and why."""
    size = 0
    with contextlib.suppress(OSError):
        size = stored_in(found.path)[0].stat().st_size
    return Row(
        path=str(found.path),
        agent=found.agent,
        project=found.project,
        title=found.path.name,
        started=None,
        last_activity=None,
        model=None,
        messages=0,
        api_rounds=0,
        peak_context_tokens=None,
        peak_pressure=None,
        compactions=0,
        bytes=size,
        subagents=len(found.subagents),
        problem=problem,
        subagent_of=found.subagent_of,
    )


def short_project(project: str, width: int | None = None) -> str:
    """A project by its last two folders (`entireio/cli`), what tells projects apart; in
    `width`, its last folder alone when both do not fit, cut with an ellipsis."""
    parts = [p for p in project.replace("\\", "/").split("/") if p]
    if not parts:
        return project
    two = "/".join(parts[-2:])
    if width is None or len(two) <= width:
        return two
    last = parts[-1]
    return last if len(last) <= width else last[: max(1, width - 1)] + "…"


def newest_first(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: r.last_activity or "", reverse=True)


def _places(value: Any) -> list[Place]:
    """The places an index kept (none where they are not as `Index.rows` writes them)."""
    if not isinstance(value, list):
        return []
    found = [(p[0], p[1], p[2], p[3]) for p in value if isinstance(p, list) and len(p) == 4]
    if len(found) < len(value) or not all(isinstance(x, str) for p in found for x in p):
        return []
    return found if all(p[1].startswith(AGENTS) and p[3].startswith(AGENTS) for p in found) else []


def made_by(places: Sequence[Place]) -> list[int]:
    """What changes when the program that listed `places` does: the size and time of the
    registry's file and of each agent's modules the places name, found without importing
    them (an empty list where one is not there)."""
    stamp: list[int] = []
    for module in (REGISTRY, *(m for p in places for m in (p[1], p[3]))):
        try:
            spec = importlib.util.find_spec(module)
            found = os.stat(spec.origin) if spec is not None and spec.origin else None
        except (ImportError, OSError, ValueError):
            found = None
        if found is None:
            return []
        stamp += [found.st_size, found.st_mtime_ns]
    return stamp


class Index:
    """Rows kept between runs by path, size and modification time (`sessions.json` in
    the user cache directory); an entry that does not match, or a file that does not
    parse, is simply scanned again."""

    def __init__(self, path: Path | None = None) -> None:
        root = cache_root()
        self.path = path if path is not None else (root / "sessions.json" if root is not None else None)
        self.entries: dict[str, Any] = {}
        self.places: list[Place] = []  # the agents' the last list was made in (`Place`)
        self.made: Any = None  # ... and by what program (`made_by`)
        self._changed = False  # an entry made or let go since it was read: written back then only
        if self.path is not None:
            # an index that does not read as one (damaged, hand-edited) is rebuilt
            with contextlib.suppress(OSError, ValueError, RecursionError):
                data = loads(read_text(self.path))
                if isinstance(data, dict) and data.get("version") == INDEX_VERSION:
                    self.entries = as_dict(data.get("rows"))
                    self.places, self.made = _places(data.get("places")), data.get("made")

    def known(self, found: list[Found]) -> list[Row]:
        """The rows the index holds for these files as it last saw them, without looking
        at the files (what a list shows at once; `rows` then checks each one)."""
        kept = (self.entries.get(str(f.path)) for f in found)
        rows = (Row.from_dict(k.get("row")) for k in kept if isinstance(k, dict))
        return newest_first([r for r in rows if r is not None])

    def rows(
        self,
        found: list[Found],
        scan: Callable[[Found], Row],
        progress: Callable[[int, int, Row], None] | None = None,
        jobs: int = 1,
        places: Sequence[Place] = (),
    ) -> list[Row]:
        """A row for each file, `scan`ned only when it changed, the files that did in up to
        `jobs` forked processes (`core.forked`); newest activity first. `progress(done,
        total, row)` hears of each row as it is made. `places`, the agents' the files were
        found in, are kept for `kept_places` to find them again."""
        made: list[Row | None] = []
        stale: list[tuple[int, list[Any]]] = []  # the files to scan: where their rows go, their keys
        done = 0
        for f in found:
            key, row = self._kept(f)
            if row is None:
                stale.append((len(made), key))
            else:
                done += 1
                if progress is not None:
                    progress(done, len(found), row)
            made.append(row)
        program = made_by(places)
        if list(places) != self.places or program != self.made:
            self.places, self.made, self._changed = list(places), program, True
        for k, row in spread(scan, [found[at] for at, _ in stale], jobs):
            at, key = stale[k]
            self.entries[str(found[at].path)] = {"key": key, "row": row.to_dict()}
            self._changed = True
            made[at] = row
            done += 1
            if progress is not None:
                progress(done, len(found), row)
        out = [r for r in made if r is not None]
        self._save(out)
        return newest_first(out)

    def kept_places(self) -> list[Place]:
        """The places the last list was made in, where the program that made it is the one
        running (none: a list must be made with the agents)."""
        return self.places if self.places and made_by(self.places) == self.made else []

    def kept(self, found: list[Found]) -> list[Row] | None:
        """Every file's row, newest activity first, where the index holds each as the file
        is now and nothing else; None where any must be scanned (`rows` makes the list)."""
        made = [self._kept(f)[1] for f in found]
        rows = [r for r in made if r is not None]
        if len(rows) < len(made) or len({r.path for r in rows}) != len(self.entries):
            return None
        return newest_first(rows)

    def _kept(self, found: Found) -> tuple[list[Any], Row | None]:
        """The file's key (its size and time, or its own stamp) and the row kept under it;
        None where it must be scanned (a file that cannot be read is a row of its own)."""
        try:
            st = stored_in(found.path)[0].stat()
        except OSError as exc:
            return [], problem(found, exc.strerror or str(exc))
        # a session of a file that holds many changes when its own stamp does
        stamp = [found.stamp] if found.stamp is not None else [st.st_size, st.st_mtime_ns]
        key = [*stamp, len(found.subagents)]
        kept = self.entries.get(str(found.path))
        if isinstance(kept, dict) and kept.get("key") == key:
            return key, Row.from_dict(kept.get("row"))
        return key, None

    def _save(self, rows: list[Row]) -> None:
        if self.path is None:
            return
        shown = {r.path for r in rows}
        kept = {k: v for k, v in self.entries.items() if k in shown}
        if not self._changed and len(kept) == len(self.entries):
            return  # the index on disk already says all of it
        with contextlib.suppress(OSError):
            write_atomic(
                self.path,
                json.dumps(
                    {"version": INDEX_VERSION, "rows": kept, "places": self.places, "made": self.made}
                ),
            )

"""opencode's own database (`opencode.db` in its data folder, from opencode 1.2): tables
`session`, `message` and `part`, each row's JSON in `data` (docs/agents.md#opencode).

The file is the user's and opencode may be writing it. It is read, never written, and
nothing is made beside it: without a write-ahead log it is opened `immutable`; with one
(opencode running, or stopped before it folded the log in) the database and its log are
copied to a private temporary folder and the copy is read, so what only the log holds is
read too. A lock or a read that fails half-way is tried again, a few times, a moment
apart. A session inside the file is named `FILE#SESSION-ID`.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson

from compaction_inspector.core.files import sqlite_as_it_is
from compaction_inspector.core.formats.common import LoadError, as_dict, count, name_compactions
from compaction_inspector.core.formats.kinds import SEPARATOR
from compaction_inspector.core.model import Block, Compaction, Diagnostic, Message, Session, Usage, immutable
from compaction_inspector.core.timestamps import written

FORMAT = "opencode"
PROVIDER = ""  # each response names its own provider; the price table finds it by the model
DESCRIBED = "opencode database (FILE#SESSION)"
SUFFIXES: tuple[str, ...] = (".db",)
NAMES: tuple[str, ...] = ("opencode.db", "kilo.db")  # its data folder's (Kilo Code 7 writes kilo.db)
MAGIC = b"SQLite format 3\x00"
NOT_ONE = "not an SQLite database (its first bytes are not SQLite's header)"
TABLES = frozenset({"session", "message", "part"})
TRIES = 5  # a locked or changing database is read again this many times
PAUSE = 0.2  # seconds between tries
CLEARED = "[Old tool result content cleared]"  # what opencode sends for a pruned output (compaction.ts)

T = TypeVar("T")


def holds(head: bytes) -> bool:
    """The file's first bytes are an SQLite database's."""
    return head.startswith(MAGIC)


def named(file: Path, session: str) -> Path:
    """The name commands take for one session of the database."""
    return Path(f"{file}{SEPARATOR}{session}")


@immutable()
class Stored:
    """One session's row in the database: what a list needs before its messages are read."""

    id: str
    parent: str | None
    directory: str
    title: str
    version: str
    created: int  # milliseconds since the epoch
    updated: int


class _Copy:
    """A read-only connection to the database as it is now: the file itself where it has
    no write-ahead log, else a private copy of it and its log."""

    def __init__(self, file: Path) -> None:
        self.lock = threading.Lock()
        self._folder: tempfile.TemporaryDirectory[str] | None = None

        def scratch() -> Path:
            self._folder = tempfile.TemporaryDirectory(prefix="compaction-inspector-")
            return Path(self._folder.name)

        self.connection = sqlite_as_it_is(file, scratch)
        self.opencode = {r[0] for r in self.connection.execute("SELECT name FROM sqlite_master")} >= TABLES

    def close(self) -> None:
        with self.lock:  # a read under way finishes first
            self.connection.close()
        if self._folder is not None:
            self._folder.cleanup()


_open: dict[Path, tuple[tuple[int, ...], _Copy]] = {}
_opening = threading.Lock()


def stamp(file: Path) -> tuple[int, ...]:
    """What changes when opencode writes: the database's and its log's size and time."""
    stamps: list[int] = []
    for part in (file, Path(f"{file}-wal")):
        with contextlib.suppress(FileNotFoundError):
            st = part.stat()
            stamps += [st.st_size, st.st_mtime_ns]
    return tuple(stamps)


def _copy(file: Path) -> _Copy:
    """The connection for the database as it is now, opened again only once it changed."""
    key, now = file.resolve(), stamp(file)
    with _opening:
        kept = _open.get(key)
        if kept is not None and kept[0] == now:
            return kept[1]
        if kept is not None:
            kept[1].close()
        made = _Copy(file)
        _open[key] = (now, made)
        return made


def _read(file: Path, query: Callable[[sqlite3.Connection], T]) -> T:
    """`query` on the database, tried again while opencode holds a lock or the file
    changes under the read; an error that stays says what the file is."""
    for attempt in range(TRIES):
        try:
            copy = _copy(file)
            if not copy.opencode:
                raise LoadError(f"{file.name} is an SQLite database without opencode's tables")
            with copy.lock:
                return query(copy.connection)
        except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
            with _opening:
                dropped = _open.pop(file.resolve(), None)
            if dropped is not None:
                dropped[1].close()
            if attempt == TRIES - 1:
                raise LoadError(f"cannot read {file}: {exc}") from exc
            time.sleep(PAUSE)
        except OSError as exc:
            raise LoadError(f"cannot read {file}: {exc.strerror or exc}") from exc
    raise AssertionError("unreachable")


@immutable()
class _Catalogue:
    """The session table read once while the database stays as it is: the sessions in
    order, each by its id, and each one's sub-agents."""

    stored: list[Stored]
    by_id: dict[str, Stored]
    children: dict[str, list[Stored]]


_catalogues: dict[Path, tuple[tuple[int, ...], _Catalogue]] = {}


def _catalogue(file: Path) -> _Catalogue:
    """The session table of the database as it is now; one read however many of its
    sessions are then loaded (a list of 100,000 sessions reads it once, not once each)."""
    key, now = file.resolve(), stamp(file)
    with _opening:
        kept = _catalogues.get(key)
    if kept is not None and kept[0] == now:
        return kept[1]

    def query(db: sqlite3.Connection) -> list[Stored]:
        rows = db.execute(
            "SELECT id, parent_id, directory, title, version, time_created, time_updated "
            "FROM session ORDER BY time_created, id"
        )
        return [
            Stored(
                str(i), str(p) if p else None, str(d or ""), str(t or ""), str(v or ""), _count(c), _count(u)
            )
            for i, p, d, t, v, c, u in rows
        ]

    stored = _read(file, query)
    children: dict[str, list[Stored]] = {}
    for s in stored:
        if s.parent is not None:
            children.setdefault(s.parent, []).append(s)
    made = _Catalogue(stored, {s.id: s for s in stored}, children)
    with _opening:
        _catalogues[key] = (now, made)
    return made


def sessions(file: Path) -> list[Stored]:
    """Every session the database holds, oldest first."""
    return list(_catalogue(file).stored)


def _json(text: Any) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def _stored_as(value: Any) -> str:
    """What a row holds that is not text, in words ("a BLOB of 12 bytes")."""
    if isinstance(value, bytes):
        return f"a BLOB of {len(value):,} bytes"
    return "NULL" if value is None else f"a number ({type(value).__name__})"


def _count(value: Any) -> int:
    return count(value) or 0


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, int | float) or isinstance(ms, bool) or not 0 < ms < 1e14:
        return None
    return written(ms)


def usage(tokens: Any, model: str | None) -> Usage | None:
    """A response's `tokens` as usage: input without the cache, the cache read and
    written, and the output with its reasoning (which opencode reports apart and the
    provider bills as output). None where it reported nothing."""
    if not isinstance(tokens, dict):
        return None
    cache = as_dict(tokens.get("cache"))
    made = Usage(
        input_tokens=_count(tokens.get("input")),
        cache_creation_input_tokens=_count(cache.get("write")),
        cache_read_input_tokens=_count(cache.get("read")),
        output_tokens=_count(tokens.get("output")) + _count(tokens.get("reasoning")),
        model=model,
    )
    return made if made.prompt_tokens or made.output_tokens else None


@dataclass
class _Reading:
    """A session's messages as they are made from its rows."""

    messages: list[Message]
    compactions: list[Compaction]
    diagnostics: list[Diagnostic]
    recorded_usd: float = 0.0
    model: str | None = None
    provider: str | None = None
    last_total: int | None = None  # the tokens the last response reported: what its overflow check counts


def _tool_result(part: dict[str, Any]) -> Block | None:
    state = as_dict(part.get("state"))
    call = str(part.get("callID") or "")
    status = state.get("status")
    if status == "completed":
        cleared = as_dict(state.get("time")).get("compacted")
        return Block.tool_result(call, CLEARED if cleared else str(state.get("output") or ""))
    if status == "error":
        return Block.tool_result(call, str(state.get("error") or ""), is_error=True)
    return None  # pending or running: no result was sent


def _user(reading: _Reading, row: str, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """A user message: its text as sent (synthetic text included, ignored text not); a
    `compaction` part marks a compaction asked for here."""
    stamp = _iso(as_dict(info.get("time")).get("created"))
    compaction = next((p for p in parts if p.get("type") == "compaction"), None)
    if compaction is not None:
        index = len(reading.messages)
        trigger = "auto" if compaction.get("auto") else "manual"
        reading.compactions.append(Compaction(index, trigger, reading.last_total))
        marker = "overflow" if compaction.get("overflow") else "asked"
        reading.messages.append(
            Message("system", (Block("text", text=f"compaction ({marker})"),), uuid=row, timestamp=stamp,
                    is_compact_boundary=True)
        )  # fmt: skip
        return
    blocks = tuple(
        Block("text", text=str(p.get("text") or ""))
        for p in parts
        if p.get("type") == "text" and not p.get("ignored") and p.get("text")
    )
    if blocks:
        reading.messages.append(Message("user", blocks, uuid=row, timestamp=stamp))


def _assistant(reading: _Reading, row: str, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """An assistant message: each step (`step-start` to `step-finish`) one response with
    its own usage, its tool results after it; a summary opencode wrote when it compacted
    is the compaction's summary, its usage that compaction's own call."""
    model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
    provider = info.get("providerID") if isinstance(info.get("providerID"), str) else None
    reading.model, reading.provider = model or reading.model, provider or reading.provider
    stamp = _iso(as_dict(info.get("time")).get("created"))
    cost = info.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        reading.recorded_usd += float(cost)
    if info.get("summary") is True and reading.compactions:
        text = "\n\n".join(str(p.get("text") or "") for p in parts if p.get("type") == "text").strip()
        last = reading.compactions[-1]
        reading.compactions[-1] = Compaction(
            last.index, last.trigger, last.pre_tokens, call=usage(info.get("tokens"), model)
        )
        reading.messages.append(
            Message("user", (Block("text", text=text),), uuid=row, timestamp=stamp, is_compact_summary=True)
        )
        return
    steps: list[list[dict[str, Any]]] = [[]]
    for p in parts:
        if p.get("type") == "step-start" and steps[-1]:
            steps.append([])
        steps[-1].append(p)
    for n, step in enumerate(steps):
        blocks: list[Block] = []
        results: list[Block] = []
        for p in step:
            kind = p.get("type")
            if kind == "reasoning" and p.get("text"):
                blocks.append(Block("thinking", text=str(p["text"])))
            elif kind == "text" and p.get("text"):
                blocks.append(Block("text", text=str(p["text"])))
            elif kind == "tool" and p.get("callID"):
                state = as_dict(p.get("state"))
                blocks.append(
                    Block.tool_use(str(p["callID"]), str(p.get("tool") or ""), state.get("input") or {})
                )
                result = _tool_result(p)
                if result is not None:
                    results.append(result)
        finish = next((p for p in step if p.get("type") == "step-finish"), None)
        tokens = (
            finish.get("tokens")
            if finish is not None
            else (info.get("tokens") if n == len(steps) - 1 else None)
        )
        used = usage(tokens, model)
        if not blocks and used is None:
            continue
        if isinstance(tokens, dict):
            total = _count(tokens.get("total"))
            reading.last_total = total or (used.prompt_tokens + used.output_tokens if used else None)
        reading.messages.append(
            Message("assistant", tuple(blocks), id=f"{row}/{n}", uuid=f"{row}/{n}", timestamp=stamp,
                    usage=used)
        )  # fmt: skip
        if results:
            reading.messages.append(
                Message("user", tuple(results), uuid=f"{row}/{n}/results", timestamp=stamp)
            )


def load(path: Path, session: str | None) -> Session:
    """One session of the database (the newest main session where none is named), with
    its messages in the order opencode keeps them (by id) and each step a response."""
    catalogue = _catalogue(path)
    stored = catalogue.stored
    if not stored:
        raise LoadError(f"{path.name} holds no opencode session")
    if session is None:
        main = [s for s in stored if s.parent is None] or stored
        chosen = max(main, key=lambda s: s.updated)
    else:
        found = catalogue.by_id.get(session)
        if found is None:
            raise LoadError(
                f"{path.name} holds no session {session!r}: `sessions --json` lists those it holds"
            )
        chosen = found

    def query(db: sqlite3.Connection) -> tuple[list[tuple[str, str]], dict[str, list[tuple[str, str]]]]:
        messages = db.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (chosen.id,))
        parts: dict[str, list[tuple[str, str]]] = {}
        rows = db.execute(
            "SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY id", (chosen.id,)
        )
        for message, part, data in rows:
            parts.setdefault(message, []).append((part, data))
        return list(messages), parts

    messages, parts = _read(path, query)
    hasher = hashlib.blake2b(digest_size=16)
    rows: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = []
    notes: list[Diagnostic] = []
    size = 0
    for number, (row, data) in enumerate(messages, 1):
        if not isinstance(data, str):
            notes.append(Diagnostic(number, f"message {row} is {_stored_as(data)}, not JSON text: skipped"))
            continue
        hasher.update(data.encode())
        size += len(data)
        own = []
        for _, part in parts.get(row, []):
            if not isinstance(part, str):
                said = f"a part of message {row} is {_stored_as(part)}, not JSON text: skipped"
                notes.append(Diagnostic(number, said))
                continue
            hasher.update(part.encode())
            size += len(part)
            decoded = _json(part)
            if decoded:
                own.append(decoded)
            else:
                notes.append(Diagnostic(number, f"a part of message {row} is not JSON: skipped"))
        rows.append((row, _json(data), own))
    children = [str(named(path, s.id)) for s in catalogue.children.get(chosen.id, [])]
    return built(chosen, rows, str(named(path, chosen.id)), children, size, hasher.hexdigest(), notes)


def built(
    chosen: Stored,
    rows: list[tuple[str, dict[str, Any], list[dict[str, Any]]]],
    name: str,
    children: list[str],
    size: int,
    digest: str,
    notes: list[Diagnostic],
) -> Session:
    """A session from its messages as opencode keeps them (id, info, parts), in order: the
    database's rows or an export's entries alike."""
    reading = _Reading([], [], list(notes))
    for number, (row, info, own) in enumerate(rows, 1):
        if info.get("role") == "user":
            _user(reading, row, info, own)
        elif info.get("role") == "assistant":
            _assistant(reading, row, info, own)
        else:
            reading.diagnostics.append(
                Diagnostic(number, f"message {row} has no role opencode writes: skipped")
            )
    name_compactions(reading.messages, reading.compactions)
    return Session(
        tuple(reading.messages),
        FORMAT,
        name,
        {
            k: v
            for k, v in (
                ("title", chosen.title),
                ("version", chosen.version),
                ("cwd", chosen.directory),
                ("model", reading.model),
                ("provider", reading.provider),
                ("session_id", chosen.id),
                ("parent_session", chosen.parent),
                ("subagent_sessions", children),
                ("recorded_usd", round(reading.recorded_usd, 6)),
                ("bytes", size),
                ("started", _iso(chosen.created)),
                ("ended", _iso(chosen.updated)),
            )
            if v not in (None, "", [])
        },
        tuple(reading.diagnostics),
        content_hash=digest,
        compactions=tuple(reading.compactions),
    )


def names(path: Path) -> list[Path]:
    """Every session of the database, named as commands take it, the main sessions'
    first (a sweep or a folder's list takes these)."""
    stored = sessions(path)
    return [named(path, s.id) for s in sorted(stored, key=lambda s: s.parent is not None)]

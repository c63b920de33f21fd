"""A VS Code agent's task folder (docs/agents.md, "Task folders"): `api_conversation_history.json`,
the messages as the agent keeps them to send (Anthropic's format, with its own fields on
each), and `ui_messages.json`, what its panel showed, each request's tokens and cost among
them. Both are one JSON array, written whole each time. The agents that keep their tasks
so each read their own events from the two (`core.formats.kinds.TaskFolder`); this module
reads the folder and what every such agent writes alike, and never writes to it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core.files import open_regular
from compaction_inspector.core.formats.common import LoadError, as_dict, count, parse_content
from compaction_inspector.core.model import Block, Diagnostic, Message, Role, Usage, immutable

HISTORY = "api_conversation_history.json"
PANEL = "ui_messages.json"
REQUEST = "api_req_started"  # the panel's row of one request: its tokens and cost, once answered
# the editors built on VS Code that keep extensions' storage as it does, VS Code's first
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
PORTABLE = "VSCODE_PORTABLE"  # a portable install's data folder: its user data is under it


@immutable()
class Request:
    """One request as the panel recorded it: when it started (`ts`), the index of the
    history's last message then (where recorded), its tokens and cost as the agent wrote them."""

    ts: int | None
    index: int | None
    tokens_in: int
    tokens_out: int
    cache_writes: int
    cache_reads: int
    cost: float | None
    said: dict[str, Any]  # the whole of what it wrote, for what an agent reads more of


@immutable()
class Task:
    """A task folder read: the history's items and the panel's rows (objects only; each
    other item reported), and a hash of both files."""

    folder: Path
    history: tuple[dict[str, Any], ...]
    panel: tuple[dict[str, Any], ...]
    diagnostics: tuple[Diagnostic, ...]
    content_hash: str

    @cached_property
    def requests(self) -> list[Request]:
        """The panel's requests, in the order it shows them (parsed once: its reader and
        `recorded_usd` both ask)."""
        return [r for r in map(_request, self.panel) if r is not None]

    def recorded_usd(self, *more: float) -> dict[str, float]:
        """What the agent recorded its requests cost (and `more` it recorded besides), as
        a session's `recorded_usd` (shown beside ours); none where it recorded none."""
        costs = [r.cost for r in self.requests if r.cost is not None] + list(more)
        return {"recorded_usd": round(sum(costs), 6)} if costs else {}


@immutable()
class Event:
    """What the agent's files recorded of one of its compactions, in its own names (`fields`)
    and in words (`words`)."""

    kind: str
    words: tuple[str, ...]
    fields: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **dict(self.fields)}

    def said(self) -> list[str]:
        return list(self.words)


def extra(folder: Path, name: str) -> dict[str, Any]:
    """Another JSON object the task folder holds (`{}`: none, or not one)."""
    try:
        with open_regular(folder / name) as f:
            return as_dict(orjson.loads(f.read()))
    except (OSError, orjson.JSONDecodeError):
        return {}


def boundary(line: int) -> Message:
    """A compaction's marker before the history's message at `line`, named once what
    follows it is read (`name_compactions`)."""
    return Message("system", (Block("text", text="compaction"),), line=line, is_compact_boundary=True)


def again(m: Message) -> Message:
    """A message sent again after a compaction that kept it: a copy that stands for it,
    reporting nothing of its own."""
    return dataclasses.replace(m, usage=None, id=None, replaces=(m,))


def folder_of(path: Path) -> Path | None:
    """The task folder `path` names (the folder, or one of its two files), or None."""
    folder = path if path.is_dir() else path.parent if path.name in (HISTORY, PANEL) else None
    return folder if folder is not None and (folder / HISTORY).is_file() else None


def read(folder: Path) -> Task:
    """The folder's two files; LoadError where the history cannot be read as an array. A
    missing panel is said, and its figures are then none."""
    hasher = hashlib.blake2b(digest_size=16)
    notes: list[Diagnostic] = []
    items: list[tuple[dict[str, Any], ...]] = []
    for name in (HISTORY, PANEL):
        try:
            with open_regular(folder / name) as f:
                data = f.read()
        except OSError as exc:
            if name == HISTORY:
                raise LoadError(f"cannot read {folder / name}: {exc.strerror or exc}") from exc
            notes.append(Diagnostic(None, f"no {PANEL} beside it: no request's tokens or cost"))
            items.append(())
            continue
        hasher.update(data)
        try:
            value = orjson.loads(data) if data.strip() else []
        except orjson.JSONDecodeError as exc:
            if name == HISTORY:
                raise LoadError(f"{folder / name} is not JSON: {exc}") from exc
            notes.append(Diagnostic(None, f"{PANEL} is not JSON ({exc}): no request's tokens or cost"))
            value = []
        if not isinstance(value, list):
            raise LoadError(f"{folder / name} holds no list of messages")
        for k, item in enumerate(value):
            if not isinstance(item, dict):
                notes.append(Diagnostic(None, f"{name}: item {k + 1:,} skipped: not a JSON object"))
        items.append(tuple(i for i in value if isinstance(i, dict)))
    return Task(folder, items[0], items[1], tuple(notes), hasher.hexdigest())


def storage(extension: str, environ: Mapping[str, str] | None = None) -> Path:
    """An extension's folder in VS Code's global storage: in a portable install's data
    folder, else in the user folder of the first editor on this machine that has one
    (VS Code's where none has)."""
    env = os.environ if environ is None else environ
    if env.get(PORTABLE):
        return Path(env[PORTABLE]) / "user-data" / "User" / "globalStorage" / extension
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    found = [base / e / "User" / "globalStorage" / extension for e in EDITORS]
    return next((f for f in found if f.is_dir()), found[0])


def tasks(root: Path) -> list[Path]:
    """The task folders under an extension's folder (`tasks/<id>/`), oldest id first."""
    try:
        folders = sorted((root / "tasks").iterdir())
    except OSError:
        return []
    return [f for f in folders if (f / HISTORY).is_file()]


def stamp(folder: Path) -> int | None:
    """What changes when the agent writes either file (None: unreadable now)."""
    try:
        stats = [(folder / name).stat() for name in (HISTORY, PANEL) if (folder / name).exists()]
    except OSError:
        return None
    return sum(s.st_mtime_ns + s.st_size for s in stats)


def message(k: int, item: dict[str, Any], usage: Usage | None = None, **flags: Any) -> Message:
    """The history's item `k` as a message (an empty one keeps its place): its line is its
    place in the history, from 1, as the file is one array (docs/agents.md)."""
    role: Role = "assistant" if item.get("role") == "assistant" else "user"
    blocks = parse_content(item.get("content")) or (Block("text", text=""),)
    ts, named = count(item.get("ts")), item.get("id")
    return Message(
        role,
        blocks,
        id=named if isinstance(named, str) and named else f"item-{k + 1}",
        line=k + 1,
        usage=usage,
        timestamp=_iso(ts),
        **flags,
    )


def answered(
    history: Sequence[dict[str, Any]], requests: Sequence[Request], by_ts: bool
) -> dict[int, Request]:
    """Each assistant item's request, by its index in the history: the last request
    started before it (by time, where both are stamped; else by the history's index the
    request recorded). A request that no reply followed (cancelled, failed) is left out."""
    if by_ts:
        keyed = [(r.ts, r) for r in requests if r.ts is not None]
        where: Callable[[int, dict[str, Any]], int | None] = lambda k, item: count(item.get("ts"))  # noqa: E731
    else:
        keyed = [(r.index, r) for r in requests if r.index is not None]
        where = lambda k, item: k  # noqa: E731
    keyed.sort(key=lambda pair: pair[0])
    starts = [k for k, _ in keyed]
    found: dict[int, Request] = {}
    taken: set[int] = set()
    for k, item in enumerate(history):
        at = where(k, item) if item.get("role") == "assistant" else None
        j = bisect_left(starts, at) - 1 if at is not None else -1
        if j >= 0 and j not in taken:
            taken.add(j)
            found[k] = keyed[j][1]
    return found


def count_usd(value: Any) -> float | None:
    """A cost an agent recorded, in dollars (None: none, or not a number)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if number and value >= 0 else None


def _request(row: dict[str, Any]) -> Request | None:
    if row.get("say") != REQUEST or not isinstance(row.get("text"), str):
        return None
    try:
        said = as_dict(orjson.loads(row["text"]))
    except orjson.JSONDecodeError:
        return None
    if "tokensIn" not in said and "tokensOut" not in said:
        return None  # started, never answered
    index = row.get("conversationHistoryIndex")  # -1 before the history holds anything
    return Request(
        count(row.get("ts")),
        index if isinstance(index, int) and not isinstance(index, bool) else None,
        count(said.get("tokensIn")) or 0,
        count(said.get("tokensOut")) or 0,
        count(said.get("cacheWrites")) or 0,
        count(said.get("cacheReads")) or 0,
        count_usd(said.get("cost")),
        said,
    )


def _iso(ms: int | None) -> str | None:
    """A JavaScript timestamp (milliseconds) as ISO 8601 UTC."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")

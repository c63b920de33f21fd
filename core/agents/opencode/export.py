"""A session as `opencode export SESSION` writes it (and its import reads it): one JSON
object, the session's `info` and its `messages`, each with its `info` and `parts`, as
the database keeps them (`database.built` makes the session from either)."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from compaction_inspector.core.agents.opencode.database import FORMAT, PROVIDER, Stored, built
from compaction_inspector.core.formats.common import LoadError, Records, as_dict, count, iter_dicts
from compaction_inspector.core.model import Diagnostic, Session

__all__ = ["DESCRIBED", "FORMAT", "PROVIDER", "appended", "load", "looks_like"]

DESCRIBED = "opencode export JSON"


def looks_like(record: dict[str, Any]) -> bool:
    info = record.get("info")
    return (
        isinstance(info, dict)
        and str(info.get("id", "")).startswith("ses")
        and isinstance(record.get("messages"), list)
    )


def load(records: Records, path: str | None) -> Session:
    found = next((value for _, value in iter_dicts(records) if looks_like(value)), None)
    if found is None:
        raise LoadError("not an opencode export: no session info and messages")
    info = as_dict(found.get("info"))
    times = as_dict(info.get("time"))
    parent = info.get("parentID")
    chosen = Stored(
        str(info["id"]),
        parent if isinstance(parent, str) else None,
        str(info.get("directory") or ""),
        str(info.get("title") or ""),
        str(info.get("version") or ""),
        count(times.get("created")) or 0,
        count(times.get("updated")) or 0,
    )
    rows: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = []
    notes: list[Diagnostic] = []
    for number, entry in enumerate(found["messages"], 1):
        message = as_dict(as_dict(entry).get("info"))
        parts = as_dict(entry).get("parts")
        if not message or not isinstance(parts, list):
            notes.append(Diagnostic(number, "a message without its info and parts: skipped"))
            continue
        rows.append((str(message.get("id") or number), message, [p for p in parts if isinstance(p, dict)]))
    data = orjson.dumps(found)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return built(chosen, rows, path or chosen.id, [], len(data), digest, notes)


def appended(session: Session, records: Records) -> Session | None:
    """An export is written whole: read again, not appended to."""
    return None

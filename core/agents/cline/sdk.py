"""The current Cline's sessions (its SDK, docs/agents.md#cline), read as it writes them
(`sdk/packages/core/src/services/session-artifacts.ts`, `session-data.ts`,
`session/models/session-manifest.ts`, `session-compaction.ts`).

Each session is a folder of its sessions folder (`~/.cline/data/sessions/<id>/`): its
manifest (`<id>.json`: model, provider, folder, first prompt), its messages
(`<id>.messages.json`: every message of the conversation, each reply with the `metrics` of
its request), and, once it has compacted, the state of its last compaction
(`<id>.compaction.json`: how many of those messages it stands for, and the messages sent
in their place). A sub-agent's messages are `<agent>.messages.json` in its root session's
folder. Each file is written whole; none is written to here.

Read here: the messages in order, and where a compaction state stands for the first N, a
boundary after them, then the messages it sends in their place (the summary it wrote, and
a copy of each it kept as it was), then the rest. Earlier compactions leave no state (the
file holds the last one) and are not read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core.files import open_regular
from compaction_inspector.core.formats.common import (
    LoadError,
    as_dict,
    as_list,
    count,
    input_holds_cache,
    name_compactions,
)
from compaction_inspector.core.formats.task_folder import Event, again, boundary, count_usd, extra, message
from compaction_inspector.core.model import Compaction, Diagnostic, Message, Session, Usage

FORMAT = "cline"
DESCRIBED = "Cline session (messages.json)"
PROVIDER = "anthropic"  # its usual provider; a model the table finds elsewhere is billed there
MESSAGES, COMPACTION = ".messages.json", ".compaction.json"
SDK = "sdk"  # the session's `layout` where the current Cline wrote it


def claims(path: Path) -> bool:
    return path.name.endswith(MESSAGES)


def companions(path: Path) -> tuple[Path, ...]:
    """Its manifest and its compaction state, read with its messages."""
    stem = path.name[: -len(MESSAGES)]
    return path.with_name(stem + ".json"), path.with_name(stem + COMPACTION)


def load(path: Path) -> Session:
    data = _read(path)
    if data is None:
        raise LoadError(f"cannot read {path}")
    hasher = hashlib.blake2b(data, digest_size=16)
    try:
        held = as_dict(orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        raise LoadError(f"{path} is not JSON: {exc}") from exc
    items = [m for m in as_list(held.get("messages")) if isinstance(m, dict)]
    skipped = len(as_list(held.get("messages"))) - len(items)
    notes = (Diagnostic(None, f"{skipped:,} messages skipped: not objects"),) if skipped else ()
    manifest_file, state_file = companions(path)
    state = _object(state_file, hasher)
    total = input_holds_cache(
        (
            count(m.get("inputTokens")) or 0,
            (count(m.get("cacheReadTokens")) or 0) + (count(m.get("cacheWriteTokens")) or 0),
        )
        for m in (as_dict(i.get("metrics")) for i in items)
    )
    own = [message(k, item, _usage(item, total)) for k, item in enumerate(items)]
    messages, compactions = _with_state(own, items, state)
    name_compactions(messages, compactions)
    manifest = extra(path.parent, manifest_file.name)
    metadata: dict[str, Any] = {
        "session_id": str(held.get("sessionId") or path.name[: -len(MESSAGES)]),
        "layout": SDK,
    }
    costs = [c for i in items if (c := count_usd(as_dict(i.get("metrics")).get("cost"))) is not None]
    metadata |= {"recorded_usd": round(sum(costs), 6)} if costs else {}
    for key, name in (("model", "model"), ("cwd", "cwd"), ("title", "prompt"), ("started", "started_at")):
        if isinstance(manifest.get(name), str) and manifest[name]:
            metadata[key] = manifest[name][:200] if key == "title" else manifest[name]
    if "model" not in metadata:  # the model its last reply names
        named = next((u.model for m in reversed(own) if (u := m.usage) is not None and u.model), None)
        metadata |= {"model": named} if named else {}
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=str(path),
        metadata=metadata,
        diagnostics=notes,
        compactions=tuple(compactions),
        content_hash=hasher.hexdigest(),
    )


def _with_state(
    own: list[Message], items: list[dict[str, Any]], state: dict[str, Any]
) -> tuple[list[Message], list[Compaction]]:
    """The messages with the last compaction's state in place: a boundary after the N it
    stands for, what it sends instead (a message it kept as it was, a copy of it), the rest."""
    n = count(state.get("source_message_count"))
    sent = [m for m in as_list(state.get("messages")) if isinstance(m, dict)]
    if n is None or not sent or n > len(own):
        return own, []
    was = {
        orjson.dumps([i.get("role"), i.get("content")]): m for i, m in zip(items[:n], own[:n], strict=True)
    }
    first = n + 1  # the line of the first message it does not stand for: where its state was written
    after: list[Message] = []
    for item in sent:  # written at the compaction: on its line
        kept = was.get(orjson.dumps([item.get("role"), item.get("content")]))
        after.append(again(kept) if kept is not None else message(n, item, is_compact_summary=True))
    words = (f"its compaction state stands for the first {n:,} messages, {len(sent):,} sent in their place",)
    # it compacts on its own estimate of the next request, which no file keeps: no count
    compaction = Compaction(n, None, None, details=Event("compaction", words))
    return [*own[:n], boundary(first), *after, *own[n:]], [compaction]


def _usage(item: dict[str, Any], total: bool) -> Usage | None:
    """A reply's `metrics`: its input (with or without its cache, as the session shows),
    its cache's reads and writes, its output."""
    metrics = as_dict(item.get("metrics"))
    given = count(metrics.get("inputTokens"))
    if item.get("role") != "assistant" or given is None:
        return None
    reads, writes = count(metrics.get("cacheReadTokens")) or 0, count(metrics.get("cacheWriteTokens")) or 0
    model = as_dict(item.get("modelInfo")).get("id")
    return Usage(
        max(given - reads - writes, 0) if total else given,
        writes,
        reads,
        count(metrics.get("outputTokens")) or 0,
        model=model if isinstance(model, str) and model else None,
    )


def _read(path: Path) -> bytes | None:
    try:
        with open_regular(path) as f:
            return f.read()
    except OSError:
        return None


def _object(path: Path, hasher: Any) -> dict[str, Any]:
    """A JSON object beside the messages (`{}`: none, or not one); what it holds is
    hashed with them, so a new state is a new session to every cache."""
    data = _read(path)
    if data is None:
        return {}
    hasher.update(data)
    try:
        return as_dict(orjson.loads(data))
    except orjson.JSONDecodeError:
        return {}

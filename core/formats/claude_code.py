"""Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`).

One line per content block of a streamed reply: lines sharing `message.id` are one API
response, each line one message here. Sub-agent (`isSidechain`) lines are set aside.
Compact boundaries are kept as markers; every other non-conversation line is counted.
"""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.formats.common import (
    Records,
    Skipped,
    SyntheticIds,
    as_dict,
    as_str,
    iter_dicts,
    parse_content,
    parse_usage,
)
from compaction_inspector.core.model import Block, Message, Role, Session, Usage

FORMAT = "claude-code"
LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "attachment",
        "queue-operation",
        "file-history-snapshot",
        "permission-mode",
        "last-prompt",
    }
)


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return (
        isinstance(kind, str)
        and kind in LINE_TYPES
        and any(key in record for key in ("uuid", "sessionId", "leafUuid", "parentUuid"))
    )


def _boundary_text(record: dict[str, Any]) -> str:
    meta = as_dict(record.get("compactMetadata"))
    trigger = as_str(meta.get("trigger")) or "unknown"
    pre = meta.get("preTokens")
    detail = f"{trigger}, {pre} tokens before" if isinstance(pre, int) else trigger
    return f"Conversation compacted ({detail})"


def load(records: Records, path: str | None) -> Session:
    main: list[Message] = []
    side: list[Message] = []
    skipped = Skipped()
    ids = SyntheticIds()
    metadata: dict[str, Any] = {}
    wanted = [("sessionId", "session_id"), ("cwd", "cwd"), ("version", "version")]
    # A streamed reply repeats its usage on every line: parse it once per response.
    usages: dict[Any, Usage | None] = {}
    for number, record in iter_dicts(records):
        kind = record.get("type")
        if wanted:
            for key, name in list(wanted):
                if isinstance(record.get(key), str):
                    metadata[name] = record[key]
                    wanted.remove((key, name))
        if kind == "summary":
            if isinstance(record.get("summary"), str):
                metadata["title"] = record["summary"]
            skipped.add("summary")
            continue
        if kind == "system" and record.get("subtype") == "compact_boundary":
            main.append(
                Message(
                    role="system",
                    blocks=(Block("text", text=_boundary_text(record)),),
                    line=number,
                    uuid=_opt_str(record.get("uuid")),
                    timestamp=_opt_str(record.get("timestamp")),
                    is_compact_boundary=True,
                )
            )
            continue
        if kind not in ("user", "assistant"):
            subtype = record.get("subtype")
            skipped.add(f"{kind}/{subtype}" if kind == "system" and subtype else str(kind))
            continue
        body = record.get("message")
        if not isinstance(body, dict):
            skipped.add(f"{kind} (no message)")
            continue
        role: Role = "assistant" if kind == "assistant" else "user"
        if role == "assistant" and isinstance(body.get("model"), str):
            metadata["model"] = body["model"]
        message = Message(
            role=role,
            blocks=parse_content(body.get("content")),
            id=(_opt_str(body.get("id")) or ids.next()) if role == "assistant" else None,
            line=number,
            uuid=_opt_str(record.get("uuid")),
            parent_uuid=_opt_str(record.get("parentUuid")),
            request_id=_opt_str(record.get("requestId")),
            timestamp=_opt_str(record.get("timestamp")),
            is_meta=record.get("isMeta") is True,
            is_sidechain=record.get("isSidechain") is True,
            is_compact_summary=record.get("isCompactSummary") is True,
            usage=_usage(body, usages) if role == "assistant" else None,
        )
        (side if message.is_sidechain else main).append(message)
    return Session(
        messages=tuple(main),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=(*records.diagnostics, *skipped.diagnostics()),
        sidechain=tuple(side),
    )


def _usage(body: dict[str, Any], seen: dict[Any, Usage | None]) -> Usage | None:
    key = body.get("id")
    if not isinstance(key, str):
        return parse_usage(body.get("usage"))
    if key not in seen:
        seen[key] = parse_usage(body.get("usage"))
    return seen[key]


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None

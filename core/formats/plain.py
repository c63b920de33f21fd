"""Plain role/content lists in JSON or YAML: a bare list or `{"messages": [...]}`,
content a string or a list of blocks, an optional `id` and `usage` (Anthropic's or
OpenAI's) on assistant messages, and a `compact_boundary` (`trigger`, `pre_tokens`,
`post_tokens`) on the system message that marks a compaction (as `compact --write` marks one)."""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.formats.common import (
    SyntheticIds,
    as_dict,
    as_str,
    count,
    name_compactions,
    parse_content,
    parse_usage,
)
from compaction_inspector.core.model import Compaction, Message, Role, Session

FORMAT = "plain"
_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}


def looks_like(value: Any) -> bool:
    items = value.get("messages") if isinstance(value, dict) else value
    return isinstance(items, list) and bool(items) and all(isinstance(m, dict) and "role" in m for m in items)


def messages(value: Any) -> list[Message]:
    return list(session(value, None).messages)


def session(value: Any, path: str | None) -> Session:
    items = value.get("messages") if isinstance(value, dict) else value
    ids = SyntheticIds()
    out: list[Message] = []
    compactions: list[Compaction] = []
    for raw in items if isinstance(items, list) else []:
        if not isinstance(raw, dict):
            continue
        role = _ROLES.get(as_str(raw.get("role")), "user")
        boundary = role == "system" and isinstance(raw.get("compact_boundary"), dict)
        if boundary:
            marked = as_dict(raw.get("compact_boundary"))
            trigger = as_str(marked.get("trigger")) or None
            pre, post = count(marked.get("pre_tokens")), count(marked.get("post_tokens"))
            compactions.append(Compaction(len(out), trigger, pre, post))
        out.append(
            Message(
                role=role,
                blocks=parse_content(raw.get("content")),
                id=(as_str(raw.get("id")) or ids.next()) if role == "assistant" else None,
                is_meta=raw.get("meta") is True,
                is_compact_boundary=boundary,
                usage=parse_usage(raw.get("usage")) if role == "assistant" else None,
            )
        )
    name_compactions(out, compactions)
    return Session(messages=tuple(out), format=FORMAT, path=path, compactions=tuple(compactions))

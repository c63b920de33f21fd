"""Plain role/content lists in JSON or YAML: a bare list or `{"messages": [...]}`,
content a string or a list of blocks, an optional `id` on assistant messages."""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.formats.common import SyntheticIds, as_str, parse_content
from compaction_inspector.core.model import Message, Role

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
    items = value.get("messages") if isinstance(value, dict) else value
    ids = SyntheticIds()
    out: list[Message] = []
    for raw in items if isinstance(items, list) else []:
        if not isinstance(raw, dict):
            continue
        role = _ROLES.get(as_str(raw.get("role")), "user")
        out.append(
            Message(
                role=role,
                blocks=parse_content(raw.get("content")),
                id=(as_str(raw.get("id")) or ids.next()) if role == "assistant" else None,
                is_meta=raw.get("meta") is True,
            )
        )
    return out

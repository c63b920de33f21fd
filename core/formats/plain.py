"""Plain role/content lists in JSON or YAML: a bare list or `{"messages": [...]}`,
content a string or a list of blocks, an optional `id` and `usage` (Anthropic's or
OpenAI's) and the `model` that answered on assistant messages, a `compact_boundary`
(`trigger`, `pre_tokens`, `post_tokens`) on the system message that marks a compaction,
and on the first message the `session` it came from (as `compact --write` writes them)."""

from __future__ import annotations

from dataclasses import replace
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
from compaction_inspector.core.model import Compaction, Message, Role, Session, Usage

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
    metadata: dict[str, Any] = {}
    first = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}
    # what `compact --write` records of the session it came from: its window, prices and
    # tokenizer depend on these (`agent` names the format it was written from)
    for key, value_type in (("session_id", str), ("agent", str), ("model", str), ("version", str),
                            ("cwd", str), ("context_window", int)):  # fmt: skip
        found = as_dict(first.get("session")).get(key)
        if isinstance(found, value_type) and not isinstance(found, bool):
            metadata[key] = found
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
                usage=_usage(raw) if role == "assistant" else None,
            )
        )
    name_compactions(out, compactions)
    models = [m.usage.model for m in out if m.usage is not None and m.usage.model]
    if models and "model" not in metadata:
        metadata["model"] = models[-1]
    return Session(
        messages=tuple(out), format=FORMAT, path=path, compactions=tuple(compactions), metadata=metadata
    )


def _usage(raw: dict[str, Any]) -> Usage | None:
    """The message's usage, with the model that answered where the message names it."""
    usage = parse_usage(raw.get("usage"))
    model = as_str(raw.get("model")) or None
    return replace(usage, model=model) if usage is not None and model else usage

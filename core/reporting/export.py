"""Write a (compacted) message list back out: in the transcript's own format where that
is possible (Claude Code JSONL, Anthropic body, OpenAI chat body), else plain JSON.

A compact boundary marks the compaction (its figures before and after) where the context
it compacted starts, so what it kept is read as the context that follows. A response's
usage is what it reported of the prompt it was sent, so it is written where that prompt is
unchanged: up to the first message the compaction changed; after it, the usage reported the
uncompacted prompt and is left out: reopened, the figures after it say they are
estimates."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compaction_inspector.core.formats.anthropic import anthropic_block
from compaction_inspector.core.formats.common import model_of
from compaction_inspector.core.formats.reading import Formats
from compaction_inspector.core.model import Block, Compaction, Message

# What a session says of itself that its figures depend on (its agent's window, prices,
# tokenizer): written with the messages so a written file, reopened, is read the same way.
SESSION_KEYS = ("session_id", "agent", "model", "version", "cwd", "context_window")


def plain_message(
    m: Message, compaction: Compaction | None = None, metadata: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": [anthropic_block(b) for b in m.blocks]}
    if m.role == "assistant" and m.id:
        out["id"] = m.id
    model = model_of(m, metadata or {})
    if m.role == "assistant" and model:
        out["model"] = model
    if m.usage is not None:
        out["usage"] = m.usage.to_dict()
    if m.is_meta:
        out["meta"] = True
    if compaction is not None:
        out["compact_boundary"] = {
            "trigger": compaction.trigger,
            "pre_tokens": compaction.pre_tokens,
            "post_tokens": compaction.post_tokens,
        }
    return out


def session_record(metadata: Mapping[str, Any], source_format: str) -> dict[str, Any]:
    """The session's own facts for a plain file (`SESSION_KEYS`), the agent by its format."""
    facts = {**metadata, "agent": source_format}
    return {k: facts[k] for k in SESSION_KEYS if isinstance(facts.get(k), str | int) and facts[k] != ""}


def marked(
    kept: Sequence[Message],
    original: Sequence[Message],
    strategy: str,
    before: int,
    after: int,
    live: int = 0,
) -> tuple[list[Message], Compaction | None]:
    """`kept` with a compact boundary where the context it compacted starts (`live`,
    after the transcript's own last compaction: every reader, and the agent, takes what
    follows the last boundary as the context), when it differs from `original` (None:
    it does not); no usage from the first message it changed on: those responses
    reported the uncompacted prompt."""
    first = next((i for i, (k, o) in enumerate(zip(kept, original, strict=False)) if k is not o), None)
    if first is None and len(kept) == len(original):
        return list(kept), None
    first = min(len(kept), len(original)) if first is None else first
    live = min(live, first)
    text = f"compacted by compaction-inspector ({strategy}): {before:,} → {after:,}"
    boundary = Message("system", (Block("text", text=text),), is_compact_boundary=True)
    rest = [replace(m, usage=None) if m.usage is not None else m for m in kept[first:]]
    return [*kept[:live], boundary, *kept[live:first], *rest], Compaction(live, "manual", before, after)


def serialize(
    formats: Formats,
    messages: Sequence[Message],
    source_format: str,
    metadata: Mapping[str, Any],
    compactions: Mapping[int, Compaction] | None = None,
) -> tuple[str, str]:
    """The text to write and the format it is in; `compactions`: the recorded figures of
    the compact boundaries among `messages`, by index."""
    compactions = compactions or {}
    writer = next((w for w in formats.writers if source_format == w.FORMAT), None)
    if writer is not None:
        return writer.write(messages, metadata, compactions), writer.FORMAT
    # a bare list: `{"messages": …}` reads as a request body, which has no per-message usage
    written = [plain_message(m, compactions.get(i), metadata) for i, m in enumerate(messages)]
    if written:
        written[0]["session"] = session_record(metadata, source_format)
    return json.dumps(written, ensure_ascii=False, indent=2) + "\n", "plain"


__all__ = ["marked", "plain_message", "serialize"]

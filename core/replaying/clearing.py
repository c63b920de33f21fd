"""What clearing a tool result leaves: its content replaced by a placeholder (Claude Code's
by default), the call and the result block kept, so pairing is untouched. The clear
family of strategies clears this way, and a transcript's own microcompactions are read
back this way."""

from __future__ import annotations

from compaction_inspector.core.model import Block, Message

CLEARED_TEXT = "[Old tool result content cleared]"


def cleared(message: Message, blocks: list[int], placeholder: str = CLEARED_TEXT) -> Message:
    """The message with those result blocks' content replaced by `placeholder`."""
    edited = list(message.blocks)
    for j in blocks:
        b = edited[j]
        edited[j] = Block.tool_result(b.tool_use_id or "", placeholder, b.is_error)
    return message.with_blocks(tuple(edited))


def cleared_results(message: Message, ids: frozenset[str]) -> Message | None:
    """The message with the results of the calls `ids` cleared, as a microcompaction
    leaves them; None when it holds none of them."""
    blocks = [
        j for j, b in enumerate(message.blocks)
        if b.type == "tool_result" and b.tool_use_id in ids and b.text != CLEARED_TEXT
    ]  # fmt: skip
    return cleared(message, blocks) if blocks else None

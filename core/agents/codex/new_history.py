"""What Codex's history holds after it compacts (docs/agents.md, `codex-rs` `compact.rs`).

The person's own messages (no developer messages, no injected context), the newest first
until a budget of Codex's estimated tokens (4 bytes a token) is spent, the one that
crosses it cut to what is left: 64,000 tokens when OpenAI compacts remotely (then the
encrypted compaction item), 20,000 when Codex compacts locally (then the summary). The
initial context (developer instructions, AGENTS.md, the environment) goes first in a
local history, and before the last user message in a remote one made mid-turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction_inspector.core.model import Block, Message

REMOTE_USER_TOKENS = 64_000
LOCAL_USER_TOKENS = 20_000
BYTES_PER_TOKEN = 4  # Codex's own estimate of a text's tokens


def approx_tokens(text: str) -> int:
    """Codex's estimate of a text's tokens: its bytes / 4, rounded up."""
    return -(-len(text.encode()) // BYTES_PER_TOKEN)


def kept_user_messages(messages: Sequence[Message], budget: int) -> list[Message]:
    """The person's messages Codex keeps, oldest first: the newest within `budget`
    estimated tokens, the one that crosses it cut to what is left."""
    kept: list[Message] = []
    room = budget
    for m in reversed(messages):
        if not m.is_human:
            continue
        if room <= 0:
            break
        tokens = approx_tokens(m.text)
        if tokens > room:
            cut = m.text.encode()[: room * BYTES_PER_TOKEN].decode(errors="ignore")
            m = m.with_blocks((Block("text", text=cut),))
        kept.append(m)
        room -= tokens
    kept.reverse()
    return kept


def initial_context(messages: Sequence[Message]) -> list[Message]:
    """What Codex injects before the first prompt (instructions, AGENTS.md, the
    environment): it builds that again for the history after a compaction. Only what
    came before the first prompt or the first compaction: a copy a compaction put back is
    not injected twice (each compaction would double it)."""
    first = next((i for i, m in enumerate(messages) if m.is_human or m.is_compact_boundary), len(messages))
    return [m for m in messages[:first] if m.is_meta or m.role == "system"]

"""Before/after of a compaction step, by message identity.

A message present in both lists is kept. A new message that `replaces` source messages
is a summary of them (when it is a summary item) or an edit of one (a cleared tool
result, a repaired message). Any other new message was inserted (a marker, a synthetic
tool result). Source messages that nothing accounts for were dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.model import Message


@dataclass(frozen=True, slots=True)
class Diff:
    kept: tuple[int, ...]
    dropped: tuple[int, ...]
    summarized: tuple[tuple[int, int], ...]  # (index before, index of its summary after)
    edited: tuple[tuple[int, int], ...]  # (index before, index of the edited copy after)
    inserted: tuple[int, ...]  # indexes after
    tokens_before: int
    tokens_after: int

    @property
    def token_delta(self) -> int:
        return self.tokens_after - self.tokens_before

    def fate(self) -> dict[int, str]:
        """What happened to each message before: kept, dropped, summarized or edited."""
        out = {i: "kept" for i in self.kept}
        out.update({i: "dropped" for i in self.dropped})
        out.update({i: "summarized" for i, _ in self.summarized})
        out.update({i: "edited" for i, _ in self.edited})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "summarized": [{"before": b, "after": a} for b, a in self.summarized],
            "edited": [{"before": b, "after": a} for b, a in self.edited],
            "inserted": list(self.inserted),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "token_delta": self.token_delta,
        }


def sources(message: Message, before: dict[Message, int]) -> list[int]:
    """Indexes in `before` that `message` stands for, following edits of edits."""
    found: list[int] = []
    pending = list(message.replaces)
    while pending:
        source = pending.pop(0)
        if source in before:
            found.append(before[source])
        else:
            pending.extend(source.replaces)
    return found


def origin(message: Message, index: dict[Message, int]) -> int | None:
    """The position in `index`'s list a message comes from: itself, or the source of an
    edit. None for new messages (summaries, markers, synthetic results)."""
    if message in index:
        return index[message]
    if message.is_summary_item or message.is_synthetic:
        return None
    found = sources(message, index)
    return found[0] if found else None


def diff(before: Sequence[Message], after: Sequence[Message], tokens_before: int, tokens_after: int) -> Diff:
    index = {m: i for i, m in enumerate(before)}
    kept: list[int] = []
    summarized: list[tuple[int, int]] = []
    edited: list[tuple[int, int]] = []
    inserted: list[int] = []
    for j, m in enumerate(after):
        if m in index:
            kept.append(index[m])
            continue
        origins = sources(m, index)
        if not origins:
            inserted.append(j)
        elif m.is_summary_item and not all(before[i].is_summary_item for i in origins):
            summarized.extend((i, j) for i in origins)
        else:
            edited.extend((i, j) for i in origins)
    accounted = set(kept) | {i for i, _ in summarized} | {i for i, _ in edited}
    dropped = tuple(i for i in range(len(before)) if i not in accounted)
    return Diff(
        kept=tuple(kept),
        dropped=dropped,
        summarized=tuple(summarized),
        edited=tuple(edited),
        inserted=tuple(inserted),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
    )

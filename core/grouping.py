"""API rounds and volleys (SEMANTICS §2–3) as index ranges over a message list."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from core.model import Message


@dataclass(frozen=True, slots=True)
class Span:
    """Messages[start:end] (end exclusive) and their token total."""

    start: int
    end: int
    tokens: int = 0

    def __len__(self) -> int:
        return self.end - self.start

    def to_dict(self) -> dict[str, int]:
        return {"start": self.start, "end": self.end, "tokens": self.tokens}


def _spans(starts: list[int], n: int, tokens: Sequence[int] | None) -> list[Span]:
    bounds = [*starts, n]
    prefix = [0]
    if tokens is not None:
        for t in tokens:
            prefix.append(prefix[-1] + t)
    return [
        Span(a, b, prefix[b] - prefix[a] if tokens is not None else 0) for a, b in itertools.pairwise(bounds)
    ]


def api_round_starts(messages: Sequence[Message]) -> list[int]:
    """Where each API round starts: a new group opens only at an assistant message whose
    id differs from the most recent assistant id, and only when something is buffered."""
    starts: list[int] = [0] if messages else []
    last_id: str | None = None
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if i > 0 and m.id != last_id:
                starts.append(i)
            last_id = m.id
    return starts


def api_rounds(messages: Sequence[Message], tokens: Sequence[int] | None = None) -> list[Span]:
    """Claude Code's groupMessagesByApiRound: ids A, B, A give three rounds; tool results
    stay with the assistant message they answer; dangling tool uses stay where they are."""
    return _spans(api_round_starts(messages), len(messages), tokens)


def volley_starts(messages: Sequence[Message]) -> list[int]:
    """A volley opens at each human message; anything before the first is the prelude."""
    starts = [i for i, m in enumerate(messages) if m.is_human]
    if messages and (not starts or starts[0] != 0):
        starts.insert(0, 0)
    return starts


def volleys(messages: Sequence[Message], tokens: Sequence[int] | None = None) -> list[Span]:
    return _spans(volley_starts(messages), len(messages), tokens)

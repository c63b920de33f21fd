"""API rounds and volleys (docs/strategies.md) as index ranges over a message list."""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Sequence

from compaction_inspector.core.model import Message, immutable, shared_ends


@immutable(slots=True)
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


def regroup(
    messages: Sequence[Message],
    other: Sequence[Message],
    other_rounds: list[int],
    other_volleys: list[int],
    ends: tuple[int, int] | None = None,
) -> tuple[list[int], list[int]]:
    """`api_round_starts(messages)` and `volley_starts(messages)` from those of `other`,
    a list sharing a head and a tail with it (a step's before and after): only what lies
    between is grouped again. A round's start depends on the assistant before it, so the
    tail's first assistant message is looked at again too; after it the two agree.
    `ends`, if the caller has it, is `shared_ends(messages, other)`."""
    a, b = tuple(messages), tuple(other)
    head, tail = shared_ends(a, b) if ends is None else ends
    shift, tail_start = len(a) - len(b), len(a) - tail
    rounds = other_rounds[: bisect_left(other_rounds, head)] if head else [0] if a else []
    last_id = next((a[k].id for k in range(head - 1, -1, -1) if a[k].role == "assistant"), None)
    i = head
    while i < len(a):
        m = a[i]
        i += 1
        if m.role == "assistant":
            if i > 1 and m.id != last_id:
                rounds.append(i - 1)
            last_id = m.id
            if i > tail_start:
                break
    rounds += [s + shift for s in other_rounds[bisect_left(other_rounds, i - shift) :]]
    volleys = other_volleys[: bisect_left(other_volleys, head)]
    volleys += [k for k in range(head, tail_start) if a[k].is_human]
    volleys += [
        s + shift for s in other_volleys[bisect_left(other_volleys, tail_start - shift) :] if b[s].is_human
    ]
    if a and (not volleys or volleys[0] != 0):
        volleys.insert(0, 0)
    return rounds, volleys


def volleys(messages: Sequence[Message], tokens: Sequence[int] | None = None) -> list[Span]:
    return _spans(volley_starts(messages), len(messages), tokens)

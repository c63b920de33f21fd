"""What the transcript pane lists: messages (or a step's before/after merged into one
list), each with its fate in the current diff and the boundaries that open before it."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from core.diff import Diff, origin, sources
from core.grouping import api_rounds, volleys
from core.model import Message
from core.text import one_line

# How a message fares in the step being shown.
KEPT, DROPPED, SUMMARIZED, EDITED_OLD = "kept", "dropped", "summarized", "replaced"
INSERTED, SUMMARY, EDITED_NEW = "inserted", "summary", "edited"
REMOVED = frozenset({DROPPED, SUMMARIZED, EDITED_OLD})
ADDED = frozenset({INSERTED, SUMMARY, EDITED_NEW})


@dataclass(frozen=True, slots=True)
class Entry:
    message: Message
    index: int | None  # position in the list it belongs to (before for removed ones)
    fate: str = KEPT
    tokens: int = 0
    round_band: str | None = None  # label of the API round that opens here
    volley_band: str | None = None  # label of the volley that opens here
    sidechain: bool = False
    origin: int | None = None  # position in the opened transcript; None for new messages


def _bands(messages: Sequence[Message], tokens: Sequence[int]) -> tuple[dict[int, str], dict[int, str]]:
    rounds = {
        g.start: f"round {n} · {len(g)} msgs · {_k(g.tokens)} tok"
        for n, g in enumerate(api_rounds(messages, tokens))
    }
    volley_labels = {}
    for n, v in enumerate(volleys(messages, tokens)):
        first = messages[v.start]
        title = one_line(first.text, 48) if first.is_human else "prelude"
        volley_labels[v.start] = f"volley {n} · “{title}” · {len(v)} msgs · {_k(v.tokens)} tok"
    return rounds, volley_labels


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def plain_entries(messages: Sequence[Message], tokens: Sequence[int]) -> list[Entry]:
    rounds, volley_labels = _bands(messages, tokens)
    return [
        Entry(m, i, KEPT, tokens[i], rounds.get(i), volley_labels.get(i), origin=i)
        for i, m in enumerate(messages)
    ]


def diff_entries(
    before: Sequence[Message],
    after: Sequence[Message],
    diff: Diff,
    tokens_before: Sequence[int],
    tokens_after: Sequence[int],
    origins: dict[Message, int],
) -> list[Entry]:
    """Before and after merged in order: removed messages stand where they were, new
    ones where they land, a summary right after the messages it condenses."""
    fate = diff.fate()
    removed_fate = {DROPPED: DROPPED, SUMMARIZED: SUMMARIZED, "edited": EDITED_OLD}
    index = {m: i for i, m in enumerate(before)}
    rounds, volley_labels = _bands(after, tokens_after)
    out: list[Entry] = []
    i = 0

    def flush(upto: int) -> None:
        nonlocal i
        while i <= upto and i < len(before):
            if fate.get(i) != KEPT:
                m = before[i]
                out.append(Entry(m, i, removed_fate[fate[i]], tokens_before[i], origin=origin(m, origins)))
            i += 1

    for j, m in enumerate(after):
        bands = (rounds.get(j), volley_labels.get(j))
        if m in index:
            flush(index[m] - 1)
            out.append(Entry(m, j, KEPT, tokens_after[j], *bands, origin=origin(m, origins)))
            i = max(i, index[m] + 1)
            continue
        found = sources(m, index)
        if found:
            flush(max(found))
        new_fate = INSERTED if not found else SUMMARY if m.is_summary_item else EDITED_NEW
        out.append(Entry(m, j, new_fate, tokens_after[j], *bands, origin=origin(m, origins)))
    flush(len(before))
    return out


def with_sidechain(entries: list[Entry], sidechain: Sequence[Message], tokens: Sequence[int]) -> list[Entry]:
    """Sub-agent messages merged in by line number, where they were written."""
    side = [Entry(m, None, KEPT, t, sidechain=True) for m, t in zip(sidechain, tokens, strict=True)]
    return list(heapq.merge(entries, side, key=lambda e: e.message.line or 0))

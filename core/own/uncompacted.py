"""The session with no compaction at all, the agent's own included: where it would have
passed the window. The baseline replay ("as it ran") keeps the agent's compactions, so
it cannot say this; here each of its requests gets back what the agent's compactions
before it dropped (the replay's `tokens_removed` of each, the messages' context) less
the summaries they wrote (counted), an estimate that says so. A session that never
compacted is its own answer, measured as the baseline measures it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.simulation import RoundPoint


@immutable()
class Uncompacted:
    """Each request's context with no compaction at all, summed up."""

    usable: int  # the window less the reserve
    requests: int
    peak: int
    peak_request: int
    over_at: int | None  # the first request past `usable` (None: none)
    over_tokens: int | None  # its context
    added_back: int  # what the agent's own compactions took off, in all (0: it made none)

    @property
    def estimated(self) -> bool:
        return self.added_back > 0

    def line(self) -> str:
        """What it comes to, in words, with where the figures come from."""
        how = (
            "an estimate: each request as it ran, with what the agent's own compactions took off "
            f"before it added back ({self.added_back:,} in all) less the summaries they wrote"
            if self.estimated
            else "the session as it ran: it never compacted"
        )
        if self.over_at is None:
            said = f"stays within the usable window of {self.usable:,}; its largest request {self.peak:,}"
        else:
            said = (
                f"passes the usable window of {self.usable:,} at request {self.over_at:,} of "
                f"{self.requests:,} ({self.over_tokens:,}); its largest {self.peak:,} at request "
                f"{self.peak_request:,}"
            )
        return f"No compaction at all, the agent's own included ({how}): {said}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "usable_window": self.usable,
            "requests": self.requests,
            "peak_tokens": self.peak,
            "peak_request": self.peak_request,
            "over_window_at_request": self.over_at,
            "over_window_tokens": self.over_tokens,
            "added_back_tokens": self.added_back,
            "estimated": self.estimated,
        }


def uncompacted(
    as_it_ran: Sequence[RoundPoint], messages: Sequence[Message], tokens: Sequence[int], usable: int
) -> Uncompacted:
    """The requests of the baseline replay of `messages` (`as_it_ran`, counted `tokens`
    each) with the agent's own compactions undone, against the `usable` window."""
    written = (n if m.is_compact_summary else 0 for m, n in zip(messages, tokens, strict=True))
    summaries = [0, *accumulate(written)]
    removed, peak, peak_at, over_at, over_tokens, requests = 0, 0, 0, None, None, 0
    for p in as_it_ran:
        if p.event is not None and p.event.source == "transcript":
            removed += p.event.tokens_removed
        requests = p.round
        context = p.tokens_before + max(0, removed - summaries[min(p.message_end, len(messages))])
        if context > peak:
            peak, peak_at = context, p.round
        if over_at is None and context > usable:
            over_at, over_tokens = p.round, context
    return Uncompacted(usable, requests, peak, peak_at, over_at, over_tokens, removed)

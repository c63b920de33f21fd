"""How far the agent is from compacting on its own: its count against its own point, and
about how many requests that leaves at the session's recent pace (docs/agents.md).

The count is the agent's own where the transcript records its checks (Codex), else the
context it sends next (Claude Code's count is the last prompt and what was added since).
The pace is how much the prompts its last requests reported grew, on average, since its
last compaction: a guide, said as "about".
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil
from typing import Any

from compaction_inspector.core.model import immutable
from compaction_inspector.core.text import counted

PACE_REQUESTS = 10  # the last requests whose growth sets the pace


@immutable()
class Headroom:
    """`left`: tokens until the agent's point (0 or less: its next request compacts);
    `pace`: the average growth per request lately (None: too few to say, or none);
    `requests`: about how many requests `left` is at that pace."""

    count: int
    point: int
    left: int
    pace: int | None
    requests: int | None

    def line(self) -> str:
        """ "compacts in ~15,000 tokens (about 3 requests at this pace)"."""
        if self.left <= 0:
            return "compacts at its next request"
        said = f"compacts in ~{self.left:,} tokens"
        if self.requests is not None:
            said += f" (about {counted(self.requests, 'request')} at this pace)"
        return said

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "point": self.point,
            "tokens_left": self.left,
            "pace_per_request": self.pace,
            "requests_left": self.requests,
        }


def headroom(count: int, point: int, prompts: Sequence[int]) -> Headroom:
    """The agent at `count` against `point`, its requests lately having reported
    `prompts` (oldest first, since its last compaction)."""
    left = point - count
    recent = list(prompts[-PACE_REQUESTS - 1 :])
    grown = recent[-1] - recent[0] if len(recent) >= 3 else 0
    pace = round(grown / (len(recent) - 1)) if grown > 0 else None
    requests = max(1, ceil(left / pace)) if pace and left > 0 else None
    return Headroom(count, point, left, pace, requests)

"""Prompt-too-long retry truncation (SEMANTICS §5; Claude Code `truncateHeadForPTLRetry`).

When the summarize request itself is too long, drop the oldest API rounds (sized by the
token gap the provider reports, else 20 % of the rounds), keep at least one, and retry,
at most three times. The step-through plays the provider: every attempt still over the
limit gets the provider's error text, which the next truncation parses.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from typing import Any, ClassVar

from compaction_inspector.core.grouping import api_rounds, round_starts
from compaction_inspector.core.model import PTL_MARKER_TEXT, Message, text_message
from compaction_inspector.core.strategies.base import TITLES_KEPT, CompactionResult, Context, Outcome, Steps
from compaction_inspector.core.strategies.registry import Strategy, check, option

NAME = "ptl-retry"
MAX_TRUNCATIONS = 3
FALLBACK_FRACTION = 0.2
TOO_LONG_MESSAGE = "Conversation too long. Press esc twice to go up a few messages and try again."
_GAP = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class PtlRetryOptions:
    limit: int | None = option(
        None,
        "the provider's limit (default the usable window)",
        kind="int?",
        minimum=1,
        label="limit (default window)",
    )
    error_text: str | None = option(
        None,
        "the provider's prompt-too-long error text for the first attempt",
        kind="str?",
        label="provider error text",
        flag="--error",
        saved=False,
    )
    summary_prompt_tokens: int = option(
        1000, "what the summarize instruction adds to the request", minimum=0, label="summary prompt tok"
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)


@dataclass(frozen=True, kw_only=True)
class PtlRetryStats:
    strategy: str = NAME
    outcome: str  # fits, truncated or too_long
    error: str | None
    attempts: int
    truncations: int
    groups_before: int
    groups_dropped: int
    marker_inserted: bool
    limit: int
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    request_tokens_after: int | None

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("outcome", "error")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def token_gap(error_text: str) -> int | None:
    """How many tokens too long the provider says the prompt is, if it says."""
    match = _GAP.search(error_text)
    if not match:
        return None
    gap = int(match.group(1)) - int(match.group(2))
    return gap if gap > 0 else None


def provider_error(tokens: int, limit: int) -> str:
    return f"prompt is too long: {tokens} tokens > {limit} maximum"


def marker() -> Message:
    return text_message("user", PTL_MARKER_TEXT, is_meta=True, is_synthetic=True)


@dataclass(frozen=True)
class Truncation:
    messages: tuple[Message, ...]
    groups_before: int
    groups_dropped: int
    gap: int | None
    marker_inserted: bool


def truncate_head(messages: Sequence[Message], error_text: str, context: Context) -> Truncation | None:
    """One truncation of the summarize request, or None when nothing safe remains."""
    if messages and messages[0].is_ptl_marker:
        messages = messages[1:]  # otherwise the old marker is all the 20 % fallback drops
    groups = api_rounds(messages, context.counter.count_all(messages))
    if len(groups) < 2:
        return None
    gap = token_gap(error_text)
    totals = list(accumulate(g.tokens for g in groups))
    drop = _rounds_to_drop(len(groups), gap, lambda need: bisect_left(totals, need))
    kept = tuple(messages[groups[drop].start :])
    inserted = kept[0].role == "assistant"
    return Truncation(
        messages=(marker(), *kept) if inserted else kept,
        groups_before=len(groups),
        groups_dropped=drop,
        gap=gap,
        marker_inserted=inserted,
    )


def _rounds_to_drop(groups: int, gap: int | None, covering: Callable[[int], int]) -> int:
    """How many of the oldest rounds go: those covering the gap (the one crossing it
    too), else 20 % of them; at least one, and always leaving one (`groups` >= 2).
    `covering(need)` is the first n whose rounds 0..n add up to `need` (a bisection
    over their running sums: `groups` when none do)."""
    drop = covering(gap) + 1 if gap is not None else max(1, int(groups * FALLBACK_FRACTION))
    return min(drop, groups - 1)


def _title(truncation: int, dropped: int) -> str:
    return f"Retry {truncation}: drop {dropped} oldest API round{'s' if dropped != 1 else ''}"


def run(messages: Sequence[Message], options: PtlRetryOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    limit = options.limit or context.window.usable
    steps = Steps(messages, context)
    current = messages
    attempts = truncations = dropped_groups = 0
    outcome = "fits"
    error: str | None = None
    marker_inserted = False

    def request_tokens(msgs: Sequence[Message]) -> int:
        return context.tokens(msgs) + options.summary_prompt_tokens

    def fails(msgs: Sequence[Message]) -> bool:
        if attempts == 1 and options.error_text is not None:
            return True  # the user brought the provider's refusal of the first attempt
        return request_tokens(msgs) > limit

    while True:
        attempts += 1
        if not fails(current):
            break
        said = options.error_text or provider_error(request_tokens(current), limit)
        if truncations == MAX_TRUNCATIONS:
            outcome, error = "too_long", TOO_LONG_MESSAGE
            break
        cut = truncate_head(current, said, context)
        if cut is None:
            outcome, error = "too_long", TOO_LONG_MESSAGE
            break
        truncations += 1
        dropped_groups += cut.groups_dropped
        marker_inserted = cut.marker_inserted
        sizing = (
            f"a gap of {cut.gap:,} tokens, so the oldest rounds covering it"
            if cut.gap is not None
            else f"no token counts in it, so 20 % of {cut.groups_before} rounds"
        )
        steps.add(
            _title(truncations, cut.groups_dropped),
            f'Attempt {attempts} was refused ("{said}"): {sizing}'
            f"{'; a marker keeps the request user-first' if cut.marker_inserted else ''}.",
            cut.messages,
        )
        current = cut.messages
        outcome = "truncated"

    final = steps.repair_pairing() if outcome != "too_long" else None
    if outcome == "too_long":
        steps.add("Give up", f"{TOO_LONG_MESSAGE} (after {truncations} truncations)", current)
    stats = PtlRetryStats(
        outcome=outcome,
        error=error,
        attempts=attempts,
        truncations=truncations,
        groups_before=len(api_rounds(messages)),
        groups_dropped=dropped_groups,
        marker_inserted=marker_inserted,
        limit=limit,
        messages_before=len(messages),
        messages_after=len(final) if final is not None else 0,
        tokens_before=steps.start_tokens,
        tokens_after=steps.tokens if final is not None else 0,
        request_tokens_after=request_tokens(final) if final is not None else None,
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps), error)


class Replay:
    """PTL retry on every request of a replay (`base.Replay`): the rounds of a request
    are the segment's rounds before its end, so a retry is a search over their sums.
    It always keeps the last round, which starts at `tail` when that is in the segment."""

    def __init__(self, messages: tuple[Message, ...], options: PtlRetryOptions, context: Context, tail: int):
        self.messages = messages
        self.options = options
        self.context = context
        self.prefix = context.counter.running(messages)
        self.starts = round_starts(messages)
        self.at_start = [self.prefix[i] for i in self.starts]  # tokens before each round
        self.marker_tokens = context.counter.count(marker())
        # an old marker first is stripped before the first truncation: run handles that
        self.safe = 0 if messages and messages[0].is_ptl_marker else len(messages)

    def request(self, end: int) -> tuple[int, int]:
        return self.prefix[end], end

    def history(self, end: int) -> tuple[Message, ...]:
        return self.messages[:end]

    def _covering(self, need: int, first: int, rounds: int, end: int) -> int:
        """`_rounds_to_drop`'s bisection over rounds first..rounds-1 of messages[:end],
        on the segment's sums (the last round ends at `end`, not at a round start)."""
        base = self.at_start[first]
        n = bisect_left(self.at_start, base + need, first + 1, rounds) - first - 1
        if n == rounds - first - 1 and self.prefix[end] - base < need:
            n += 1
        return n

    def compact(self, end: int) -> Outcome | None:
        options, prefix = self.options, self.prefix
        limit = options.limit or self.context.window.usable
        rounds = bisect_left(self.starts, end)
        tokens, first, truncations, changing = prefix[end], 0, 0, 0
        titles: list[str] = []
        while True:
            refused = truncations == 0 and options.error_text is not None
            if not refused and tokens + options.summary_prompt_tokens <= limit:
                break
            said = options.error_text or provider_error(tokens + options.summary_prompt_tokens, limit)
            groups = rounds - first
            if truncations == MAX_TRUNCATIONS or groups < 2:  # too long: nothing is sent
                return Outcome(prefix[end], end, (), 0, sent=False)
            covering = partial(self._covering, first=first, rounds=rounds, end=end)
            drop = _rounds_to_drop(groups, token_gap(said), covering)
            first += drop
            truncations += 1
            start = self.starts[first]
            inserted = self.messages[start].role == "assistant"
            after = prefix[end] - prefix[start] + (self.marker_tokens if inserted else 0)
            if after != tokens:
                changing += 1
                if len(titles) < TITLES_KEPT:
                    titles.append(_title(truncations, drop))
            tokens = after
        if first == 0:
            return None
        start = self.starts[first]
        return Outcome(
            tokens, end - start + (self.messages[start].role == "assistant"), tuple(titles), changing
        )


STRATEGY = Strategy(
    name=NAME,
    label="PTL retry",
    description="when even the summarize request is too long, drop the oldest API rounds",
    options=PtlRetryOptions,
    run=run,
    replay=Replay,
    timeline=False,
    demo=(
        (
            "step(1)",
            "Each retry parses the provider's error for the token gap, else drops 20 % of rounds.",
            4,
        ),
    ),
)

"""Prompt-too-long retry truncation (docs/strategies.md#ptl-retry; Claude Code `truncateHeadForPTLRetry`).

When the summarize request itself is too long, drop the oldest API rounds (sized by the
token gap the provider reports, else 20 % of the rounds), keep at least one, and retry,
at most three times. The step-through plays the provider: every attempt still over the
limit gets the provider's error text, which the next truncation parses.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import ClassVar

from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import PTL_MARKER_TEXT, Message, immutable, text_message
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import (
    NO_CALL,
    TITLES_KEPT,
    CompactionResult,
    StatsRecord,
    Steps,
    ready,
)
from compaction_inspector.core.strategies.declaration import Strategy, check, option

NAME = "ptl-retry"
MAX_TRUNCATIONS = 3
FALLBACK_FRACTION = 0.2
TOO_LONG_MESSAGE = "Conversation too long. Press esc twice to go up a few messages and try again."
_GAP = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.IGNORECASE)


@immutable()
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


@immutable(kw_only=True)
class PtlRetryStats(StatsRecord):
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


@immutable()
class Truncation:
    messages: tuple[Message, ...]
    groups_before: int
    groups_dropped: int
    gap: int | None
    marker_inserted: bool


_ROUNDS_KEYS = (("ptl rounds", False), ("ptl rounds", True))


@immutable()
class _Rounds:
    """The API rounds of a segment's requests as a truncation sees them (a retry marker
    first is stripped, or it would be all the 20 % fallback drops): where each starts
    and the tokens before it, and the marker's tokens. Made once per segment and kind
    of first message."""

    starts: Sequence[int]
    at_start: Sequence[int]
    marker_tokens: int

    @staticmethod
    def of(segment: Segment, end: int) -> _Rounds:
        lead = end > 0 and segment.messages[0].is_ptl_marker
        return segment.memo(_ROUNDS_KEYS[lead], _Rounds._made, segment, lead)

    @staticmethod
    def _made(segment: Segment, lead: bool) -> _Rounds:
        starts = [1, *(s for s in segment.round_starts if s > 1)] if lead else segment.round_starts
        marker_tokens = segment.context.counter.count(marker())
        return _Rounds(starts, [segment.prefix[s] for s in starts], marker_tokens)

    def count(self, end: int) -> int:
        """The rounds of the request that ends at `end`."""
        return bisect_left(self.starts, end)

    def drop(self, prefix: Sequence[int], first: int, rounds: int, end: int, gap: int | None) -> int | None:
        """One truncation of the request made of rounds first..rounds-1, refused `gap`
        tokens too long (None: the error does not say): how many of the oldest go; None
        when fewer than two rounds remain. Those covering the gap go (the one crossing
        it too), else 20 % of them; at least one, and always leaving one."""
        groups = rounds - first
        if groups < 2:
            return None
        if gap is None:
            drop = max(1, int(groups * FALLBACK_FRACTION))
        else:
            drop = self._covering(prefix, first, rounds, end, gap) + 1
        return min(drop, groups - 1)

    def _covering(self, prefix: Sequence[int], first: int, rounds: int, end: int, need: int) -> int:
        """The first n whose rounds first..first+n add up to `need` (the rounds' count
        when none do): a bisection over the tokens before each round."""
        base = self.at_start[first]
        n = bisect_left(self.at_start, base + need, first + 1, rounds) - first - 1
        if n == rounds - first - 1 and prefix[end] - base < need:
            n += 1
        return n


def truncate_head(messages: Sequence[Message], error_text: str, context: Context) -> Truncation | None:
    """One truncation of the summarize request, or None when nothing safe remains."""
    segment = Segment(messages, context)
    end = len(segment)
    rounds = _Rounds.of(segment, end)
    count = rounds.count(end)
    gap = token_gap(error_text)
    drop = rounds.drop(segment.prefix, 0, count, end, gap)
    if drop is None:
        return None
    kept = segment.messages[rounds.starts[drop] :]
    inserted = kept[0].role == "assistant"
    return Truncation((marker(), *kept) if inserted else kept, count, drop, gap, inserted)


@immutable(slots=True)
class _Retry:
    """One truncation of a planned retry loop."""

    attempt: int  # the attempt that was refused
    error_text: str | None  # the user's words, for the first refusal only; else the simulated provider's:
    request: int  # the tokens it refused,
    limit: int  # over its limit
    groups_before: int
    dropped: int
    gap: int | None
    start: int  # the request now holds messages[start:end], after a marker if `inserted`
    inserted: bool
    tokens: int

    @property
    def title(self) -> str:
        return f"Retry {self.attempt}: drop {self.dropped} oldest API round{'s' if self.dropped != 1 else ''}"

    @property
    def said(self) -> str:
        return self.error_text if self.error_text is not None else provider_error(self.request, self.limit)


@immutable(eq=False, slots=True)  # one per request of a replay
class PtlRetryPlan:
    """The summarize request of messages[:end] and the retries it takes: `outcome` is
    fits, truncated or too_long (nothing is sent)."""

    call = NO_CALL

    limit: int
    tokens_before: int
    retries: tuple[_Retry, ...]
    changing_titles: tuple[str, ...]  # of the first TITLES_KEPT retries that change the tokens
    changing_count: int
    outcome: str
    attempts: int
    tokens: int
    messages: int
    kept_from: int  # the request after it holds messages[kept_from:end]
    changed: bool
    sent: bool
    stored: None = None
    exact: bool = True
    head: int = 0  # counted tokens of the marker it puts first, if it does

    def titles(self) -> tuple[str, ...]:
        return self.changing_titles

    def changing(self) -> int:
        return self.changing_count

    def shared(self, previous: PtlRetryPlan | None) -> int | None:
        """A retry drops the oldest rounds: the request is the same as the one before only
        when that dropped the same, else as far as the marker both put first."""
        before = previous is not None and previous.changed
        if not (self.changed or before):
            return None
        if self.changed and before and previous is not None and previous.kept_from == self.kept_from:
            return None
        return min(self.head, previous.head) if self.changed and previous is not None and before else 0


def plan(segment: Segment, end: int, options: PtlRetryOptions, stored: None = None) -> PtlRetryPlan:
    """The retry loop: every attempt still over the limit gets the provider's error, and
    the next truncation sizes its cut from it."""
    prefix, context = segment.prefix, segment.context
    limit = options.limit or context.window.usable
    meter = segment.meter(end)  # the provider counts the context; `tokens` are counted
    rounds = _Rounds.of(segment, end)
    count = rounds.count(end)
    tokens, first, attempts, outcome = prefix[end], 0, 0, "fits"
    retries: list[_Retry] = []
    titles: list[str] = []
    changing = 0
    while True:
        attempts += 1
        refused = attempts == 1 and options.error_text is not None  # the user brought its refusal
        request = meter.tokens(tokens) + options.summary_prompt_tokens
        if not refused and request <= limit:
            break
        error_text = options.error_text if refused else None  # later attempts: the simulated provider's
        if error_text is not None:
            gap = token_gap(error_text)
        else:  # the simulated provider says "prompt is too long: {request} tokens > {limit} maximum"
            gap = request - limit if request > limit else None
        need = math.ceil(gap / meter.scale) if gap is not None else None  # the gap in counted tokens
        drop = rounds.drop(prefix, first, count, end, need) if len(retries) < MAX_TRUNCATIONS else None
        if drop is None:
            outcome = "too_long"
            break
        groups, first = count - first, first + drop
        start = rounds.starts[first]
        inserted = segment.messages[start].role == "assistant"
        after = prefix[end] - prefix[start] + (rounds.marker_tokens if inserted else 0)
        retry = _Retry(attempts, error_text, request, limit, groups, drop, gap, start, inserted, after)
        retries.append(retry)
        if after != tokens:
            changing += 1
            if len(titles) < TITLES_KEPT:
                titles.append(retry.title)
        tokens, outcome = after, "truncated"
    last = retries[-1] if retries else None
    kept_from = last.start if last else 0
    return PtlRetryPlan(
        limit,
        prefix[end],
        tuple(retries),
        tuple(titles),
        changing,
        outcome,
        attempts,
        tokens,
        end - kept_from + (1 if last and last.inserted else 0),
        kept_from,
        bool(retries),
        outcome != "too_long",
        head=rounds.marker_tokens if last and last.inserted else 0,
    )


def run(
    messages: Sequence[Message], options: PtlRetryOptions, context: Context
) -> CompactionResult[PtlRetryStats]:
    segment, steps = Steps.of(messages, context)
    messages = segment.messages
    p = plan(segment, len(messages), options)
    for r in p.retries:
        kept = messages[r.start :]
        after = (marker(), *kept) if r.inserted else kept
        sizing = (
            f"a gap of {r.gap:,} tokens, so the oldest rounds covering it"
            if r.gap is not None
            else f"no token counts in it, so 20 % of {r.groups_before} rounds"
        )
        steps.add_planned(
            r.title,
            f'Attempt {r.attempt} was refused ("{r.said}"): {sizing}'
            f"{'; a marker keeps the request user-first' if r.inserted else ''}.",
            ready(after),
            r.tokens,
        )
    error = TOO_LONG_MESSAGE if not p.sent else None
    final = steps.repair_pairing() if p.sent else None
    if not p.sent:
        steps.add("Give up", f"{TOO_LONG_MESSAGE} (after {len(p.retries)} truncations)", steps.current)
    stats = PtlRetryStats(
        outcome=p.outcome,
        error=error,
        attempts=p.attempts,
        truncations=len(p.retries),
        groups_before=len(segment.round_starts),
        groups_dropped=sum(r.dropped for r in p.retries),
        marker_inserted=p.retries[-1].inserted if p.retries else False,
        limit=p.limit,
        messages_before=len(messages),
        messages_after=len(final) if final is not None else 0,
        tokens_before=context.meter.tokens(p.tokens_before),
        tokens_after=steps.context_tokens if final is not None else 0,
        request_tokens_after=context.meter.tokens(context.tokens(final)) + options.summary_prompt_tokens
        if final is not None
        else None,
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps), error)


STRATEGY = Strategy(
    name=NAME,
    label="PTL retry",
    description="when even the summarize request is too long, drop the oldest API rounds",
    options=PtlRetryOptions,
    run=run,
    plan=plan,
    timeline=False,
)

"""Claude Code's own auto-compact (docs/agents.md), replayed.

It fires when the context reaches the auto-compact point (13,000 under the effective
window). The summarize request is the history plus the summary prompt; when that is over
the provider's limit, PTL retry truncation (docs/strategies.md#ptl-retry) drops the
oldest API rounds from it, each retry a step. The history becomes the boundary marker,
one summary (written locally and deterministically here) and what Claude Code puts back
(`reinjection`): the five most recently touched files, each whole within 5,000
tokens or a short reference, the plan file and invoked skills.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from compaction_inspector.core.agents.claude_code import rules
from compaction_inspector.core.agents.claude_code.reinjection import Reinjected, reinjected
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable, text_message
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies import ptl_retry
from compaction_inspector.core.strategies.base import (
    AtPointPlan,
    CompactionResult,
    OptionError,
    StatsRecord,
    Steps,
    finish,
    ready,
)
from compaction_inspector.core.strategies.clear import idle_minutes
from compaction_inspector.core.strategies.declaration import TRIGGER, Strategy, check, option

NAME = "claude-code"


@immutable()
class ClaudeCodeOptions:
    auto_compact: bool = option(
        True, "it compacts on its own (false: DISABLE_AUTO_COMPACT, only /compact)",
        kind="bool", flag="--claude-code-no-auto-compact", label="auto-compact",
    )  # fmt: skip
    auto_compact_tokens: int | None = option(
        None,
        "compact when the context reaches this (default 13,000 under the usable window)",
        kind="int?",
        minimum=1,
        label="auto-compact at",
    )
    autocompact_pct_override: int | None = option(
        None,
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: compact at this % of the usable window, when lower",
        kind="int?",
        minimum=1,
        label="auto-compact %",
    )
    idle_compact_tokens: int | None = option(
        None,
        "compact a context of at least this many left idle 54 minutes, before the prompt cache "
        "expires (Claude Code 2.1.299: 200,000, or CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS); 0: never; "
        "default: as the session's Claude Code does",
        kind="int?",
        minimum=0,
        label="idle compact at",
    )
    summary_prompt_tokens: int = option(
        1000, "what the summarize instruction adds to the request", minimum=0, label="summary prompt tok",
        flag="--claude-code-summary-prompt-tokens",
    )  # fmt: skip
    # the real summaries of Claude Code 2.0.76-2.1.37 sessions run 7,600-15,100 characters, median 11,000
    summary_chars: int = option(
        11_000, "the summary's size in characters", minimum=200, label="summary chars",
        flag="--claude-code-summary-chars",
    )  # fmt: skip
    reread_files: int = option(
        5,
        "the most recently touched files (Read, Edit, Write) put back after it",
        minimum=0,
        label="re-read files",
    )
    reread_file_tokens: int = option(
        5_000, "a file larger than this goes back as a short reference", minimum=1, label="re-read file tok"
    )
    reread_total_tokens: int = option(
        50_000, "at most this many in all", minimum=0, label="re-read total tok"
    )

    def __post_init__(self) -> None:
        check(self)
        if self.autocompact_pct_override is not None and self.autocompact_pct_override > 100:
            raise OptionError(
                f"autocompact_pct_override must be from 1 to 100, not {self.autocompact_pct_override}"
            )


@immutable(kw_only=True)
class ClaudeCodeStats(StatsRecord):
    strategy: str = NAME
    triggered: bool
    point: int | None  # None: the window is too small for Claude Code's rule
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    truncations: int  # PTL retries of the summarize request
    rounds_dropped: int
    files_reread: int
    too_long: bool  # the summarize request could not be made to fit

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("triggered", "truncations", "files_reread", "too_long")


def point(options: ClaudeCodeOptions, context: Context) -> int | None:
    """Where it compacts (`core.own.autocompact`); None when it does not compact on its own,
    or the window is too small for its rule to leave a point."""
    if not options.auto_compact:
        return None
    return rules.claude_code_point(
        context.window, options.auto_compact_tokens, options.autocompact_pct_override
    ).tokens


def _as_percent(options: ClaudeCodeOptions, context: Context) -> int | None:
    """The override in force, else its point as a whole percent of the effective window."""
    if options.autocompact_pct_override is not None:
        return options.autocompact_pct_override
    at, usable = point(options, context), context.window.usable
    return at * 100 // usable if at is not None and usable > 0 else None


def _idle(options: ClaudeCodeOptions, messages: Sequence[Message], end: int) -> float | None:
    """The minutes the request before messages[end] waited since the last response, where
    that is long enough for an idle compaction and idle compaction is on; else None."""
    if not options.idle_compact_tokens:
        return None
    waited = idle_minutes(messages, None, end) if end else None
    return waited if waited is not None and waited >= rules.CLAUDE_CODE_IDLE_MINUTES else None


def _point_at(
    options: ClaudeCodeOptions, context: Context, messages: Sequence[Message], end: int
) -> int | None:
    """Where it compacts before the request messages[:end]: its point, or lower where the
    session sat idle before it and its idle compaction waits for less."""
    at = point(options, context)
    if options.idle_compact_tokens and _idle(options, messages, end) is not None:
        return min(at, options.idle_compact_tokens) if at is not None else options.idle_compact_tokens
    return at


def plan(segment: Segment, end: int, options: ClaudeCodeOptions, stored: None = None) -> AtPointPlan:
    """Where the request is the transcript's own, what Claude Code's rule counts before it
    (`rules.claude_code_estimates`); else the context the request holds."""
    at = _point_at(options, segment.context, segment.messages, end)
    return AtPointPlan.of(segment, end, at, count=segment.context.own_count(segment.messages, end, NAME))


def _fires(options: ClaudeCodeOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    """False only where it cannot fire: under its point and under its idle compaction's."""
    limits = [a for a in (point(options, context), options.idle_compact_tokens or None) if a is not None]
    return bool(limits) and tokens >= min(limits)


def run(
    messages: Sequence[Message], options: ClaudeCodeOptions, context: Context
) -> CompactionResult[ClaudeCodeStats]:
    segment, steps = Steps.of(messages, context)
    messages, counted = segment.messages, steps.start_tokens
    before = context.meter.tokens(counted)
    # what it fires on: its own estimate where the request is the transcript's own
    counts = context.own_count(messages, len(messages), NAME)
    at = _point_at(options, context, messages, len(messages))
    waited = _idle(options, messages, len(messages))
    idle = waited is not None and at is not None and at == options.idle_compact_tokens
    stats = ClaudeCodeStats(
        triggered=False,
        point=at,
        tokens_before=before,
        tokens_after=before,
        messages_before=len(messages),
        messages_after=len(messages),
        truncations=0,
        rounds_dropped=0,
        files_reread=0,
        too_long=False,
    )
    if at is None:
        steps.add("Not triggered", _no_point(options, context), messages)
        return finish(NAME, steps, stats)
    fires_on = before if counts is None else counts
    said = f"{before:,} tokens" if counts is None else f"Its own count of {counts:,} (its rule's estimate)"
    if fires_on < at:
        steps.add("Not triggered", f"{said} is under the auto-compact point of {at:,}.", messages)
        return finish(NAME, steps, stats)
    reached = (
        f"{said} sat idle {waited:.0f} minutes, past the {rules.CLAUDE_CODE_IDLE_MINUTES} "
        f"before the prompt cache expires, with idle compaction at {at:,}"
        if idle and waited is not None
        else f"{said} reached the auto-compact point of {at:,}"
    )
    retries = _summarize_request(segment, steps, options)
    if not retries.sent:
        steps.add("Give up", "Even the last API round is too long to summarize.", steps.current)
        stats = dataclasses.replace(stats, triggered=True, truncations=len(retries.retries), too_long=True)
        return CompactionResult(NAME, None, stats, tuple(steps.steps), ptl_retry.TOO_LONG_MESSAGE)
    summarized = messages[retries.kept_from :]
    summary = text_message(
        "user",
        context.summary(summarized, options.summary_chars),
        is_compact_summary=True,
        replaces=tuple(messages),
    )
    boundary = text_message(
        "system",
        f"Conversation compacted ({'idle' if idle else 'auto'}, {before:,} tokens before)",
        is_compact_boundary=True,
    )
    put_back = _put_back(messages, options, context)
    files = sum(r.kind == "file" for r in put_back)
    after = (boundary, summary, *(r.message for r in put_back))
    steps.add(
        "Idle compaction" if idle else "Auto-compact",
        f"{reached}: {len(summarized)} messages become one "
        f"summary of {len(summary.text):,} characters; {files} recently touched file"
        f"{'s are' if files != 1 else ' is'} put back (each whole within "
        f"{options.reread_file_tokens:,} tokens, else a reference), with the plan file and skills.",
        after,
    )
    asked = retries.retries[-1].tokens if retries.retries else counted
    sent = context.meter.tokens(asked) + options.summary_prompt_tokens
    return finish(
        NAME,
        steps,
        stats,
        (sent, round(context.tokens([summary]) * context.meter.scale)),
        triggered=True,
        truncations=len(retries.retries),
        rounds_dropped=sum(r.dropped for r in retries.retries),
        files_reread=files,
    )


def _no_point(options: ClaudeCodeOptions, context: Context) -> str:
    """Why it has no point to fire at."""
    if not options.auto_compact:
        return "Auto-compact is off (DISABLE_AUTO_COMPACT): it compacts only when asked (/compact)."
    return (
        f"A usable window of {context.window.usable:,} leaves no auto-compact point: Claude Code "
        f"compacts {rules.CLAUDE_CODE_BUFFER:,} tokens under the usable window. Set "
        "auto_compact_tokens to try its compaction in a window this small."
    )


def _summarize_request(segment: Segment, steps: Steps, options: ClaudeCodeOptions) -> ptl_retry.PtlRetryPlan:
    """The summarize request, the history and the summary prompt within the provider's
    window: each PTL retry truncation it needs, a step."""
    messages, context = segment.messages, segment.context
    ptl = ptl_retry.PtlRetryOptions(context.window.context_window, None, options.summary_prompt_tokens)
    retries = ptl_retry.plan(segment, len(messages), ptl)
    for r in retries.retries:
        kept = messages[r.start :]
        request = (ptl_retry.marker(), *kept) if r.inserted else kept
        steps.add_planned(
            f"Summarize request: {r.title.lower()}",
            f"The summarize request ({r.request:,} tokens with its prompt) is over the provider's limit of "
            f"{r.limit:,}: PTL retry truncation drops the oldest rounds of it.",
            ready(request),
            r.tokens,
        )
    return retries


def _put_back(messages: Sequence[Message], options: ClaudeCodeOptions, context: Context) -> list[Reinjected]:
    """What Claude Code puts back after it compacts (`reinjection`): the most
    recently touched files, each whole or as a reference, the plan file and skills."""
    return reinjected(
        messages,
        context.touches,
        context.counter,
        context.meter.scale,
        max_files=options.reread_files,
        max_file_tokens=options.reread_file_tokens,
        budget_tokens=options.reread_total_tokens,
    )


STRATEGY = Strategy(
    name=NAME,
    label="Claude Code",
    description="Claude Code's auto-compact: summarize all, re-read recent files, at 13,000 under the window",
    options=ClaudeCodeOptions,
    run=run,
    plan=plan,
    fires=_fires,
    persists=lambda options: True,
    in_force=lambda options, context: {
        "auto_compact_tokens": point(options, context),
        "autocompact_pct_override": _as_percent(options, context),
    },
    # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, what its users set; it keeps nothing to tune
    knob=lambda options, what: ("autocompact_pct_override", 1) if what == TRIGGER else None,
)

"""Codex CLI's own auto-compact (docs/agents.md), replayed.

The limit is `model_auto_compact_token_limit`, at most 90 % of the raw window (the
window a rollout records / 0.95), compared with Codex's own count: the context the
request holds plus the encrypted reasoning before its last user message
(`rules.codex_reasoning`), checked before each request. The new history
is Codex's (`new_history`): remotely, the newest user messages up to 64,000 of
Codex's tokens with the initial context before the last of them, and the encrypted
compaction item; locally, the initial context, 20,000 and a summary. The summary is
written here, locally and deterministically.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction_inspector.core.agents.codex import new_history, rules
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable, text_message
from compaction_inspector.core.own.autocompact import Point
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import (
    AtPointPlan,
    CompactionResult,
    StatsRecord,
    Steps,
    finish,
)
from compaction_inspector.core.strategies.declaration import TOKEN_STEP, TRIGGER, Strategy, check, option

NAME = "codex"


@immutable()
class CodexOptions:
    auto_compact_token_limit: int | None = option(
        None,
        "model_auto_compact_token_limit (default none: 90 % of the raw window, this window / 0.95)",
        kind="int?",
        minimum=1,
        label="auto-compact limit",
    )
    remote: bool = option(
        True,
        "OpenAI compacts remotely (an encrypted item, the newest 64,000 tokens of user messages); "
        "off: Codex compacts locally (a summary, 20,000)",
        kind="bool",
        label="remote",
    )
    user_message_tokens: int | None = option(
        None,
        "the newest user messages kept, up to this many of Codex's estimated tokens "
        "(default 64,000 remote, 20,000 local)",
        kind="int?",
        minimum=0,
        label="kept user tok",
    )
    reasoning_per_100: int | None = option(
        None,
        "encrypted reasoning per 100 reported reasoning tokens where the rollout lacks it (default: "
        "fitted on the rollout's own encrypted reasoning, else 120: public rollouts fit 110-130)",
        kind="int?",
        minimum=1,
        label="reasoning /100",
    )
    limit_scope: str = option(
        rules.TOTAL,
        "model_auto_compact_token_limit_scope: total compares the whole count with the limit; "
        "body_after_prefix what the window added since its first request, the whole window a hard cap "
        "(Codex 0.154 on)",
        kind="choice",
        choices=rules.CODEX_SCOPES,
        label="limit scope",
        flag="--codex-limit-scope",
    )
    summary_chars: int = option(
        4_000,
        "the summary's size in characters",
        minimum=200,
        label="summary chars",
        flag="--codex-summary-chars",
    )

    def __post_init__(self) -> None:
        check(self)


@immutable(kw_only=True)
class CodexStats(StatsRecord):
    strategy: str = NAME
    triggered: bool
    limit: int
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    user_messages_kept: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("triggered", "user_messages_kept")


def user_tokens(options: CodexOptions) -> int:
    """How much of the person's messages the new history keeps, in Codex's own tokens."""
    if options.user_message_tokens is not None:
        return options.user_message_tokens
    return new_history.REMOTE_USER_TOKENS if options.remote else new_history.LOCAL_USER_TOKENS


def limit(options: CodexOptions, context: Context) -> int:
    """Where it compacts (`core.own.autocompact`): the configured limit, at most 90 % of the
    raw window; under body_after_prefix, the limit on the body (any configured one)."""
    limited = rules.codex_scope_limit(options.limit_scope, context.window, options.auto_compact_token_limit)
    point = limited.tokens
    assert point is not None  # a share of a positive window
    return point


def _at(options: CodexOptions, context: Context, prefill: int | None) -> int:
    """Where the whole count compacts: the limit, or under body_after_prefix the window's
    first request's input and the limit, at most the whole window (`rules.codex_scoped`)."""
    at = limit(options, context)
    if options.limit_scope != rules.BODY_AFTER_PREFIX:
        return at
    return rules.codex_scoped(Point(at, ""), prefill, context.window).tokens or at


def _prefills(segment: Segment) -> tuple[list[int | None], list[int | None]]:
    """[end]: the first request's input in the window of the request before messages[end],
    as the rollout reports it, and as the context model estimates it."""
    first = next((k for k, m in enumerate(segment.messages) if m.role == "assistant"), None)
    estimated = segment.meter(first).tokens(segment.prefix[first]) if first is not None else None
    return rules.codex_prefills(segment.messages), [
        estimated if first is not None and end > first else None for end in range(len(segment.messages) + 1)
    ]


def _run_prefill(messages: Sequence[Message], context: Context, own: bool) -> int | None:
    """The first request's input of the window `messages` end in: reported where the
    request is the rollout's own, else estimated (a history the replay made)."""
    if own:
        return rules.codex_prefills(messages)[-1]
    start = max((k for k, m in enumerate(messages) if m.is_compact_boundary), default=-1) + 1
    first = next((k for k in range(start, len(messages)) if messages[k].role == "assistant"), None)
    return context.meter.tokens(context.tokens(messages[:first])) if first is not None else None


def _reasoning(messages: Sequence[Message], options: CodexOptions) -> list[int]:
    """[i]: the reasoning term of Codex's count for the request messages[:i]."""
    rate = rules.codex_reasoning_rate(messages, options.reasoning_per_100)
    read, estimated = rules.codex_reasoning(messages, rate)
    return [a + b for a, b in zip(read, estimated, strict=True)]


def _fires(options: CodexOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    """Its count (the context and, at most, its reasoning term) at or over its limit, or
    under body_after_prefix over the least the body's limit or the window leaves."""
    at = limit(options, context)
    if options.limit_scope == rules.BODY_AFTER_PREFIX:
        at = min(at, context.window.context_window)
    return tokens >= at


def _beside(segment: Segment, options: CodexOptions) -> list[int]:
    """At most what Codex counts besides the context, before each request: its reasoning
    term's bound, or what it counted where the rollout recorded it (`Context.own_count`)."""
    bound = segment.memo((NAME, "bound", options.reasoning_per_100), rules.codex_reasoning_bound,
                         segment.messages, options.reasoning_per_100)  # fmt: skip
    recorded = segment.context.recorded(segment.messages, NAME)
    if not recorded:
        return bound
    out = list(bound)
    for end, count in recorded.items():
        if end < len(out):
            out[end] = max(out[end], count - segment.meter(end).tokens(segment.prefix[end]))
    return out


def plan(segment: Segment, end: int, options: CodexOptions, stored: None = None) -> AtPointPlan:
    """Where the request is the rollout's own and Codex recorded its count before it, that
    count (as `compactions` reads it); else the context and the reasoning term."""
    count = segment.context.own_count(segment.messages, end, NAME)
    reported, estimated = (
        segment.memo((NAME, "prefills"), _prefills, segment)
        if options.limit_scope == rules.BODY_AFTER_PREFIX
        else ([], [])
    )
    if count is not None:
        at = _at(options, segment.context, reported[end] if reported else None)
        return AtPointPlan.of(segment, end, at, count=count)
    reasoning = segment.memo((NAME, options.reasoning_per_100), _reasoning, segment.messages, options)
    at = _at(options, segment.context, estimated[end] if estimated else None)
    return AtPointPlan.of(segment, end, at, reasoning[end])


def run(messages: Sequence[Message], options: CodexOptions, context: Context) -> CompactionResult[CodexStats]:
    segment, steps = Steps.of(messages, context)
    messages, counted = segment.messages, steps.start_tokens
    recorded = context.own_count(messages, len(messages), NAME)
    at = _at(options, context, _run_prefill(messages, context, recorded is not None))
    if recorded is not None:  # the rollout's own request: what Codex counted before it
        before = recorded
        counts = f"{before:,} tokens (its own count, as the rollout records its terms)"
    else:
        reasoning = _reasoning(messages, options)[-1]
        before = context.meter.tokens(counted) + reasoning
        counts = f"{before:,} tokens" + (
            f" (with {reasoning:,} of encrypted reasoning before the last user message)" if reasoning else ""
        )
    stats = CodexStats(
        triggered=False,
        limit=at,
        tokens_before=before,
        tokens_after=before,
        messages_before=len(messages),
        messages_after=len(messages),
        user_messages_kept=0,
    )
    if before < at:
        steps.add("Not triggered", f"Codex counts {counts}, under the limit of {at:,}.", messages)
        return finish(NAME, steps, stats)
    initial = new_history.initial_context(messages)
    budget = user_tokens(options)
    kept = new_history.kept_user_messages(messages, budget)
    summary = text_message(
        "user", context.summary(messages, options.summary_chars), is_compact_summary=True,
        replaces=tuple(messages),
    )  # fmt: skip
    boundary = text_message(
        "system", f"Conversation compacted (codex, {before:,} tokens before)", is_compact_boundary=True
    )
    if options.remote:  # the initial context goes back before the last user message
        after = (boundary, *kept[:-1], *initial, *kept[-1:], summary)
        made = f"{len(kept)} newest user messages (up to {budget:,} of Codex's tokens), the initial "
        made += "context before the last of them, and the compaction item (its summary here)"
    else:
        after = (*initial, boundary, *kept, summary)
        made = f"the initial context, the {len(kept)} newest user messages (up to {budget:,} of "
        made += "Codex's tokens) and a summary"
    steps.add(
        "Auto-compact",
        f"Codex counts {counts}, at or over the limit of {at:,}: the history becomes {made}.",
        after,
    )
    call = (before, round(context.tokens([summary]) * context.meter.scale))
    return finish(NAME, steps, stats, call, triggered=True, user_messages_kept=len(kept))


STRATEGY = Strategy(
    name=NAME,
    label="Codex",
    description="Codex's auto-compact: initial context, recent user messages and a summary, at 90 %",
    options=CodexOptions,
    run=run,
    plan=plan,
    fires=_fires,
    beside=_beside,
    persists=lambda options: True,
    in_force=lambda options, context: {
        "auto_compact_token_limit": limit(options, context),
        "user_message_tokens": user_tokens(options),
    },
    knob=lambda options, what: ("auto_compact_token_limit", TOKEN_STEP) if what == TRIGGER else None,
)

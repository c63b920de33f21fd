"""The transcript's own compactions as events (SEMANTICS §11-12): what the agent sent
just before and after each, what our context model predicts of the context after it,
where the session's preset would have fired, and what its summary kept.

A Claude Code compaction is its `compact_boundary`, the summary after it and the
re-injected context (attachment lines in newer versions); a Codex one is its
`compacted` line, with the `replacement_history` that became the context. Before and
after are the prompts the nearest responses reported.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, ClassVar

from compaction_inspector.core.config import Config
from compaction_inspector.core.context_model import ContextModel, Response
from compaction_inspector.core.formats.codex import ENCRYPTED_SUMMARY
from compaction_inspector.core.grouping import api_round_starts
from compaction_inspector.core.model import Compaction, Message, Session
from compaction_inspector.core.retention import Retention, retention
from compaction_inspector.core.strategies.base import CompactionResult, Context, Step
from compaction_inspector.core.strategies.claude_code import ClaudeCodeOptions, latest_reads
from compaction_inspector.core.summary import summarize
from compaction_inspector.core.text import counted
from compaction_inspector.core.tokens import TokenCounter

OUR_SUMMARY_CHARS = 2_000  # the cap our local summary of a whole span is written at
OWN = "own compactions"  # the name the transcript's own compactions go by, stepped as a result


@dataclass(frozen=True)
class RealCompaction:
    """One compaction the transcript records."""

    compaction: Compaction
    line: int | None
    replaced: tuple[int, int]  # the messages it replaced: its segment before the boundary
    after: tuple[int, int]  # the context after it, up to the first request sent after it
    measured_before: int | None  # the last prompt reported before it
    measured_after: int | None  # the first prompt reported after it
    predicted_after: int  # the model's context after it, from what the transcript holds
    reread_tokens: int  # of that, the files Claude Code re-read that the transcript does not record
    policy_round_offset: int | None  # rounds the preset's rule fires before it (auto only)
    retention: Retention | None  # of its summary (None: the summary is not in the transcript)
    ours: Retention  # of our local summary of the same span

    def to_dict(self) -> dict[str, Any]:
        c = self.compaction
        return {
            "index": c.index,
            "line": self.line,
            "trigger": c.trigger,
            "pre_tokens": c.pre_tokens,
            "post_tokens": c.post_tokens,
            "measured_before": self.measured_before,
            "measured_after": self.measured_after,
            "predicted_after": self.predicted_after,
            "reread_tokens": self.reread_tokens,
            "policy_round_offset": self.policy_round_offset,
            "retention": self.retention.to_dict() if self.retention else None,
            "retention_counts": self.retention.counts() if self.retention else None,
            "our_retention": self.ours.to_dict(),
            "our_retention_counts": self.ours.counts(),
        }


def real_compactions(
    session: Session, model: ContextModel, counter: TokenCounter, config: Config
) -> list[RealCompaction]:
    messages = session.messages
    starts = api_round_starts(messages)
    found = []
    for c in session.compactions:
        b = c.index
        segment = model.segment_start(b)
        first_after = _first_response(model.responses, b + 1)
        last_before = _last_response(model.responses, b, segment)
        end_after = first_after.start if first_after else len(messages)
        replaced, after = messages[segment:b], messages[b + 1 : end_after]
        reread = _reread_tokens(replaced, after, counter, session.format, model.scale)
        predicted = round(
            model.overhead + model.scale * (model.prefix[end_after] - model.prefix[b + 1]) + reread
        )
        summary_known = any(m.is_compact_summary and m.text != ENCRYPTED_SUMMARY for m in after)
        ours = summarize(list(replaced), OUR_SUMMARY_CHARS, session.session_id)
        found.append(
            RealCompaction(
                compaction=c,
                line=messages[b].line,
                replaced=(segment, b),
                after=(b + 1, end_after),
                measured_before=last_before.prompt_tokens if last_before else None,
                measured_after=first_after.prompt_tokens if first_after else None,
                predicted_after=predicted,
                reread_tokens=reread,
                policy_round_offset=_offset(model, starts, c, segment, config)
                if c.trigger == "auto"
                else None,
                retention=retention(replaced, after) if summary_known else None,
                ours=retention(replaced, [ours]),
            )
        )
    return found


def _first_response(responses: tuple[Response, ...], start: int) -> Response | None:
    return next((r for r in responses if r.start >= start), None)


def _last_response(responses: tuple[Response, ...], end: int, segment: int) -> Response | None:
    before = [r for r in responses if segment <= r.start < end]
    return before[-1] if before else None


def _reread_tokens(
    replaced: tuple[Message, ...], after: tuple[Message, ...], counter: TokenCounter, fmt: str, scale: float
) -> int:
    """The tokens of the files Claude Code re-reads after a compaction, where the
    transcript does not record them (no attachment lines after it): the most recently
    read files, within its caps (`ClaudeCodeOptions`' defaults), in the model's tokens
    (`scale` × counted)."""
    if fmt != "claude-code" or any(m.attachment is not None for m in after):
        return 0
    caps = ClaudeCodeOptions()
    reads = list(latest_reads(replaced).values())[-caps.reread_files :]
    each = (min(round(scale * counter.count(m)), caps.reread_file_tokens) for m, _ in reads)
    return min(caps.reread_total_tokens, sum(each))


def _offset(
    model: ContextModel, starts: list[int], c: Compaction, segment: int, config: Config
) -> int | None:
    """API rounds between the first request of the segment whose context reaches the
    preset's auto-compact point and the compaction (0: the same request; None: the point
    is never reached before it). At the request the compaction replaced, the larger of
    the model's context and the one the agent recorded: the trigger saw at least that."""
    point = config.auto_compact_tokens
    if point is None:
        return None
    first = bisect_left(starts, segment + 1)
    last = bisect_left(starts, c.index + 1)
    requests = [*starts[first:last], c.index]
    for k, end in enumerate(requests):
        recorded = c.pre_tokens if end == c.index and c.pre_tokens is not None else 0
        if max(model.tokens(end), recorded) >= point:
            return len(requests) - 1 - k
    return None


@dataclass(frozen=True, kw_only=True)
class OwnStats:
    """The transcript's own compactions, as a result the app steps through."""

    strategy: str = OWN
    compactions: int
    auto: int
    manual: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("compactions", "auto", "manual")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def as_steps(session: Session, found: list[RealCompaction], context: Context) -> CompactionResult:
    """Each compaction a step: before it, the context as last sent before it; after it,
    what the first request after it held (summary, re-injected files, kept messages),
    with the prompts reported either side where there are."""
    messages, window = session.messages, context.window
    steps = []
    for c in found:
        before = messages[c.replaced[0] : c.compaction.index]
        held = messages[c.after[0] : c.after[1]]
        # what the compaction made (summary, re-read files, attachments) ends where the
        # person's next prompt begins: that and what follows were sent after it, not made by it
        made = next((k for k, m in enumerate(held) if m.is_human and not m.is_compact_summary), len(held))
        after, sent = held[:made], held[made:]
        counted_before, counted_after = context.tokens(before), context.tokens(after)
        tokens_before = c.measured_before if c.measured_before is not None else counted_before
        tokens_after = c.measured_after if c.measured_after is not None else c.predicted_after
        kept = (
            f"its summary kept {c.retention.line()}"
            if c.retention
            else "its summary is not in the transcript"
        )
        recorded = (
            f"{c.compaction.pre_tokens:,}" if c.compaction.pre_tokens is not None else "no count of the"
        )
        source = "measured" if c.measured_after is not None else "predicted"
        steps.append(
            Step(
                title=f"{c.compaction.trigger or 'unknown'} compaction, line {c.line}: "
                f"{tokens_before:,} → {tokens_after:,} {source}",
                explanation=f"The agent recorded {recorded} tokens before it; our model predicts "
                f"{c.predicted_after:,} after it. {len(before)} messages were replaced by "
                f"{len(after)}; {kept}."
                + (
                    f" The prompt reported after it also holds {counted(len(sent), 'message')} sent since."
                    if sent and c.measured_after is not None
                    else ""
                )
                + f" Ours would keep {c.ours.line()}.",
                build_after=lambda after=after: after,  # type: ignore[misc]
                build_before=lambda before=before: before,  # type: ignore[misc]
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                pressure_before=window.pressure(tokens_before),
                pressure_after=window.pressure(tokens_after),
                counted_delta=counted_after - counted_before,
            )
        )
    stats = OwnStats(
        compactions=len(found),
        auto=sum(c.compaction.trigger == "auto" for c in found),
        manual=sum(c.compaction.trigger == "manual" for c in found),
    )
    return CompactionResult(OWN, messages, stats, tuple(steps))

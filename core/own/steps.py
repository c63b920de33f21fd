"""The transcript's own compactions as the steps of a strategy's result, for the app to
show them as it shows a strategy's (`o`)."""

from __future__ import annotations

from typing import ClassVar

from compaction_inspector.core.model import Message, Session, immutable
from compaction_inspector.core.own.compactions import OWN, RealCompaction
from compaction_inspector.core.replaying.clearing import cleared_results
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import CompactionResult, Stats, StatsRecord, Step, ready
from compaction_inspector.core.text import counted


@immutable(kw_only=True)
class OwnStats(StatsRecord):
    """The transcript's own compactions, as a result the app steps through."""

    strategy: str = OWN
    compactions: int
    auto: int
    manual: int
    microcompactions: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("compactions", "auto", "manual", "microcompactions")


def as_steps(session: Session, found: list[RealCompaction], context: Context) -> CompactionResult[Stats]:
    """Each compaction a step: before it, the context as last sent before it; after it,
    what the first request after it held (summary, re-injected files, kept messages),
    with the prompts reported either side where there are."""
    messages, window = session.messages, context.window
    steps = []
    for c in found:
        if c.kind == "microcompact":
            steps.append(_micro_step(messages, c, context))
            continue
        before = messages[c.replaced[0] : c.compaction.index]
        held = messages[c.after[0] : c.after[1]]
        # what the compaction made (summary, re-read files, attachments, the prompts a Codex
        # history keeps, all written on its own line) ends where the person's next prompt
        # begins: that and what follows were sent after it, not made by it
        made = next(
            (k for k, m in enumerate(held) if m.is_human and not m.is_compact_summary and m.line != c.line),
            len(held),
        )
        after, sent = held[:made], held[made:]
        counted_before, counted_after = context.tokens(before), context.tokens(after)
        tokens_before = c.measured_before if c.measured_before is not None else counted_before
        predicted = c.predicted_after if c.predicted_after is not None else counted_after
        tokens_after = c.measured_after if c.measured_after is not None else predicted
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
                explanation=f"The agent recorded {recorded} tokens before it; "
                + (
                    f"our model predicts {c.predicted_line} after it"
                    + (f": {c.parts_line}." if c.parts else ".")
                    if c.predicted_after is not None
                    else f"its context after it {c.calibration or 'cannot be predicted'}."
                )
                + (f" It cost {c.cost.line()}." if c.cost else "")
                + f" {len(before)} messages were replaced by {len(after)}; {kept}."
                + (
                    f" The prompt reported after it also holds {counted(len(sent), 'message')} sent since."
                    if sent and c.measured_after is not None
                    else ""
                )
                + (f" Ours would keep {c.ours.line()}." if c.ours else "")
                + (f" Why here: {c.count.line()}." if c.count else ""),
                build_after=ready(after),
                build_before=ready(before),
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                pressure_before=window.pressure(tokens_before),
                pressure_after=window.pressure(tokens_after),
                counted_delta=counted_after - counted_before,
            )
        )
    full = [c for c in found if c.kind == "compact"]
    stats = OwnStats(
        compactions=len(full),
        auto=sum(c.compaction.trigger == "auto" for c in full),
        manual=sum(c.compaction.trigger == "manual" for c in full),
        microcompactions=len(found) - len(full),
    )
    return CompactionResult(OWN, messages, stats, tuple(steps))


def _micro_step(messages: tuple[Message, ...], c: RealCompaction, context: Context) -> Step:
    """A microcompaction as a step: the context before it, and the same with exactly the
    listed tool results cleared."""
    ids = frozenset(c.compaction.cleared)
    before = messages[c.replaced[0] : c.compaction.index]
    after = tuple(
        edited if m.is_tool_result and (edited := cleared_results(m, ids)) is not None else m for m in before
    )
    tokens_before = (
        c.measured_before if c.measured_before is not None else context.meter.tokens(context.tokens(before))
    )
    measured = c.measured_after is not None
    tokens_after = c.measured_after if c.measured_after is not None else c.predicted_after
    cleared = sum(a is not b for a, b in zip(before, after, strict=True))
    saved = c.compaction.tokens_saved
    if c.predicted_after is None:
        prediction = (
            "None of them is in this file (it starts after them), so it cannot be modelled from it"
            + ("." if measured else "; nothing measures it either.")
        )
    else:
        found = c.cleared_found if c.cleared_found is not None else len(ids)
        partial = f" ({found} of the {len(ids)} cleared results are in this file)" if found < len(ids) else ""
        prediction = f"Our model predicts {c.predicted_after:,} after it{partial}" + (
            "." if measured else "; a full compaction came before the next request, so nothing measures it."
        )
    shown = f"{tokens_after:,} {'measured' if measured else 'predicted'}" if tokens_after is not None else "?"
    tokens_after = tokens_after if tokens_after is not None else tokens_before
    return Step(
        title=f"microcompact, line {c.line}: {tokens_before:,} → {shown}"
        + ("" if c.predicted_after is not None or measured else " (not modelled)"),
        explanation=f"The agent cleared {counted(len(ids), 'tool result')} in {counted(cleared, 'message')}, "
        f"keeping every message; it estimated {f'{saved:,}' if saved is not None else 'no count of the'} "
        f"tokens saved (its own count, not the reported prompts' scale). {prediction}"
        + (f" It cost {c.cost.line()}." if c.cost else ""),
        build_after=ready(after),
        build_before=ready(before),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        pressure_before=context.window.pressure(tokens_before),
        pressure_after=context.window.pressure(tokens_after),
        counted_delta=context.tokens(after) - context.tokens(before),
    )

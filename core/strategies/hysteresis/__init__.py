"""Volley-aware hysteresis compaction (docs/strategies.md#hysteresis; seed 003), all three tiers.

Below the lowest threshold nothing happens. In the first tier one volley (the oldest
candidate) is summarized; in the second, oldest candidates one at a time until pressure
is at or under the target; in the third, as in the second, then tail protection is
reduced, summaries are shrunk (x0.7, floor 200 characters) and injected meta messages
are dropped, last. The protected tail and existing summaries are never summarized.

`preflight` compacts the request about to be sent (ephemeral); `post-turn` prunes the
stored history (persisted). The messages are the same; `simulate` carries them over or not.

Every volley but the first opens with a human message, so the candidates are those
volleys, oldest first, before the protected tail; summarizing one never changes which
later ones are candidates (a summary is not a human message). A run is therefore planned
with token arithmetic over a `Table` of the candidates, and the same plan serves `run`
(which then builds each step's messages when shown) and `Replay` (thousands of requests,
one table).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.replaying.summary import MIN_SUMMARY_CHARS
from compaction_inspector.core.strategies.base import CompactionResult, StatsRecord, Steps
from compaction_inspector.core.strategies.declaration import Strategy
from compaction_inspector.core.strategies.hysteresis.options import SHRINK, HysteresisOptions, Stage, persists
from compaction_inspector.core.strategies.hysteresis.planning import WORTH, Phase, Run, State, expand, plan
from compaction_inspector.core.strategies.hysteresis.table import Table

NAME = "hysteresis"


def run(
    messages: Sequence[Message], options: HysteresisOptions, context: Context
) -> CompactionResult[HysteresisStats]:
    segment, steps = Steps.of(messages, context)
    messages, end = segment.messages, len(segment)
    planned = plan(segment, end, options)
    table, p = planned.table, planned.plan
    meter = context.meter
    if p.tier == 0:
        low = options.thresholds[0]
        steps.add(
            "Below the lowest threshold",
            f"Pressure {meter.pressure(p.tokens):.1%} is under {low} %: "
            f"nothing runs until it crosses {low} % again.",
            messages,
        )
    elif not p.candidates:
        steps.add("No candidates", "Every older volley is a summary or protected.", messages)
    elif p.unworthy is not None and not p.changed:
        first, last, freed = p.unworthy
        which = (
            f"volley {first + planned.shift}"
            if last == first + 1
            else f"volleys {first + planned.shift}–{last - 1 + planned.shift}"
        )
        steps.add(
            "Not worth it",
            f"{p.reason()} Summarizing {which} would free {freed:,} tokens, under {WORTH:.0%} of the "
            f"usable window's {meter.window.usable:,}: less than the prompt cache it would "
            "invalidate. Nothing runs.",
            messages,
        )
    for title, phase, tokens, state in expand(p, table, lambda c: c + planned.shift):
        done, level, dropped = state
        steps.add_planned(
            title,
            _explanation(p, table, phase, state),
            table.builder(end, done, level, dropped),
            tokens,
        )
    final = tuple(steps.repair_pairing())
    after_tokens = steps.context_tokens
    over_budget = after_tokens > context.window.usable
    if over_budget:
        steps.add(
            "Over budget",
            f"{after_tokens:,} tokens still exceed the usable window of {context.window.usable:,}: "
            "the request cannot be made to fit.",
            final,
        )
    stats = HysteresisStats(
        stage=options.stage,
        persisted=persists(options),
        triggered=p.tier > 0,
        tier=p.tier,
        thresholds=options.thresholds,
        target=options.target,
        pressure_before=round(meter.pressure(p.tokens_before), 6),
        pressure_after=round(context.window.pressure(after_tokens), 6),
        tokens_before=meter.tokens(p.tokens_before),
        tokens_after=after_tokens,
        messages_before=len(messages),
        messages_after=len(final),
        volleys_summarized=p.done,
        protect_volleys=p.protect,
        summary_chars=table.caps[p.level],
        meta_dropped=len(p.dropped),
        over_target=context.window.pressure(after_tokens) > options.target / 100,
        over_budget=over_budget,
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


@immutable(kw_only=True)
class HysteresisStats(StatsRecord):
    strategy: str = NAME
    stage: Stage
    persisted: bool
    triggered: bool
    tier: int  # 0 below the lowest threshold, else 1, 2 or 3
    thresholds: tuple[int, int, int]
    target: int
    pressure_before: float
    pressure_after: float
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    volleys_summarized: int
    protect_volleys: int  # as the run left it (the third tier may lower it)
    summary_chars: int  # the cap the run ended at
    meta_dropped: int
    over_target: bool
    over_budget: bool  # still over the usable window

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("tier", "triggered", "volleys_summarized", "over_budget")


def _fires(options: HysteresisOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    return options.tier(context.window.pressure(tokens)) > 0  # `tokens`: the context's


def _label(options: HysteresisOptions) -> str:
    return f"hysteresis {'/'.join(map(str, options.thresholds))}→{options.target} ({options.stage})"


def _explanation(plan: Run, table: Table, phase: Phase, state: State) -> str:
    """Why a step of `expand` was taken."""
    if phase.kind == "summarize":
        c = state[0] - 1
        return (
            f"{phase.why or plan.reason()} {len(table.raws[c])} messages "
            f"become one summary of {len(table.summary(c, 0).text)} characters."
        )
    if phase.kind == "protect":
        return "Still above the target at the highest tier: only the latest volley stays protected."
    if phase.kind == "shrink":
        return (
            f"Still above the target: every summary of this run is rewritten at ×{SHRINK} "
            f"of its budget (never below {MIN_SUMMARY_CHARS})."
        )
    return "Non-essential injections go last, when nothing else brings pressure down."


def _tune(options: HysteresisOptions, what: str, points: int) -> HysteresisOptions:
    """A tuning key moves the target, or the three thresholds together, by `points`."""
    if what == "target":
        return dataclasses.replace(options, target=options.target + points)
    low, middle, high = options.thresholds
    return dataclasses.replace(options, thresholds=(low + points, middle + points, high + points))


STRATEGY = Strategy(
    name=NAME,
    label="Hysteresis",
    description="summarize old volleys when pressure crosses 75 / 85 / 95 %",
    options=HysteresisOptions,
    run=run,
    plan=plan,
    fires=_fires,
    persists=persists,
    policy_label=_label,
    contrast=lambda options: dataclasses.replace(options, stage="post-turn"),
    bands=lambda options: (options.thresholds, options.target),
    tune=_tune,
)

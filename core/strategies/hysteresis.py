"""Volley-aware hysteresis compaction (SEMANTICS §6; seed 003), all three tiers.

Below the lowest threshold nothing happens. In the first tier one volley (the oldest
candidate) is summarized; in the second, oldest candidates one at a time until pressure
is at or under the target; in the third, as in the second, then tail protection is
reduced, summaries are shrunk (x0.7, floor 200 characters) and injected meta messages
are dropped, last. The protected tail and existing summaries are never summarized.

`preflight` compacts the request about to be sent (ephemeral); `post-turn` prunes the
stored history (persisted). The messages are the same; `simulate` carries them over or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.grouping import volleys
from core.model import Block, Message
from core.strategies.base import CompactionResult, Context, OptionError, Steps, positive_int
from core.summary import MIN_SUMMARY_CHARS, summarize, summary_text
from core.text import one_line

NAME = "hysteresis"
SHRINK = 0.7
Stage = Literal["preflight", "post-turn"]


@dataclass(frozen=True)
class HysteresisOptions:
    thresholds: tuple[int, int, int] = (75, 85, 95)
    target: int = 70
    summary_chars: int = 400
    protect_volleys: int = 1
    stage: Stage = "preflight"

    def __post_init__(self) -> None:
        values = [self.target, *self.thresholds]
        if len(self.thresholds) != 3 or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise OptionError("thresholds must be three whole percents, e.g. 75,85,95")
        if not (0 < self.target < self.thresholds[0] < self.thresholds[1] < self.thresholds[2] < 100):
            raise OptionError(
                f"thresholds {list(self.thresholds)} and target {self.target} must satisfy "
                "0 < target < lowest < middle < highest < 100"
            )
        positive_int("summary_chars", self.summary_chars, MIN_SUMMARY_CHARS)
        positive_int("protect_volleys", self.protect_volleys)
        if self.stage not in ("preflight", "post-turn"):
            raise OptionError(f"stage must be preflight or post-turn, not {self.stage!r}")

    def tier(self, pressure: float) -> int:
        """0 below the lowest threshold, else 1, 2 or 3."""
        return sum(pressure * 100 >= t for t in self.thresholds)


def _untouchable(m: Message) -> bool:
    return m.is_summary_item or m.role == "system"


@dataclass(frozen=True)
class _Plan:
    """Which volleys are summaries (at which cap) and which meta messages are gone."""

    summaries: dict[int, Message]
    dropped: frozenset[Message] = frozenset()


class _Run:
    """Plans the compaction on the volleys of the input, computed once.

    Summarizing the oldest candidate never changes which later volleys are candidates
    (a summary is not a human message, so it joins the volley before it), so the run
    can be planned with token arithmetic and each step's message list built only when
    it is shown."""

    def __init__(self, messages: tuple[Message, ...], options: HysteresisOptions, context: Context):
        self.messages = messages
        self.context = context
        self.options = options
        self.counts = context.counter.count_all(messages)
        self.spans = volleys(messages, self.counts)
        self.steps = Steps(messages, context)
        self.protect = options.protect_volleys
        self.cap = options.summary_chars
        self.plan = _Plan({})
        self.tokens = sum(self.counts)
        self.target = options.target / 100
        self._raws: dict[int, list[Message]] = {}
        self._order: tuple[int, list[int]] | None = None

    @property
    def summarized(self) -> int:
        return len(self.plan.summaries)

    @property
    def pressure(self) -> float:
        return self.context.window.pressure(self.tokens)

    def _raw(self, n: int) -> list[Message]:
        if n not in self._raws:
            v = self.spans[n]
            self._raws[n] = [m for m in self.messages[v.start : v.end] if not _untouchable(m)]
        return self._raws[n]

    def candidates(self) -> list[int]:
        """Volleys that may still be summarized, oldest first."""
        if self._order is None or self._order[0] != self.protect:
            eligible = range(max(0, len(self.spans) - self.protect))
            found = [n for n in eligible if self.messages[self.spans[n].start].is_human and self._raw(n)]
            self._order = (self.protect, found)
        return [n for n in self._order[1] if n not in self.plan.summaries]

    def build(self, plan: _Plan) -> tuple[Message, ...]:
        out: list[Message] = []
        for n, v in enumerate(self.spans):
            volley = self.messages[v.start : v.end]
            summary = plan.summaries.get(n)
            if summary is None:
                out += [m for m in volley if m not in plan.dropped]
                continue
            first_raw = next(m for m in volley if not _untouchable(m))
            out += [summary if m is first_raw else m for m in volley if _untouchable(m) or m is first_raw]
        return tuple(out)

    def _step(self, title: str, explanation: str) -> None:
        plan = self.plan
        self.steps.add_planned(title, explanation, lambda: self.build(plan), self.tokens)

    def summarize_oldest(self, why: str) -> bool:
        n = next(iter(self.candidates()), None)
        if n is None:
            return False
        raw = self._raw(n)
        summary = summarize(raw, self.cap, self.context.session_id)
        self.tokens += self.context.counter.count(summary) - sum(self.context.counter.count_all(raw))
        self.plan = _Plan({**self.plan.summaries, n: summary}, self.plan.dropped)
        human = self.messages[self.spans[n].start]
        self._step(
            f"Summarize volley {n}: “{one_line(human.text, 40)}”",
            f"{why} {len(raw)} messages become one summary of {len(summary.text)} characters.",
        )
        return True

    def until_target(self, why: str) -> None:
        while self.pressure > self.target and self.summarize_oldest(why):
            pass

    def last_resorts(self) -> int:
        """The third tier once plain summarizing has run out: returns meta messages dropped."""
        if self.protect > 1 and self.pressure > self.target:
            self.protect = 1
            self._step(
                "Reduce tail protection to 1 volley",
                "Still above the target at the highest tier: only the latest volley stays protected.",
            )
            self.until_target("With less of the tail protected,")
        counter = self.context.counter
        while self.pressure > self.target and self.cap > MIN_SUMMARY_CHARS and self.summarized:
            self.cap = max(MIN_SUMMARY_CHARS, int(self.cap * SHRINK))
            smaller = {}
            for n, old in self.plan.summaries.items():
                text = summary_text(self._raw(n), self.cap, self.context.session_id)
                smaller[n] = old.with_blocks((Block("text", text=text),))
                self.tokens += counter.count(smaller[n]) - counter.count(old)
            self.plan = _Plan(smaller, self.plan.dropped)
            self._step(
                f"Shrink summaries to {self.cap} characters",
                f"Still above the target: every summary of this run is rewritten at ×{SHRINK} "
                f"of its budget (never below {MIN_SUMMARY_CHARS}).",
            )
        if self.pressure <= self.target:
            return 0
        tail = self.spans[-self.protect].start if len(self.spans) >= self.protect else 0
        drop = frozenset(
            m
            for n, v in enumerate(self.spans)
            if v.start < tail and n not in self.plan.summaries
            for m in self.messages[v.start : v.end]
            if m.is_meta and not m.is_summary_item and not m.is_tool_result
        )
        if drop:
            self.tokens -= sum(counter.count_all(list(drop)))
            self.plan = _Plan(self.plan.summaries, drop)
            self._step(
                f"Drop {len(drop)} injected meta message{'s' if len(drop) != 1 else ''}",
                "Non-essential injections go last, when nothing else brings pressure down.",
            )
        return len(drop)


def run(messages: Sequence[Message], options: HysteresisOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    state = _Run(messages, options, context)
    before = state.pressure
    tier = options.tier(before)
    low, middle, high = options.thresholds
    dropped_meta = 0
    if tier == 0:
        state.steps.add(
            "Below the lowest threshold",
            f"Pressure {before:.1%} is under {low} %: nothing runs until it crosses {low} % again.",
            messages,
        )
    else:
        band = {1: f"{low}–{middle} %", 2: f"{middle}–{high} %", 3: f"{high} %+"}[tier]
        goal = "one volley" if tier == 1 else f"down to {options.target} %"
        why = f"Pressure {before:.1%} is in the {band} tier: {goal}."
        if not state.candidates():
            state.steps.add("No candidates", "Every older volley is a summary or protected.", messages)
        if tier == 1:
            state.summarize_oldest(why)
        else:
            state.until_target(why)
        if tier == 3 and state.pressure > state.target:
            dropped_meta = state.last_resorts()
    final = tuple(state.steps.repair_pairing())
    after_tokens = context.tokens(final)
    over_budget = after_tokens > context.window.usable
    if over_budget:
        state.steps.add(
            "Over budget",
            f"{after_tokens:,} tokens still exceed the usable window of {context.window.usable:,}: "
            "the request cannot be made to fit.",
            final,
        )
    stats: dict[str, Any] = {
        "strategy": NAME,
        "stage": options.stage,
        "persisted": options.stage == "post-turn",
        "triggered": tier > 0,
        "tier": tier,
        "thresholds": list(options.thresholds),
        "target": options.target,
        "pressure_before": round(before, 6),
        "pressure_after": round(context.window.pressure(after_tokens), 6),
        "tokens_before": context.tokens(messages),
        "tokens_after": after_tokens,
        "messages_before": len(messages),
        "messages_after": len(final),
        "volleys_summarized": state.summarized,
        "protect_volleys": state.protect,
        "summary_chars": state.cap,
        "meta_dropped": dropped_meta,
        "over_target": context.window.pressure(after_tokens) > state.target,
        "over_budget": over_budget,
    }
    return CompactionResult(NAME, final, stats, tuple(state.steps.steps))

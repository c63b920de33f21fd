"""The clear family: old tool results' content becomes a placeholder; the calls and the
result blocks stay, so pairing is untouched (docs/strategies.md, "Clearing old tool
results", names each agent's source).

Claude Code's microcompact, Anthropic's context editing (`clear_tool_uses_20250919`),
LangChain's `ClearToolUsesEdit`, OpenHands' observation masking and opencode's prune are
each this rule with their own settings (`core.strategies.variants`):
- when: always, once the context reaches a trigger, or after an idle gap;
- what is kept: the newest tool uses, the results in the newest messages, the newest
  tokens of tool output, the person's last turns (a result any of them keeps stays);
- which tools (all, or a list) and which never; clear at least so many tokens or nothing;
- the placeholder; and whether the history keeps the edit (an agent that rewrites what it
  stores) or every request is edited anew from the full history (an API or middleware
  that edits what is sent).

A replay never makes the edited messages: the tokens freed by clearing the first k
results are a prefix sum over the segment's clearable results, found once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from typing import Any, ClassVar

from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.replaying.clearing import CLEARED_TEXT, cleared
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import (
    NO_CALL,
    CompactionResult,
    OptionError,
    StatsRecord,
    Steps,
)
from compaction_inspector.core.strategies.declaration import (
    TOKEN_STEP,
    TRIGGER,
    Family,
    check,
    first_set,
    option,
)
from compaction_inspector.core.text import counted
from compaction_inspector.core.timestamps import parse as parse_time


def _flag(key: str) -> str:
    return f"--clear-{key.replace('.', '-').replace('_', '-')}"


def _keep(key: str, help: str, label: str | None = None) -> Any:
    return option(
        None, help, kind="int?", minimum=0, group="keep", key=key, flag=_flag(f"keep.{key}"), label=label
    )


@immutable()
class ClearOptions:
    trigger_tokens: int | None = option(
        None, "clear only when the context reaches this (default every request)", kind="int?", minimum=1,
        group="trigger", key="tokens", flag=_flag("trigger.tokens"), label="trigger tok",
    )  # fmt: skip
    keep_tool_uses: int | None = _keep("tool_uses", "keep the newest this many tool results", "keep recent")
    keep_messages: int | None = _keep("messages", "... and the results in the newest this many messages")
    keep_tokens: int | None = _keep("tokens", "... and the newest this many tokens of tool output")
    keep_turns: int | None = _keep("turns", "... and the results in the person's last this many turns")
    clear_at_least: int | None = option(
        None, "clear only if this many tokens are freed, else nothing", kind="int?", minimum=1,
        flag="--clear-at-least", label="clear at least",
    )  # fmt: skip
    tools: frozenset[str] = option(
        frozenset(),
        "the tools whose results may be cleared (none named: every tool)",
        kind="names",
        flag=None,
    )
    exclude_tools: frozenset[str] = option(
        frozenset(), "tools whose results are never cleared", kind="names", flag=_flag("exclude_tools")
    )
    placeholder: str = option(
        CLEARED_TEXT, "what a cleared result says", kind="str?", flag=_flag("placeholder")
    )
    persist: bool = option(
        True, "the history keeps the edit (false: each request is edited anew from the full history)",
        kind="bool", flag="--no-clear-persist",
    )  # fmt: skip
    idle_gap_minutes: int | None = option(
        None,
        "run only after this many minutes since the last assistant message (default always)",
        kind="int?",
        minimum=1,
        label="idle gap minutes",
        flag="--idle-gap-minutes",
    )
    now: str | None = option(
        None, "ISO time of the next request (default the last message's time)", kind="str?", saved=False,
        flag="--now",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)
        if self.now is not None and parse_time(self.now) is None:
            raise OptionError(f"now must be an ISO 8601 time such as 2026-01-01T12:00:00Z, not {self.now!r}")
        if not self.placeholder:
            raise OptionError("placeholder must be some text")


def idle_minutes(messages: Sequence[Message], now: str | None, end: int | None = None) -> float | None:
    """Minutes from the last assistant message of messages[:end] to `now` (default the
    last message's time)."""
    end = len(messages) if end is None else end
    last_reply = next(
        (
            messages[i]
            for i in range(end - 1, -1, -1)
            if messages[i].role == "assistant" and messages[i].timestamp
        ),
        None,
    )
    finish = parse_time(now) or parse_time(messages[end - 1].timestamp if end else None)
    start = parse_time(last_reply.timestamp) if last_reply else None
    if start is None or finish is None:
        return None
    return (finish - start).total_seconds() / 60


def _clearable(messages: Sequence[Message], options: ClearOptions) -> list[tuple[int, int]]:
    """(message, block) of each result of a clearable tool not yet cleared. One walk over
    the blocks gathers calls and results; a result is judged after it, so a call after
    it still names it. A repeated call id keeps its first call's name: repair keeps that
    call, and a replay stops at the repeat."""
    names: dict[str, str] = {}
    results: list[tuple[int, int, str]] = []
    done = {CLEARED_TEXT, options.placeholder}
    for i, m in enumerate(messages):
        for j, b in enumerate(m.blocks):
            if b.type == "tool_use" and b.id is not None:
                names.setdefault(b.id, b.name or "")
            elif b.type == "tool_result" and b.text not in done:
                results.append((i, j, b.tool_use_id or ""))
    tools, never = options.tools, options.exclude_tools
    return [
        (i, j)
        for i, j, tid in results
        if (name := names.get(tid)) is not None and (not tools or name in tools) and name not in never
    ]


def _by_message(positions: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """(message, block) positions as the blocks of each message."""
    grouped: dict[int, list[int]] = {}
    for i, j in positions:
        grouped.setdefault(i, []).append(j)
    return grouped


@dataclass(eq=False)
class Table:
    """A segment's clearable results in order (`entries`, their messages `at`) and what
    clearing them frees: results of one message form a group; `changed[g]` is the
    tokens clearing groups before g changes the segment by, `freed[g]` the tool output
    they held (never negative: a result shorter than the placeholder frees none)."""

    segment: Segment = field(repr=False)
    placeholder: str
    entries: list[tuple[int, int]]
    at: list[int]
    starts: list[int]  # the first entry of each group
    group: list[int]  # each entry's group
    changed: list[int]
    freed: list[int]
    partial: dict[int, int] = field(default_factory=dict)  # change by clearing the first k entries

    @staticmethod
    def of(segment: Segment, options: ClearOptions) -> Table:
        entries = _clearable(segment.messages, options)
        at = [i for i, _ in entries]
        starts = [k for k in range(len(entries)) if k == 0 or at[k] != at[k - 1]]
        group = list(accumulate(int(k > 0 and at[k] != at[k - 1]) for k in range(len(entries))))
        messages, prefix = segment.messages, segment.prefix
        lone: int | None = None  # a message that is one result reads like every other such once cleared
        deltas = []
        for g, k in enumerate(starts):
            i = at[k]
            end = starts[g + 1] if g + 1 < len(starts) else len(entries)
            if len(messages[i].blocks) == 1:
                if lone is None:
                    lone = _count(segment, i, [0], options.placeholder)
                tokens = lone
            else:
                tokens = _count(segment, i, [j for _, j in entries[k:end]], options.placeholder)
            deltas.append(tokens - (prefix[i + 1] - prefix[i]))
        changed = list(accumulate(deltas, initial=0))
        freed = list(accumulate((max(0, -d) for d in deltas), initial=0))
        return Table(segment, options.placeholder, entries, at, starts, group, changed, freed)

    def change(self, k: int) -> int:
        """Counted tokens the segment changes by when its first k results are cleared."""
        if k == 0:
            return 0
        g = self.group[k - 1]
        if k == len(self.entries) or self.group[k] != g:
            return self.changed[g + 1]
        if k not in self.partial:
            start, i = self.starts[g], self.at[k - 1]
            blocks = [j for _, j in self.entries[start:k]]
            whole = self.segment.prefix[i + 1] - self.segment.prefix[i]
            self.partial[k] = self.changed[g] + _count(self.segment, i, blocks, self.placeholder) - whole
        return self.partial[k]

    def newest_output(self, before: int, tokens: int) -> int:
        """The first of the results before entry `before` whose group lies within the
        newest `tokens` of tool output (whole groups)."""
        if before == 0:
            return 0
        last = self.group[before - 1] + 1
        g = bisect_left(self.freed, self.freed[last] - tokens, 0, last)
        return self.starts[g] if g < len(self.starts) else before


def _count(segment: Segment, i: int, blocks: list[int], placeholder: str) -> int:
    """Tokens of message i with `blocks` cleared, without remembering the edit (it goes
    with the plan that made it)."""
    return segment.context.counter.count(cleared(segment.messages[i], blocks, placeholder), remember=False)


def _table(segment: Segment, options: ClearOptions) -> Table:
    key = ("clear", options.tools, options.exclude_tools, options.placeholder)
    return segment.memo(key, Table.of, segment, options)


@immutable()
class Cleared:
    """A history under the clear family: the first `count` of the segment's clearable
    results cleared, which changed its tokens by `saved`."""

    table: Table = field(compare=False, repr=False)
    count: int = 0
    saved: int = 0

    def request(self, segment: Segment, end: int) -> tuple[int, int]:
        return segment.prefix[end] + self.saved, end

    def history(self, segment: Segment, end: int) -> tuple[Message, ...]:
        messages, placeholder = segment.messages, self.table.placeholder
        chosen = _by_message(self.table.entries[: self.count]).items()
        edited = {i: cleared(messages[i], blocks, placeholder) for i, blocks in chosen if i < end}
        return tuple(edited.get(i, m) for i, m in enumerate(messages[:end]))


def _kept_from(segment: Segment, table: Table, end: int, options: ClearOptions) -> tuple[int, list[str]]:
    """The first result of messages[:end] that a keep rule keeps (those before it may be
    cleared), and the rules in words."""
    o, before = options, bisect_left(table.at, end)
    cuts: list[tuple[int, str]] = []
    if o.keep_tool_uses is not None:
        cuts.append((before - o.keep_tool_uses, f"the {counted(o.keep_tool_uses, 'most recent tool use')}"))
    if o.keep_messages is not None:
        cut = bisect_left(table.at, end - o.keep_messages)
        cuts.append((cut, f"results in the newest {o.keep_messages} messages"))
    if o.keep_turns is not None:
        humans = segment.humans
        target = humans[end] - o.keep_turns  # human messages before the first kept turn
        # the turn opens at the human message with `target` before it; fewer turns: all kept
        cut = bisect_left(table.at, bisect_right(humans, target) - 1) if target >= 0 else 0
        turns = "turn" if o.keep_turns == 1 else f"{o.keep_turns} turns"
        cuts.append((cut, f"results in the person's last {turns}"))
    if o.keep_tokens is not None:
        cut = table.newest_output(before, o.keep_tokens)
        cuts.append((cut, f"the newest {o.keep_tokens:,} tokens of tool output"))
    if not cuts:
        return before, []
    # a rule that keeps nothing is not named: "kept none" says it
    return max(0, min(k for k, _ in cuts)), [rule for k, rule in cuts if k < before]


@immutable(eq=False, slots=True)  # one per request of a replay
class ClearPlan:
    """The clear family on messages[:end] after the results `was` cleared."""

    call = NO_CALL

    end: int
    reason: str | None  # always, trigger, idle_gap; None: it does not run now
    clearable: int  # the request's clearable results not yet cleared
    was: Cleared
    stored: Cleared | None  # after it, for a persisted history; None: not kept
    after: Cleared
    tokens_before: int
    tokens: int
    kept_from: int  # after the message of the last result it clears
    clearing: int  # results it clears
    freed: int  # the context tokens it frees, or would free when under clear_at_least
    short: bool  # what it would free is under clear_at_least
    sent: bool = True
    exact: bool = True

    @property
    def messages(self) -> int:
        return self.end

    @property
    def changed(self) -> bool:
        return self.clearing > 0

    def titles(self) -> tuple[str, ...]:
        return _titles(self.clearing) if self.tokens != self.tokens_before else ()

    def changing(self) -> int:
        return int(self.tokens != self.tokens_before)

    def shared(self, previous: ClearPlan | None) -> int | None:
        """The request is the same as the one before up to the first result cleared now
        that was not then (Anthropic: the cache is invalidated from the first cleared
        block on): kept in the history, the first it clears; edited anew per request,
        the first where this request's cleared results and the last one's part."""
        table, now = self.after.table, self.after.count
        then = self.was.count if self.stored is not None or previous is None else previous.after.count
        if now == then:
            return None
        first = min(now, then)
        opening = table.starts[table.group[first]]  # its message's first clearable result
        return table.segment.prefix[table.at[first]] + table.change(opening)


def _reason(options: ClearOptions, segment: Segment, end: int, tokens: int) -> str | None:
    """Why it runs on this request: `always`, the `trigger` reached, the `idle_gap`
    passed; None when it does not."""
    if options.trigger_tokens is not None and segment.meter(end).tokens(tokens) < options.trigger_tokens:
        return None
    if options.idle_gap_minutes is not None:
        idle = idle_minutes(segment.messages, options.now, end)
        return "idle_gap" if idle is not None and idle >= options.idle_gap_minutes else None
    return "trigger" if options.trigger_tokens is not None else "always"


def plan(segment: Segment, end: int, options: ClearOptions, stored: Cleared | None = None) -> ClearPlan:
    table = _table(segment, options)
    was = stored if stored is not None else Cleared(table)
    upto, _ = _kept_from(segment, table, end, options)
    before = bisect_left(table.at, end)
    tokens, _ = was.request(segment, end)
    reason = _reason(options, segment, end, tokens)
    kept = None if not options.persist else was
    if reason is None or upto <= was.count:
        return ClearPlan(end, reason, before - was.count, was, kept, was, tokens, tokens, 0, 0, 0, False)
    change = table.change(upto)
    freed = round((was.saved - change) * segment.meter(end).scale)
    if options.clear_at_least is not None and freed < options.clear_at_least:
        return ClearPlan(end, reason, before - was.count, was, kept, was, tokens, tokens, 0, 0, freed, True)
    after = Cleared(table, upto, change)
    return ClearPlan(
        end, reason, before - was.count, was, after if options.persist else None, after, tokens,
        tokens + change - was.saved, table.at[upto - 1] + 1, upto - was.count, freed, False,
    )  # fmt: skip


@cache
def _titles(cleared: int) -> tuple[str]:
    """The step's title, as an outcome lists it: a replay's thousands of outcomes share
    a few tuples rather than each holding one (they outlive the replay, in its points)."""
    return (f"Clear {counted(cleared, 'old tool result')}",)


def _why(options: ClearOptions, reason: str | None, before: int, idle: float | None) -> str:
    """Why it runs now, in words, as the start of a sentence."""
    if reason == "idle_gap":
        return f"{idle:.0f} minutes idle, past the gap of {options.idle_gap_minutes}" if idle else "Idle"
    if options.trigger_tokens is not None:
        return f"{before:,} tokens reached the trigger of {options.trigger_tokens:,}"
    return "It runs on every request (neither a trigger nor an idle gap is set)"


def run(
    name: str, messages: Sequence[Message], options: ClearOptions, context: Context
) -> CompactionResult[ClearStats]:
    segment, steps = Steps.of(messages, context)
    messages = segment.messages
    p = plan(segment, len(messages), options)
    table = p.after.table
    idle = idle_minutes(messages, options.now) if options.idle_gap_minutes is not None else None
    before = context.meter.tokens(p.tokens_before)
    _, rules = _kept_from(segment, table, len(messages), options)
    kept = f"kept {', '.join(rules)}" if rules else "kept none"
    if p.reason is None:
        if options.trigger_tokens is not None and before < options.trigger_tokens:
            why = f"{before:,} tokens are under the trigger of {options.trigger_tokens:,}."
        else:
            gap = f"{idle:.0f} minutes" if idle is not None else "an unknown time"
            why = f"Only {gap} since the last assistant message; it runs after {options.idle_gap_minutes}."
        steps.add("Not triggered", why, messages)
    elif p.short:
        steps.add(
            "Not enough to clear",
            f"{_why(options, p.reason, before, idle)}, but clearing would free {p.freed:,} tokens, under "
            f"clear_at_least {options.clear_at_least:,}: nothing is cleared.",
            messages,
        )
    elif not p.changed:
        why = (
            f"{counted(p.clearable, 'clearable tool result')}, none older than what is {kept}."
            if p.clearable
            else "No result of a tool it may clear."
        )
        steps.add("Nothing to clear", why, messages)
    else:
        history = p.after.history(segment, len(messages))
        floor = (
            f", above clear_at_least {options.clear_at_least:,}" if options.clear_at_least is not None else ""
        )
        steps.add_planned(
            _titles(p.clearing)[0],
            f"{_why(options, p.reason, before, idle)}: {kept}; cleared {counted(p.clearing, 'result')}, "
            f"{p.freed:,} tokens{floor}, each replaced by “{options.placeholder}”.",
            lambda: history,
            p.tokens,
        )
    final = steps.repair_pairing()
    stats = ClearStats(
        strategy=name,
        triggered=p.reason is not None and p.changed,
        reason=p.reason,
        idle_minutes=round(idle, 1) if idle is not None else None,
        results_clearable=p.clearable,
        results_cleared=p.clearing,
        tokens_freed=p.freed if p.changed else 0,
        messages_before=len(messages),
        messages_after=len(final),
        tokens_before=before,
        tokens_after=steps.context_tokens,
    )
    return CompactionResult(name, final, stats, tuple(steps.steps))


@immutable(kw_only=True)
class ClearStats(StatsRecord):
    strategy: str
    triggered: bool
    reason: str | None  # always, trigger, idle_gap, or None (it does not run now)
    idle_minutes: float | None
    results_clearable: int
    results_cleared: int
    tokens_freed: int
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("reason", "triggered", "results_cleared")


def _fires(options: ClearOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    return options.trigger_tokens is None or tokens >= options.trigger_tokens


def _knob(options: ClearOptions, what: str) -> tuple[str, int] | None:
    """Its trigger in tokens, and what it keeps: tool uses, messages, tokens or turns."""
    if what == TRIGGER:
        return first_set(options, [("trigger_tokens", TOKEN_STEP)])
    return first_set(options, [("keep_tool_uses", 1), ("keep_messages", 1), ("keep_tokens", TOKEN_STEP),
                               ("keep_turns", 1)])  # fmt: skip


FAMILY = Family("clear", ClearOptions, run, plan, _fires, lambda options: options.persist, _knob)

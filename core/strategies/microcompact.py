"""Microcompact (docs/strategies.md#microcompact; Claude Code time-based microcompact, Inspect AI
`CompactionEdit`): clear the content of old tool results, keeping the most recent ones.

Only results of clearable tools (file reads, shells, search, web fetch, edits) are
cleared; the call and the result block stay, so pairing is untouched. Optionally it
runs only after an idle gap since the last assistant message.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from compaction_inspector.core.clearing import CLEARED_TEXT, cleared
from compaction_inspector.core.context import Context
from compaction_inspector.core.model import Message, record
from compaction_inspector.core.segment import Segment
from compaction_inspector.core.strategies.base import CompactionResult, OptionError, Steps
from compaction_inspector.core.strategies.registry import Strategy, check, option
from compaction_inspector.core.timestamps import parse as parse_time

NAME = "microcompact"
CLEARABLE_TOOLS = frozenset(
    {
        # Claude Code
        "Read", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Edit", "MultiEdit", "Write",
        "NotebookEdit", "BashOutput",
        # Codex and other agents
        "shell", "local_shell", "exec_command", "apply_patch", "read_file", "write_file",
        "edit_file", "grep", "glob", "list_dir", "web_fetch", "web_search", "bash",
    }
)  # fmt: skip


@dataclass(frozen=True)
class MicrocompactOptions:
    keep_recent: int = option(5, "the most recent tool results kept intact", minimum=0, label="keep recent")
    idle_gap_minutes: int | None = option(
        None,
        "run only after this many minutes since the last assistant message (default always)",
        kind="int?",
        minimum=1,
        label="idle gap minutes",
    )
    clearable_tools: frozenset[str] = option(
        CLEARABLE_TOOLS, "the tools whose results may be cleared", kind="names", flag=None
    )
    now: str | None = option(
        None, "ISO time of the next request (default the last message's time)", kind="str?", saved=False
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)
        if self.now is not None and parse_time(self.now) is None:
            raise OptionError(f"now must be an ISO 8601 time such as 2026-01-01T12:00:00Z, not {self.now!r}")
        if not self.clearable_tools:
            raise OptionError("clearable_tools must name at least one tool")


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


def _clearable(messages: Sequence[Message], options: MicrocompactOptions) -> list[tuple[int, int]]:
    """(message, block) of each result of a clearable tool not yet cleared. One walk over
    the blocks gathers calls and results; a result is judged after it, so a call after
    it still names it. A repeated call id keeps its first call's name: repair keeps that
    call, and a replay stops at the repeat."""
    names: dict[str, str] = {}
    results: list[tuple[int, int, str]] = []
    for i, m in enumerate(messages):
        for j, b in enumerate(m.blocks):
            if b.type == "tool_use" and b.id is not None:
                names.setdefault(b.id, b.name or "")
            elif b.type == "tool_result" and b.text != CLEARED_TEXT:  # not cleared already
                results.append((i, j, b.tool_use_id or ""))
    clearable = options.clearable_tools
    return [(i, j) for i, j, tid in results if names.get(tid) in clearable]


def _reason(idle: float | None, options: MicrocompactOptions) -> str | None:
    """Why it runs after an idle gap of `idle` minutes: `always` without a gap to wait for."""
    if options.idle_gap_minutes is None:
        return "always"
    return "idle_gap" if idle is not None and idle >= options.idle_gap_minutes else None


def _by_message(positions: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """(message, block) positions as the blocks of each message."""
    grouped: dict[int, list[int]] = {}
    for i, j in positions:
        grouped.setdefault(i, []).append(j)
    return grouped


def _nothing_cleared(segment: Segment, options: MicrocompactOptions) -> Cleared:
    """The segment's clearable results, found once, none cleared: a request's are those
    before its end (a call after a result it names is a pairing problem, where a replay
    makes the messages instead)."""
    table = _clearable(segment.messages, options)
    lone = next((i for i, _ in table if len(segment.messages[i].blocks) == 1), None)
    # a message that is one result reads like every other such once cleared: counted once
    lone_tokens = -1 if lone is None else _count(segment, lone, [0])
    return Cleared(table, [i for i, _ in table], lone_tokens)


@dataclass(frozen=True)
class Cleared:
    """A history under microcompact: the first `count` of the segment's clearable
    results (`table`, their messages `at`) cleared, which changed its tokens by `saved`
    (negative). `lone_tokens` are those of any message that is one result, cleared."""

    table: list[tuple[int, int]] = field(default_factory=list, compare=False, repr=False)
    at: list[int] = field(default_factory=list, compare=False, repr=False)
    lone_tokens: int = -1
    count: int = 0
    saved: int = 0

    def request(self, segment: Segment, end: int) -> tuple[int, int]:
        return segment.prefix[end] + self.saved, end

    def history(self, segment: Segment, end: int) -> tuple[Message, ...]:
        messages = segment.messages
        chosen = _by_message(self.table[: self.count]).items()
        edited = {i: cleared(messages[i], blocks) for i, blocks in chosen if i < end}
        return tuple(edited.get(i, m) for i, m in enumerate(messages[:end]))

    def blocks_of(self, i: int) -> list[int]:
        """The blocks of message i, the last it touched, that it has cleared."""
        k = self.count
        while k > 0 and self.table[k - 1][0] == i:
            k -= 1
        return [j for _, j in self.table[k : self.count]]

    def tokens_cleared(self, segment: Segment, i: int, blocks: list[int]) -> int:
        """Tokens of message i with `blocks` cleared."""
        if self.lone_tokens >= 0 and len(segment.messages[i].blocks) == 1:
            return self.lone_tokens
        return _count(segment, i, blocks)


def _count(segment: Segment, i: int, blocks: list[int]) -> int:
    """Tokens of message i with `blocks` cleared, without remembering the edit (it goes
    with the plan that made it)."""
    return segment.context.counter.count(cleared(segment.messages[i], blocks), remember=False)


@record(eq=False)  # one per request of a replay
class MicrocompactPlan:
    """Microcompact of messages[:end] after the results `was` cleared: clear those of
    the request before its most recent `keep_recent`, if the idle gap allows."""

    end: int
    reason: str | None
    clearable: int  # the request's clearable results not yet cleared
    was: Cleared
    stored: Cleared  # after it
    tokens_before: int
    tokens: int
    kept_from: int  # after the message of the last result it clears
    clearing: int  # results it clears
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


def plan(
    segment: Segment, end: int, options: MicrocompactOptions, stored: Cleared | None = None
) -> MicrocompactPlan:
    was = stored or segment.memo(
        ("microcompact", options.clearable_tools), _nothing_cleared, segment, options
    )
    table, count = was.table, was.count
    before_end = bisect_left(was.at, end)
    upto = before_end - options.keep_recent  # clear those before this
    # without a gap to wait for, idle time does not matter (and finding it walks back)
    reason: str | None = "always"
    if options.idle_gap_minutes is not None:
        reason = _reason(idle_minutes(segment.messages, options.now, end), options)
    tokens, _ = was.request(segment, end)
    if reason is None or upto <= count:
        return MicrocompactPlan(end, reason, before_end - count, was, was, tokens, tokens, 0, 0)
    # Each message's tokens are found from what it was and what it becomes: a replay
    # clears tens of thousands of results without making the edited messages. Only the
    # first message can hold results cleared before (the last the history touched).
    first = table[count][0]
    straddles = count > 0 and table[count - 1][0] == first
    saved = 0
    for i, blocks in _by_message(table[count:upto]).items():
        done = was.blocks_of(i) if straddles and i == first else []
        before = was.tokens_cleared(segment, i, done) if done else segment.prefix[i + 1] - segment.prefix[i]
        saved += was.tokens_cleared(segment, i, done + blocks) - before
    after = Cleared(table, was.at, was.lone_tokens, upto, was.saved + saved)
    kept_from = table[upto - 1][0] + 1
    return MicrocompactPlan(
        end, reason, before_end - count, was, after, tokens, tokens + saved, kept_from, upto - count
    )


@cache
def _titles(cleared: int) -> tuple[str]:
    """The step's title, as an outcome lists it: a replay's thousands of outcomes share
    a few tuples rather than each holding one (they outlive the replay, in its points)."""
    return (f"Clear {cleared} old tool result{'s' if cleared != 1 else ''}",)


def _when(options: MicrocompactOptions, idle: float | None) -> str:
    """Why it clears now: the idle gap it waited for, or that it waits for none."""
    if options.idle_gap_minutes is None:
        return (
            "; with no idle gap set it clears on every request, where Claude Code waits for one "
            "(set idle gap minutes to model it)"
        )
    return (
        f" ({idle:.0f} minutes idle, past the gap of {options.idle_gap_minutes})" if idle is not None else ""
    )


def run(
    messages: Sequence[Message], options: MicrocompactOptions, context: Context
) -> CompactionResult[MicrocompactStats]:
    segment = Segment(messages, context)
    messages = segment.messages
    p = plan(segment, len(messages), options)
    idle = idle_minutes(messages, options.now)
    steps = Steps(messages, context, p.tokens_before)
    if p.reason is None:
        gap = f"{idle:.0f} minutes" if idle is not None else "an unknown time"
        steps.add(
            "Not triggered",
            f"Only {gap} since the last assistant message; it runs after {options.idle_gap_minutes}.",
            messages,
        )
    elif not p.changed:
        steps.add(
            "Nothing to clear",
            f"{p.clearable} clearable tool results, all among the {options.keep_recent} most recent.",
            messages,
        )
    else:
        cleared = p.stored.history(segment, len(messages))
        steps.add_planned(
            _titles(p.clearing)[0],
            f"Results of clearable tools are replaced by “{CLEARED_TEXT}”, keeping the "
            f"{min(options.keep_recent, p.clearable)} most recent intact{_when(options, idle)}.",
            lambda: cleared,
            p.tokens,
        )
    final = steps.repair_pairing()
    stats = MicrocompactStats(
        triggered=p.reason is not None and p.changed,
        reason=p.reason,
        idle_minutes=round(idle, 1) if idle is not None else None,
        results_clearable=p.clearable,
        results_cleared=p.clearing if p.reason is not None else 0,
        keep_recent=options.keep_recent,
        messages_before=len(messages),
        messages_after=len(final),
        tokens_before=context.meter.tokens(p.tokens_before),
        tokens_after=steps.context_tokens,
    )
    return CompactionResult(NAME, final, stats, tuple(steps.steps))


@dataclass(frozen=True, kw_only=True)
class MicrocompactStats:
    strategy: str = NAME
    triggered: bool
    reason: str | None  # always, idle_gap, or None (the gap has not passed)
    idle_minutes: float | None
    results_clearable: int
    results_cleared: int
    keep_recent: int
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("reason", "triggered", "results_cleared")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


STRATEGY = Strategy(
    name=NAME,
    label="Microcompact",
    description="clear old tool results, keep the most recent ones",
    options=MicrocompactOptions,
    run=run,
    plan=plan,
    persists=lambda options: True,
)

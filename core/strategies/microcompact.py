"""Microcompact (SEMANTICS §8; Claude Code time-based microcompact, Inspect AI
`CompactionEdit`): clear the content of old tool results, keeping the most recent ones.

Only results of clearable tools (file reads, shells, search, web fetch, edits) are
cleared; the call and the result block stay, so pairing is untouched. Optionally it
runs only after an idle gap since the last assistant message.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, ClassVar

from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.strategies.base import (
    CompactionResult,
    Context,
    OptionError,
    Outcome,
    Steps,
    Unmodelled,
)
from compaction_inspector.core.strategies.registry import Strategy, check, option
from compaction_inspector.core.tokens import TokenCounter

NAME = "microcompact"
CLEARED_TEXT = "[Old tool result content cleared]"
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
        if not self.clearable_tools:
            raise OptionError("clearable_tools must name at least one tool")


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


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
    finish = _time(now) or _time(messages[end - 1].timestamp if end else None)
    start = _time(last_reply.timestamp) if last_reply else None
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
            elif b.type == "tool_result" and b.text != CLEARED_TEXT:
                results.append((i, j, b.tool_use_id or ""))
    clearable = options.clearable_tools
    return [(i, j) for i, j, tid in results if names.get(tid) in clearable]


def _reason(idle: float | None, options: MicrocompactOptions) -> str | None:
    if options.idle_gap_minutes is None:
        return "always"
    return "idle_gap" if idle is not None and idle >= options.idle_gap_minutes else None


def _cleared(message: Message, blocks: list[int]) -> Message:
    """The message with those result blocks' content cleared."""
    edited = list(message.blocks)
    for j in blocks:
        b = edited[j]
        edited[j] = Block.tool_result(b.tool_use_id or "", CLEARED_TEXT, b.is_error)
    return message.with_blocks(tuple(edited))


def _by_message(positions: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """(message, block) positions as the blocks of each message."""
    grouped: dict[int, list[int]] = {}
    for i, j in positions:
        grouped.setdefault(i, []).append(j)
    return grouped


class _ClearedCounts:
    """Tokens of messages with results cleared, for a replay that does not make them:
    most messages are one result, and all of those read alike once cleared."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.lone: int | None = None

    def count(self, message: Message, blocks: list[int]) -> int:
        """Tokens of `message` with `blocks` cleared."""
        lone = len(message.blocks) == 1
        if lone and self.lone is not None:
            return self.lone
        tokens = self.counter.count(_cleared(message, blocks), remember=False)
        if lone:
            self.lone = tokens
        return tokens


def _clear(
    messages: Sequence[Message], positions: Iterable[tuple[int, int]], counter: TokenCounter
) -> tuple[dict[int, Message], int]:
    """The messages holding the results at (message, block) `positions` with those
    cleared, by index, and the tokens that changes (negative: saved). The counts come
    from the edited messages alone, not from counting the whole request again; the
    edits are not remembered by the counter (they go with the result)."""
    edited: dict[int, Message] = {}
    delta = 0
    for i, blocks in _by_message(positions).items():
        edited[i] = now = _cleared(messages[i], blocks)
        delta += counter.count(now, remember=False) - counter.count(messages[i])
    return edited, delta


@cache
def _titles(cleared: int) -> tuple[str]:
    """The step's title, as an outcome lists it: a replay's thousands of outcomes share
    a few tuples rather than each holding one (they outlive the replay, in its points)."""
    return (f"Clear {cleared} old tool result{'s' if cleared != 1 else ''}",)


def run(messages: Sequence[Message], options: MicrocompactOptions, context: Context) -> CompactionResult:
    messages = tuple(messages)
    clearable = _clearable(messages, options)
    old = clearable[: max(0, len(clearable) - options.keep_recent)]
    idle = idle_minutes(messages, options.now)
    steps = Steps(messages, context)
    reason = _reason(idle, options)

    if reason is None:
        gap = f"{idle:.0f} minutes" if idle is not None else "an unknown time"
        steps.add(
            "Not triggered",
            f"Only {gap} since the last assistant message; it runs after {options.idle_gap_minutes}.",
            messages,
        )
    elif not old:
        steps.add(
            "Nothing to clear",
            f"{len(clearable)} clearable tool results, all among the {options.keep_recent} most recent.",
            messages,
        )
    else:
        edited, delta = _clear(messages, old, context.counter)
        after = list(messages)
        for i, message in edited.items():
            after[i] = message
        cleared = tuple(after)
        steps.add_planned(
            _titles(len(old))[0],
            f"Results of clearable tools are replaced by “{CLEARED_TEXT}”, keeping the "
            f"{min(options.keep_recent, len(clearable))} most recent intact.",
            lambda: cleared,
            steps.tokens + delta,
        )
    final = steps.repair_pairing()
    stats = MicrocompactStats(
        triggered=reason is not None and bool(old),
        reason=reason,
        idle_minutes=round(idle, 1) if idle is not None else None,
        results_clearable=len(clearable),
        results_cleared=len(old) if reason is not None else 0,
        keep_recent=options.keep_recent,
        messages_before=len(messages),
        messages_after=len(final),
        tokens_before=steps.start_tokens,
        tokens_after=steps.tokens,
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


class Replay:
    """Microcompact on every request of a replay (`base.Replay`). It is persisted: the
    history keeps its cleared results, so each request clears only the results that
    fell out of the most recent `keep_recent` since the last one."""

    def __init__(
        self, messages: tuple[Message, ...], options: MicrocompactOptions, context: Context, tail: int
    ):
        self.messages = messages
        self.tail = tail
        self.options = options
        self.context = context
        self.prefix = context.counter.running(messages)
        self.safe = len(messages)
        # found once: a request's clearable results are those before its end (a call
        # after a result it names is a pairing problem, where the replay stops)
        self.clearable = _clearable(messages, options)
        self.at = [i for i, _ in self.clearable]
        self.cleared = 0  # how many of them the history has cleared
        self.blocks_cleared: dict[int, list[int]] = {}  # by message
        self.tokens: dict[int, int] = {}  # of each message edited, as it is now
        self.counts = _ClearedCounts(context.counter)
        self.delta = 0  # tokens the edits saved (negative)

    def request(self, end: int) -> tuple[int, int]:
        return self.prefix[end] + self.delta, end

    def history(self, end: int) -> tuple[Message, ...]:
        messages = self.messages
        edited = {i: _cleared(messages[i], blocks) for i, blocks in self.blocks_cleared.items() if i < end}
        return tuple(edited.get(i, m) for i, m in enumerate(messages[:end]))

    def compact(self, end: int) -> Outcome | None:
        upto = bisect_left(self.at, end) - self.options.keep_recent  # clear those before this
        old = upto - self.cleared
        if old <= 0:
            return None
        if self.options.idle_gap_minutes is not None:  # without a gap, idle time does not matter
            idle = idle_minutes(self.messages, self.options.now, end)  # edits keep their times
            if _reason(idle, self.options) is None:
                return None
        if self.at[upto - 1] >= self.tail:  # the newest to clear is the last to reach it
            raise Unmodelled
        clearing = _by_message(self.clearable[self.cleared : upto])
        self.cleared = upto
        # Only the tokens are needed here (the messages only if `run` takes over, from
        # `history`): a replay clears tens of thousands of results, each message's count
        # found from what it was and what it becomes, without making it.
        delta = 0
        for i, blocks in clearing.items():
            was = self.tokens.get(i)
            if was is None:
                was = self.prefix[i + 1] - self.prefix[i]
            done = self.blocks_cleared.setdefault(i, [])
            done += blocks
            self.tokens[i] = now = self.counts.count(self.messages[i], done)
            delta += now - was
        self.delta += delta
        changed = delta != 0
        tokens = self.prefix[end] + self.delta
        return Outcome(tokens, end, _titles(old) if changed else (), int(changed))


STRATEGY = Strategy(
    name=NAME,
    label="Microcompact",
    description="clear old tool results, keep the most recent ones",
    options=MicrocompactOptions,
    run=run,
    replay=Replay,
    persists=lambda options: True,
    demo=(("step(1)", "Old results are replaced by “[Old tool result content cleared]”.", 4),),
)

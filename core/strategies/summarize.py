"""The summarize family: at a trigger, the head of the history becomes one summary and a
recent tail is kept (docs/strategies.md, "Summarizing the head", names each source).

Anthropic's and OpenAI's server-side compaction, LangChain's `SummarizationMiddleware`,
opencode's overflow, Cline, Roo Code, Gemini CLI, Goose, Aider and Letta are each this
rule with their own settings (`core.strategies.variants`):
- the trigger: tokens, a share of the window (less the output reserved, for the agents
  that count so), a number of messages; any one reached fires, and a share may be
  clamped to a range of tokens;
- the tail kept: tokens, a share of the usable window or of the history, messages, or a
  share of the messages; a tool call and its results are never split;
- the first messages kept at the head, and the person's messages kept in front of the
  summary (all, as OpenAI's standalone compaction returns them, or the last);
- the summary's size, and what the summarize request is sent (tool outputs cut, the span
  trimmed to its newest tokens): that request is the compaction's own call, priced with
  the session.

The summary is written locally and deterministically (`core.replaying.summary`). The result
replaces the stored history, as each of these agents keeps it.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from compaction_inspector.core.measuring.pairing import joins_cleanly
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message, alike_head, immutable, text_message
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies.base import (
    AtPointPlan,
    CompactionResult,
    OptionError,
    StatsRecord,
    Steps,
    finish,
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

KEEP_USER = ("none", "last", "all")
CHARS_PER_TOKEN = 4  # the summary is written to its cap in characters at this rate


def _flag(key: str) -> str:
    return f"--summarize-{key.replace('.', '-').replace('_', '-')}"


def _trigger(key: str, help: str, kind: str = "int?", **how: Any) -> Any:
    return option(None, help, kind=kind, group="trigger", key=key, flag=_flag(f"trigger.{key}"), **how)


def _keep(key: str, help: str, kind: str = "int?", **how: Any) -> Any:
    return option(None, help, kind=kind, group="keep", key=key, flag=_flag(f"keep.{key}"), **how)


@immutable()
class SummarizeOptions:
    trigger_tokens: int | None = _trigger(
        "tokens", "summarize when the context reaches this", minimum=1, label="trigger tok"
    )
    trigger_percent: float | None = _trigger(
        "percent", "... or this % of the context window", kind="number?", label="trigger % window"
    )
    trigger_percent_less_output: float | None = _trigger(
        "percent_less_output", "... or this % of the context window less the output reserved", kind="number?"
    )
    trigger_messages: int | None = _trigger(
        "messages", "... or when the history holds this many messages", minimum=1
    )
    trigger_reserve: int | None = _trigger(
        "reserve",
        "what percent_less_output takes off for output (none: the session agent's reserve)",
        minimum=0,
    )
    trigger_min: int | None = _trigger("min", "a share's trigger is at least this many tokens", minimum=1)
    trigger_max: int | None = _trigger("max", "... and at most this many", minimum=1)
    keep_tokens: int | None = _keep(
        "tokens", "keep the newest messages within this many tokens", minimum=0, label="keep tok"
    )
    keep_percent: float | None = _keep("percent", "... within this % of the usable window", kind="number?")
    keep_history_percent: float | None = _keep(
        "history_percent", "... within this % of the history's tokens", kind="number?"
    )
    keep_messages: int | None = _keep(
        "messages", "... the newest this many messages", minimum=0, label="keep msgs"
    )
    keep_message_percent: float | None = _keep(
        "message_percent", "... the newest this % of the messages", kind="number?"
    )
    keep_min: int | None = _keep("min", "a share's tail is at least this many tokens", minimum=0)
    keep_max: int | None = _keep("max", "... and at most this many", minimum=0)
    keep_first: int = option(
        0, "the first messages kept before the summary", minimum=0, flag=_flag("keep_first")
    )
    keep_user: str = option(
        "none",
        "the person's messages of the summarized span kept in front of the summary",
        kind="choice",
        choices=KEEP_USER,
        flag=_flag("keep_user"),
    )
    summary_tokens: int = option(
        2_750, "the summary's size in tokens (its cap where the agent documents one)", minimum=50,
        label="summary tok", flag=_flag("summary_tokens"),
    )  # fmt: skip
    summarize_tokens: int | None = option(
        None, "the summarize request is sent only the span's newest this many tokens", kind="int?", minimum=1,
        flag=_flag("summarize_tokens"),
    )  # fmt: skip
    tool_output_chars: int | None = option(
        None, "tool outputs are cut to this many characters in the summarize request", kind="int?", minimum=1,
        flag=_flag("tool_output_chars"),
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)
        for name in ("trigger_percent", "trigger_percent_less_output", "keep_percent",
                     "keep_history_percent", "keep_message_percent"):  # fmt: skip
            value = getattr(self, name)
            if value is not None and not 0 < value <= 100:
                key = name.replace("trigger_", "trigger.").replace("keep_", "keep.")
                raise OptionError(f"{key} must be a percent above 0 and at most 100, not {value}")
        tails = [k for k in _TAILS if getattr(self, k) is not None]
        if len(tails) > 1:
            raise OptionError(
                "keep takes one of tokens, percent, history_percent, messages, message_percent, "
                f"not {len(tails)}"
            )


_TAILS = ("keep_tokens", "keep_percent", "keep_history_percent", "keep_messages", "keep_message_percent")


def _clamped(value: float, low: int | None, high: int | None) -> int:
    if low is not None:
        value = max(value, low)
    if high is not None:
        value = min(value, high)
    return int(value)


def _window(window: Window) -> str:
    return f"the {window.context_window:,}-token window"


def _percent_rules(o: SummarizeOptions, window: Window) -> list[tuple[float, int | None, int]]:
    """Each percent trigger set: its share, what it leaves for output (None: the share of
    the whole window), its figure before the clamp."""
    return [
        (share, less, int(window.context_window * share / 100 - (less or 0)))
        for share, less in (
            (o.trigger_percent, None),
            (
                o.trigger_percent_less_output,
                window.reserved_output if o.trigger_reserve is None else o.trigger_reserve,
            ),
        )
        if share is not None
    ]


def trigger(options: SummarizeOptions, window: Window) -> tuple[int | None, str]:
    """The context in tokens at which it fires (None: no token trigger) and the rule in words."""
    o = options
    rules: list[tuple[int, str]] = []
    if o.trigger_tokens is not None:
        rules.append((o.trigger_tokens, f"{o.trigger_tokens:,} tokens"))
    for share, less, raw in _percent_rules(o, window):
        at = _clamped(raw, o.trigger_min, o.trigger_max)
        bounds = f"{raw:,}, clamped to {at:,}" if at != raw else f"{at:,}"
        what = "" if less is None else f" less {less:,} for output"
        rules.append((at, f"{share:g} % of {_window(window)}{what}: {bounds}"))
    if not rules:
        return None, ""
    at, text = min(rules)
    return at, text


def at_tokens(options: SummarizeOptions, tokens: int) -> SummarizeOptions:
    """`options` firing at `tokens` alone, every share unset: where a session's own record
    puts its agent's point (`core.own.evidence`)."""
    return dataclasses.replace(
        options, trigger_tokens=tokens, trigger_percent=None, trigger_percent_less_output=None
    )


def _trigger_at(o: SummarizeOptions, window: Window) -> int | None:
    """`trigger`'s figure alone: asked of every request of a replay, it words nothing,
    and is worked out again only for other options or another window."""
    global _LAST_TRIGGER
    options, was, at = _LAST_TRIGGER
    if options is o and was is window:
        return at
    found = [_clamped(raw, o.trigger_min, o.trigger_max) for _, _, raw in _percent_rules(o, window)]
    if o.trigger_tokens is not None:
        found.append(o.trigger_tokens)
    at = min(found, default=None)
    _LAST_TRIGGER = (o, window, at)
    return at


_LAST_TRIGGER: tuple[SummarizeOptions | None, Window | None, int | None] = (None, None, None)


def _fires(options: SummarizeOptions, tokens: int, messages: int, context: Context, humans: int) -> bool:
    at = _trigger_at(options, context.window)
    return (at is not None and tokens >= at) or (
        options.trigger_messages is not None and messages >= options.trigger_messages
    )


def _tail(segment: Segment, head: int, options: SummarizeOptions) -> tuple[int, str]:
    """Where the kept tail starts, never inside a tool call and its results, and its rule in words."""
    o, end, context = options, len(segment), segment.context
    scale = context.meter.scale
    budget: int | None = None
    if o.keep_tokens is not None:
        budget, rule = o.keep_tokens, f"the newest {o.keep_tokens:,} tokens"
    elif o.keep_percent is not None:
        budget = _clamped(context.window.usable * o.keep_percent / 100, o.keep_min, o.keep_max)
        rule = f"the newest {budget:,} tokens ({o.keep_percent:g} % of the usable window{_bounds(o)})"
    elif o.keep_history_percent is not None:
        budget = _clamped(
            segment.tokens(head, end) * scale * o.keep_history_percent / 100, o.keep_min, o.keep_max
        )
        rule = f"the newest {o.keep_history_percent:g} % of the history ({budget:,} tokens)"
    if budget is not None:
        start = bisect_left(segment.prefix, segment.prefix[end] - budget / scale, head, end)
    elif o.keep_messages is not None:
        start, rule = end - o.keep_messages, f"the newest {o.keep_messages} messages"
    elif o.keep_message_percent is not None:
        kept = int((end - head) * o.keep_message_percent / 100)
        start, rule = end - kept, f"the newest {o.keep_message_percent:g} % of the messages ({kept})"
    else:
        return end, "no tail"
    start = asked = max(start, head)
    if start < end and not segment.messages[start].is_human:
        rounds = segment.round_starts
        opening = rounds[bisect_right(rounds, start) - 1]
        start = max(head, opening)  # inside a response and its tool results: keep it whole
    if budget is not None:
        return start, f"{rule} ({counted(end - start, 'message')})"
    return start, rule + (
        f", widened to {end - start} to keep a call with its results" if start < asked else ""
    )


def _bounds(options: SummarizeOptions) -> str:
    low, high = options.keep_min, options.keep_max
    if low is None and high is None:
        return ""
    return f", within {low or 0:,}-{high:,}" if high is not None else f", at least {low:,}"


def _sent(span: Sequence[Message], options: SummarizeOptions, context: Context) -> tuple[int, str]:
    """The summarize request's input in counted tokens: the span, its tool outputs cut,
    trimmed to its newest tokens; and what was done to it, in words. A cut message keeps
    its counted tokens in proportion to the characters it keeps (counting every cut
    result again would cost a replay a third of counting the session)."""
    cut = options.tool_output_chars
    tokens = context.tokens(span)
    notes = []
    if cut is not None:
        for m in span:
            over = sum(max(0, len(b.text or "") - cut) for b in m.blocks if b.type == "tool_result")
            if over:
                tokens -= round(context.counter.count(m) * over / max(1, m.char_count))
        notes.append(f"tool outputs cut to {cut:,} characters, in proportion")
    if options.summarize_tokens is not None and tokens * context.meter.scale > options.summarize_tokens:
        tokens = int(options.summarize_tokens / context.meter.scale)
        notes.append(f"trimmed to its newest {options.summarize_tokens:,} tokens")
    return tokens, f" ({', '.join(notes)})" if notes else ""


@immutable(kw_only=True)
class SummarizeStats(StatsRecord):
    strategy: str
    triggered: bool
    trigger_tokens: int | None
    trigger_messages: int | None
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    messages_summarized: int
    tokens_summarized: int
    tail_messages: int
    summary_tokens: int
    # the compaction's own call: what the summarize request was sent, and wrote
    summarize_input_tokens: int
    summarize_output_tokens: int

    HIGHLIGHTS: ClassVar[tuple[str, ...]] = ("triggered", "messages_summarized", "tail_messages")


STEP_TITLE = "Summarize the head"


@immutable(eq=False, slots=True)
class _Fired:
    """What firing makes of a history: a summary standing for messages[head:start]
    (None: the tail, by `tail_rule`, already holds everything after the head), the
    person's messages kept in front of it, and its summarize request's input in counted
    tokens (`trimmed`: what was done to it, in words) and output."""

    head: int
    start: int
    tail_rule: str
    kept_users: tuple[Message, ...] = ()
    summary: Message | None = None
    sent: int = 0
    trimmed: str = ""
    summary_counted: int = 0

    def call(self, scale: float) -> tuple[int, int]:
        """Its summarize request's context tokens in and out, at the request's `scale`."""
        return round(self.sent * scale), round(self.summary_counted * scale)


def _fire(
    segment: Segment,
    options: SummarizeOptions,
    context: Context,
    replaced: Callable[[Sequence[Message]], tuple[Message, ...]] = tuple,
) -> _Fired:
    """A firing over `segment`; its summary replaces `replaced(span)`."""
    messages = segment.messages
    head = min(options.keep_first, len(messages))
    start, tail_rule = _tail(segment, head, options)
    span = messages[head:start]
    if not span:
        return _Fired(head, start, tail_rule)
    users = [m for m in span if m.is_human]
    kept_users = users if options.keep_user == "all" else users[-1:] if options.keep_user == "last" else []
    summary = text_message(
        "user",
        context.summary(span, options.summary_tokens * CHARS_PER_TOKEN),
        is_compact_summary=True,
        replaces=replaced(span),
    )
    sent, trimmed = _sent(span, options, context)
    return _Fired(
        head, start, tail_rule, tuple(kept_users), summary, sent, trimmed, context.tokens([summary])
    )


def run(
    name: str, messages: Sequence[Message], options: SummarizeOptions, context: Context
) -> CompactionResult[SummarizeStats]:
    segment, steps = Steps.of(messages, context)
    messages, total = segment.messages, steps.start_tokens
    before = context.meter.tokens(total)
    at, rule = trigger(options, context.window)
    stats = SummarizeStats(
        strategy=name, triggered=False, trigger_tokens=at, trigger_messages=options.trigger_messages,
        messages_before=len(messages), messages_after=len(messages),
        tokens_before=before, tokens_after=before,
        messages_summarized=0, tokens_summarized=0, tail_messages=0, summary_tokens=0,
        summarize_input_tokens=0, summarize_output_tokens=0,
    )  # fmt: skip
    by_tokens = at is not None and before >= at
    by_messages = options.trigger_messages is not None and len(messages) >= options.trigger_messages
    if not (by_tokens or by_messages):
        why = [f"{before:,} tokens are under {rule}" if at is not None else "no token trigger is set"]
        if options.trigger_messages is not None:
            why.append(f"{len(messages)} messages are under {options.trigger_messages}")
        if at is None and options.trigger_messages is None:
            why = ["no trigger is set, so it never fires"]
        steps.add("Not triggered", "; ".join(why).capitalize() + ".", messages)
        return finish(name, steps, stats)
    fired = (
        f"{before:,} tokens reached {rule}"
        if by_tokens
        else f"{len(messages)} messages reached {options.trigger_messages}"
    )
    made = _fire(segment, options, context)
    head, start, summary = made.head, made.start, made.summary
    if summary is None:
        steps.add(
            "Nothing to summarize",
            f"{fired}, but {made.tail_rule} already holds everything after the head.",
            messages,
        )
        return finish(name, steps, dataclasses.replace(stats, triggered=True))
    kept_users = made.kept_users
    after = (*messages[:head], *kept_users, summary, *messages[start:])
    scale = context.meter.scale
    sent, summary_tokens = made.call(scale)
    kept = [f"the first {counted(head, 'message')}"] if head else []
    if kept_users:
        last = options.keep_user == "last"
        kept.append(
            "the person's last message" if last else f"the person's {counted(len(kept_users), 'message')}"
        )
    kept.append(made.tail_rule)
    summarized = round(segment.tokens(head, start) * scale)
    steps.add(
        STEP_TITLE,
        f"{fired}: {start - head} messages ({summarized:,} tokens) become one summary of "
        f"{summary_tokens:,} tokens; kept {', '.join(kept)}. The summarize "
        f"request is sent {sent:,} tokens{made.trimmed}.",
        after,
    )
    return finish(
        name,
        steps,
        stats,
        (sent, summary_tokens),
        triggered=True,
        messages_summarized=start - head,
        tokens_summarized=summarized,
        tail_messages=len(messages) - start,
        summary_tokens=summary_tokens,
        summarize_input_tokens=sent,
        summarize_output_tokens=summary_tokens,
    )


@immutable(eq=False, slots=True)
class Summarized:
    """A history after a summary: `front` (the person's messages kept, the summary, and
    what the tail keeps of the front before: user messages all), then the segment's
    messages from `start` on."""

    front: tuple[Message, ...]
    start: int
    front_tokens: int  # counted

    def request(self, segment: Segment, end: int) -> tuple[int, int]:
        return self.front_tokens + segment.tokens(self.start, end), len(self.front) + end - self.start

    def history(self, segment: Segment, end: int) -> tuple[Message, ...]:
        return (*self.front, *segment.messages[self.start : end])


@immutable(eq=False, slots=True)  # one per summary of a replay
class SummarizePlan:
    """A firing of messages[:end] (after the history `was`, None: the segment's own) as
    `run` makes it: `made`, the history after it (None: it goes as it was), and its
    figures. `exact` where the request it makes needs no pairing repair."""

    segment: Segment
    end: int
    was: Summarized | None
    made: Summarized | None
    tokens: int
    messages: int
    exact: bool
    delta: int = 0  # counted tokens its step changes
    call: tuple[int, int] = (0, 0)
    sent: bool = True

    @property
    def changed(self) -> bool:
        return self.made is not None

    @property
    def kept_from(self) -> int:
        return self.made.start if self.made is not None else 0

    @property
    def stored(self) -> Summarized | None:
        return self.made if self.made is not None else self.was

    def titles(self) -> tuple[str, ...]:
        return (STEP_TITLE,) if self.delta else ()

    def changing(self) -> int:
        return int(self.delta != 0)

    def shared(self, previous: Any) -> int | None:
        """Up to the first message it sends unlike the history before, read on to this
        request's end: past that history's own end, the replay counts it all shared."""
        if self.made is None:
            return None
        segment, end = self.segment, self.end
        before = self.was.history(segment, end) if self.was is not None else segment.messages[:end]
        now = self.made.history(segment, end)
        return segment.context.tokens(now[: alike_head(before, now, segment.members)])


def plan(
    segment: Segment, end: int, options: SummarizeOptions, stored: Summarized | None = None
) -> AtPointPlan | SummarizePlan:
    """What `run` makes of the history `stored` leaves before messages[end], without its
    steps. Made and run instead (not `exact`) where a head is kept, or the segment's
    responses are sent in another order: what repair would do there is not planned."""
    tokens, messages = stored.request(segment, end) if stored is not None else (segment.prefix[end], end)
    meter = segment.meter(end)
    if not _fires(options, meter.tokens(tokens), messages, segment.context, 0):
        return AtPointPlan(tokens, messages, False, exact=True)
    if options.keep_first or not segment.in_order:
        return AtPointPlan(tokens, messages, True, exact=False)
    history = stored.history(segment, end) if stored is not None else segment.messages[:end]
    context = segment.context.at(meter)
    made = _fire(Segment(history, context), options, context, _standing_in)
    front, start = (stored.front, stored.start) if stored is not None else ((), 0)
    if made.summary is None:  # it goes as it was, repaired if it must be
        exact = joins_cleanly(front, segment.messages, start, end) if front else True
        return SummarizePlan(segment, end, stored, None, tokens, messages, exact)
    kept = len(front)  # the history's messages before the segment's
    front = (*made.kept_users, made.summary, *front[made.start :])
    start += max(0, made.start - kept)
    front_tokens = context.tokens(front)
    after = front_tokens + segment.tokens(start, end)
    return SummarizePlan(
        segment,
        end,
        stored,
        Summarized(front, start, front_tokens),
        after,
        len(front) + end - start,
        joins_cleanly(front, segment.messages, start, end),
        after - tokens,
        made.call(context.meter.scale),
    )


def _standing_in(span: Sequence[Message]) -> tuple[Message, ...]:
    """A span as a planned summary replaces it: a summary before it (or an edit) by its
    stand-in, so a replay's summaries do not all live as long as its last one. A replay's
    requests are compared with the transcript's, where neither is; no step of a plan is
    shown, so none compares it with the history before."""
    return tuple(m.standing_in() if m.replaces else m for m in span)


def _knob(options: SummarizeOptions, what: str) -> tuple[str, int] | None:
    """The trigger and the tail a variant sets, each moved by a point or 1,000 tokens."""
    if what == TRIGGER:
        return first_set(options, [("trigger_tokens", TOKEN_STEP), ("trigger_percent", 1),
                                   ("trigger_percent_less_output", 1), ("trigger_messages", 1)])  # fmt: skip
    return first_set(options, [("keep_tokens", TOKEN_STEP), ("keep_percent", 1), ("keep_history_percent", 1),
                               ("keep_messages", 1), ("keep_message_percent", 1)])  # fmt: skip


FAMILY = Family("summarize", SummarizeOptions, run, plan, _fires, lambda options: True, _knob)

"""What a strategy needs besides messages and options: how to count, the window, and how
counted tokens become the context sent. Below the strategies, the segment index and the
context model's users, so none of them imports another to name it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace

from compaction_inspector.core.measuring.context_model import DEFAULT_OVERHEAD_TOKENS, ContextModel, fit
from compaction_inspector.core.measuring.pressure import Meter, Window
from compaction_inspector.core.measuring.tokens import TokenCounter, make_counter
from compaction_inspector.core.model import FileTouch, Message, Session, immutable
from compaction_inspector.core.replaying.retention import Facts
from compaction_inspector.core.replaying.summary import summary_text


@immutable()
class Context:
    """What a strategy needs besides messages and options: how to count, the window,
    and how counted tokens become the context sent.

    `meter` turns the counted tokens of the request `run` is given into the context it
    holds (the identity: messages only). `model`, when the session's context model is
    fitted, gives each request of a replay its own meter (`Segment.meter`)."""

    counter: TokenCounter = field(default_factory=lambda: make_counter("chars4"))
    window: Window = field(default_factory=Window)
    session_id: str | None = None
    meter: Meter = None  # type: ignore[assignment]  # None: the identity meter of `window`
    model: ContextModel | None = field(default=None, compare=False)
    # what the session's file tools left of each file (Claude Code's re-read files)
    touches: Mapping[str, FileTouch] = field(default_factory=dict, compare=False)
    # the user's own summarizer (`core.replaying.summarizer`); None: the local one (`core.replaying.summary`)
    summarizer: Callable[[Sequence[Message], int, str | None], str] | None = None
    # what the session's agent (`counted_by`) counted against its point before each
    # request it recorded a check for (Codex), or that its rule counts (Claude Code): by
    # the first message of the transcript's segment, then the request's end within it. A
    # replay of that agent's own strategy takes this count at a request that is the
    # transcript's own.
    own_counts: Mapping[Message, Mapping[int, int]] = field(default_factory=dict, compare=False)
    counted_by: str | None = field(default=None, compare=False)
    # the session's facts (`retention.Facts`): its own messages' found once for its summaries
    facts: Facts | None = field(default=None, compare=False)

    def recorded(self, messages: Sequence[Message], agent: str) -> Mapping[int, int]:
        """`agent`'s own counts before requests `messages[:end]`, by `end`, where
        `messages` start as a segment of the transcript does and the session is that
        agent's (else none)."""
        if not messages or agent != self.counted_by:
            return {}
        return self.own_counts.get(messages[0], {})

    def own_count(self, messages: Sequence[Message], end: int, agent: str) -> int | None:
        """`agent`'s own count before the request `messages[:end]`, where the transcript
        records it or its rule counts it (`recorded`; None: not here)."""
        return self.recorded(messages, agent).get(end)

    def __post_init__(self) -> None:
        if self.meter is None:
            object.__setattr__(self, "meter", Meter(self.window))
        elif self.meter.window != self.window:
            object.__setattr__(self, "meter", replace(self.meter, window=self.window))

    def tokens(self, messages: Sequence[Message]) -> int:
        """Counted tokens of `messages`."""
        return sum(self.counter.count_all(messages))

    def summary(self, span: Sequence[Message], cap: int) -> str:
        """The summary of `span` within `cap` characters: the user's summarizer's, else ours."""
        if self.summarizer is not None:
            return self.summarizer(span, cap, self.session_id)
        return summary_text(span, cap, self.session_id, self.facts)

    def at(self, meter: Meter) -> Context:
        """This context for a request whose figures `meter` gives."""
        return self if meter == self.meter else replace(self, meter=meter)


def context_of(
    session: Session,
    counter: TokenCounter,
    window: Window,
    pressure: str = "context",
    overhead_tokens: int = DEFAULT_OVERHEAD_TOKENS,
    model: ContextModel | None = None,
    summarizer: Callable[[Sequence[Message], int, str | None], str] | None = None,
    own_counts: Mapping[Message, Mapping[int, int]] | None = None,
    facts: Facts | None = None,
) -> Context:
    """The strategies' context for `session`: its fitted model (`model`, else fitted here),
    and the meter of the request it would send next (the messages after its last compact
    boundary). With `pressure="messages"` the messages-only view: the identity meter and
    no model."""
    if pressure == "messages":
        return Context(
            counter, window, session.session_id, touches=session.touches, summarizer=summarizer, facts=facts
        )
    model = model or fit(session, counter, overhead_tokens)
    meter = model.meter(len(session.messages), window)
    own = own_counts or {}
    return Context(
        counter,
        window,
        session.session_id,
        meter,
        model,
        session.touches,
        summarizer,
        own,
        session.format,
        facts,
    )

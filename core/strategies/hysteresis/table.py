"""Hysteresis's table of a segment: its volleys and, for each candidate (a volley that
opens with a human message), its raw messages, tokens and summaries at every cap, as
prefix sums; and the messages of a request with the first candidates summarized."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from compaction_inspector.core import topic
from compaction_inspector.core.measuring.segment import Segment
from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying.spliced import Spliced
from compaction_inspector.core.replaying.summary import shrink, summarize


def untouchable(m: Message) -> bool:
    return m.is_summary_item or m.role == "system"


def droppable(m: Message) -> bool:
    """An injected meta message, the last thing the third tier gives up."""
    return m.is_meta and not m.is_summary_item and not m.is_tool_result


class Table:
    """The volleys of a segment and, for each candidate (a volley opening with a human
    message), its raw messages and tokens and its summary at every cap. Prefix sums over
    candidates make any run of them O(1) to plan; filled lazily, once per segment."""

    def __init__(self, segment: Segment, caps: list[int]):
        self.messages = messages = segment.messages
        self.context = segment.context
        self._whose = (segment.context.session_id, segment.context.facts)  # a summary's session and its facts
        self.caps = caps
        self.prefix = segment.prefix
        self.starts = segment.volley_starts
        self.candidates = [n for n, i in enumerate(self.starts) if messages[i].is_human]
        self.candidate_of = {n: c for c, n in enumerate(self.candidates)}
        # where the prelude (the volley before the first human message) ends; 0: none
        self.prelude = self.span(0)[1] if self.starts and self.candidate_of.get(0) != 0 else 0
        self.raws: list[tuple[Message, ...]] = []
        self.raw_tokens = [0]  # prefix sums over candidates
        self.raw_messages = [0]
        self.savings_best = [0]  # running maximum of (raw - summary) tokens at the first cap
        self.changing = [0]  # candidates whose summary changes the token count
        self.summary_tokens: list[list[int]] = [[0] for _ in self.caps]  # per cap level
        self._summaries: list[list[Message]] = [[] for _ in self.caps]
        self._titles: dict[tuple[int, int], str] = {}  # by candidate and the number shown
        # the last walk of `build`: (end, level, volleys walked, the messages they became)
        self._last_walk: tuple[int, int, int, list[Message]] | None = None

    def span(self, n: int) -> tuple[int, int]:
        end = self.starts[n + 1] if n + 1 < len(self.starts) else len(self.messages)
        return self.starts[n], end

    def volley_count(self, end: int) -> int:
        """Volleys of the request messages[:end]."""
        return bisect_left(self.starts, end)

    def pre_tail(self, end: int, protect: int) -> int:
        """Candidates of messages[:end] before its protected tail: c < this."""
        return bisect_left(self.candidates, self.volley_count(end) - protect)

    def _fill_raws(self, upto: int) -> None:
        counter = self.context.counter
        while len(self.raws) < upto:
            start, end = self.span(self.candidates[len(self.raws)])
            volley = self.messages[start:end]
            # `untouchable` spelled out: asked of every message of a long session
            raw = tuple([m for m in volley if not (m.is_summary_item or m.role == "system")])
            self.raws.append(raw)
            tokens = self.prefix[end] - self.prefix[start]
            if len(raw) < len(volley):
                tokens -= sum(counter.count(m) for m in volley if untouchable(m))
            self.raw_tokens.append(self.raw_tokens[-1] + tokens)
            self.raw_messages.append(self.raw_messages[-1] + len(raw))

    def fill(self, upto: int, level: int = 0) -> None:
        """Make the prefix sums of candidates below `upto` (at cap `level`) available."""
        sums = self.summary_tokens[level]
        if len(sums) > upto:  # asked again on every request of a replay
            return
        # A replay asks for a candidate or two more, request after request: they are
        # made ahead, in batches that double, for the counter to encode many at once.
        upto = min(len(self.candidates), max(upto, 2 * (len(sums) - 1)))
        self._fill_raws(upto)
        counter = self.context.counter
        self.summary(upto - 1, level)
        counts = counter.count_all(self._summaries[level][len(sums) - 1 : upto])  # one batch
        for n in counts:
            c = len(sums) - 1
            sums.append(sums[-1] + n)
            if level == 0:
                saved = self.raw_tokens[c + 1] - self.raw_tokens[c] - n
                self.savings_best.append(max(self.savings_best[-1], self.raw_tokens[c + 1] - sums[-1]))
                self.changing.append(self.changing[-1] + (saved != 0))

    def summary(self, c: int, level: int) -> Message:
        """Candidate c's summary at cap `level`. A shrunk summary is an edit of the larger
        one, so a diff shows it rewritten rather than replaced."""
        made = self._summaries[level]
        while len(made) <= c:
            k = len(made)
            self._fill_raws(k + 1)
            if level == 0:
                made.append(summarize(self.raws[k], self.caps[0], *self._whose))
            else:
                larger = self.summary(k, level - 1)
                made.append(shrink(larger, self.raws[k], self.caps[level], *self._whose))
        return made[c]

    def title(self, c: int, number: int) -> str:
        title = self._titles.get((c, number))
        if title is None:  # a replay asks for the same few titles request after request
            request = topic.title(self.messages[self.starts[self.candidates[c]]].text, 40)
            title = self._titles[c, number] = f"Summarize volley {number}: “{request}”"
        return title

    def builder(self, end: int, done: int, level: int, dropped: frozenset[Message]) -> Callable[[], Spliced]:
        """What builds a step's messages when it is first shown: the first `done`
        candidates summarized at `level`, `dropped` left out. A run's steps are built one
        after another, so each goes on from the walk of the one before (`_last_walk`)."""

        def made() -> Spliced:
            last, walked = self._last_walk, self._walked(end, done)
            if last is None or last[:2] != (end, level) or last[2] > walked:
                last = (end, level, 0, [])
            # copied, never extended in place: another thread may build from the same walk
            out = self._walk(end, done, lambda c: self.summary(c, level), last[2], list(last[3]))
            self._last_walk = (end, level, walked, out)
            return self._finish(end, out, done, dropped)

        return made

    def build(
        self, end: int, summaries: Sequence[Message], dropped: frozenset[Message]
    ) -> tuple[Message, ...]:
        """messages[:end] with the first candidates replaced by `summaries` (a volley's
        system messages and earlier summaries stay) and `dropped` left out."""
        out = self._walk(end, len(summaries), summaries.__getitem__, 0, [])
        return self._finish(end, out, len(summaries), dropped).messages()

    def _walked(self, end: int, done: int) -> int:
        """The volleys of messages[:end] up to the last of the first `done` candidates:
        only these are walked, the rest is one slice."""
        return min(self.candidates[done - 1] + 1 if done else 0, self.volley_count(end))

    def _walk(
        self, end: int, done: int, summary: Callable[[int], Message], start: int, out: list[Message]
    ) -> list[Message]:
        """`out` (the volleys before `start`, walked) with the walked volleys from `start`
        on, the first `done` candidates as their summaries."""
        for n in range(start, self._walked(end, done)):
            begin, stop = self.span(n)
            volley = self.messages[begin : min(stop, end)]
            c = self.candidate_of.get(n)
            if c is None or c >= done:
                out += volley
                continue
            raw = self.raws[c]  # made with its summary
            if len(raw) == len(volley):  # the usual volley: only its summary stays
                out.append(summary(c))
                continue
            out += [summary(c) if m is raw[0] else m for m in volley if untouchable(m) or m is raw[0]]
        return out

    def _finish(self, end: int, out: list[Message], done: int, dropped: frozenset[Message]) -> Spliced:
        """The walked volleys, then the rest of messages[:end] as one slice; `dropped`
        messages (the prelude's, never in a summarized volley) left out once."""
        walked = self._walked(end, done)
        rest = self.starts[walked] if walked < len(self.starts) else end
        return Spliced(tuple(out), self.messages, min(rest, end), end, dropped)

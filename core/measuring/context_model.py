"""The context the agent actually sent (docs/pressure.md): measured where the transcript
reports it, estimated from the last measurement elsewhere.

Every API response reports the prompt it was sent, which holds what the transcript never
shows (system prompt, tool definitions, injected reminders) and is counted by the model's
own tokenizer. So the context at a point of the transcript is:

- at a response: its reported prompt (measured);
- after one: that prompt + its output + `scale` × the counted tokens since (anchored);
- before the first in its segment: `overhead` + `scale` × the counted tokens so far.

`scale` (real tokens per counted token) is fitted per session on consecutive responses
inside one segment; `overhead` is what the first response holds beyond its messages.
Without any reported usage the overhead is the request body's own system prompt and tools
when it has them, else a preset, with scale 1: an estimate, and labelled one.

Each point's figure is `offset + scale × counted`, the counted tokens being those of the
segment's messages up to it: a strategy that removes or inserts messages moves the figure
by `scale` × what it removed or inserted (`Meter`), and the offset stays. The offset is
never less than the overhead: where a response reports less than the overhead and the
scaled messages (the transcript holds more than was sent, such as tool outputs the agent
cut before sending), that point's messages stand for what the report leaves them, so no
step can remove the system prompt and tools.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import accumulate
from typing import Any, Literal

from compaction_inspector.core.measuring.held import held_output
from compaction_inspector.core.measuring.pressure import Meter, Window
from compaction_inspector.core.measuring.slices import Read, is_slice, sibling_overhead
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Message, Session, Usage, immutable, text_message
from compaction_inspector.core.replaying.clearing import cleared_results

# The baseline prompt and tools assumed where neither the user nor the session's agent
# gives one: the one figure an agent publishes, Codex's (docs/pressure.md).
DEFAULT_OVERHEAD_TOKENS = 12_000
MIN_PAIRS = 3  # consecutive responses needed to fit a scale; fewer: scale 1
OUTLIER_MADS = 3.0  # a pair this many robust deviations off the fit is left out of it

Source = Literal["measured", "estimated"]


@immutable(slots=True)
class Response:
    """One API response the transcript reports: the request of the messages before
    `start` was sent, and `prompt_tokens` is what it held."""

    number: int  # 1-based, in transcript order
    start: int  # index of its first line (the request is messages[:start])
    end: int  # after its last line
    usage: Usage  # as its last line reported it (the whole output)

    @property
    def prompt_tokens(self) -> int:
        return self.usage.prompt_tokens

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens


def responses(session: Session) -> list[Response]:
    """The responses that report a prompt, each once (a streamed reply's lines share its
    message id and request id and repeat its usage, the output as far as it had got). A
    request body's logged response reports the prompt of the whole body."""
    messages = session.messages
    found: dict[tuple[str | None, str | None], list[Any]] = {}
    for i, m in enumerate(messages):
        if m.role != "assistant" or m.replaces:  # a kept copy (`preservedSegment`) reports nothing
            continue
        key = (m.id, m.request_id)
        seen = found.get(key)
        if seen is None:
            found[key] = [i, i + 1, m.usage]
        else:  # lines written while streaming: the last carries the whole output
            seen[1] = i + 1
            if m.usage is not None and (seen[2] is None or m.usage.output_tokens >= seen[2].output_tokens):
                seen[2] = m.usage
    reported = [(s, e, u) for s, e, u in found.values() if u is not None and u.prompt_tokens > 0]
    out = [Response(n, s, e, u) for n, (s, e, u) in enumerate(reported, 1)]
    usage = session.request_usage
    if usage is not None and usage.prompt_tokens > 0:
        end = len(messages)
        out.append(Response(len(out) + 1, end, end, usage))
    return out


@immutable(slots=True)
class Prediction:
    """What the model says of one response's prompt without that response's report."""

    response: Response
    estimated: int
    anchored: bool  # from the response before it in its segment (else from the overhead)

    @property
    def error(self) -> float:
        """Relative to what the response reported."""
        return abs(self.estimated - self.response.prompt_tokens) / self.response.prompt_tokens


@immutable(slots=True)
class Reading:
    """The context at one point and where the figure comes from."""

    tokens: int
    source: Source
    response: Response | None  # the measurement it stands on, if any
    output_tokens: int  # of that response, when the point is after it: the larger of reported and held
    estimated_since: int  # scale × counted tokens added since (or since the start)
    overhead: int  # outside the messages: system prompt and tools (the session's overhead)
    messages: int  # what the messages sent stand for, attachments apart
    attachments: int  # what the attachments sent stand for
    overhead_source: str = "preset"  # of the model's overhead, when nothing is measured
    preamble: tuple[tuple[str, int], ...] = ()  # a request body's system prompt and tools, counted
    unrecorded: int = 0  # sent beyond the overhead and the transcript's messages (reminders, encrypted items)
    shrunk: bool = False  # the report is less than the scaled messages: they stand for what it leaves

    @property
    def exact(self) -> bool:
        """The figure is a response's own report."""
        return self.response is not None and self.estimated_since == 0 and self.output_tokens == 0

    def provenance(self) -> str:
        """Where the figure comes from, in words."""
        r = self.response
        if r is None:
            why = (
                "the transcript reports no usage"
                if self.overhead_source.startswith("preset") or self.overhead_source == "request body"
                else "no response since its last compaction reports usage"
            )
            return (
                f"estimated: ~{self.overhead:,} overhead ({self.overhead_source}) "
                f"+ ~{self.estimated_since:,} for the messages ({why})"
            )
        text = f"measured {r.prompt_tokens:,} at response {r.number}"
        if self.output_tokens > r.output_tokens:  # its lines hold more than they report: estimated
            text += f" + ~{self.output_tokens:,} its reply as written ({r.output_tokens:,} reported)"
        elif self.output_tokens:
            text += f" + {self.output_tokens:,} output"
        if self.estimated_since:
            text += f" + ~{self.estimated_since:,} estimated since"
        return text

    def parts(self) -> dict[str, int]:
        """The breakdown, whose parts sum to `tokens`: the same in text, JSON and app."""
        return {
            "overhead": self.overhead,
            "messages": self.messages,
            "attachments": self.attachments,
            "unrecorded": self.unrecorded,
        }

    def after(self, tokens: int) -> Reading:
        """This reading once a step has moved the context to `tokens`: what is outside the
        messages stays; the messages and attachments hold the rest (attachments first as
        they were, so a step that removes messages takes them from the messages)."""
        rest = max(0, tokens - self.overhead - self.unrecorded)
        attachments = min(self.attachments, rest)
        return replace(self, tokens=tokens, messages=rest - attachments, attachments=attachments)

    def holds(self) -> str:
        """What the context holds, in words."""
        if self.preamble:  # a request body: its own system prompt and tools, counted
            parts = " + ".join(f"{label} {tokens:,}" for label, tokens in self.preamble)
            rest = self.overhead - sum(tokens for _, tokens in self.preamble)
            missed = f"; {rest:+,} the count misses" if rest else ""
            outside = f"outside the messages {self.overhead:,} ({parts}, counted{missed})"
        else:
            outside = f"outside the messages {self.overhead:,} (system prompt, tools)"
        text = f"{outside} · messages {self.messages:,}"
        if self.shrunk:
            text += " (what the report leaves them: the transcript holds more than was sent)"
        text += f" · attachments {self.attachments:,}" if self.attachments else ""
        return text + (f" · not in the transcript {self.unrecorded:,}" if self.unrecorded else "")


@dataclass(eq=False)
class ContextModel:
    """A session's fitted context model (see the module's docstring). Made by `fit`."""

    prefix: list[int]  # [i]: counted tokens of messages[:i]
    attached: list[int]  # [i]: counted tokens of the attachments among messages[:i]
    segment_starts: list[int]  # where each segment begins (0, then after each boundary)
    responses: tuple[Response, ...]
    scale: float
    pairs: int  # consecutive responses the scale was fitted on (0: the fallback 1.0)
    overhead: int
    overhead_source: str  # "first response", "request body" or "preset"
    preamble: tuple[tuple[str, int], ...]  # a request body's system prompt and tools, counted
    predictions: tuple[Prediction, ...]
    # the context the transcript's own compactions recorded before them, by boundary index
    compactions: dict[int, int]
    _anchors: list[int] = field(repr=False)
    _offsets: list[float] = field(repr=False)
    _scales: list[float] = field(repr=False)
    _held: dict[int, float] = field(repr=False)  # the offset a request a compaction replaced held
    _responses_at: list[Response | None] = field(repr=False)
    _after: list[bool] = field(repr=False)
    _outputs: list[int] = field(repr=False)  # after a response: the output its request holds
    _meters: dict[tuple[int, Window], Meter] = field(default_factory=dict, repr=False)

    @property
    def source(self) -> Source:
        return "measured" if self.responses else "estimated"

    @cached_property  # the gauge asks on every step
    def next_response_error(self) -> float | None:
        """Median relative error of each response's prompt predicted from the one before."""
        errors = [p.error for p in self.predictions if p.anchored]
        return statistics.median(errors) if errors else None

    def segment_start(self, end: int) -> int:
        return _segment_start(self.segment_starts, end)

    def _anchor(self, end: int) -> int:
        return bisect_right(self._anchors, end) - 1

    def tokens(self, end: int, held: bool = False) -> int:
        """The context of the request messages[:end] as the transcript has it; with
        `held`, as `meter` holds it where the agent compacted."""
        return self.meter(end, None, held).tokens(self.prefix[end] - self.prefix[self.segment_start(end)])

    def meter(self, end: int, window: Window | None, held: bool = True) -> Meter:
        """The meter of the request messages[:end]: its counted tokens (from its segment's
        start) to the context it holds; with `held`, at least what the agent recorded
        there when a compaction of its own replaced that request."""
        if held and end in self._held:
            return Meter(window or Window(), self._held[end], self.scale)
        k = self._anchor(end)
        key = (k, window or Window())
        made = self._meters.get(key)
        if made is None:
            made = self._meters[key] = Meter(
                key[1],
                self._offsets[k] if k >= 0 else self.overhead,
                self._scales[k] if k >= 0 else self.scale,
            )
        return made

    def reading(self, end: int) -> Reading:
        start = self.segment_start(end)
        k = self._anchor(end)
        response = self._responses_at[k] if k >= 0 else None
        after = self._after[k] if k >= 0 else False
        meter = self.meter(end, None, held=False)
        counted = self.prefix[end] - self.prefix[start]
        tokens = meter.tokens(counted)
        attachments = round(meter.scale * (self.attached[end] - self.attached[start]))
        overhead = min(self.overhead, round(meter.overhead))
        unrecorded = round(meter.overhead) - overhead
        messages = max(0, tokens - overhead - unrecorded - attachments)
        output = self._outputs[k] if response is not None and after else 0
        since = tokens - (response.prompt_tokens + output if response is not None else self.overhead)
        return Reading(
            tokens,
            "measured" if response is not None else "estimated",
            response,
            output,
            since,
            overhead,
            messages,
            attachments,
            self.overhead_source,
            self.preamble,
            unrecorded,
            meter.scale < self.scale,
        )

    def describe_fit(self) -> str:
        """What the scale rests on, and how well it predicts, in words."""
        if self.pairs:
            text = f"×{self.scale:.2f} per counted token, fitted on {self.pairs} response pairs"
        else:
            text = "×1 per counted token (too few responses to fit)"
        error = self.next_response_error
        return text + (f" · next-response error {error:.2%}" if error is not None else "")


def fit(
    session: Session,
    counter: TokenCounter,
    overhead_tokens: int = DEFAULT_OVERHEAD_TOKENS,
    carried: Callable[[], tuple[int, str] | None] | None = None,
    read: Read | None = None,
) -> ContextModel:
    """The session's context model; `overhead_tokens` is the preset overhead used when
    the session reports no usage and carries no system prompt or tools of its own, with
    what `carried()` gives (tokens, and what) where files on this machine say what else
    every request carries (`Agent.carried`; asked only then). A slice's overhead is read
    from a complete session beside it with `read` (`Formats.load_text`), where given."""
    messages = session.messages
    counts = counter.count_all(messages)
    prefix = list(accumulate(counts, initial=0))
    attached = list(
        accumulate((n if m.attachment else 0 for m, n in zip(messages, counts, strict=True)), initial=0)
    )
    starts = [0, *(i + 1 for i, m in enumerate(messages) if m.is_compact_boundary)]
    found = responses(session)

    owns = [_own(messages, prefix, r) for r in found]
    cleared = _microcompactions(session, counter, starts)
    pairs = _pairs(found, owns, prefix, starts, cleared)
    fitted = _Fit.of([(x, y) for _, x, y in pairs])
    scale = fitted.slope
    preamble = tuple((label, counter.count(text_message("system", text))) for label, text in session.preamble)

    def preset(why: str) -> tuple[int, str]:
        extra = carried() if carried is not None else None
        if extra is None:
            return overhead_tokens, why
        if not extra[0]:
            return overhead_tokens, f"{why}; {extra[1]}"
        return overhead_tokens + extra[0], f"{why}, with {extra[1]} ({extra[0]:,})"

    if is_slice(session):  # its first response holds history the file does not
        beside = sibling_overhead(session, counter, scale, read) if read is not None else None
        overhead, overhead_source = beside or preset(
            "preset: this file is a slice, so its first response holds earlier history"
        )
    elif found:
        first = found[0]
        counted = prefix[first.start] - prefix[_segment_start(starts, first.start)]
        overhead, overhead_source = max(0, round(first.prompt_tokens - scale * counted)), "first response"
    elif preamble:
        overhead, overhead_source = sum(n for _, n in preamble), "request body"
    else:
        overhead, overhead_source = preset("preset")

    anchors = _anchors(found, owns, overhead, prefix, starts, scale, cleared)
    meters = [_floored(offset, scale, counted, overhead) for _, offset, _, _, counted, _ in anchors]
    first_overhead = sum(n for _, n in preamble) or overhead_tokens  # the very first response's
    return ContextModel(
        prefix=prefix,
        attached=attached,
        segment_starts=starts,
        responses=tuple(found),
        scale=scale,
        pairs=len(fitted.kept),
        overhead=overhead,
        overhead_source=overhead_source,
        preamble=preamble,
        predictions=_predictions(found, pairs, fitted, overhead, first_overhead, prefix, starts),
        compactions={c.index: c.pre_tokens for c in session.compactions if c.pre_tokens is not None},
        _anchors=[a[0] for a in anchors],
        _offsets=[m[0] for m in meters],
        _scales=[m[1] for m in meters],
        _held=_held(session, anchors, meters, prefix, starts, scale),
        _responses_at=[a[2] for a in anchors],
        _after=[a[3] for a in anchors],
        _outputs=[a[5] for a in anchors],
    )


def _own(messages: Sequence[Message], prefix: list[int], r: Response) -> int:
    """Counted tokens of the response's own lines (its output stands for them)."""
    first = messages[r.start] if r.start < len(messages) else None
    key = (first.id, first.request_id) if first is not None else None
    return sum(
        prefix[i + 1] - prefix[i]
        for i in range(r.start, r.end)
        if messages[i].role == "assistant" and (messages[i].id, messages[i].request_id) == key
    )


def _segment_start(starts: list[int], i: int) -> int:
    """Where the segment holding messages[i] starts (`starts`: each segment's)."""
    return starts[bisect_right(starts, i) - 1]


def _pairs(
    found: Sequence[Response],
    owns: Sequence[int],
    prefix: list[int],
    starts: list[int],
    cleared: Sequence[tuple[int, int]],
) -> list[tuple[int, float, float]]:
    """Consecutive responses of one segment: what the second added over the first's
    prompt and output, against the counted tokens of what came between (less its own
    lines, `owns`, and what a microcompaction between them cleared), by the second's index."""
    pairs: list[tuple[int, float, float]] = []
    for k in range(1, len(found)):
        r, s = found[k - 1], found[k]
        if _segment_start(starts, r.start) == _segment_start(starts, s.start):
            x = prefix[s.start] - prefix[r.start] - owns[k - 1]
            x -= sum(n for i, n in cleared if r.start <= i < s.start)
            pairs.append((k, float(x), float(s.prompt_tokens - r.prompt_tokens - r.output_tokens)))
    return pairs


_Anchor = tuple[int, float, "Response | None", bool, int, int]


def _anchors(
    found: Sequence[Response],
    owns: Sequence[int],
    overhead: int,
    prefix: list[int],
    starts: list[int],
    scale: float,
    cleared: Sequence[tuple[int, int]],
) -> list[_Anchor]:
    """Where the model reads from: each segment's start (the overhead), each response's
    request (its report), and after its first line (its report and output, less its own
    lines' counted tokens, `owns`); each with its offset, its response, whether it is
    after it, the counted tokens its offset was taken at, and the output it holds."""
    anchors: list[_Anchor] = [(s, float(overhead), None, False, 0, 0) for s in starts]
    for r, own_tokens in zip(found, owns, strict=True):
        base = prefix[r.start] - prefix[_segment_start(starts, r.start)]
        anchors.append((r.start, r.prompt_tokens - scale * base, r, False, base, 0))
        if r.end > r.start:
            output = held_output(r.output_tokens, scale * own_tokens)
            after = r.prompt_tokens + output - scale * (base + own_tokens)
            anchors.append((r.start + 1, after, r, True, base + own_tokens, round(output)))
    anchors.sort(key=lambda a: a[0])  # stable: at one index, a response's anchor wins
    # once a request holds a microcompaction's marker, the cleared results have left the
    # context: the anchor in force before it, less what they held (a response's own
    # anchor at the same place still wins)
    for i, n in cleared:
        k = bisect_left([a[0] for a in anchors], i + 1)
        _, offset, response, after_it, _, output_k = anchors[k - 1]
        counted_at = prefix[i + 1] - prefix[_segment_start(starts, i)]
        anchors.insert(k, (i + 1, offset - scale * n, response, after_it, counted_at, output_k))
    return anchors


def _held(
    session: Session,
    anchors: Sequence[_Anchor],
    meters: Sequence[tuple[float, float]],
    prefix: list[int],
    starts: list[int],
    scale: float,
) -> dict[int, float]:
    """The request a compaction replaced held at least what the agent recorded before it
    (its own count, which includes what came after the last response): a replay's meter
    of that request says so, by the compaction's index; the model's own figure there
    (`tokens`, `reading`) does not."""
    held: dict[int, float] = {}
    at = [a[0] for a in anchors]
    for c in session.compactions:
        if c.kind == "microcompact" or c.pre_tokens is None:
            continue
        offset_k, scale_k = meters[bisect_right(at, c.index) - 1]
        counted_at = prefix[c.index] - prefix[_segment_start(starts, c.index)]
        if round(offset_k + scale_k * counted_at) < c.pre_tokens:
            held[c.index] = c.pre_tokens - scale * counted_at
    return held


def _predictions(
    found: Sequence[Response],
    pairs: Sequence[tuple[int, float, float]],
    fitted: _Fit,
    overhead: int,
    first_overhead: int,
    prefix: list[int],
    starts: list[int],
) -> tuple[Prediction, ...]:
    """Each response predicted as the model would have before it: from the response
    before it at a scale fitted without their pair, else (the first of its segment) from
    the overhead (`first_overhead` for the very first)."""
    predictions = []
    by_pair = {k: n for n, (k, _, _) in enumerate(pairs)}
    for k, r in enumerate(found):
        if k in by_pair:
            between = pairs[by_pair[k]][1]
            before = found[k - 1]
            pair_scale = fitted.without(by_pair[k])
            estimate = before.prompt_tokens + before.output_tokens + pair_scale * between
            predictions.append(Prediction(r, round(estimate), True))
        else:
            base_overhead = overhead if k > 0 else first_overhead
            counted = prefix[r.start] - prefix[_segment_start(starts, r.start)]
            predictions.append(Prediction(r, round(base_overhead + fitted.slope * counted), False))
    return tuple(predictions)


def _floored(offset: float, scale: float, counted: int, overhead: int) -> tuple[float, float]:
    """An anchor's (offset, scale), the offset kept at the overhead or above: where the
    report is less than the overhead and `scale` × the `counted` tokens, the counted
    messages stand for what the report leaves them; where it is not even the overhead,
    the overhead is not what this request held, and both share the report."""
    if offset >= overhead:
        return offset, scale
    total = offset + scale * counted  # what the anchor's request held
    if total > overhead:
        return float(overhead), (total - overhead) / counted
    if total <= 0:
        return 0.0, scale
    share = total / (overhead + scale * counted)
    return overhead * share, scale * share


def _microcompactions(session: Session, counter: TokenCounter, starts: list[int]) -> list[tuple[int, int]]:
    """Each microcompaction the transcript records, as (index of its marker, counted
    tokens its cleared results held beyond the placeholder, and the marker's own: it is
    the transcript's note, never sent), in order."""
    found = []
    for c in session.compactions:
        if c.kind != "microcompact" or not c.cleared:
            continue
        ids = frozenset(c.cleared)
        start = starts[bisect_right(starts, c.index) - 1]
        removed = counter.count(session.messages[c.index])
        for m in session.messages[start : c.index]:
            if m.is_tool_result and (edited := cleared_results(m, ids)) is not None:
                removed += counter.count(m) - counter.count(edited, remember=False)
        found.append((c.index, removed))
    return found


@immutable()
class _Fit:
    """The least-squares slope through the origin of y on x, refitted without the points
    more than OUTLIER_MADS robust deviations off; 1.0 with fewer than MIN_PAIRS points
    or no positive slope. `kept`: the indices of the points it rests on."""

    points: Sequence[tuple[float, float]]
    kept: frozenset[int]
    slope: float
    sxx: float
    sxy: float

    @staticmethod
    def of(points: Sequence[tuple[float, float]]) -> _Fit:
        usable = [i for i, (x, _) in enumerate(points) if x > 0]
        if len(usable) < MIN_PAIRS:
            return _Fit(points, frozenset(), 1.0, 0.0, 0.0)
        kept = usable
        for _ in range(3):
            slope = _Fit._slope(points, kept)
            residuals = [abs(points[i][1] - slope * points[i][0]) for i in usable]
            spread = 1.4826 * statistics.median(residuals)
            if spread == 0:
                break
            refit = [i for i, r in zip(usable, residuals, strict=True) if r <= OUTLIER_MADS * spread]
            if len(refit) < MIN_PAIRS or refit == kept:
                break
            kept = refit
        sxx = sum(points[i][0] ** 2 for i in kept)
        sxy = sum(points[i][0] * points[i][1] for i in kept)
        if sxy <= 0:
            return _Fit(points, frozenset(), 1.0, 0.0, 0.0)
        return _Fit(points, frozenset(kept), sxy / sxx, sxx, sxy)

    @staticmethod
    def _slope(points: Sequence[tuple[float, float]], kept: list[int]) -> float:
        return sum(points[i][0] * points[i][1] for i in kept) / sum(points[i][0] ** 2 for i in kept)

    def without(self, i: int) -> float:
        """The slope fitted with point `i` left out (1.0 if too few would remain)."""
        if i not in self.kept:
            return self.slope
        if len(self.kept) - 1 < MIN_PAIRS:
            return 1.0
        x, y = self.points[i]
        sxx, sxy = self.sxx - x * x, self.sxy - x * y
        return sxy / sxx if sxx > 0 and sxy > 0 else 1.0

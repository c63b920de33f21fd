"""The transcript's own compactions as events (docs/pressure.md): what the agent sent
just before and after each, what our context model predicts of the context after it,
where the session's preset would have fired, and what its summary kept.

A Claude Code compaction is its `compact_boundary`, the summary after it and the
re-injected context (attachment lines in newer versions); a Codex one is its
`compacted` line, with the `replacement_history` that became the context. Before and
after are the prompts the nearest responses reported.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.rules import PutBack, Rules
from compaction_inspector.core.measuring.context_model import ContextModel, Response
from compaction_inspector.core.measuring.grouping import api_round_starts
from compaction_inspector.core.measuring.slices import is_slice
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import ENCRYPTED_SUMMARY, Compaction, Message, Session, immutable
from compaction_inspector.core.own.autocompact import Count
from compaction_inspector.core.own.calibration import Siblings
from compaction_inspector.core.own.counts import AgentCounts, agent_counts, last_response
from compaction_inspector.core.pricing.own_calls import CompactionCost, compaction_costs
from compaction_inspector.core.replaying.retention import Facts, Retention, retention
from compaction_inspector.core.replaying.summary import MIN_SUMMARY_CHARS, summarize

OUR_SUMMARY_CHARS = 2_000  # our local summary's cap where the agent's own summary is not in the file
OWN = "own compactions"  # the name the transcript's own compactions go by, stepped as a result
# `Compaction.to_dict`'s keys a `RealCompaction` gives already, or as a list of its own
_SHOWN_APART = frozenset({"index", "kind", "trigger", "pre_tokens", "post_tokens", "cleared", "tokens_saved"})


@immutable()
class Part:
    """One part of the context predicted after a compaction, and where it comes from."""

    name: str
    tokens: int
    source: str
    # where the transcript cannot decide the figure: the least and the most it can be, and why
    low: int | None = None
    high: int | None = None
    unknown: str = ""
    open_above: bool = False  # no most can be said: the transcript does not hold what it sent

    @property
    def span(self) -> tuple[int, int]:
        return (self.low, self.high) if self.low is not None and self.high is not None else (self.tokens,) * 2

    @property
    def unsure(self) -> bool:
        low, high = self.span
        return low != high or self.open_above

    def line(self) -> str:
        """ "22,204 put back: … (estimated …; 18,100-26,900: which files …)"."""
        low, high = self.span
        most = "or more" if self.open_above else f"-{high:,}"
        unsure = f"; {low:,} {most}: {self.unknown}".replace(" -", "-") if self.unsure else ""
        return f"{self.tokens:,} {self.name} ({self.source}{unsure})"

    def to_dict(self) -> dict[str, Any]:
        low, high = self.span
        return {
            "name": self.name,
            "tokens": self.tokens,
            "source": self.source,
            "range": [low, None if self.open_above else high] if self.unsure else None,
            **({"unknown": self.unknown} if self.unsure else {}),
        }


def said_range(span: tuple[int, int | None]) -> str:
    """ "64,952-76,354", or "64,952 or more" where no most can be said."""
    low, high = span
    return f"{low:,} or more" if high is None else f"{low:,}-{high:,}"


@immutable()
class RealCompaction:
    """One compaction the transcript records: a full one, or a microcompaction that
    cleared some tool results and kept the rest."""

    compaction: Compaction
    line: int | None
    replaced: tuple[int, int]  # the messages it replaced: its segment before the boundary
    after: tuple[int, int]  # the context after it, up to the first request sent after it
    measured_before: int | None  # the last prompt reported before it
    measured_after: int | None  # the first prompt reported after it (None: another compaction came first)
    predicted_after: (
        int | None
    )  # the model's context after it, from what the transcript holds (None: cannot be)
    reread_tokens: int  # of that, what Claude Code puts back that the transcript does not record
    policy_round_offset: int | None  # rounds the preset's rule fires before it (auto only)
    retention: Retention | None  # of its summary (None: the summary is not in the transcript)
    ours: Retention | None  # of our local summary of the same span (None: a microcompaction)
    slice: bool = False  # the file is a slice of a longer session: its figures are estimates
    overhead_source: str = "first response"  # where the prediction's overhead comes from
    # a microcompaction: how many of the results it cleared the file holds (None: a full compaction)
    cleared_found: int | None = None
    # the count the agent compared with its point just before it (None: the transcript does not say)
    count: Count | None = None
    cost: CompactionCost | None = None  # what it cost: its summarize request, the cache sent again
    parts: tuple[Part, ...] = ()  # what `predicted_after` is made of, each with its source
    calibrated: bool = False  # its fixed part was measured after an earlier compaction, here or beside it
    # where its calibration came from, why it was not calibrated, or why it cannot be predicted
    calibration: str = ""
    # what was measured after it over our prediction before any calibration (None: not measured)
    residual: int | None = None

    @property
    def parts_line(self) -> str:
        """ "41,993 fixed part (…) + 5,047 its summary (read) + …", summing to `predicted_after`."""
        return " + ".join(p.line() for p in self.parts)

    @property
    def predicted_line(self) -> str:
        """ "72,354", or "72,354 (68,952-72,354)" where a part is not known from the transcript."""
        if self.predicted_after is None:
            return "—"
        span = self.predicted_range
        return f"{self.predicted_after:,}" + (f" ({said_range(span)})" if span else "")

    @property
    def predicted_range(self) -> tuple[int, int | None] | None:
        """The least and the most the context after it can be where a part of the
        prediction is not known from the transcript (None: every part is; a most of None:
        a part has no most, as what the agent sent is not recorded)."""
        spans = [p.span for p in self.parts]
        low, high = sum(lo for lo, _ in spans), sum(hi for _, hi in spans)
        if any(p.open_above for p in self.parts):
            return low, None
        return (low, high) if low != high else None

    @property
    def kind(self) -> str:
        return self.compaction.kind

    @property
    def recorded_line(self) -> str:
        """What newer versions record of it beyond its counts, in words ("" if nothing):
        "took 41.2 s · kept the recent messages as they were (session memory) · …"."""
        c = self.compaction
        said = []
        if c.duration_ms is not None:
            said.append(f"took {c.duration_ms / 1000:,.1f} s")
        said += c.details.said() if c.details is not None else []
        return " · ".join(said)

    def to_dict(self) -> dict[str, Any]:
        c = self.compaction
        return {
            "index": c.index,
            "line": self.line,
            "kind": c.kind,
            "trigger": c.trigger,
            "pre_tokens": c.pre_tokens,
            "post_tokens": c.post_tokens,
            "measured_before": self.measured_before,
            "measured_after": self.measured_after,
            "predicted_after": self.predicted_after,
            "predicted_range": list(self.predicted_range) if self.predicted_range else None,
            "agent_estimate_after": c.post_tokens,
            "reread_tokens": self.reread_tokens,
            "policy_round_offset": self.policy_round_offset,
            "agent_count": self.count.to_dict() if self.count else None,
            "slice": self.slice,
            **({"cleared_in_file": self.cleared_found} if self.cleared_found is not None else {}),
            "overhead_source": self.overhead_source,
            **(
                {"cleared": list(c.cleared), "tokens_saved": c.tokens_saved}
                if c.kind == "microcompact"
                else {}
            ),
            **{k: v for k, v in c.to_dict().items() if k not in _SHOWN_APART},
            "predicted_parts": [p.to_dict() for p in self.parts],
            "predicted_calibrated": self.calibrated,
            "calibration": self.calibration or None,
            "cost": self.cost.to_dict() if self.cost else None,
            "retention": self.retention.to_dict() if self.retention else None,
            "retention_counts": self.retention.counts() if self.retention else None,
            "our_retention": self.ours.to_dict() if self.ours else None,
            "our_retention_counts": self.ours.counts() if self.ours else None,
        }


def real_compactions(
    session: Session,
    model: ContextModel,
    counter: TokenCounter,
    config: Config,
    across: Siblings | None = None,
    known: Facts | None = None,
    estimates: Mapping[int, int] | None = None,
) -> list[RealCompaction]:
    """The transcript's own compactions, each measured and predicted. A later compaction's
    fixed part is what was measured after the session's earlier one; before that, where
    `across` holds what the user's other sessions measured after compactions of its kind,
    it is corrected by that where the correction would have helped them
    (`Calibration.helps`); each says which was done."""
    messages = session.messages
    starts = api_round_starts(messages)
    found = []
    sliced = is_slice(session)
    counts = agent_counts(session, model, config)
    costs = compaction_costs(session, model.responses)
    boundaries = [c.index for c in session.compactions]
    # the fixed part and whatever the transcript does not show, as measured after the
    # latest compaction of this session whose next request reports (a fit made here, said so)
    calibration: Part | None = None
    agent = config.catalogue.by_format.get(session.format)
    first_only = agent.first_only(session, config) if agent is not None else None
    if estimates is None:  # what the agent's rule counts before each request (`Agent.counted`)
        estimates = agent.counted(session) if agent is not None and session.compactions else {}
    for n, c in enumerate(session.compactions):
        b = c.index
        segment = model.segment_start(b)
        first_after = _first_response(model.responses, b + 1)
        last_before = last_response(model.responses, b, segment)
        # what came back: up to the first response after it, never past the next compaction
        # (compactions with no response between them would each read the rest of the file)
        following = boundaries[n + 1] if n + 1 < len(boundaries) else len(messages)
        end_after = min(first_after.start, following) if first_after else following
        if c.kind == "microcompact":
            micro = _micro(session, model, c, segment, last_before, first_after, sliced)
            found.append(dataclasses.replace(micro, cost=costs.get(b)))
            continue
        replaced, after = messages[segment:b], messages[b + 1 : end_after]
        back = _put_back(agent, session, b, after, counter, model.scale)
        predicted, parts = _predicted(c, messages[b].line, after, end_after, counter, model, back, first_only)
        # what the first request after it reported, when it came before any other compaction
        measured = first_after.prompt_tokens if first_after and first_after.start <= following else None
        residual = measured - predicted if measured is not None else None
        # the fixed part is what the first response held beyond its messages: where that
        # response is the one after this compaction, it would predict what measures it
        blind = model.overhead_source == "first response" and model.responses[0].start > b
        parts, calibrated, note = _calibrated(parts, calibration, across, c, blind, model)
        predicted = sum(p.tokens for p in parts)  # the parts sum to it (`_parts`)
        if measured is not None:  # the next compaction's fixed part
            calibration = _measured_fixed(measured, parts, messages[b].line)
        theirs, ours = _kept(session, replaced, after, known)
        offset = _round_offset(c, segment, starts, counts, model, config, estimates)
        found.append(
            RealCompaction(
                compaction=c,
                line=messages[b].line,
                replaced=(segment, b),
                after=(b + 1, end_after),
                measured_before=last_before.prompt_tokens if last_before else None,
                measured_after=first_after.prompt_tokens if first_after else None,
                predicted_after=None if blind else predicted,
                reread_tokens=back.tokens,
                policy_round_offset=offset,
                retention=theirs,
                ours=ours,
                slice=sliced,
                overhead_source=model.overhead_source,
                count=counts.before.get(b),
                cost=costs.get(b),
                parts=() if blind else parts,
                calibrated=calibrated is not None,
                calibration=note,
                residual=residual if not sliced and not blind else None,
            )
        )
    return found


def _predicted(
    c: Compaction,
    line: int | None,
    after: Sequence[Message],
    end_after: int,
    counter: TokenCounter,
    model: ContextModel,
    back: PutBack,
    first_only: tuple[int, str] | None,
) -> tuple[int, tuple[Part, ...]]:
    """The context after the compaction `c` (at `line`), predicted: the fixed part, the
    messages after it, what the agent put back, what it hid; and that figure in its parts."""
    b = c.index
    predicted = round(
        model.overhead
        + model.scale * (model.prefix[end_after] - model.prefix[b + 1])
        + back.tokens
        + back.kept
        + c.hidden_tokens
    )
    parts = _parts(predicted, after, line, counter, model, back, c.hidden_tokens, first_only)
    if c.unrecorded:  # what a hook on it sent: not in the transcript, so no most
        said = "; ".join(c.unrecorded)
        parts = (*parts, Part("sent by hooks on it", 0, "not in the transcript", 0, 0, said, True))
    return predicted, parts


def _measured_fixed(measured: int, parts: tuple[Part, ...], line: int | None) -> Part:
    """The fixed part a measurement after the compaction at `line` gives: what it measured
    beyond the other parts."""
    return Part(
        CALIBRATED,
        measured - sum(p.tokens for p in parts[1:]),
        f"measured after the compaction at line {line} of this session",
    )


def _calibrated(
    parts: tuple[Part, ...],
    carried: Part | None,
    across: Siblings | None,
    c: Compaction,
    blind: bool,
    model: ContextModel,
) -> tuple[tuple[Part, ...], Part | None, str]:
    """The predicted parts with the fixed one corrected where a measurement says how: by
    what this session's earlier compaction measured (`carried`), else, less what only a
    session's start carries, by what the user's other sessions measured after compactions
    of the same kind as `c` (its trigger, and the hooks run on it unrecorded), where that
    would have helped them (`across`); the parts, the correction, and what is said of it.
    `blind`: nothing predicts it."""
    first_response = model.overhead_source == "first response"
    if across is not None and carried is None and not blind and first_response:
        startup = across.startup_only(model.overhead)
        if startup:
            parts = (_without_startup(parts[0], startup, across.version), *parts[1:])
    siblings = across.of(c.trigger, c.unrecorded) if across is not None else None
    calibrated, note = carried, ""
    if blind:
        note = UNPREDICTABLE
    elif calibrated is None and siblings is not None and first_response:
        if siblings.helps:
            fixed = parts[0].tokens
            low, high = siblings.span
            calibrated = Part(
                CALIBRATED,
                fixed + siblings.correction,
                siblings.source,
                fixed + low,
                fixed + high,
                "what your other sessions measured after their compactions varies",
            )
            note = siblings.source
        else:
            note = siblings.declined
            parts = (dataclasses.replace(parts[0], source=f"{parts[0].source}; {note}"), *parts[1:])
    elif calibrated is not None:
        note = calibrated.source
    if calibrated is not None:
        parts = (calibrated, *parts[1:])
    return parts, calibrated, note


def _kept(
    session: Session, replaced: Sequence[Message], after: Sequence[Message], known: Facts | None
) -> tuple[Retention | None, Retention]:
    """What the agent's summary kept of the history it replaced (None: its summary is not
    in the transcript), and what ours keeps at the size of theirs: like for like."""
    theirs = [m for m in after if m.is_compact_summary and m.text != ENCRYPTED_SUMMARY]
    size = max(MIN_SUMMARY_CHARS, sum(len(m.text) for m in theirs)) if theirs else OUR_SUMMARY_CHARS
    ours = summarize(list(replaced), size, session.session_id, known)
    return (retention(replaced, after, known) if theirs else None), retention(replaced, [ours], known)


def _without_startup(fixed: Part, startup: int, version: str) -> Part:
    """The fixed part less what only this session's first request carried of it beyond
    its siblings' (`Siblings.startup_only`); its range reaches back to all of it, in case
    the agent sends it again."""
    low, high = fixed.span
    again = f"the {startup:,} sent at start may be sent again after it (a SessionStart hook on compact, say)"
    beyond = f"less {startup:,} its first request carried beyond your other sessions of {version} here"
    return Part(
        fixed.name,
        fixed.tokens - startup,
        f"{fixed.source}, {beyond}",
        max(0, low - startup),
        high,
        f"{fixed.unknown}; {again}" if fixed.unknown else again,
    )


CALIBRATED = "fixed part and what the transcript does not show"
UNPREDICTABLE = (
    "cannot be predicted here: the file starts at it, so the only measure of the fixed part "
    "is the response after it"
)
_OVERHEAD_SOURCES = {
    "first response": "the session's first response",
    "request body": "the request body",
    "preset": "the preset's estimate: nothing here measures it",
}
# what follows a compaction, by kind, and where its figure comes from
_AFTER: tuple[tuple[str, str, Callable[[Message, int | None], bool]], ...] = (
    ("its summary", "read from the transcript", lambda m, line: m.is_compact_summary),
    ("recent messages it kept", "read from the transcript", lambda m, line: bool(m.replaces)),
    ("put back as recorded", "its attachment lines", lambda m, line: m.attachment is not None),
    ("the rest of its new history", "read from the transcript", lambda m, line: m.line == line),
    ("sent since", "read from the transcript", lambda m, line: True),
)


def _parts(
    predicted: int,
    after: Sequence[Message],
    line: int | None,
    counter: TokenCounter,
    model: ContextModel,
    back: PutBack,
    hidden: int,
    first_only: tuple[int, str] | None = None,
) -> tuple[Part, ...]:
    """`predicted` in its parts, largest known first: what the transcript holds after the
    boundary by kind, what the agent puts back that it does not record, its encrypted
    summary; the fixed part is the rest, so they sum to `predicted` exactly. `line`: the
    boundary's, which the new history a compaction writes shares."""
    counted: dict[str, int] = {}
    for m in after:
        name = next(n for n, _, holds in _AFTER if holds(m, line))
        counted[name] = counted.get(name, 0) + counter.count(m)
    parts = [
        Part(name, round(model.scale * counted[name]), source)
        for name, source, _ in _AFTER
        if name in counted
    ]
    if back.tokens:
        parts.append(
            Part(
                "put back: files, plan, skills",
                back.tokens,
                "estimated from the tool calls before it",
                back.low,
                back.high,
                back.why,
            )
        )
    if back.kept:
        parts.append(Part("the last round, kept as it ran", back.kept, back.kept_why))
    if hidden:
        parts.append(Part("its encrypted summary", hidden, "the agent's own estimate"))
    tokens = predicted - sum(p.tokens for p in parts)
    low = high = None
    if first_only is not None and model.overhead_source == "first response":
        low, high = max(0, tokens - first_only[0]), tokens + first_only[0]
    fixed = Part(
        "fixed part: system prompt, tools and what else every request carries",
        tokens,
        _OVERHEAD_SOURCES.get(model.overhead_source, model.overhead_source),
        low,
        high,
        first_only[1] if first_only is not None else "",
    )
    return (fixed, *parts)


def _round_offset(
    c: Compaction,
    segment: int,
    starts: list[int],
    counts: AgentCounts,
    model: ContextModel,
    config: Config,
    estimates: Mapping[int, int],
) -> int | None:
    """API rounds from where the preset fires to the automatic compaction `c`: by the
    agent's own counts where the transcript records its checks, else by the context; None
    where it does not fire before it, or the file starts at it (what it replaced is not here)."""
    if c.trigger != "auto" or c.index <= segment:
        return None
    if counts.checks:
        return _checked_offset(starts, counts.between(segment, c.index), segment, c.index)
    return _offset(model, starts, c, segment, config, estimates)


def _checked_offset(starts: list[int], checked: list[Count], segment: int, boundary: int) -> int | None:
    """API rounds between the first check of the segment whose count reaches the limit
    and the compaction (0: the check just before it; None: none reaches it)."""
    first = next((k for k in checked if k.fires), None)
    if first is None or first.index is None:
        return None
    requests = [*starts[bisect_left(starts, segment + 1) : bisect_left(starts, boundary + 1)], boundary]
    return len(requests) - 1 - min(bisect_left(requests, first.index), len(requests) - 1)


def _micro(
    session: Session,
    model: ContextModel,
    c: Compaction,
    segment: int,
    last_before: Response | None,
    first_after: Response | None,
    sliced: bool,
) -> RealCompaction:
    """A microcompaction: measured either side where a response reports it; predicted,
    the context once its cleared results have left (the response after it predicted
    from the one before, or the model's figure at its marker when a full compaction
    comes first). None when the file holds none of the results it cleared (it starts
    after them): nothing here says what they held."""
    b = c.index
    full_next = first_after is not None and any(
        m.is_compact_boundary for m in session.messages[b : first_after.start]
    )
    ids = frozenset(c.cleared)
    found = sum(
        1 for m in session.messages[segment:b] if m.is_tool_result for i in m.tool_result_ids() if i in ids
    )
    predicted: int | None = model.tokens(b + 1) if found else None
    if first_after is not None and not full_next and found:
        prediction = next((p for p in model.predictions if p.response is first_after and p.anchored), None)
        if prediction is not None:
            predicted = prediction.estimated
    return RealCompaction(
        compaction=c,
        line=session.messages[b].line,
        replaced=(segment, b),
        after=(b + 1, first_after.start if first_after else len(session.messages)),
        measured_before=last_before.prompt_tokens if last_before else None,
        measured_after=first_after.prompt_tokens if first_after and not full_next else None,
        predicted_after=predicted,
        reread_tokens=0,
        policy_round_offset=None,
        retention=None,
        ours=None,
        slice=sliced,
        overhead_source=model.overhead_source,
        cleared_found=found,
    )


def _first_response(responses: tuple[Response, ...], start: int) -> Response | None:
    return next((r for r in responses if r.start >= start), None)


def _put_back(
    agent: Rules | None,
    session: Session,
    boundary: int,
    after: tuple[Message, ...],
    counter: TokenCounter,
    scale: float,
) -> PutBack:
    """What the agent puts back after the compaction at `boundary` that the transcript
    does not record, in the model's tokens (`Rules.put_back`)."""
    return agent.put_back(session, boundary, after, counter, scale) if agent is not None else PutBack.known(0)


def _offset(
    model: ContextModel,
    starts: list[int],
    c: Compaction,
    segment: int,
    config: Config,
    estimates: Mapping[int, int],
) -> int | None:
    """API rounds between the first request of the segment whose count reaches the
    preset's auto-compact point and the compaction (0: the same request; None: the point
    is never reached before it): the agent's own rule's count where it has one
    (`Agent.counted`, what a replay fires on), else the context. At the request the
    compaction replaced, at least the context the agent recorded (`ContextModel.meter`):
    the trigger saw that."""
    point = config.account.tokens
    if point is None:
        return None
    first = bisect_left(starts, segment + 1)
    last = bisect_left(starts, c.index + 1)
    requests = [*starts[first:last], c.index]
    for k, end in enumerate(requests):
        counted = model.tokens(end, held=True)
        if end != c.index and end in estimates:
            counted = estimates[end]
        if counted >= point:
            return len(requests) - 1 - k
    return None

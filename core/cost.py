"""What a session's requests cost (docs/cost.md): each response's reported usage priced
by the `genai-prices` bundled table, offline; and what a replay's requests would have
cost, on the same request pattern.

A response's input is split as the API bills it: uncached, cache read, cache written for
5 minutes and for 1 hour; then its output. Each part is priced at the rate of the
response's tier (a model whose price steps up past a prompt size prices every token of a
longer prompt at the higher rate). A model the table does not know is named, never
guessed. The table is imported only when something it has not answered before is priced:
its answers are kept in the cache directory under its version (`_kept`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import itertools
import json
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Context as DecimalContext
from decimal import Decimal
from functools import cache, cached_property
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.caching.memo import per_session
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.formats.common import answered_by
from compaction_inspector.core.measuring.context_model import Response, responses
from compaction_inspector.core.model import Session, Usage
from compaction_inspector.core.text import counted
from compaction_inspector.core.timestamps import parse

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice

    from compaction_inspector.core.replaying.simulate import Simulation

# whose prices a session's responses are billed at: its format's provider, and the API URL
# its requests went to where a proxy log keeps it (`billed_by` decides, model by model)
Billing = tuple[str | None, str | None]


def _billing(session: Session) -> Billing:
    url = session.metadata.get("api_url")
    return session.provider, url if isinstance(url, str) else None


class _Clock:
    """When each request was sent, to price it at what it paid where a price changes by
    date or by hour of day: its line's own time, else the session's last (a proxy log's
    request body has none of its own), else None."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def at(self, index: int) -> datetime | None:
        messages = self._session.messages
        own = _when(messages[index].timestamp) if index < len(messages) else None
        return own if own is not None else self._last

    @cached_property
    def _last(self) -> datetime | None:
        """The session's last time, found once, where a line has none of its own."""
        stamps = (parse(m.timestamp) for m in reversed(self._session.messages) if m.timestamp)
        meta = self._session.metadata
        return next((t for t in stamps if t), None) or parse(meta.get("ended")) or parse(meta.get("started"))


@per_session(maxsize=1 << 16)  # every replay of a session prices its requests at their times
def _when(timestamp: str | None) -> datetime | None:
    return parse(timestamp)


PARTS = ("uncached input", "cache read", "cache write 5m", "cache write 1h", "output")
CALLS = "compaction calls"  # a replay's summarize requests: estimated, as `OwnCall` prices them
# the agent's own summarize requests, which most transcripts report no usage for: estimated
OWN_CALLS = "own compaction calls (estimated)"
RECORDED_CALLS = "own compaction calls (recorded)"  # where the transcript reports their usage
ESTIMATED = (OWN_CALLS, CALLS)  # the parts no response reported: the rest is what was recorded
_MILLION = 1_000_000


def signed(change: Decimal | None) -> str:
    """A change in dollars as a table shows it ("+1.18", "-0.85", "±0.00"); "" for None."""
    if change is None:
        return ""
    return "±0.00" if abs(change) < Decimal("0.005") else f"{change:+,.2f}"


@cache  # every replay's cost names it; the installed table does not change while we run
def source() -> str:
    """Where the prices come from, to name beside every cost."""
    return f"genai-prices {version('genai-prices')}, its bundled table"


@dataclass(frozen=True)
class Cost:
    """A session's priced usage: in USD by part, over the responses priced; the models
    the table does not know, with how many responses each left unpriced."""

    parts: dict[str, Decimal]
    responses: int
    unpriced: dict[str, int] = field(default_factory=dict)
    source: str = ""
    unreported: int = 0  # a replay's requests the transcript reports no usage for: not priced
    rewritten: int = 0  # a replay's: tokens the real requests read from the cache that it wrote again
    # A session's sub-agents (its inline sidechain and the transcripts of their own it
    # names), priced apart: a replay replays the main chain only, so it compares with that.
    subagents: Cost | None = None
    unread: tuple[str, ...] = ()  # sub-agent transcripts the session names that could not be read
    # the tokens its responses reported, by model and then by part (`PARTS`), priced or not
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    compactions: tuple[CompactionCost, ...] = ()  # a replay's: what each of its compactions cost
    # what the agent itself recorded its responses cost, where it records that (None: it does not)
    agent_recorded: Decimal | None = None

    @property
    def total(self) -> Decimal:
        """The main chain's cost (a replay's, or the session's without its sub-agents):
        what was recorded and the compaction calls estimated."""
        return sum(self.parts.values(), Decimal(0))

    @property
    def estimated(self) -> Decimal:
        """The main chain's compaction calls no response reported, estimated."""
        return sum((self.parts.get(name, Decimal(0)) for name in ESTIMATED), Decimal(0))

    @property
    def recorded(self) -> Decimal:
        """The main chain's cost as its responses reported their usage: exact."""
        return self.total - self.estimated

    def plus(self, other: Cost) -> Cost:
        """Two chains' costs together (sub-agents'), every part either holds."""
        parts = {
            name: self.parts.get(name, Decimal(0)) + other.parts.get(name, Decimal(0))
            for name in dict.fromkeys([*self.parts, *other.parts])
        }
        return dataclasses.replace(
            self,
            parts=parts,
            responses=self.responses + other.responses,
            unpriced=_summed(self.unpriced, other.unpriced),
            tokens=_by_model(self.tokens, other.tokens),
            agent_recorded=None
            if self.agent_recorded is None and other.agent_recorded is None
            else (self.agent_recorded or Decimal(0)) + (other.agent_recorded or Decimal(0)),
        )

    @property
    def whole_tokens(self) -> dict[str, dict[str, int]]:
        """The tokens reported by model, its sub-agents' included."""
        return _by_model(self.tokens, self.subagents.tokens) if self.subagents is not None else self.tokens

    def tokens_line(self) -> str:
        """ "input 1,204 · cache read 9,120,334 · … · output 40,932", sub-agents included."""
        total = _token_total(self.whole_tokens)
        return " · ".join(f"{name.removeprefix('uncached ')} {total[name]:,}" for name in PARTS)

    @property
    def priced(self) -> bool:
        """Whether any response was priced: else the cost is unknown, never $0.00."""
        return self.responses > 0

    @property
    def whole(self) -> Decimal:
        """The main chain and its sub-agents."""
        return self.total + (self.subagents.total if self.subagents is not None else Decimal(0))

    @property
    def has_subagents(self) -> bool:
        sub = self.subagents
        return sub is not None and bool(sub.responses or sub.unpriced)

    @property
    def whole_priced(self) -> bool:
        """Whether any response of the main chain or its sub-agents was priced."""
        return self.priced or (self.subagents is not None and self.subagents.priced)

    def usd(self, whole: bool = False) -> str:
        """ "$14.00", or "not priced" where no response was (a model the table lacks)."""
        if not (self.whole_priced if whole else self.priced):
            return "not priced"
        return f"${(self.whole if whole else self.total):,.2f}"

    def unpriced_line(self) -> str:
        """The models the table lacks, sub-agents' included, with their responses ("" if none)."""
        return _unpriced(
            _summed(self.unpriced, self.subagents.unpriced if self.subagents is not None else {})
        )

    def line(self) -> str:
        """ "$14.00 (cache read $9.12 · … · output $1.02) over 146 responses, …"; a session
        with sub-agents says its main chain, its sub-agents and both in all."""
        shown = " · ".join(
            f"{name} ${value:,.2f}" for name, value in self.parts.items() if value and name not in ESTIMATED
        )
        over = f"({shown}) over {counted(self.responses, 'response')}"
        if not self.priced:
            told = self.usd()
        elif self.estimated:
            told = (
                f"{self.usd()}: recorded ${self.recorded:,.2f} {over} + compaction calls "
                f"${self.estimated:,.2f} (estimated)"
            )
        else:
            told = f"{self.usd()} {over}"
        missing = _unpriced(self.unpriced)
        if self.unreported:
            missing += (
                ", " if missing else ""
            ) + f"{counted(self.unreported, 'request')} with no usage reported"
        if missing:
            told += f": {missing}" if not self.priced else f"; not priced: {missing}"
        if self.agent_recorded is not None:
            told += f"; the agent recorded ${self.agent_recorded:,.2f}"
        sub = self.subagents
        if sub is not None and self.has_subagents:
            told = (
                f"main chain {told}; sub-agents {sub.usd()} over {counted(sub.responses, 'response')}"
                + (f" (not priced: {_unpriced(sub.unpriced)})" if sub.unpriced else "")
                + f"; in all {self.usd(whole=True)}"
            )
        if self.unread:
            told += f"; {counted(len(self.unread), 'sub-agent transcript')} named but not read"
        return told + f" · prices: {self.source}"

    def to_dict(self) -> dict[str, Any]:
        """`total_usd` is everything, sub-agents included; `main_chain_usd` the main chain,
        `recorded_usd` of it what its responses reported (exact) and
        `estimated_compaction_calls_usd` its compaction calls no response reported. Each is
        null where nothing was priced (never "0")."""
        out: dict[str, Any] = {
            "total_usd": usd(self.whole) if self.whole_priced else None,
            "main_chain_usd": usd(self.total) if self.priced else None,
            "recorded_usd": usd(self.recorded) if self.priced else None,
            "estimated_compaction_calls_usd": usd(self.estimated) if self.priced else None,
            "parts_usd": {name.replace(" ", "_"): usd(v) for name, v in self.parts.items()},
            "responses": self.responses,
            "unpriced": self.unpriced,
            "unreported_requests": self.unreported,
            "cache_rewritten_tokens": self.rewritten,
            "source": self.source,
        }
        if self.tokens:
            out["tokens"] = keyed_tokens(_token_total(self.tokens))
            out["tokens_by_model"] = {model: keyed_tokens(t) for model, t in self.tokens.items()}
        if self.compactions:
            out["compactions"] = CompactionsCost(self.compactions, self).to_dict()
        if self.subagents is not None:
            out["subagents"] = self.subagents.to_dict()
            out["subagent_transcripts_unread"] = list(self.unread)
        if self.agent_recorded is not None:
            out["agent_recorded_usd"] = usd(self.agent_recorded)
        return out


def _by_model(a: dict[str, dict[str, int]], b: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Two chains' tokens by model, together."""
    return {model: _summed(a.get(model, {}), b.get(model, {})) for model in dict.fromkeys([*a, *b])}


def _token_total(by_model: dict[str, dict[str, int]]) -> dict[str, int]:
    return {name: sum(t.get(name, 0) for t in by_model.values()) for name in PARTS}


def keyed_tokens(tokens: dict[str, int]) -> dict[str, int]:
    """By part as `--json` names them: `uncached_input`, `cache_read`, … ."""
    return {name.replace(" ", "_"): tokens.get(name, 0) for name in PARTS}


def _summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Two counts of responses by model, together."""
    return {model: a.get(model, 0) + b.get(model, 0) for model in dict.fromkeys([*a, *b])}


MICRO = Decimal("0.000001")


def usd(value: Decimal) -> str:
    """Dollars to the millionth, whole however large (a recorded 1e30 is shown as
    recorded: the context holds every digit); a value that is not a number as it is."""
    if not value.is_finite():
        return str(value)
    return str(value.quantize(MICRO, context=DecimalContext(prec=max(28, value.adjusted() + 8))))


def _unpriced(models: dict[str, int]) -> str:
    return ", ".join(f"{model or 'no model named'} ({counted(n, 'response')})" for model, n in models.items())


def session_cost(session: Session, subagents: Sequence[Session] = (), unread: Sequence[str] = ()) -> Cost:
    """What the session's responses cost, as they reported their usage: its main chain,
    and apart, its sub-agents: the sidechain it holds inline (older Claude Code) and the
    sub-agents' own transcripts (`subagents`; `unread`: those named but not read)."""
    main = _chain_cost(session)
    if not (session.sidechain or subagents or unread):
        return main
    side = _chain_cost(
        dataclasses.replace(
            session, messages=session.sidechain, sidechain=(), request_usage=None, compactions=()
        )
    )
    for other in subagents:
        side = side.plus(_chain_cost(other))
    return dataclasses.replace(main, subagents=side, unread=tuple(unread))


def _chain_cost(session: Session) -> Cost:
    billing = _billing(session)
    parts = dict.fromkeys(PARTS, Decimal(0))
    priced = 0
    unpriced: dict[str, int] = {}
    found = responses(session)
    clock = _Clock(session)
    tokens: dict[str, dict[str, int]] = {}
    for response in found:
        usage = response.usage
        model = answered_by(usage, session.metadata)
        held = tokens.setdefault(model or "no model named", dict.fromkeys(PARTS, 0))
        for name, n in zip(PARTS, _tokens(usage), strict=True):
            held[name] += n
        by_part = priced_parts(usage, model, billing, clock.at(response.start))
        if by_part is None:
            unpriced[model or ""] = unpriced.get(model or "", 0) + 1
            continue
        priced += 1
        for name, value in by_part.items():
            parts[name] += value
    calls = own_calls(session, found)
    for name, recorded in ((RECORDED_CALLS, True), (OWN_CALLS, False)):
        these = [c.price(billing) for c in calls.values() if c.recorded is recorded]
        if these:
            parts[name] = sum(these, Decimal(0))
    said = session.metadata.get("recorded_usd")
    agent = Decimal(str(said)) if isinstance(said, int | float) and not isinstance(said, bool) else None
    return Cost(parts, priced, unpriced, source(), tokens=tokens, agent_recorded=agent)


@dataclass(frozen=True)
class OwnCall:
    """The agent's own summarize request at one of its compactions: as the transcript
    records it (`recorded`: Codex 0.154+), else estimated (`estimated`): the history it
    summarized in (the context the agent recorded before it, else the last prompt
    reported), read from the prompt cache, the summary out (its text / 4, or what the
    rollout holds encrypted), at the model of the response before it. The request sends
    the history the request before it sent, so the cache holds it: Claude Code keeps its
    summarizer request cacheable ("allowing prompt cache reuse for faster and cheaper
    compaction", its changelog), and OpenAI caches a repeated prefix of any request on its
    own (its prompt caching guide). A replay's calls are priced the same way."""

    model: str | None
    tokens_in: int
    tokens_out: int
    cached: int = 0  # of its input, read from the cache
    recorded: bool = False
    at: datetime | None = None  # when it was sent, priced at what it paid then

    @classmethod
    def estimated(cls, model: str | None, tokens_in: int, tokens_out: int, at: datetime | None) -> OwnCall:
        """A summarize request no response reports: its input read from the cache."""
        return cls(model, tokens_in, tokens_out, cached=tokens_in, at=at)

    def price(self, billing: Billing) -> Decimal:
        """In USD; 0 where the table does not know the model (`rates` is None)."""
        rates = self.rates(billing)
        if rates is None:
            return Decimal(0)
        return (
            rates["uncached input"] * (self.tokens_in - self.cached)
            + rates["cache read"] * self.cached
            + rates["output"] * self.tokens_out
        )

    def rates(self, billing: Billing) -> dict[str, Decimal] | None:
        return _rates(self.model, billing, self.tokens_in, self.at) if self.model else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.tokens_in,
            "cached_input_tokens": self.cached,
            "output_tokens": self.tokens_out,
            "recorded": self.recorded,
        }


@dataclass(frozen=True)
class CompactionCost:
    """What one compaction cost (docs/cost.md#what-a-compaction-costs): its summarize
    request (none for a microcompact), and what the first request after it could not read
    from the cache and sent again (`sent_again` tokens: written to the cache, or uncached
    where the provider has no write price). A USD figure is None where the table does not
    know the model; `sent_again` is None where no response after it reports its usage."""

    call: OwnCall | None
    call_usd: Decimal | None
    sent_again: int | None
    sent_again_usd: Decimal | None
    # the next compaction came before any request: the request after both is counted there
    before_next: bool = False
    at: int | None = None  # its boundary's index, or a replay's request: its messages' end

    @property
    def usd(self) -> Decimal | None:
        parts = [v for v in (self.call_usd, self.sent_again_usd) if v is not None]
        return sum(parts, Decimal(0)) if parts else None

    def line(self) -> str:
        """ "$0.42: its summarize request $0.31 (estimated) · 45,480 tokens sent again after it $0.11"."""
        after = "no request of its own before the next compaction" if self.before_next else ""
        said = []
        if self.call is not None:
            how = "recorded" if self.call.recorded else "estimated"
            said.append(f"its summarize request {_dollars(self.call_usd)} ({how})")
        if self.sent_again is not None:
            said.append(f"{self.sent_again:,} tokens sent again after it {_dollars(self.sent_again_usd)}")
        if not said:
            return after or "no response after it reports its usage"
        return f"{_dollars(self.usd)}: " + " · ".join([*said, *([after] if after else [])])

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "usd": usd(self.usd) if self.usd is not None else None,
            "call": self.call.to_dict() if self.call is not None else None,
            "call_usd": usd(self.call_usd) if self.call_usd is not None else None,
            "sent_again_tokens": self.sent_again,
            "sent_again_usd": usd(self.sent_again_usd) if self.sent_again_usd is not None else None,
            "before_next_compaction": self.before_next,
        }


def _dollars(value: Decimal | None) -> str:
    return f"${value:,.2f}" if value is not None else "not priced"


def compaction_costs(session: Session, found: Sequence[Response] | None = None) -> dict[int, CompactionCost]:
    """What each compaction the transcript records cost, by its boundary's index; `found`:
    the session's responses, where the caller has them."""
    billing = _billing(session)
    found = responses(session) if found is None else found
    calls = own_calls(session, found)
    starts = [r.start for r in found]
    clock = _Clock(session)
    out: dict[int, CompactionCost] = {}
    boundaries = [c.index for c in session.compactions]
    for n, c in enumerate(session.compactions):
        call = calls.get(c.index)
        call_usd = call.price(billing) if call is not None and call.rates(billing) is not None else None
        k = bisect_right(starts, c.index)
        again: int | None = None
        again_usd: Decimal | None = None
        before_next = n + 1 < len(boundaries) and (k == len(found) or boundaries[n + 1] < found[k].start)
        if k < len(found) and not before_next:
            usage = found[k].usage
            again = usage.prompt_tokens - usage.cache_read_input_tokens
            model = answered_by(usage, session.metadata)
            rates = _rates(model, billing, usage.prompt_tokens, clock.at(found[k].start)) if model else None
            if rates is not None:
                again_usd = _sent_again(rates, usage)
        out[c.index] = CompactionCost(call, call_usd, again, again_usd, before_next, c.index)
    return out


def priced_parts(
    usage: Usage, model: str | None, billing: Billing, at: datetime | None
) -> dict[str, Decimal] | None:
    """One response's usage in USD by part (`PARTS`), at the price in force when its
    request was sent (`at`); None where the table does not know the model."""
    rates = _rates(model, billing, usage.prompt_tokens, at) if model else None
    if rates is None:
        return None
    return {name: rates[name] * tokens for name, tokens in zip(PARTS, _tokens(usage), strict=True)}


def _sent_again(rates: dict[str, Decimal], usage: Usage) -> Decimal:
    """What a request paid for the input it did not read from the cache."""
    fresh, _, five, hour, _ = _tokens(usage)
    return rates["uncached input"] * fresh + rates["cache write 5m"] * five + rates["cache write 1h"] * hour


def own_calls(session: Session, found: Sequence[Response] | None = None) -> dict[int, OwnCall]:
    """Each full compaction the transcript records, by its boundary's index: the agent's
    own summarize request, which it reports no usage for (docs/cost.md). `found`: the
    session's responses, where the caller has them."""
    if all(c.kind == "microcompact" for c in session.compactions):
        return {}
    messages = session.messages
    found = responses(session) if found is None else found
    ends = [r.end for r in found]
    clock = _Clock(session)
    out: dict[int, OwnCall] = {}
    for c in session.compactions:
        if c.kind == "microcompact":
            continue
        k = bisect_right(ends, c.index)
        last = found[k - 1].usage if k else None
        tokens_in = c.pre_tokens or (last.prompt_tokens if last is not None else 0)
        after = itertools.takewhile(
            lambda m: m.role != "assistant" and not m.is_compact_boundary, messages[c.index + 1 :]
        )
        tokens_out = c.hidden_tokens + sum(len(m.text) for m in after if m.is_compact_summary) // 4
        model = answered_by(last, session.metadata)
        told = c.call
        if told is not None:
            out[c.index] = OwnCall(
                told.model or model,
                told.prompt_tokens,
                told.output_tokens,
                told.cache_read_input_tokens,
                recorded=True,
                at=clock.at(c.index),
            )
        elif tokens_in:
            out[c.index] = OwnCall.estimated(model, tokens_in, tokens_out, clock.at(c.index))
    return out


def replay_cost(session: Session, replay: Simulation, found: Sequence[Response] | None = None) -> Cost:
    """What the replay's requests would have cost (docs/cost.md#a-replay): each request
    priced where the transcript reports the response it stands for, at that response's
    model, as that response's usage splits it. What it shares at its start with the
    request before is read from the cache, up to what the real request read (a cache
    expires, or holds less); the rest is written as the real request wrote (5 minutes,
    1 hour, or uncached where the provider has no write price); the output is the real one.
    A compaction's own summarize request is priced apart (`OwnCall.estimated`). Where the
    replay compacted on its own since the transcript's last compaction, the transcript's
    next one is replaced, and its summarize request with it; a request the transcript's
    own compaction left, sent as it was, finds the cache as the real one did. `found`: the
    session's responses, where the caller has them."""
    billing = _billing(session)
    found = responses(session) if found is None else found
    usage = {r.start: r.usage for r in found}
    clock = _Clock(session)
    parts = dict.fromkeys((*PARTS, CALLS), Decimal(0))
    priced, unreported, rewritten = 0, 0, 0
    # a compaction's request, by its point: what it sent again, its price, its model and time
    sent_again: dict[int, tuple[int, Decimal, str | None, datetime | None]] = {}
    before: int | None = None  # the request before, as sent (None: the first, read as the real one was)
    unchanged = True  # every request so far sent as the real one was: the cache holds what it held
    unpriced: dict[str, int] = {}
    for point in replay.points:
        sent, before_sent = point.tokens_after, before if before is not None else point.tokens_after
        shared = before_sent if point.shared is None else min(point.shared, before_sent)
        before = sent
        if point.event is not None and point.event.source == "transcript":
            unchanged = sent == point.tokens_before  # the history the agent's compaction left, as it was
        else:
            unchanged = unchanged and point.event is None and sent == point.tokens_before
        u = usage.get(point.message_end)
        if u is None:
            unreported += 1
            continue
        if unchanged:  # the real request, whose cache may hold more than the request before sent
            read = min(sent, u.cache_read_input_tokens)
        else:  # never more than the real request read: its cache may have expired, or held less
            read = min(shared, sent, u.cache_read_input_tokens)
        # a count of tokens, whether or not the model has a price
        rewritten += max(0, min(before_sent, sent, u.cache_read_input_tokens) - read)
        model = answered_by(u, session.metadata)
        at = clock.at(point.message_end)
        rates = _rates(model, billing, sent, at) if model else None
        if rates is None:
            unpriced[model or ""] = unpriced.get(model or "", 0) + 1
            continue
        priced += 1
        _, _, five, hour, _ = _tokens(u)
        rest, fresh = sent - read, u.input_tokens + five + hour
        # what it pays for the input it does not read from the cache: split as the real
        # request's was (a part it had none of adds nothing), else all of it uncached
        again = Decimal(0)
        for name, share in zip(_INPUT_PARTS, (u.input_tokens, five, hour), strict=True):
            if share:
                paid = rates[name] * rest * share / fresh
                again += paid
                parts[name] += paid
        if not fresh:  # the real request was read whole
            again += rates["uncached input"] * rest
            parts["uncached input"] += rates["uncached input"] * rest
        parts["cache read"] += rates["cache read"] * read
        parts["output"] += rates["output"] * u.output_tokens
        call_in, call_out = point.call
        parts[CALLS] += rates["cache read"] * call_in + rates["output"] * call_out
        if point.event is not None:
            sent_again[id(point)] = (rest, again, model, at)
    # the transcript's own compactions the replay keeps cost their summarize request here
    # as in the real cost, so the two compare like for like
    kept = [p for p in replay.points if p.event is not None and p.event.source == "transcript"]
    calls = own_calls(session, found) if kept else {}
    boundaries = sorted(calls)
    costs: list[CompactionCost] = []
    replayed = False  # the replay compacted on its own since the transcript's last compaction
    for point in replay.points:
        event = point.event
        if event is None:
            continue
        entry = sent_again.get(id(point))
        not_read: int | None = entry[0] if entry is not None else None
        paid_again: Decimal | None = entry[1] if entry is not None else None
        model, at = (entry[2], entry[3]) if entry is not None else (None, None)
        call: OwnCall | None = None
        if event.source == "policy":
            replayed = True
            if point.call != (0, 0):
                call = OwnCall.estimated(model, point.call[0], point.call[1], at)
        elif replayed:  # the replay's own compaction replaced it: its history is the transcript's, unpaid
            replayed = False
            continue
        else:
            k = bisect_left(boundaries, point.message_end)
            call = calls[boundaries[k - 1]] if k else None
            if call is not None:
                name = RECORDED_CALLS if call.recorded else OWN_CALLS
                parts[name] = parts.get(name, Decimal(0)) + call.price(billing)
        call_usd = call.price(billing) if call is not None and call.rates(billing) is not None else None
        costs.append(CompactionCost(call, call_usd, not_read, paid_again, at=point.message_end))
    return Cost(parts, priced, unpriced, source(), unreported, rewritten, compactions=tuple(costs))


_INPUT_PARTS = ("uncached input", "cache write 5m", "cache write 1h")


def _tokens(u: Usage) -> tuple[int, int, int, int, int]:
    written_1h = min(u.cache_write_1h_tokens, u.cache_creation_input_tokens)
    return (
        u.input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens - written_1h,
        written_1h,
        u.output_tokens,
    )


@cache
def billed_by(model: str, provider: str | None, url: str | None = None) -> str | None:
    """Whose prices a response of `model` is billed at, as the price table names them:
    the vendor the request's URL names, where a proxy log keeps it; else `provider` (the
    format's) where the table knows the model there; else the provider the table finds the
    model under (a gpt model written in Anthropic's format through a proxy). None: the
    table does not know the model."""
    key = f"{model}\t{provider}\t{url}"
    kept = _kept()["billed"]
    if key in kept:
        return cast("str | None", kept[key])
    from genai_prices import Usage as Priced
    from genai_prices import calc_price

    tried: list[dict[str, str | None]] = [{"provider_api_url": url}] if url else []
    tried += [{"provider_id": provider}] if provider else []
    found = None
    for where in [*tried, {}]:
        try:
            found = str(calc_price(Priced(input_tokens=1), model, **where).provider.id)  # type: ignore[arg-type]
            break
        except LookupError:
            continue
    _keep("billed", key, found)
    return found


def _rates(model: str, billing: Billing, prompt: int, at: datetime | None) -> dict[str, Decimal] | None:
    """USD per token of each part for a request of `prompt` input tokens sent at `at`, at
    the prices `billed_by` finds; None when the table does not know the model. Rates hold
    across a tier of the price in force: priced once per price and tier."""
    provider = billed_by(model, *billing)
    if provider is None:
        return None
    schedule = _schedule(model, provider)
    if schedule is None:
        return None
    price = in_force(schedule, at)
    starts = _steps(model, provider, price)
    key = (model, provider, price, bisect_left(starts, prompt))  # the tiers it is past: the starts below it
    found = _RATES.get(key)
    if found is not None:
        return found
    named = "\t".join(map(str, key))
    kept = _kept()["rates"].get(named)
    if kept is not None:
        found = _RATES[key] = {part: Decimal(value) for part, value in kept.items()}
        return found
    from genai_prices import Usage as Priced

    table = _table(model, provider)[price][1]
    size = max(prompt, 1)

    def cost(**usage: int) -> Decimal:
        return table.calc_price(Priced(input_tokens=size, **usage))["total_price"]

    base = cost()
    found = _RATES[key] = {
        "uncached input": base / size,
        "cache read": cost(cache_read_tokens=size) / size,
        "cache write 5m": cost(cache_write_tokens=size) / size,
        "cache write 1h": cost(cache_write_tokens=size, cache_write_1h_tokens=size) / size,
        "output": (cost(output_tokens=_MILLION) - base) / _MILLION,
    }
    _keep("rates", named, {part: str(value) for part, value in found.items()})
    return found


_RATES: dict[tuple[str, str, int, int], dict[str, Decimal]] = {}
_KEPT_CHANGED: list[bool] = []  # a flag the process's exit reads: something new was priced
_FORMAT = 2  # of `prices.json`: one of another format is read as empty


@cache
def _kept() -> dict[str, dict[str, Any]]:
    """What the price table answered before, kept in the cache directory under its
    version (a newer table starts afresh): a process that prices what an earlier one did
    never imports the table (0.1 s of every status line call, which Claude Code makes
    after each message)."""
    empty: dict[str, dict[str, Any]] = {"billed": {}, "schedules": {}, "steps": {}, "rates": {}}
    root = cache_root()
    if root is None:
        return empty
    atexit.register(_save, root / "prices.json")
    with contextlib.suppress(OSError, ValueError):
        data = json.loads((root / "prices.json").read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("version") == source() and data.get("format") == _FORMAT:
            return {name: dict(data[name]) if isinstance(data.get(name), dict) else {} for name in empty}
    return empty


def _keep(table: str, key: str, value: Any) -> None:
    _kept()[table][key] = value
    _KEPT_CHANGED.append(True)


def _save(path: Path) -> None:
    if not _KEPT_CHANGED:
        return
    with contextlib.suppress(OSError):  # a cache that cannot be written costs the table next time
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"version": source(), "format": _FORMAT, **_kept()}))


# When one of a model's prices is in force, as the cache keeps it: always (None), from a
# UTC day on (("from", "2026-08-17")), or daily from one UTC time until another (("daily",
# "06:00:00", "10:00:00"), through midnight where the end is the earlier)
Condition = tuple[str, ...] | None


def in_force(schedule: Sequence[Condition], at: datetime | None) -> int:
    """Which of a model's prices a request sent at `at` pays, as the table decides: the
    last whose condition holds, else the first. A request of no known time pays the
    price of today's date outside any daily window (the standard rate, never a peak or
    an off-peak one)."""
    if len(schedule) == 1:  # one price, in force whenever: most models
        return 0
    utc = at.astimezone(UTC) if at is not None else None
    for n in range(len(schedule) - 1, -1, -1):
        condition = schedule[n]
        if condition is None:
            return n
        if condition[0] == "from":
            if (utc or datetime.now(UTC)).date() >= date.fromisoformat(condition[1]):
                return n
        elif utc is not None:
            now, start, end = utc.time(), time.fromisoformat(condition[1]), time.fromisoformat(condition[2])
            if (start <= now < end) if start <= end else (now >= start or now < end):
                return n
    return 0


@cache
def _table(model: str, provider: str) -> list[tuple[Condition, ModelPrice]]:
    """The table's prices of the model at `provider`, each with when it is in force
    (imports the table); LookupError where the table does not know it."""
    from genai_prices import Usage as Priced
    from genai_prices import calc_price
    from genai_prices.types import ModelPrice, StartDateConstraint

    prices = calc_price(Priced(input_tokens=1), model, provider_id=provider).model.prices
    if isinstance(prices, ModelPrice):
        return [(None, prices)]
    out: list[tuple[Condition, ModelPrice]] = []
    for p in prices:
        c = p.constraint
        if c is None:
            out.append((None, p.prices))
        elif isinstance(c, StartDateConstraint):
            out.append((("from", c.start_date.isoformat()), p.prices))
        else:
            out.append((("daily", _utc(c.start_time), _utc(c.end_time)), p.prices))
    return out


def _utc(t: time) -> str:
    """A time of day (a naive one is UTC) as the UTC time it is."""
    day = datetime.combine(date(2000, 1, 1), t).replace(tzinfo=t.tzinfo or UTC)
    return day.astimezone(UTC).time().isoformat()


@cache
def _schedule(model: str, provider: str) -> tuple[Condition, ...] | None:
    """When each of the model's prices is in force, in the table's order; None when the
    table does not know the model."""
    key = f"{model}\t{provider}"
    kept = _kept()["schedules"]
    if key not in kept:
        try:
            _keep("schedules", key, [c for c, _ in _table(model, provider)])
        except LookupError:
            _keep("schedules", key, None)
    found = kept[key]
    return tuple(tuple(c) if c is not None else None for c in found) if found is not None else None


@cache
def _steps(model: str, provider: str, price: int) -> tuple[int, ...]:
    """The prompt sizes past which the model's `price`-th price steps up."""
    key = f"{model}\t{provider}\t{price}"
    kept = _kept()["steps"]
    if key not in kept:
        from genai_prices.types import TieredPrices

        table = _table(model, provider)[price][1]
        tiers = (v for v in vars(table).values() if isinstance(v, TieredPrices))
        _keep("steps", key, sorted({t.start for v in tiers for t in v.tiers}))
    return tuple(kept[key])


@dataclass(frozen=True)
class CompactionsCost:
    """What a session's compactions cost together, within what the session cost."""

    costs: tuple[CompactionCost, ...]
    of: Cost  # the main chain's cost they are part of

    @property
    def calls_usd(self) -> Decimal:
        return sum((c.call_usd for c in self.costs if c.call_usd is not None), Decimal(0))

    @property
    def sent_again_usd(self) -> Decimal:
        return sum((c.sent_again_usd for c in self.costs if c.sent_again_usd is not None), Decimal(0))

    @property
    def priced(self) -> bool:
        return any(c.usd is not None for c in self.costs)

    @property
    def estimated(self) -> bool:
        """Some summarize request is estimated, not recorded."""
        return any(c.call is not None and not c.call.recorded for c in self.costs)

    def line(self) -> str:
        """ "4 compactions cost $2.23 of $16.11: summarize requests $1.79 (estimated) · sent
        again after them $0.44"."""
        n = counted(len(self.costs), "compaction")
        if not self.priced or not self.of.priced:
            return f"{n}: not priced"
        how = " (estimated)" if self.estimated else ""
        return (
            f"{n} cost ${self.calls_usd + self.sent_again_usd:,.2f} of {self.of.usd()}: "
            f"summarize requests ${self.calls_usd:,.2f}{how} · "
            f"sent again after them ${self.sent_again_usd:,.2f}"
        )

    def to_dict(self) -> dict[str, Any]:
        priced = self.priced and self.of.priced
        return {
            "compactions": len(self.costs),
            "usd": usd(self.calls_usd + self.sent_again_usd) if priced else None,
            "of_usd": usd(self.of.total) if self.of.priced else None,
            "calls_usd": usd(self.calls_usd) if priced else None,
            "calls_estimated": self.estimated,
            "sent_again_usd": usd(self.sent_again_usd) if priced else None,
            "each": [c.to_dict() for c in self.costs],
        }

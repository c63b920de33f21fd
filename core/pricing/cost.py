"""What a session's requests cost (docs/cost.md): each response's reported usage priced
by the `genai-prices` bundled table, offline; and what a replay's requests would have
cost, on the same request pattern.

A response's input is split as the API bills it: uncached, cache read, cache written for
5 minutes and for 1 hour; then its output. Each part is priced at the rate of the
response's tier (a model whose price steps up past a prompt size prices every token of a
longer prompt at the higher rate). A model the table does not know is named, never
guessed. The table is imported only when something it has not answered before is priced:
its answers are kept in the cache directory (`core.pricing.rates`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from compaction_inspector.core.formats.common import answered_by
from compaction_inspector.core.measuring.context_model import responses
from compaction_inspector.core.model import Session
from compaction_inspector.core.text import counted

if TYPE_CHECKING:
    pass
from compaction_inspector.core.model import immutable
from compaction_inspector.core.pricing.own_calls import CompactionCost, own_calls
from compaction_inspector.core.pricing.rates import (
    PARTS,
    Clock,
    billing_of,
    priced_parts,
    source,
    token_parts,
    usd,
)

CALLS = "compaction calls"  # a replay's summarize requests: estimated, as `OwnCall` prices them


# the agent's own summarize requests, which most transcripts report no usage for: estimated
OWN_CALLS = "own compaction calls (estimated)"


RECORDED_CALLS = "own compaction calls (recorded)"  # where the transcript reports their usage


ESTIMATED = (OWN_CALLS, CALLS)  # the parts no response reported: the rest is what was recorded


def signed(change: Decimal | None) -> str:
    """A change in dollars as a table shows it ("+1.18", "-0.85", "±0.00"); "" for None."""
    if change is None:
        return ""
    return "±0.00" if abs(change) < Decimal("0.005") else f"{change:+,.2f}"


@immutable()
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
    billing = billing_of(session)
    parts = dict.fromkeys(PARTS, Decimal(0))
    priced = 0
    unpriced: dict[str, int] = {}
    found = responses(session)
    clock = Clock(session)
    tokens: dict[str, dict[str, int]] = {}
    for response in found:
        usage = response.usage
        model = answered_by(usage, session.metadata)
        held = tokens.setdefault(model or "no model named", dict.fromkeys(PARTS, 0))
        for name, n in zip(PARTS, token_parts(usage), strict=True):
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


@immutable()
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

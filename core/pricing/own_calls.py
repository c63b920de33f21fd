"""What an agent's own compactions cost: each summarize request, recorded where the
transcript reports its usage, else estimated from what it summarized and wrote."""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from compaction_inspector.core.formats.common import answered_by
from compaction_inspector.core.measuring.context_model import Response, responses
from compaction_inspector.core.model import Session

if TYPE_CHECKING:
    pass
from compaction_inspector.core.model import immutable
from compaction_inspector.core.pricing.rates import Billing, Clock, billing_of, rates_at, sent_again, usd


@immutable()
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
        return rates_at(self.model, billing, self.tokens_in, self.at) if self.model else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.tokens_in,
            "cached_input_tokens": self.cached,
            "output_tokens": self.tokens_out,
            "recorded": self.recorded,
        }


@immutable()
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
    billing = billing_of(session)
    found = responses(session) if found is None else found
    calls = own_calls(session, found)
    starts = [r.start for r in found]
    clock = Clock(session)
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
            rates = rates_at(model, billing, usage.prompt_tokens, clock.at(found[k].start)) if model else None
            if rates is not None:
                again_usd = sent_again(rates, usage)
        out[c.index] = CompactionCost(call, call_usd, again, again_usd, before_next, c.index)
    return out


def own_calls(session: Session, found: Sequence[Response] | None = None) -> dict[int, OwnCall]:
    """Each full compaction the transcript records, by its boundary's index: the agent's
    own summarize request, which it reports no usage for (docs/cost.md). `found`: the
    session's responses, where the caller has them."""
    if all(c.kind == "microcompact" for c in session.compactions):
        return {}
    messages = session.messages
    found = responses(session) if found is None else found
    ends = [r.end for r in found]
    clock = Clock(session)
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

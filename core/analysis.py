"""Everything `analyze` reports about a session, computed once from its token counts."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.measuring.context_model import ContextModel
from compaction_inspector.core.measuring.grouping import Span, api_rounds, volleys
from compaction_inspector.core.measuring.pairing import PairingProblem, check
from compaction_inspector.core.measuring.pressure import Window, live_start
from compaction_inspector.core.measuring.tokens import ReportedUsage, TokenCounter, reported_usage
from compaction_inspector.core.model import Message, Session, immutable
from compaction_inspector.core.own.account import Account
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.own.counts import AgentCounts
from compaction_inspector.core.own.headroom import Headroom
from compaction_inspector.core.pricing.cost import CompactionsCost, Cost
from compaction_inspector.core.pricing.own_calls import compaction_costs
from compaction_inspector.core.sessions import whole_cost


@immutable()
class Analysis:
    catalogue: Catalogue  # what reads its sub-agents' transcripts, for its cost
    session: Session
    counter: TokenCounter
    account: Account  # what was in force: the window, the point, idle compaction
    tokens: tuple[int, ...]
    api_rounds: tuple[Span, ...]
    volleys: tuple[Span, ...]
    pairing_problems: tuple[PairingProblem, ...]
    reported: ReportedUsage | None
    context_start: int
    model: ContextModel
    mode: str = "context"  # or "messages": pressure of the messages only
    counts: AgentCounts | None = None  # what the agent counted against that point
    headroom: Headroom | None = None  # how far it is from compacting on its own, now

    @property
    def window(self) -> Window:
        return self.account.window

    @property
    def point(self) -> Point | None:
        """Where the preset's agent compacts, and why (None: no preset)."""
        return self.account.point

    @cached_property
    def cost(self) -> Cost:
        """What the session's responses cost, priced from their reported usage: the main
        chain, and apart, the sub-agents it ran."""
        return whole_cost(self.catalogue, self.session)

    @cached_property
    def compactions_cost(self) -> CompactionsCost:
        """What the transcript's own compactions cost, within the main chain's cost."""
        costs = compaction_costs(self.session, self.model.responses)
        return CompactionsCost(tuple(costs.values()), self.cost)

    @property
    def count_now(self) -> Count | None:
        """The agent's own count at the last check the transcript records."""
        return self.counts.at(len(self.session.messages)) if self.counts else None

    @property
    def sent_tokens(self) -> int:
        """The context the agent sends next: measured and anchored (`model`), or in
        "messages" mode the messages after the last compact boundary."""
        return self.model.tokens(len(self.tokens)) if self.mode == "context" else self.context_tokens

    @property
    def requests(self) -> int:
        """API requests: the rounds an assistant message opens (the first round holds
        what came before the first reply, in a round of its own)."""
        messages = self.session.messages
        return sum(1 for g in self.api_rounds if messages[g.start].role == "assistant")

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)

    @property
    def context_tokens(self) -> int:
        """Tokens of what is sent now: the messages after the last compact boundary."""
        return sum(self.tokens[self.context_start :])

    @property
    def pressure(self) -> float:
        return self.window.pressure(self.sent_tokens)

    def context_dict(self) -> dict[str, Any]:
        model = self.model
        measured = self.mode == "context"
        error = model.next_response_error
        reading = model.reading(len(self.tokens))
        parts = reading.parts()
        if not measured:  # the messages-only view: nothing but the messages
            parts = {**dict.fromkeys(parts, 0), "messages": self.sent_tokens}
        return {
            "tokens": self.sent_tokens,
            "pressure": round(self.pressure, 6),
            "source": reading.source if measured else "messages",
            # the parts of `tokens`, as the text and the app give them
            "breakdown": parts,
            "overhead_tokens": parts["overhead"],
            "overhead_source": model.overhead_source if measured else None,
            "scale": round(model.scale, 6) if measured else 1.0,
            "scale_pairs": model.pairs,
            "responses": len(model.responses),
            "next_response_error": round(error, 6) if error is not None else None,
            "preamble": [{"label": label, "tokens": n} for label, n in model.preamble],
        }

    def round_dicts(self) -> list[dict[str, Any]]:
        """Each API round with what the response opening it reported, and what the model
        predicts of that request without that report."""
        predicted = {p.response.start: p for p in self.model.predictions}
        rounds = []
        for g in self.api_rounds:
            p = predicted.get(g.start)
            rounds.append(
                {
                    **g.to_dict(),
                    "reported_prompt_tokens": p.response.prompt_tokens if p else None,
                    "estimated_prompt_tokens": p.estimated if p else self.model.tokens(g.start),
                }
            )
        return rounds

    def message_dict(self, index: int) -> dict[str, Any]:
        m = self.session.messages[index]
        return message_fields(m, index, self.tokens[index])

    def to_dict(self) -> dict[str, Any]:
        s = self.session
        return {
            "format": s.format,
            "path": s.path,
            "message_count": len(s.messages),
            "human_turns": s.human_turns(),
            "requests": self.requests,
            "tokenizer": self.counter.name,
            "tokenizer_exact": self.counter.exact,
            "tokenizer_warning": self.counter.warning,
            "tokens": self.total_tokens,
            "context_tokens": self.context_tokens,
            **self.window.to_dict(),
            "window_source": self.account.window_source,
            "slice": s.metadata.get("slice") is True,
            "auto_compact": {"tokens": self.point.tokens, "rule": self.point.rule} if self.point else None,
            **(
                {"idle_compact": {"tokens": idle.tokens, "rule": idle.rule}}
                if (idle := self.account.idle)
                else {}
            ),
            "pressure": round(self.pressure, 6),
            "percent_left": round(max(0.0, 100.0 * (1 - self.pressure)), 2),
            "context": self.context_dict(),
            "reported_usage": self.reported.to_dict() if self.reported else None,
            "cost": self.cost.to_dict(),
            "compactions_cost": self.compactions_cost.to_dict(),
            "metadata": {k: v for k, v in s.metadata.items() if k != "system"},
            "request_count": s.request_count,
            "request_index": s.request_index,
            "sidechain_count": len(s.sidechain),
            "agent_count": self.count_now.to_dict() if self.count_now else None,
            "compacts_in": self.headroom.to_dict() if self.headroom else None,
            "compactions": [
                {**c.to_dict(), "agent_count": why.to_dict() if (why := self.why(c.index)) else None}
                for c in s.compactions
            ],
            "messages": [self.message_dict(i) for i in range(len(s.messages))],
            "api_rounds": self.round_dicts(),
            "volleys": [v.to_dict() for v in self.volleys],
            "pairing_problems": [p.to_dict() for p in self.pairing_problems],
            "diagnostics": [d.to_dict() for d in s.diagnostics],
        }

    def why(self, boundary: int) -> Count | None:
        """What the agent counted just before its compaction at `boundary`."""
        return self.counts.before.get(boundary) if self.counts else None


def message_fields(m: Message, index: int | None, tokens: int) -> dict[str, Any]:
    return {
        "index": index,
        "role": m.role,
        "kind": m.kind,
        "id": m.id,
        "tokens": tokens,
        "line": m.line,
    }


def analyze(
    catalogue: Catalogue,
    session: Session,
    counter: TokenCounter,
    model: ContextModel,
    account: Account,
    mode: str = "context",
    counts: AgentCounts | None = None,
    left: Headroom | None = None,
) -> Analysis:
    """What `analyze` reports of `session`, counted by `counter` and measured by `model`."""
    messages = session.messages
    tokens = tuple(counter.count_all(messages))
    return Analysis(
        catalogue=catalogue,
        session=session,
        counter=counter,
        account=account,
        tokens=tokens,
        api_rounds=tuple(api_rounds(messages, tokens)),
        volleys=tuple(volleys(messages, tokens)),
        pairing_problems=tuple(check(messages)),
        reported=reported_usage(messages),
        context_start=live_start(messages),
        model=model,
        mode=mode,
        counts=counts,
        headroom=left,
    )

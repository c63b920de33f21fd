"""Everything `analyze` reports about a session, computed once from its token counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compaction_inspector.core.grouping import Span, api_rounds, volleys
from compaction_inspector.core.model import Message, Session
from compaction_inspector.core.pairing import PairingProblem, check
from compaction_inspector.core.pressure import Window, live_start
from compaction_inspector.core.tokens import ReportedUsage, TokenCounter, reported_usage


@dataclass(frozen=True)
class Analysis:
    session: Session
    counter: TokenCounter
    window: Window
    tokens: tuple[int, ...]
    api_rounds: tuple[Span, ...]
    volleys: tuple[Span, ...]
    pairing_problems: tuple[PairingProblem, ...]
    reported: ReportedUsage | None
    context_start: int

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)

    @property
    def context_tokens(self) -> int:
        """Tokens of what is sent now: the messages after the last compact boundary."""
        return sum(self.tokens[self.context_start :])

    @property
    def pressure(self) -> float:
        return self.window.pressure(self.context_tokens)

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
            "tokenizer": self.counter.name,
            "tokenizer_exact": self.counter.exact,
            "tokenizer_warning": self.counter.warning,
            "tokens": self.total_tokens,
            "context_tokens": self.context_tokens,
            **self.window.to_dict(),
            "pressure": round(self.pressure, 6),
            "percent_left": round(max(0.0, 100.0 * (1 - self.pressure)), 2),
            "reported_usage": self.reported.to_dict() if self.reported else None,
            "metadata": {k: v for k, v in s.metadata.items() if k != "system"},
            "request_count": s.request_count,
            "request_index": s.request_index,
            "sidechain_count": len(s.sidechain),
            "messages": [self.message_dict(i) for i in range(len(s.messages))],
            "api_rounds": [g.to_dict() for g in self.api_rounds],
            "volleys": [v.to_dict() for v in self.volleys],
            "pairing_problems": [p.to_dict() for p in self.pairing_problems],
            "diagnostics": [d.to_dict() for d in s.diagnostics],
        }


def message_fields(m: Message, index: int | None, tokens: int) -> dict[str, Any]:
    return {
        "index": index,
        "role": m.role,
        "kind": m.kind,
        "id": m.id,
        "tokens": tokens,
        "line": m.line,
    }


def analyze(session: Session, counter: TokenCounter, window: Window | None = None) -> Analysis:
    messages = session.messages
    tokens = tuple(counter.count_all(messages))
    return Analysis(
        session=session,
        counter=counter,
        window=window or Window(),
        tokens=tokens,
        api_rounds=tuple(api_rounds(messages, tokens)),
        volleys=tuple(volleys(messages, tokens)),
        pairing_problems=tuple(check(messages)),
        reported=reported_usage(messages),
        context_start=live_start(messages),
    )

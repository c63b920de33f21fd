"""Where an agent compacts on its own, as words any agent's rule fills in (docs/agents.md):
its `Point` in a window, and the `Count` it compared with that point at a check. Each
agent's own rule is in its package (`core.agents.<agent>.rules`)."""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.model import immutable


@immutable()
class Point:
    """Where an agent compacts, and the rule that put it there, in words."""

    tokens: int | None  # None: the window is too small for the rule to leave a point
    rule: str


def version(value: Any) -> tuple[int, ...] | None:
    """A dotted version ("2.1.19") as numbers to compare, or None."""
    if not isinstance(value, str):
        return None
    parts = value.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() and len(p) < 8 for p in parts) else None


@immutable()
class Count:
    """The count an agent compared with its point at one check, as its parts (name,
    tokens); `estimated` names the parts that are our estimate, not the agent's own."""

    agent: str
    parts: tuple[tuple[str, int], ...]
    estimated: tuple[str, ...]
    point: Point
    when: str = ""
    index: int | None = None  # of the message the check came before
    note: str = ""  # where an estimated part's figure comes from
    strictly: bool = False  # it fires only over the point (Codex on a switch to a smaller window)
    # the total at either end of an estimated part's documented range, where it has one
    spread: tuple[int, int] | None = None
    # which part took the count to the point, and why the agent counts it, where that is a known fault
    decided: str = ""

    @property
    def total(self) -> int:
        return sum(tokens for _, tokens in self.parts)

    @property
    def fires(self) -> bool:
        return self._fires_at(self.total)

    def _fires_at(self, total: int) -> bool:
        point = self.point.tokens
        return point is not None and (total > point if self.strictly else total >= point)

    @property
    def undecided(self) -> bool:
        """Its estimated part's range puts the count on both sides of the point: it fires
        here or at the next check, and the transcript cannot say which."""
        return self.spread is not None and self._fires_at(self.spread[0]) != self._fires_at(self.spread[1])

    def line(self, rule: bool = True) -> str:
        """What it counted against its point, as parts ("Codex counted 246,959 ≥ 244,800
        (90 % of …): 230,747 reported + …"); `rule` False leaves out why the point sits
        there, for a line that shows it beside."""
        point = self.point.tokens
        sign = (">" if self.strictly else "≥") if self.fires else ("≤" if self.strictly else "<")
        why = f" ({self.point.rule})" if rule else ""
        against = f" {sign} {point:,}{why}" if point is not None else ""
        parts = " + ".join(
            f"{tokens:,} {name}" + (" (estimated)" if name in self.estimated else "")
            for name, tokens in self.parts
        )
        told = f"{self.agent} counted {self.total:,}{against}: {parts}"
        if self.undecided and self.spread is not None:
            low, high = self.spread
            told += f"; {low:,}-{high:,} over the estimate's range: it fires here or at the next check"
        if self.decided and self.fires:
            told += f"; {self.decided}"
        return told

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "total": self.total,
            "point": self.point.tokens,
            "rule": self.point.rule,
            "fires": self.fires,
            "when": self.when or None,
            "parts": {name.replace(" ", "_"): tokens for name, tokens in self.parts},
            "estimated": [name.replace(" ", "_") for name in self.estimated],
            "estimate_source": self.note or None,
            "total_range": list(self.spread) if self.spread is not None else None,
            "fires_here_or_next": self.undecided,
            **({"decided_by": self.decided} if self.decided and self.fires else {}),
        }

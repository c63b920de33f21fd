"""A sweep's points: what each session gave at each, summed over the sessions, and the
front of the points no other beats on every count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from compaction_inspector.core.model import immutable
from compaction_inspector.core.pricing.cost import signed
from compaction_inspector.core.pricing.rates import usd
from compaction_inspector.core.strategies import Strategy
from compaction_inspector.core.sweeping.grid import Grid, Values

# a table's columns (`GridPoint.cells`), each with the rank at which a narrow one drops it (0: never)
COLUMNS = {
    "compactions": 0, "a session": 3, "over": 0, "sessions over": 5, "peak median": 3, "peak max": 4,
    "removed": 6, "kept": 1, "cost": 0, "vs real": 2,
}  # fmt: skip


@immutable()
class Outcome:
    """One session replayed at one point."""

    compactions: int
    peak_pressure: float
    over_window: int  # rounds over the usable window
    tokens_removed: int
    cost: Decimal
    real_cost: Decimal
    facts_kept: int  # of the facts in what it removed, how many each segment's last request still holds
    facts_total: int
    priced: bool = True  # the session's real cost and the replay's are known (else neither is summed)

    def to_list(self) -> list[Any]:
        return [
            self.compactions, self.peak_pressure, self.over_window, self.tokens_removed,
            str(self.cost), str(self.real_cost), self.facts_kept, self.facts_total, self.priced,
        ]  # fmt: skip

    @staticmethod
    def of_list(v: list[Any]) -> Outcome:
        return Outcome(
            int(v[0]), float(v[1]), int(v[2]), int(v[3]), Decimal(v[4]), Decimal(v[5]), int(v[6]), int(v[7]),
            bool(v[8]),
        )  # fmt: skip


@dataclass
class GridPoint:
    """A grid point summed over the sessions."""

    values: Values
    marks: list[str] = field(default_factory=list)  # "current", "default"
    sessions: int = 0
    compactions: int = 0
    sessions_over: int = 0  # sessions with a round over the window
    rounds_over: int = 0
    # the sessions' peaks to 0.01 %, by how many reached each: its memory stays flat in the sessions
    peaks: Counter[float] = field(default_factory=Counter)
    tokens_removed: int = 0
    priced: int = 0  # the sessions its cost and real cost are summed over
    cost: Decimal = Decimal(0)
    real_cost: Decimal = Decimal(0)
    facts_kept: int = 0
    facts_total: int = 0
    on_front: bool = False
    # the session whose compactions (then cost) differ most from the current setting's
    changed_most: tuple[int, Decimal, str] | None = None

    def add(self, o: Outcome, path: str, current: Outcome) -> None:
        self.sessions += 1
        self.compactions += o.compactions
        self.sessions_over += o.over_window > 0
        self.rounds_over += o.over_window
        self.peaks[round(o.peak_pressure, 4)] += 1
        self.tokens_removed += o.tokens_removed
        if o.priced:
            self.priced += 1
            self.cost += o.cost
            self.real_cost += o.real_cost
        self.facts_kept += o.facts_kept
        self.facts_total += o.facts_total
        change = (abs(o.compactions - current.compactions), abs(o.cost - current.cost), path)
        if change[:2] > (0, 0) and (self.changed_most is None or change[:2] > self.changed_most[:2]):
            self.changed_most = change

    @property
    def per_session(self) -> float:
        """Its compactions a session, on average."""
        return self.compactions / self.sessions if self.sessions else 0.0

    @property
    def retention(self) -> float | None:
        """The share of the facts in what it removed that the sessions' last requests still hold."""
        return self.facts_kept / self.facts_total if self.facts_total else None

    def settings(self, declared: Strategy[Any]) -> dict[str, int | float | None]:
        """Its values by their compaction.yaml keys (`trigger.tokens`), as `--grid` names them."""
        keys = {s.name: s.key for s in declared.settings}
        return {keys[name]: v for name, v in self.values.items()}

    def simulate_args(self, declared: Strategy[Any]) -> list[str]:
        """The `simulate` arguments that replay this point on one session."""
        by_name = {s.name: s for s in declared.settings}
        return [
            "--strategy",
            declared.name,
            *(a for k, v in self.values.items() for a in (str(by_name[k].flag), by_name[k].show(v))),
        ]

    def label(self, declared: Strategy[Any]) -> str:
        """Its settings in words, its marks after them: `trigger.percent 80 (current)`."""
        words = ", ".join(f"{k} {'none' if v is None else v}" for k, v in self.settings(declared).items())
        return words + (f" ({', '.join(self.marks)})" if self.marks else "")

    def _nth_peak(self, n: int) -> float:
        """The n-th smallest of the sessions' peaks (from 0)."""
        seen = 0
        for value in sorted(self.peaks):
            seen += self.peaks[value]
            if seen > n:
                return value
        raise IndexError(n)

    @property
    def median_peak(self) -> float | None:
        """The sessions' median peak pressure (of an even number, the mean of the middle two)."""
        if not self.sessions:
            return None
        low, high = self._nth_peak((self.sessions - 1) // 2), self._nth_peak(self.sessions // 2)
        return round((low + high) / 2, 6)

    @property
    def max_peak(self) -> float | None:
        return max(self.peaks) if self.peaks else None

    def cells(self) -> dict[str, str]:
        """Its figures as every table shows them, by column (`COLUMNS`)."""
        median, top = self.median_peak, self.max_peak
        kept = self.retention
        return {
            "compactions": f"{self.compactions:,}",
            "a session": f"{self.per_session:.1f}",
            "over": f"{self.rounds_over:,}",
            "sessions over": f"{self.sessions_over:,}",
            "peak median": "—" if median is None else f"{median:.1%}",
            "peak max": "—" if top is None else f"{top:.1%}",
            "removed": f"{self.tokens_removed:,}",
            "kept": "—" if kept is None else f"{kept:.0%}",
            "cost": f"${self.cost:,.2f}" if self.priced else "not priced",
            "vs real": signed(self.cost - self.real_cost) if self.priced else "",
        }

    def to_dict(self, declared: Strategy[Any]) -> dict[str, Any]:
        retention = self.retention
        return {
            "settings": self.settings(declared),
            "marks": self.marks,
            "sessions": self.sessions,
            "compactions": self.compactions,
            "compactions_per_session": round(self.per_session, 4),
            "sessions_over_window": self.sessions_over,
            "rounds_over_window": self.rounds_over,
            "peak_pressure": {"median": self.median_peak, "max": self.max_peak},
            "tokens_removed": self.tokens_removed,
            "retention": {
                "kept": self.facts_kept,
                "total": self.facts_total,
                "share": round(retention, 4) if retention is not None else None,
            },
            "priced_sessions": self.priced,  # the cost and its change are summed over these only
            "cost_usd": usd(self.cost) if self.priced else None,
            "cost_change_usd": usd(self.cost - self.real_cost) if self.priced else None,
            "on_front": self.on_front,
            "changed_most": self.changed_most[2] if self.changed_most is not None else None,
            "simulate_args": self.simulate_args(declared),
        }


def summed(grid: Grid, per_session: Iterable[tuple[str, list[Outcome]]]) -> list[GridPoint]:
    """The points, each summed over the sessions as they come (none is kept), the front
    marked (`front`)."""
    found = [GridPoint(dict(v), grid.marked(n)) for n, v in enumerate(grid.values)]
    current = grid.marks["current"]
    for path, outcomes in per_session:
        for point, o in zip(found, outcomes, strict=True):
            point.add(o, path, outcomes[current])
    for p in front(found):
        p.on_front = True
    return found


def _counts(p: GridPoint) -> tuple[Decimal, ...]:
    """What a point is judged on, each the less the better."""
    kept = p.retention
    return Decimal(p.compactions), p.cost, Decimal(p.rounds_over), -Decimal(1 if kept is None else kept)


TIED = (
    "every point comes to the same compactions, cost, rounds over and kept: the setting changes nothing here"
)


def tied(found: Sequence[GridPoint]) -> bool:
    """Every point comes to the same on every count: the setting changes nothing here."""
    return len(found) > 1 and len({_counts(p) for p in found}) == 1


def front(found: Sequence[GridPoint]) -> list[GridPoint]:
    """The points no other is at least as good as on every count and better on one:
    fewer compactions, lower cost, fewer rounds over the window, more kept of what was
    removed (a point that removed nothing kept all of it). None where they all tie: no
    point is better than another."""
    if tied(found):
        return []

    def beats(a: GridPoint, b: GridPoint) -> bool:
        ka, kb = _counts(a), _counts(b)
        return all(x <= y for x, y in zip(ka, kb, strict=True)) and ka != kb

    return [p for p in found if not any(beats(q, p) for q in found if q is not p)]


def ticks(low: float, high: float, whole: bool) -> list[float]:
    """Where an axis from `low` to `high` is ticked: both ends and the middle (a count's
    middle a whole number), each once."""
    middle = (low + high) / 2
    if whole:
        middle = float(round(middle))
    return sorted({low, middle, high})

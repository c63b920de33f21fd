"""Every strategy on one session, side by side (docs/strategies.md#comparing-them): each
replayed round by round and priced on the session's own request pattern (`core.pricing`),
beside what the session really cost, with what its run on the request the agent sends
next kept of what it summarized or cleared (`core.replaying.retention`). A row made once
is kept in the cache (`core.caching.kept_runs`) and read back by a later run on the same
session with the same settings."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from compaction_inspector.core.caching.kept_runs import KeptRuns, policy_key
from compaction_inspector.core.caching.records import decoded, encoded
from compaction_inspector.core.forked import spread
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.model import immutable
from compaction_inspector.core.own.uncompacted import Uncompacted, uncompacted
from compaction_inspector.core.pricing.cost import Cost
from compaction_inspector.core.pricing.own_calls import CompactionCost, OwnCall
from compaction_inspector.core.pricing.rates import usd
from compaction_inspector.core.replaying.retention import Retention, Share
from compaction_inspector.core.replaying.simulation import RoundPoint, Simulation, Totals
from compaction_inspector.core.strategies.declaration import to_config

# what a table sorts by: the name a user types, and the row's value (None sorts last)
SORTS: dict[str, Callable[[Row], Any]] = {
    "name": lambda r: r.strategy or "",
    "compactions": lambda r: r.compactions,
    "peak": lambda r: r.peak_pressure,
    "final": lambda r: r.final_pressure,
    "over": lambda r: r.rounds_over,
    "removed": lambda r: r.tokens_removed,
    "rewritten": lambda r: r.cost.rewritten,
    "cost": lambda r: r.cost.total if r.cost.priced else None,
    "kept": lambda r: r.kept,
}


@immutable()
class Row:
    """One strategy replayed on the session (`strategy` None: no compaction)."""

    strategy: str | None
    label: str
    family: str | None
    settings: dict[str, Any]
    compactions: int
    peak_pressure: float
    final_pressure: float
    rounds_over: int
    tokens_removed: int
    cost: Cost
    cost_change: Decimal | None  # against what the session really cost (None: it was not priced)
    retention: Retention | None  # of its run on the next request (None: it changed nothing there)
    # the baseline's: the session with no compaction at all, its own included
    uncompacted: Uncompacted | None = None
    caveat: str = ""  # what its strategy's source documents that it does not model

    @property
    def kept(self) -> float | None:
        """The share of every fact it summarized or cleared that is still there."""
        return self.retention.overall if self.retention is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy if self.strategy is not None else BASELINE,  # as the CLI names it
            "label": self.label,
            "family": self.family,
            "settings": self.settings,
            "compactions": self.compactions,
            "peak_pressure": round(self.peak_pressure, 6),
            "final_pressure": round(self.final_pressure, 6),
            "rounds_over_window": self.rounds_over,
            "tokens_removed": self.tokens_removed,
            "cache_rewritten_tokens": self.cost.rewritten,
            "cost": self.cost.to_dict(),
            "cost_change_usd": usd(self.cost_change) if self.cost_change is not None else None,
            "retention": self.retention.to_dict() if self.retention is not None else None,
            "kept": round(self.kept, 4) if self.kept is not None else None,
            **({"no_compaction": self.uncompacted.to_dict()} if self.uncompacted is not None else {}),
        }


@immutable()
class Comparison:
    """The rows, sorted, and what the session really cost."""

    rows: tuple[Row, ...]
    real: Cost

    def sorted(self, key: str, descending: bool = False) -> Comparison:
        """The rows by `key` (one of SORTS); rows without a value go last either way."""
        value = SORTS[key]
        known = [r for r in self.rows if value(r) is not None]
        unknown = [r for r in self.rows if value(r) is None]
        return Comparison((*sorted(known, key=value, reverse=descending), *unknown), self.real)

    def to_dict(self) -> dict[str, Any]:
        return {
            "real_cost": self.real.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "caveats": self.caveats(),
        }

    def caveats(self) -> list[str]:
        """What its rows' sources document that a row does not model, or a default the
        source leaves unset that a row had to choose, one line each."""
        return [f"{r.strategy}: {r.caveat}" for r in self.rows if r.strategy is not None and r.caveat]


def compare(
    inspection: Inspection,
    strategies: Sequence[str],
    progress: Callable[[int, int, str], None] | None = None,
    stop: Callable[[], bool] | None = None,
    ranked: Callable[[Comparison], None] | None = None,
    jobs: int = 1,
    keep: bool = False,
) -> Comparison:
    """No compaction, then each of `strategies`, on the inspection's session, each row a
    run before kept read back first; `progress` is told (done, of, name) as each is read
    back, begins here or ends in another process, `ranked` the rows made so far, in the
    order asked, after each (a screen shows them as they come); `stop` cancels it (raises
    `Cancelled`).

    With `jobs` > 1 the rows are made in up to `jobs` forked processes (`core.forked`).
    `keep`: what each row made stays in the inspection, as if made here (a report draws
    the replays and shows the runs' steps): the processes replay and price the rows and
    send the replays back, while this one runs each strategy on the request sent next,
    for what it kept, as its row comes back."""
    real = inspection.real_cost
    every = [BASELINE, *strategies]
    kept = _kept_rows(inspection)
    made: dict[int, Row] = {}
    for k, name in enumerate(every):  # the rows kept from a run before come first, told as made
        found = _kept_row(kept, inspection, name)
        if found is None:
            continue
        made[k] = found
        if progress is not None:
            progress(len(made), len(every), name)
        if ranked is not None:
            ranked(Comparison(tuple(made[n] for n in sorted(made)), real))
    at = [k for k in range(len(every)) if k not in made]  # the rows to make, where each goes
    todo = [every[k] for k in at]
    if jobs > 1 and todo:  # found here once, not in each process
        inspection.find_facts()
        if not keep and any(name != BASELINE for name in todo):
            inspection.finder.index()

    def row(name: str) -> tuple[Row, _Sent | None]:
        if progress is not None and jobs <= 1:
            progress(len(made), len(every), name)
        replay, done = _replayed(inspection, name, real, stop)
        if not keep:
            return _retained(inspection, done), None
        return done, (replay.points, replay.usable_window, replay.totals)

    try:
        for k, (done, sent) in spread(row, todo, jobs):
            if sent is not None:  # kept here as if made here (where it was: kept already)
                inspection.keep_priced(Simulation(inspection.policy(todo[k]), *sent), done.cost)
                done = _retained(inspection, done)
            made[at[k]] = done
            if kept is not None:
                kept.put(_row_key(inspection, every[at[k]]), encoded(done))
            if progress is not None and jobs > 1:
                progress(len(made), len(every), todo[k])
            if ranked is not None:
                ranked(Comparison(tuple(made[n] for n in sorted(made)), real))
    finally:  # the rows made before a stop are kept too
        if kept is not None:
            kept.save()
    inspection.keep_found()  # what the retentions found too
    return Comparison(tuple(made[n] for n in range(len(every))), real)


COMPARE_VERSION = "1"  # bump when a row's figures change for the same session and settings
_ROW_RECORDS: dict[str, type] = {
    kind.__name__: kind for kind in (Row, Cost, CompactionCost, OwnCall, Retention, Share, Uncompacted)
}


def _kept_rows(inspection: Inspection) -> KeptRuns | None:
    """The rows a run before made of this session under these settings (docs/performance.md);
    None where the session was not read from bytes (nothing tells it) or the cache is off."""
    session = inspection.session
    if session.content_hash is None:
        return None
    kept = KeptRuns.of(
        "compare", [session.content_hash, session.request_index], [COMPARE_VERSION], inspection.config
    )
    return kept if kept.file is not None else None


def _row_key(inspection: Inspection, name: str) -> str:
    options = inspection.config.options(name) if name != BASELINE else None
    return json.dumps([name, policy_key(options) if options is not None else None])


def _kept_row(kept: KeptRuns | None, inspection: Inspection, name: str) -> Row | None:
    raw = kept.get(_row_key(inspection, name)) if kept is not None else None
    if raw is None:
        return None
    try:
        row = decoded(raw, _ROW_RECORDS)
    except (
        ValueError,
        TypeError,
        ArithmeticError,
        RecursionError,
    ):  # not what this version keeps: made again
        return None
    return row if isinstance(row, Row) else None


# a replay sent back from another process: its points, usable window and totals (its
# policy, which holds the strategy's functions, is the receiver's own)
_Sent = tuple[tuple[RoundPoint, ...], int, Totals]


def _replayed(
    inspection: Inspection, name: str, real: Cost, stop: Callable[[], bool] | None
) -> tuple[Simulation, Row]:
    """`name` (BASELINE: no compaction) replayed and priced: its replay, and its row but
    for what its run kept (`_retained`)."""
    policy = inspection.policy(name)
    replay, cost = inspection.priced(policy, stop)
    t = replay.totals
    strategy = inspection.config.catalogue.strategies[name] if name != BASELINE else None
    options = inspection.config.options(name) if strategy is not None else None
    return replay, Row(
        strategy=name if strategy is not None else None,
        label=policy.label,
        family=strategy.family if strategy is not None else None,
        settings=to_config(options) if options is not None else {},
        compactions=t.compactions,
        peak_pressure=t.peak_pressure,
        final_pressure=replay.points[-1].pressure_after if replay.points else 0.0,
        rounds_over=t.rounds_exceeding_window,
        tokens_removed=t.tokens_removed,
        cost=cost,
        cost_change=cost.total - real.total if cost.priced and real.priced else None,
        retention=None,
        uncompacted=(
            uncompacted(
                replay.points, inspection.messages, inspection.tokens, inspection.config.window.usable
            )
            if strategy is None
            else None
        ),
        caveat=(strategy.caveat or "") if strategy is not None else "",
    )


def _retained(inspection: Inspection, row: Row) -> Row:
    """`row` with what its strategy's run on the request sent next kept."""
    return row if row.strategy is None else replace(row, retention=_kept(inspection, row.strategy))


def _kept(inspection: Inspection, name: str) -> Retention | None:
    """What its run on the request the agent sends next kept of the messages it replaced
    or edited; None when it changed none."""
    result = inspection.run(name)
    if result.messages is None:
        return None
    finder = inspection.finder
    after = set(result.messages)
    replaced = [m for m in finder.source if m not in after]
    return finder.retention(replaced, result.messages) if replaced else None

"""A strategy's settings swept over many sessions (docs/strategies.md#sweeping-settings):
every session replayed under every point of a grid, the figures summed per point, and
the points no other beats on every count (the trade-off front).

The per-session work is a pure function of (file, strategy, grid): a session is read
and counted once and replayed at every point, so a process pool, or a Ray cluster for
more sessions than one machine holds, runs one session per task. Each point says the
`simulate` arguments that replay it on one session. The user's current setting and the
strategy's documented default are swept with the grid, marked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from compaction_inspector.core.caching.kept_runs import KeptRuns, policy_key
from compaction_inspector.core.caching.memo import forget
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.pricing.cost import session_cost
from compaction_inspector.core.pricing.replay import replay_cost
from compaction_inspector.core.replaying.retention import carried
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.sweeping.grid import Grid, Values
from compaction_inspector.core.sweeping.points import GridPoint, Outcome, summed
from compaction_inspector.core.text import counted

SWEEP_VERSION = "4"  # bump when a replay's figures change for the same session and settings


def sweep_session(
    path: str, strategy: str, grid_points: Sequence[Values], config: Config
) -> list[Outcome] | str:
    """Each point replayed on the session at `path` (read and counted once, and only when
    some point is not kept from a sweep before); a reason instead when it cannot be read.
    The one task a sweep maps over its sessions, in a pool or on Ray."""
    kept, policies, found = _looked_up(path, strategy, grid_points, config)
    if None in found:
        forget()  # what the session before left in the caches goes: a worker's memory stays flat
        try:
            inspection = Inspection.of(config.catalogue.formats.load(path), config)
        except LoadError as exc:
            return str(exc)
        real = session_cost(inspection.session)
        for n, options in enumerate(policies):
            if found[n] is None:
                replay = inspection.replay(Policy(config.catalogue.strategy(strategy), options), ends=True)
                t = replay.totals
                # kept is of what the policy removed: a replay that compacted nothing has none
                known = inspection.facts
                shares = (
                    [carried(e.source, e.sent, known) for e in replay.ends or ()] if t.compactions else []
                )
                cost = replay_cost(inspection.session, replay, inspection.model.responses)
                found[n] = kept.put(options, Outcome(
                    t.compactions, t.peak_pressure, t.rounds_exceeding_window, t.tokens_removed,
                    cost.total, real.total,
                    sum(s.kept for s in shares), sum(s.total for s in shares), cost.priced and real.priced,
                ))  # fmt: skip
        kept.save()
    return [o for o in found if o is not None]


def kept_outcomes(
    path: str, strategy: str, grid_points: Sequence[Values], config: Config
) -> list[Outcome] | None:
    """The session's outcomes when a sweep before kept every point, without reading it."""
    found = _looked_up(path, strategy, grid_points, config)[2]
    return None if None in found else [o for o in found if o is not None]


def _looked_up(
    path: str, strategy: str, grid_points: Sequence[Values], config: Config
) -> tuple[_Kept, list[Any], list[Outcome | None]]:
    """The session's kept outcomes, each point's options, and its outcome where kept."""
    kept = _Kept(path, strategy, config)
    policies = [with_values(config.options(strategy), values) for values in grid_points]
    return kept, policies, [kept.get(p) for p in policies]


class _Kept:
    """A session's outcomes kept between sweeps (`KeptRuns`), by policy: under the file's
    identity (path, size, time written), the strategy and the settings the sweep ran with."""

    def __init__(self, path: str, strategy: str, config: Config) -> None:
        try:
            st = os.stat(path)
            identity: list[Any] | None = [str(Path(path).resolve()), st.st_size, st.st_mtime_ns]
        except OSError:
            identity = None
        self.runs = (
            KeptRuns(None, {})
            if identity is None
            else KeptRuns.of("sweeps", identity, [strategy, SWEEP_VERSION], config)
        )

    def get(self, options: Any) -> Outcome | None:
        raw = self.runs.get(policy_key(options))
        try:
            return Outcome.of_list(raw) if raw is not None else None
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return None

    def put(self, options: Any, outcome: Outcome) -> Outcome:
        self.runs.put(policy_key(options), outcome.to_list())
        return outcome

    def save(self) -> None:
        self.runs.save()


@dataclass
class Sweep:
    """A finished (or stopped) sweep: its grid summed per point over the sessions read."""

    grid: Grid
    points: list[GridPoint]
    sessions: int
    skipped: dict[str, str]  # path: why it could not be read
    stopped: bool = False  # interrupted: the sums are of the sessions finished
    unpriced: tuple[str, ...] = ()  # sessions read whose cost the price table cannot give: not in the costs

    def to_dict(self) -> dict[str, Any]:
        strategy = self.grid.strategy
        return {
            "strategy": strategy,
            "sessions": self.sessions,
            "stopped": self.stopped,
            "skipped": self.skipped,
            "unpriced": list(self.unpriced),
            "points": [p.to_dict(self.grid.declared) for p in self.points],
        }

    def unpriced_note(self) -> str:
        """Which sessions its costs leave out, and over how many they are summed."""
        priced = self.sessions - len(self.unpriced)
        names = ", ".join(Path(p).name for p in self.unpriced)
        return (
            f"cost summed over the {counted(priced, 'priced session')} only; "
            f"not priced (a model the price table lacks, or no usage reported): {names}"
        )

    def rows(self) -> list[tuple[int, str, dict[str, str]]]:
        """Each point as every table shows it, the front first, the cheapest first: its
        index, its settings (★ on the front) and its cells by column."""
        points, declared = self.points, self.grid.declared
        order = sorted(range(len(points)), key=lambda n: (not points[n].on_front, points[n].cost, n))
        return [
            (n, ("★ " if points[n].on_front else "  ") + points[n].label(declared), points[n].cells())
            for n in order
        ]


Progress = Callable[[int, int, float], None]  # sessions done, of, seconds left at the rate so far


def sweep(
    paths: Sequence[str],
    grid: Grid,
    config: Config,
    jobs: int = 1,
    ray: str | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> Sweep:
    """Every session replayed at every point of `grid`: what a sweep before kept is read
    from the cache, the rest in a pool of `jobs` processes, or on Ray (`ray`: a cluster's
    address, or "local" to start one of `jobs` workers here). Ctrl-C, or `stop` answering
    True, ends it with the sessions finished so far."""
    run = _Run()
    found = summed(grid, run.finished(paths, grid, config, jobs, ray, progress, stop))
    return Sweep(grid, found, run.sessions, run.skipped, run.stopped, tuple(run.unpriced))


@dataclass
class _Run:
    """What a sweep met as its sessions finished: how many, which could not be read, and
    whether it was stopped."""

    sessions: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    stopped: bool = False
    unpriced: list[str] = field(default_factory=list)

    def finished(
        self,
        paths: Sequence[str],
        grid: Grid,
        config: Config,
        jobs: int,
        ray: str | None,
        progress: Progress | None,
        stop: Callable[[], bool] | None,
    ) -> Iterator[tuple[str, list[Outcome]]]:
        """Each session's outcomes as it finishes (what a sweep before kept first: a
        re-sweep with nothing changed starts no process at all), none kept here."""
        todo = []
        for path in paths:
            kept = kept_outcomes(path, grid.strategy, grid.values, config)
            if kept is None:
                todo.append(path)
            else:
                yield self._done(path, kept)
        work = partial(sweep_session, strategy=grid.strategy, grid_points=grid.values, config=config)
        began = time.monotonic()
        results = _mapped(work, todo, jobs, ray)
        try:
            for n, (path, found) in enumerate(zip(todo, results, strict=False), start=1):
                if isinstance(found, str):
                    self.skipped[path] = found
                else:
                    yield self._done(path, found)
                if progress is not None:
                    left = (time.monotonic() - began) / n * (len(todo) - n)
                    progress(len(paths) - len(todo) + n, len(paths), left)
                if stop is not None and stop():
                    self.stopped = True
                    break
        except KeyboardInterrupt:  # what finished is kept and summed
            self.stopped = True
        finally:
            results.close()

    def _done(self, path: str, outcomes: list[Outcome]) -> tuple[str, list[Outcome]]:
        self.sessions += 1
        if outcomes and not outcomes[0].priced:
            self.unpriced.append(path)
        return path, outcomes


def _mapped(
    work: Callable[[str], list[Outcome] | str], paths: list[str], jobs: int, ray: str | None
) -> Generator[list[Outcome] | str, None, None]:
    """`work` of each path, in order: here, in a pool of `jobs` processes, or on Ray."""
    if ray is not None:
        from compaction_inspector.core.sweeping import cluster

        yield from cluster.mapped(work, paths, jobs, ray)
    elif jobs > 1 and len(paths) > 1:
        # spawned, not forked: a fork copies a tokenizer's locks mid-use in a process that counted before
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            try:
                yield from pool.map(work, paths)
            finally:
                pool.shutdown(cancel_futures=True)
    else:
        yield from map(work, paths)

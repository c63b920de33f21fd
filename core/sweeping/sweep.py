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

import contextlib
import hashlib
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache, partial
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.caching.memo import forget
from compaction_inspector.core.caching.token_cache import LOADER_VERSION
from compaction_inspector.core.config import Config
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.formats import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.pricing.cost import session_cost, signed
from compaction_inspector.core.pricing.rates import source, usd
from compaction_inspector.core.pricing.replay import replay_cost
from compaction_inspector.core.replaying.retention import carried
from compaction_inspector.core.replaying.simulate import Policy
from compaction_inspector.core.strategies import OptionError, Strategy
from compaction_inspector.core.strategies.declaration import KEEP, TRIGGER, Setting, to_config, with_values
from compaction_inspector.core.text import counted

NUMERIC = ("int", "int?", "number?")
# a table's columns (`GridPoint.cells`), each with the rank at which a narrow one drops it (0: never)
COLUMNS = {
    "compactions": 0, "a session": 3, "over": 0, "sessions over": 5, "peak median": 3, "peak max": 4,
    "removed": 6, "kept": 1, "cost": 0, "vs real": 2,
}  # fmt: skip
PACKAGE = "compaction-inspector"
MAX_POINTS = 1_000  # about 2 minutes a session on 2 cores at a replay's cost (docs/performance.md)
SWEEP_VERSION = "4"  # bump when a replay's figures change for the same session and settings


@dataclass(frozen=True)
class Axis:
    """One setting and the values it takes: `trigger.tokens=100000:160000:20000`."""

    setting: Setting
    values: tuple[int | float, ...]


def grid(declared: Strategy[Any], spec: str) -> list[Axis]:
    """`KEY=FROM:TO:STEP,...` over a strategy's numeric settings (their compaction.yaml
    keys), each range inclusive; an error names what is wrong."""
    settings = {s.key: s for s in declared.settings if s.option.kind in NUMERIC}
    axes: list[Axis] = []
    size = 1
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        key, _, span = part.partition("=")
        if key not in settings:
            raise OptionError(
                f"{key!r} is not a numeric setting of {declared.name}; choose from {', '.join(settings)}"
            )
        if any(a.setting.key == key for a in axes):
            raise OptionError(f"{key} is given twice: give each setting one FROM:TO:STEP")
        bounds = span.split(":")
        try:
            start, stop, step = (float(b) if "." in b else int(b) for b in bounds)
        except ValueError:
            raise OptionError(
                f"{key} takes FROM:TO:STEP, such as 100000:160000:20000, not {span!r}"
            ) from None
        if step <= 0 or stop < start:
            raise OptionError(f"{key}: FROM:TO:STEP needs FROM <= TO and a STEP above 0, not {span!r}")
        count = int((stop - start) / step) + 1
        size *= count
        if size > MAX_POINTS:  # said before a point is made: a huge grid would fill memory first
            raise OptionError(
                f"the grid is {size:,} points or more, past the {MAX_POINTS:,} a sweep takes (each "
                f"point replays every session): take a larger STEP or a shorter range"
            )
        axes.append(Axis(settings[key], tuple(start + k * step for k in range(count))))
    if not axes:
        raise OptionError("the grid is empty: give KEY=FROM:TO:STEP")
    return axes


UNSET_PERCENT = "50:90:10"  # a percent knob unset by default: from half the window to near its own point


def suggested(declared: Strategy[Any]) -> str:
    """A grid to start from: the settings the tuning keys move (where it fires, then what
    it keeps: the ones that change what it does), else the first two numeric settings
    whose default is above 0; each from half to one and a half times its default, the
    first in five values and the second in three (whole numbers stay whole; a percent is
    at most 100; none under its minimum). A percent knob unset by default (Claude Code's
    CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, which takes effect only under its own point) goes
    from 50 to 90. An empty string when the strategy has no such setting."""
    defaults = declared.default_options()
    moved = [declared.knob(defaults, what) for what in (TRIGGER, KEEP)] if declared.knob is not None else []
    knobs = {k[0] for k in moved if k is not None}
    unset = [
        s for s in declared.settings
        if s.name in knobs and getattr(defaults, s.name) is None and ("pct" in s.name or "percent" in s.name)
    ]  # fmt: skip
    if unset:
        return f"{unset[0].key}={UNSET_PERCENT}"

    def numeric(settings: Sequence[Setting]) -> list[tuple[Setting, int | float]]:
        return [
            (s, value)
            for s in settings
            if s.option.kind in NUMERIC
            and isinstance(value := getattr(defaults, s.name), int | float)
            and not isinstance(value, bool)
            and value > 0
        ][:2]

    chosen = numeric([s for s in declared.settings if s.name in knobs]) or numeric(declared.settings)
    parts = []
    for (s, default), steps in zip(chosen, (4, 2), strict=False):
        percent = "percent" in s.key or "percent" in s.option.help
        top = min(default * 1.5, 100) if percent else default * 1.5
        try:  # a rule across its settings (hysteresis's target under its thresholds) may refuse it
            with_values(defaults, {s.name: type(default)(top)})
        except OptionError:
            top = default
        low = max(default / 2, s.option.minimum or 0)
        if isinstance(default, int):
            step = max(1, round((top - low) / steps))
            low = max(int(top) - step * steps, s.option.minimum or 1)  # its last value at most `top`
            parts.append(f"{s.key}={low}:{low + step * steps}:{step}")
        else:
            parts.append(f"{s.key}={low:g}:{top:g}:{(top - low) / steps:g}")
    return ",".join(parts)


Values = dict[str, int | float | None]  # a point: a value per setting, by setting name


def points(axes: Sequence[Axis]) -> list[Values]:
    """Every combination of the axes' values, by setting name."""
    return [
        {a.setting.name: v for a, v in zip(axes, values, strict=True)}
        for values in itertools.product(*(a.values for a in axes))
    ]


@dataclass(frozen=True)
class Grid:
    """What a sweep replays: the grid's points, then the user's current setting and the
    strategy's default where the grid does not hold them, each mark's point named."""

    declared: Strategy[Any] = field(compare=False, repr=False)
    axes: tuple[Axis, ...]
    values: tuple[Values, ...]
    marks: dict[str, int]  # "current", "default": the index of its point
    spec: str = ""  # as given: `KEY=FROM:TO:STEP,...`

    @property
    def strategy(self) -> str:
        return self.declared.name

    @staticmethod
    def of(strategy: str, spec: str, config: Config) -> Grid:
        """`spec` as `grid` reads it; the marks' points are their options' values of the axes."""
        declared = config.catalogue.strategy(strategy)
        axes = tuple(grid(declared, spec))
        found = points(axes)
        for values in found:  # a point its strategy refuses is named before any session is read
            try:
                declared.checked(with_values(config.options(strategy), values))
            except OptionError as exc:
                where = ", ".join(f"{a.setting.key} {values[a.setting.name]}" for a in axes)
                raise OptionError(f"{where}: {exc}") from None
        marks = {}
        for mark, options in (("current", config.options(strategy)), ("default", declared.default_options())):
            at: Values = {a.setting.name: getattr(options, a.setting.name) for a in axes}
            if at not in found:
                found.append(at)
            marks[mark] = found.index(at)
        return Grid(declared, axes, tuple(found), marks, spec)

    def marked(self, n: int) -> list[str]:
        return [mark for mark, at in self.marks.items() if at == n]


@dataclass(frozen=True)
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
    kept = _Kept.of(path, strategy, config)
    policies = [with_values(config.options(strategy), values) for values in grid_points]
    return kept, policies, [kept.get(p) for p in policies]


@dataclass
class _Kept:
    """A session's outcomes kept between sweeps, by policy, in one file of the cache: the
    file's identity (path, size, time written), the strategy, the settings the sweep ran
    with and the program's version name it; a changed file or program starts afresh."""

    file: Path | None
    outcomes: dict[str, Outcome]
    changed: bool = False

    @staticmethod
    def of(path: str, strategy: str, config: Config) -> _Kept:
        root = cache_root()
        try:
            st = os.stat(path)
        except OSError:
            return _Kept(None, {})
        if root is None:
            return _Kept(None, {})
        identity = [str(Path(path).resolve()), st.st_size, st.st_mtime_ns]
        fingerprint = json.dumps([*identity, strategy, _config_key(config), *_made_by()])
        file = root / "sweeps" / (hashlib.blake2b(fingerprint.encode(), digest_size=16).hexdigest() + ".json")
        try:
            data = json.loads(file.read_text())
            outcomes = {k: Outcome.of_list(v) for k, v in data.items()}
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            outcomes = {}
        return _Kept(file, outcomes)

    def get(self, options: Any) -> Outcome | None:
        return self.outcomes.get(_policy_key(options))

    def put(self, options: Any, outcome: Outcome) -> Outcome:
        self.outcomes[_policy_key(options)] = outcome
        self.changed = True
        return outcome

    def save(self) -> None:
        if self.file is None or not self.changed:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        data = {k: o.to_list() for k, o in self.outcomes.items()}
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs a replay next time
            write_atomic(self.file, json.dumps(data))


@cache  # asked of every session of a sweep; the installed program does not change while it runs
def _made_by() -> tuple[str, str, str]:
    return version(PACKAGE), LOADER_VERSION, SWEEP_VERSION


def _policy_key(options: Any) -> str:
    return json.dumps(to_config(options), sort_keys=True, default=str)


def _config_key(config: Config) -> str:
    """What of the config changes a replay besides the strategy's options: the window,
    the counting, the user's summarizer (its command, timeout and script) and the prices."""
    summarizer = config.summarizer.fingerprint() if config.summarizer is not None else None
    return json.dumps(
        [config.window.context_window, config.window.reserved_output, config.tokenizer, config.pressure,
         config.overhead_tokens, config.media_tokens, config.preset, summarizer, source()],
        default=str,
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

"""A strategy's settings swept over many sessions (docs/strategies.md#sweeping-settings):
every session replayed under every point of a grid, the figures summed per point, and
the points no other beats on every count (the trade-off front).

The per-session work is a pure function of (file, strategy, grid): a session is read
and counted once and replayed at every point, so a process pool (or any map) can run
one session per task. Each point says the `simulate` arguments that replay it on one
session.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

from compaction_inspector.core.config import Config
from compaction_inspector.core.cost import replay_cost, session_cost
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.formats import LoadError, load
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.simulate import Policy
from compaction_inspector.core.strategies import REGISTRY, OptionError, lookup
from compaction_inspector.core.strategies.registry import Setting, to_config, with_values
from compaction_inspector.core.token_cache import LOADER_VERSION, cache_root

NUMERIC = ("int", "int?", "number?")
PACKAGE = "compaction-inspector"
SWEEP_VERSION = "1"  # bump when a replay's figures change for the same session and settings


@dataclass(frozen=True)
class Axis:
    """One setting and the values it takes: `trigger.tokens=100000:160000:20000`."""

    setting: Setting
    values: tuple[int | float, ...]


def grid(strategy: str, spec: str) -> list[Axis]:
    """`KEY=FROM:TO:STEP,...` over `strategy`'s numeric settings (their compaction.yaml
    keys), each range inclusive; an error names what is wrong."""
    settings = {s.key: s for s in lookup(strategy).settings if s.option.kind in NUMERIC}
    axes = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        key, _, span = part.partition("=")
        if key not in settings:
            raise OptionError(
                f"{key!r} is not a numeric setting of {strategy}; choose from {', '.join(settings)}"
            )
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
        axes.append(Axis(settings[key], tuple(start + k * step for k in range(count))))
    if not axes:
        raise OptionError("the grid is empty: give KEY=FROM:TO:STEP")
    return axes


def points(axes: Sequence[Axis]) -> list[dict[str, int | float]]:
    """Every combination of the axes' values, by setting name."""
    return [
        {a.setting.name: v for a, v in zip(axes, values, strict=True)}
        for values in itertools.product(*(a.values for a in axes))
    ]


@dataclass(frozen=True)
class Outcome:
    """One session replayed at one point."""

    compactions: int
    peak_pressure: float
    over_window: int  # rounds over the usable window
    tokens_removed: int
    cost: Decimal
    real_cost: Decimal


def sweep_session(
    path: str, strategy: str, grid_points: Sequence[dict[str, int | float]], config: Config
) -> list[Outcome] | str:
    """Each point replayed on the session at `path` (read and counted once, and only when
    some point is not kept from a sweep before); a reason instead when it cannot be read."""
    kept = _Kept.of(path, strategy, config)
    policies = [with_values(config.options(strategy), values) for values in grid_points]
    found: list[Outcome | None] = [kept.get(p) for p in policies]
    if None in found:
        try:
            inspection = Inspection.of(load(path), config)
        except LoadError as exc:
            return str(exc)
        real = session_cost(inspection.session).total
        for n, options in enumerate(policies):
            if found[n] is None:
                replay = inspection.replay(Policy(strategy, options))
                t = replay.totals
                found[n] = kept.put(options, Outcome(
                    t.compactions, t.peak_pressure, t.rounds_exceeding_window, t.tokens_removed,
                    replay_cost(inspection.session, replay).total, real,
                ))  # fmt: skip
        kept.save()
    return [o for o in found if o is not None]


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
        made_by = [version(PACKAGE), LOADER_VERSION, SWEEP_VERSION]
        fingerprint = json.dumps([*identity, strategy, _config_key(config), *made_by])
        file = root / "sweeps" / (hashlib.blake2b(fingerprint.encode(), digest_size=16).hexdigest() + ".json")
        try:
            data = json.loads(file.read_text())
            outcomes = {k: _outcome(v) for k, v in data.items()}
        except (OSError, ValueError, TypeError, KeyError):
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
        data = {
            k: [
                o.compactions,
                o.peak_pressure,
                o.over_window,
                o.tokens_removed,
                str(o.cost),
                str(o.real_cost),
            ]
            for k, o in self.outcomes.items()
        }
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs a replay next time
            write_atomic(self.file, json.dumps(data))


def _policy_key(options: Any) -> str:
    return json.dumps(to_config(options), sort_keys=True, default=str)


def _config_key(config: Config) -> str:
    """What of the config changes a replay besides the strategy's options."""
    return json.dumps(
        [config.window.context_window, config.window.reserved_output, config.tokenizer, config.pressure,
         config.overhead_tokens, config.media_tokens, config.preset],
        default=str,
    )  # fmt: skip


def _outcome(v: list[Any]) -> Outcome:
    return Outcome(int(v[0]), float(v[1]), int(v[2]), int(v[3]), Decimal(v[4]), Decimal(v[5]))


@dataclass
class Point:
    """A grid point summed over the sessions."""

    values: dict[str, int | float]
    sessions: int = 0
    compactions: int = 0
    sessions_over: int = 0  # sessions with a round over the window
    peaks: list[float] = field(default_factory=list)
    tokens_removed: int = 0
    cost: Decimal = Decimal(0)
    real_cost: Decimal = Decimal(0)
    on_front: bool = False

    def add(self, o: Outcome) -> None:
        self.sessions += 1
        self.compactions += o.compactions
        self.sessions_over += o.over_window > 0
        self.peaks.append(o.peak_pressure)
        self.tokens_removed += o.tokens_removed
        self.cost += o.cost
        self.real_cost += o.real_cost

    def settings(self, strategy: str) -> dict[str, int | float]:
        """Its values by their compaction.yaml keys (`trigger.tokens`), as `--grid` names them."""
        keys = {s.name: s.key for s in REGISTRY[strategy].settings}
        return {keys[name]: v for name, v in self.values.items()}

    def simulate_args(self, strategy: str) -> list[str]:
        """The `simulate` arguments that replay this point on one session."""
        flags = {s.name: s.flag for s in REGISTRY[strategy].settings}
        return ["--strategy", strategy, *(a for k, v in self.values.items() for a in (str(flags[k]), str(v)))]

    def to_dict(self, strategy: str) -> dict[str, Any]:
        peaks = sorted(self.peaks)
        return {
            "settings": self.settings(strategy),
            "sessions": self.sessions,
            "compactions": self.compactions,
            "sessions_over_window": self.sessions_over,
            "peak_pressure": {
                "median": peaks[len(peaks) // 2] if peaks else None,
                "max": peaks[-1] if peaks else None,
            },
            "tokens_removed": self.tokens_removed,
            "cost_usd": str(self.cost.quantize(Decimal("0.000001"))),
            "cost_change_usd": str((self.cost - self.real_cost).quantize(Decimal("0.000001"))),
            "on_front": self.on_front,
            "simulate_args": self.simulate_args(strategy),
        }


def summed(
    grid_points: Sequence[dict[str, int | float]], per_session: Iterable[list[Outcome]]
) -> list[Point]:
    """The points, each summed over the sessions, the front marked (`front`)."""
    found = [Point(dict(v)) for v in grid_points]
    for outcomes in per_session:
        for point, o in zip(found, outcomes, strict=True):
            point.add(o)
    for p in front(found):
        p.on_front = True
    return found


def front(found: Sequence[Point]) -> list[Point]:
    """The points no other is at least as good as on every count and better on one:
    fewer compactions, lower cost, fewer sessions over the window."""

    def key(p: Point) -> tuple[Decimal, Decimal, Decimal]:
        return Decimal(p.compactions), p.cost, Decimal(p.sessions_over)

    def beats(a: Point, b: Point) -> bool:
        ka, kb = key(a), key(b)
        return all(x <= y for x, y in zip(ka, kb, strict=True)) and ka != kb

    return [p for p in found if not any(beats(q, p) for q in found if q is not p)]

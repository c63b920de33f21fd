"""A sweep's grid: the settings it walks and the values each takes, read from
`KEY=FROM:TO:STEP,...`, or suggested from the settings the tuning keys move."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from compaction_inspector.core.config import Config
from compaction_inspector.core.model import immutable
from compaction_inspector.core.strategies import OptionError, Strategy
from compaction_inspector.core.strategies.declaration import KEEP, TRIGGER, Setting, with_values

MAX_POINTS = 1_000  # about 2 minutes a session on 2 cores at a replay's cost (docs/performance.md)
Values = dict[str, int | float | None]  # a point: a value per setting, by setting name

NUMERIC = ("int", "int?", "number?")


@immutable()
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


def points(axes: Sequence[Axis]) -> list[Values]:
    """Every combination of the axes' values, by setting name."""
    return [
        {a.setting.name: v for a, v in zip(axes, values, strict=True)}
        for values in itertools.product(*(a.values for a in axes))
    ]


@immutable()
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

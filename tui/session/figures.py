"""What the session screen computes for what it shows, as pure functions a test calls
without a Pilot: the gauge's figures at the step shown, and the tuning keys' rule."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from rich.cells import cell_len

from compaction_inspector.core.config import KEY, Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies import CompactionResult, OptionError, Stats, Strategy
from compaction_inspector.core.strategies.declaration import KEEP, TRIGGER
from compaction_inspector.tui.widgets.gauge import GaugeState

# each tuned setting's ladder, by what it moves ("window", or "<strategy>.<option>"): the
# value tuning began from (None: unset), how many presses from it, the value the last press
# set (set otherwise since: a new ladder starts there), and the figure the presses count
# from (the value in force when tuning began, where it was unset)
Ladders = Mapping[str, tuple[Any, int, Any, Any]]


def gauge_state(
    inspection: Inspection, result: CompactionResult[Stats] | None, step: int, own: bool, strategy: str
) -> GaugeState:
    """The gauge at step `step` of `result` (-1: before any): the context sent next, as
    measured; after a strategy's step, that less what the steps removed; on one of the
    transcript's own compactions, the prompt reported after it. Beside it what the agent
    itself counted: at its last check, or just before the compaction shown. The
    transcript's own compactions are shown by the point as it ran, never a tuned one."""
    if own and inspection.config.untuned is not None:
        inspection = inspection.with_config(inspection.config.untuned)
    config = inspection.config
    thresholds, target = bands(config, strategy)
    model = inspection.model
    reading = model.reading(len(inspection.messages)) if inspection.measured else None
    tokens = reading.tokens if reading is not None else sum(inspection.tokens[inspection.live :])
    shown = result.steps[step] if result is not None and step >= 0 else None
    caption, note = "", ""
    counts = inspection.agent_counts
    now = counts.at(len(inspection.messages))
    why = f"at its last check, {now.line(rule=False)}" if now is not None else ""
    left = inspection.headroom
    if left is not None:  # how far it is from compacting on its own (core.own.headroom)
        why = left.line() + (f" · {why}" if why else "")
    if inspection.live:
        caption = "the context after the transcript's own last compaction"
    if shown is not None and own and result is not None:
        caption = f"the transcript's own compaction {step + 1} of {len(result.steps)}"
        note = f"{shown.title}: the prompts the responses either side reported"
        fired = counts.before.get(inspection.session.compactions[step].index)
        # the rule is said where the point it fired at is not the one the gauge marks (idle)
        beside = fired is not None and fired.point.tokens == config.account.tokens
        why = f"why here: {fired.line(rule=not beside)}" if fired is not None else ""
        tokens = shown.tokens_after
        reading = None  # a reported prompt: the transcript records no split of it
    elif shown is not None:
        caption = f"after step {step + 1} of {strategy}"
        change = shown.tokens_after - tokens
        scale = inspection.context.meter.scale
        note = (
            f"after step {step + 1}: {tokens:,} {'+' if change >= 0 else '−'} {abs(change):,} "
            f"(×{scale:.2f} the counted tokens the steps removed or added; the rest is as measured)"
            if reading is not None
            else f"after step {step + 1}: the messages the steps leave, counted"
        )
        tokens = shown.tokens_after
        reading = reading.after(tokens) if reading is not None else None
        why = ""  # the agent's count is of the transcript, not of this step
    return GaugeState(
        tokens=tokens,
        context_window=config.window.context_window,
        reserved_output=config.window.reserved_output,
        thresholds=thresholds,
        target=target,
        bands_of="" if config.catalogue.banded(strategy) == strategy else config.catalogue.banded(strategy),
        auto_compact=config.account.tokens,
        auto_compact_rule=config.account.point.rule if config.account.point else "",
        label=inspection.counter.label,
        estimate=not inspection.counter.exact,
        caption=caption,
        reading=reading,
        fit=model.describe_fit() if inspection.measured else "",
        step_note=note,
        agent_count=why,
    )


def bands(config: Config, shown: str) -> tuple[tuple[int, ...], int]:
    """The thresholds and target the gauge and the timeline draw with `shown` on screen
    (`Catalogue.banded`), in % of the usable window."""
    name = config.catalogue.banded(shown)
    declared = config.catalogue.strategies[name].bands
    assert declared is not None  # `banded` names a strategy that declares them
    return declared(config.options(name))


def in_force(config: Config, shown: str, inspection: Inspection | None) -> Mapping[str, int | None] | None:
    """What the options of `shown` left blank come to in the session's context (None:
    nothing to say, or no session yet)."""
    declared = config.catalogue.strategies[shown]
    if inspection is None or declared.in_force is None:
        return None
    return declared.in_force(config.options(shown), inspection.context)


def tuning(config: Config, shown: str) -> tuple[str, ...]:
    """The tuning in force, for the status line, in parts a narrow line shows whole or
    not at all: what the tuning keys move with `shown` on screen (hysteresis's bands,
    else its knobs), the window, the agent's point."""
    w = config.window
    declared, options = config.catalogue.strategies[shown], config.options(shown)
    if declared.tune is not None:
        thresholds, target = bands(config, shown)
        tuned = f"thresholds {'/'.join(map(str, thresholds))} % · target {target} %"
    else:
        found = [knob(declared, what, options) for what in ("thresholds", "target")]
        moved = [
            f"{KEYS[KNOB[what]]} {k[0]} {_value(getattr(options, k[0]))}"
            for what, k in zip(("thresholds", "target"), found, strict=True)
            if k is not None
        ]
        tuned = f"{declared.label}: " + (" · ".join(moved) if moved else "nothing to tune")
    window = f"window {w.context_window:,} (usable {w.usable:,})"
    return (window, tuned, config.account.note, f"the window: {config.window_note}")


def _value(value: Any) -> str:
    return "unset (its rule)" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def fitted(parts: Sequence[str], room: int) -> str:
    """As many of `parts` as fit in `room` columns whole, joined, and a mark where the
    rest are left out: a part is never cut."""
    for n in range(len(parts), 0, -1):
        shown = " · ".join(parts[:n]) + (" …" if n < len(parts) else "")
        if cell_len(shown) <= room:
            return shown
    return ""


KNOB = {"thresholds": TRIGGER, "target": KEEP}  # h/H move where it fires, t/T what it keeps
KEYS = {TRIGGER: "h/H", KEEP: "t/T"}


def knob(declared: Strategy[Any], what: str, options: Any) -> tuple[str, int] | None:
    """The setting a tuning key moves with `declared` on screen, and one press's step."""
    return declared.knob(options, KNOB[what]) if declared.knob is not None else None


def nudged(
    config: Config, shown: str, what: str, delta: int, context: Context | None, ladders: Ladders
) -> tuple[Any, Ladders]:
    """The shown strategy's options after one press, and the ladders after it:
    hysteresis's own rule for its bands; else the setting its knob names, `delta` steps
    along its ladder from the value tuning began from (from what is in force where that
    was unset), so a key and its opposite return to it, unset again where it was. Raises
    OptionError where it has none to move, or out of range."""
    declared, options = config.catalogue.strategies[shown], config.given(shown)
    if declared.tune is not None:
        return declared.tune(options, what, delta), ladders
    found = knob(declared, what, options)
    if found is None:
        raise OptionError(f"{declared.label} has no {KNOB[what]} setting for {KEYS[KNOB[what]]} to move")
    name, step = found
    current, key = getattr(options, name), f"{shown}.{name}"
    start, rung, base = _climbed(ladders, key, current, delta)
    value = start
    if base is None:
        base = start
    if base is None and rung and declared.in_force is not None and context is not None:
        base = declared.in_force(config.options(shown), context).get(name)
    if rung:
        if base is None:
            raise OptionError(f"{declared.label}'s {name} is not known yet: set it in the panel")
        value = type(base)(max(1, base + rung * step))
    return dataclasses.replace(options, **{name: value}), {**ladders, key: (start, rung, value, base)}


def tuned(
    config: Config, shown: str, what: str, delta: int, ladders: Ladders, context: Context | None = None
) -> tuple[Config, Ladders]:
    """`config` after one press of a tuning key with `shown` on screen: the shown
    strategy's trigger (h/H) or what it keeps (t/T) (`nudged`), or the window by
    `delta` rungs of 10 % of the window tuning began from (200,000 → 180,000 → 200,000),
    so `w` then `W` comes back to the same window. The config remembers the one tuning
    began from (`Config.untuned`): the transcript's own compactions are explained by it.
    Raises `OptionError` when the options would be out of range."""
    untuned = config.untuned or config
    if what in ("target", "thresholds"):
        options, ladders = nudged(config, shown, what, delta, context, ladders)
        return dataclasses.replace(config.with_options(shown, options), untuned=untuned), ladders
    w = config.window
    base, rung, _ = _climbed(ladders, "window", w.context_window, delta)
    rung = max(rung, -9)
    size = max(w.reserved_output + 1000, _rung(base, rung))
    moved = dataclasses.replace(config.with_window(KEY, size), untuned=untuned)
    return moved, {**ladders, "window": (base, rung, size, base)}


def _climbed(ladders: Ladders, key: str, current: Any, delta: int) -> tuple[Any, int, Any]:
    """Where `key`'s ladder began, its rung after `delta` more presses, and the figure it
    counts from (None: not known yet); a new ladder from `current` where it was set
    otherwise since the last press."""
    start, rung, last, base = ladders.get(key, (current, 0, current, None))
    if last != current:
        start, rung, base = current, 0, None
    return start, rung + delta, base


def _rung(base: int, rung: int) -> int:
    """The window `rung` steps of 10 % of `base` from it."""
    return round(base * (10 + rung) / 10)

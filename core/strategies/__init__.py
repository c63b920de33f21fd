"""The compaction strategies: each one rule, `plan`, and `run(messages, options, context)`
made of it.

`REGISTRY` is the one list of which strategies exist; everything that offers a choice of
strategy (config, command line, the app) is made from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compaction_inspector.core.agents import Agent, Derived
from compaction_inspector.core.context import Context
from compaction_inspector.core.model import Message
from compaction_inspector.core.strategies import hysteresis, ptl_retry, trim, variants
from compaction_inspector.core.strategies.base import (
    CompactionResult,
    OptionError,
    Plan,
    Stats,
    Step,
    each_step,
    highlights,
)
from compaction_inspector.core.strategies.registry import Setting, Strategy

__all__ = [
    "DEFAULT",
    "REGISTRY",
    "CompactionResult",
    "Context",
    "OptionError",
    "Plan",
    "Setting",
    "Stats",
    "Step",
    "Strategy",
    "banded",
    "each_step",
    "highlights",
    "lookup",
    "run",
]

# Any: each strategy takes options of its own type; a caller names one and passes its options
_OURS: tuple[Strategy[Any], ...] = (trim.STRATEGY, ptl_retry.STRATEGY, hysteresis.STRATEGY)
_THEIRS: tuple[Strategy[Any], ...] = (*variants.CLEARING, *variants.SUMMARIZING)  # tools with no agent here


def _every(agents: tuple[Agent, ...]) -> dict[str, Strategy[Any]]:
    """Ours, then each registered agent's (`core.agents`), then the other tools' variants."""
    every = [*_OURS, *(s for agent in agents for s in agent.strategies), *_THEIRS]
    found = {s.name: s for s in every if isinstance(s, Strategy)}
    if len(found) < len(every):
        raise TypeError("each strategy must be a Strategy (core.strategies.registry) with a name of its own")
    return found


REGISTRY: Mapping[str, Strategy[Any]] = Derived(_every)
DEFAULT = hysteresis.NAME  # what the app shows first


def banded(shown: str) -> str:
    """The strategy whose bands the gauge draws and the tuning keys move: the one shown
    when it declares bands, else the first in the registry that does."""
    if REGISTRY[shown].bands is not None:
        return shown
    return next(name for name, s in REGISTRY.items() if s.bands is not None)


def lookup(name: str) -> Strategy[Any]:
    """The strategy called `name`, or an OptionError listing those that exist."""
    if name not in REGISTRY:
        raise OptionError(f"unknown strategy {name!r}; choose one of {', '.join(REGISTRY)}")
    return REGISTRY[name]


def run(name: str, messages: Sequence[Message], options: Any, context: Context) -> CompactionResult[Stats]:
    """Run strategy `name`; `options` is its options object (or None for the defaults)."""
    strategy = lookup(name)
    return strategy.run(messages, options if options is not None else strategy.default_options(), context)

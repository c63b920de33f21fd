"""The compaction strategies: each one rule, `plan`, and `run(messages, options, context)`
made of it.

`OURS` and `THEIRS` are the strategies no agent brings; the catalogue (`core.catalogue`)
lists them with the agents' own, and everything that offers a choice of strategy (config,
command line, the app) is made from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying.context import Context
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
from compaction_inspector.core.strategies.declaration import Setting, Strategy

__all__ = [
    "DEFAULT",
    "OURS",
    "THEIRS",
    "CompactionResult",
    "Context",
    "OptionError",
    "Plan",
    "Setting",
    "Stats",
    "Step",
    "Strategy",
    "each_step",
    "highlights",
    "run",
]

# Any: each strategy takes options of its own type; a caller names one and passes its options
OURS: tuple[Strategy[Any], ...] = (trim.STRATEGY, ptl_retry.STRATEGY, hysteresis.STRATEGY)
THEIRS: tuple[Strategy[Any], ...] = (*variants.CLEARING, *variants.SUMMARIZING)  # tools with no agent here
DEFAULT = hysteresis.NAME  # what the app shows first


def run(
    strategy: Strategy[Any], messages: Sequence[Message], options: Any, context: Context
) -> CompactionResult[Stats]:
    """Run `strategy`; `options` is its options object (or None for the defaults)."""
    return strategy.run(messages, options if options is not None else strategy.default_options(), context)

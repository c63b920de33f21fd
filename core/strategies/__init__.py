"""The compaction strategies, each a pure function `run(messages, options, context)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compaction_inspector.core.heap import collection_paused
from compaction_inspector.core.model import Message
from compaction_inspector.core.strategies import hysteresis, microcompact, ptl_retry, trim
from compaction_inspector.core.strategies.base import (
    CompactionResult,
    Context,
    OptionError,
    Outcome,
    Replay,
    Step,
    Unmodelled,
    each_step,
)

__all__ = [
    "REPLAYS",
    "STRATEGIES",
    "CompactionResult",
    "Context",
    "OptionError",
    "Outcome",
    "Replay",
    "Step",
    "Unmodelled",
    "each_step",
    "run",
]

STRATEGIES: dict[str, tuple[type, Callable[..., CompactionResult]]] = {
    trim.NAME: (trim.TrimOptions, trim.run),
    ptl_retry.NAME: (ptl_retry.PtlRetryOptions, ptl_retry.run),
    hysteresis.NAME: (hysteresis.HysteresisOptions, hysteresis.run),
    microcompact.NAME: (microcompact.MicrocompactOptions, microcompact.run),
}

# Each strategy's rules applied incrementally over the requests of a replay (core.simulate).
REPLAYS: dict[str, Callable[[tuple[Message, ...], Any, Context, int], Replay]] = {
    trim.NAME: trim.Replay,
    ptl_retry.NAME: ptl_retry.Replay,
    hysteresis.NAME: hysteresis.Replay,
    microcompact.NAME: microcompact.Replay,
}


@collection_paused()
def run(name: str, messages: Sequence[Message], options: Any, context: Context) -> CompactionResult:
    """Run strategy `name`; `options` is its options object (or None for the defaults)."""
    if name not in STRATEGIES:
        raise OptionError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    options_type, function = STRATEGIES[name]
    return function(messages, options if options is not None else options_type(), context)

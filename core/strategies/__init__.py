"""The compaction strategies, each a pure function `run(messages, options, context)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.model import Message
from core.strategies import hysteresis, microcompact, ptl_retry, trim
from core.strategies.base import CompactionResult, Context, OptionError, Step

__all__ = ["STRATEGIES", "CompactionResult", "Context", "OptionError", "Step", "run"]

STRATEGIES: dict[str, tuple[type, Callable[..., CompactionResult]]] = {
    trim.NAME: (trim.TrimOptions, trim.run),
    ptl_retry.NAME: (ptl_retry.PtlRetryOptions, ptl_retry.run),
    hysteresis.NAME: (hysteresis.HysteresisOptions, hysteresis.run),
    microcompact.NAME: (microcompact.MicrocompactOptions, microcompact.run),
}


def run(name: str, messages: Sequence[Message], options: Any, context: Context) -> CompactionResult:
    """Run strategy `name`; `options` is its options object (or None for the defaults)."""
    if name not in STRATEGIES:
        raise OptionError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    options_type, function = STRATEGIES[name]
    return function(messages, options if options is not None else options_type(), context)

"""Token pressure: prompt tokens over the usable window (docs/strategies.md#hysteresis)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field

from compaction_inspector.core.model import Message, immutable

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVED_OUTPUT = 20_000


@immutable(slots=True)
class Window:
    """A model's context window less what is reserved for its reply."""

    context_window: int = DEFAULT_CONTEXT_WINDOW
    reserved_output: int = DEFAULT_RESERVED_OUTPUT
    # a field, not a property: a replay asks for pressure hundreds of thousands of times
    usable: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise ValueError("context_window must be a positive number of tokens")
        if not 0 <= self.reserved_output < self.context_window:
            raise ValueError(
                f"reserved_output must be from 0 to {self.context_window - 1} "
                f"(below context_window {self.context_window})"
            )
        object.__setattr__(self, "usable", self.context_window - self.reserved_output)

    def pressure(self, tokens: int) -> float:
        return tokens / self.usable

    def to_dict(self) -> dict[str, int]:
        return {
            "context_window": self.context_window,
            "reserved_output": self.reserved_output,
            "usable_window": self.usable,
        }


@immutable(slots=True)
class Meter:
    """The context a request of `counted` message tokens holds: `overhead` + `scale` ×
    `counted` (docs/pressure.md; `core.measuring.context_model` fits both per point of a session).
    The identity meter (0, 1) is the messages-only view."""

    window: Window = field(default_factory=Window)
    overhead: float = 0.0
    scale: float = 1.0

    def tokens(self, counted: int) -> int:
        return round(self.overhead + self.scale * counted)

    def pressure(self, counted: int) -> float:
        return self.tokens(counted) / self.window.usable

    def counted(self, tokens: float) -> int:
        """The most counted tokens whose context is at most `tokens`."""
        c = math.floor((tokens - self.overhead) / self.scale)
        while self.tokens(c + 1) <= tokens:  # rounding moves the answer by one at most
            c += 1
        while self.tokens(c) > tokens:
            c -= 1
        return c

    def removed(self, counted: int) -> int:
        """The context `counted` message tokens stand for."""
        return round(self.scale * counted)


def live_start(messages: Sequence[Message]) -> int:
    """Index where the context actually sent begins: after the last compact boundary,
    because everything before it was replaced by that compaction's summary."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_compact_boundary:
            return i + 1
    return 0

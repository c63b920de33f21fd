"""Hysteresis's options: three thresholds, a target, the summary cap and its shrinks,
the protected tail and the stage (docs/strategies.md#hysteresis)."""

from __future__ import annotations

from typing import Literal

from compaction_inspector.core.model import immutable
from compaction_inspector.core.replaying.summary import MIN_SUMMARY_CHARS
from compaction_inspector.core.strategies.base import OptionError
from compaction_inspector.core.strategies.declaration import check, option

SHRINK = 0.7
Stage = Literal["preflight", "post-turn"]


STAGES: tuple[Stage, ...] = ("preflight", "post-turn")


@immutable()
class HysteresisOptions:
    thresholds: tuple[int, int, int] = option(
        (75, 85, 95),
        "three whole percents of the usable window, e.g. 75,85,95",
        kind="percents",
        label="thresholds %",
    )
    target: int = option(70, "the percent compaction brings pressure down to", label="target %")
    summary_chars: int = option(
        400, "characters per volley summary", minimum=MIN_SUMMARY_CHARS, label="summary chars"
    )
    protect_volleys: int = option(
        1, "the most recent volleys never summarized", minimum=1, label="protect volleys"
    )
    stage: Stage = option(
        "preflight", "preflight changes the request only; post-turn the stored history",
        kind="choice", choices=STAGES, label="stage",
    )  # fmt: skip

    def __post_init__(self) -> None:
        values = [self.target, *self.thresholds]
        if len(self.thresholds) != 3 or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise OptionError("thresholds must be three whole percents, e.g. 75,85,95")
        if not (0 < self.target < self.thresholds[0] < self.thresholds[1] < self.thresholds[2] < 100):
            raise OptionError(
                f"thresholds {list(self.thresholds)} and target {self.target} must satisfy "
                "0 < target < lowest < middle < highest < 100"
            )
        check(self)

    def tier(self, pressure: float) -> int:
        """0 below the lowest threshold, else 1, 2 or 3."""
        percent = pressure * 100
        low, middle, high = self.thresholds
        return (percent >= low) + (percent >= middle) + (percent >= high)

    def caps(self) -> list[int]:
        """The summary cap, then each shrink of it (x0.7) down to the floor."""
        caps = [self.summary_chars]
        while caps[-1] > MIN_SUMMARY_CHARS:
            caps.append(max(MIN_SUMMARY_CHARS, int(caps[-1] * SHRINK)))
        return caps


def persists(options: HysteresisOptions) -> bool:
    return options.stage == "post-turn"

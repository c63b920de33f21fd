"""`--demo`: walk the bundled sample through each strategy with captions, for showing
teammates. Each caption says what is on screen; the walk loops until a key is pressed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from compaction_inspector.core.strategies import (
    REGISTRY,
    CompactionResult,
    Stats,
    Step,
    claude_code,
    codex,
    hysteresis,
    microcompact,
    ptl_retry,
    trim,
)

INTRO = "The transcript, split into volleys (purple bands) and API rounds (rules). The gauge shows pressure."
OUTRO = "That's the tour. Press any key to take over; ? lists every key."

# What each strategy's turn shows once it is chosen: (action, caption, seconds).
TOUR: dict[str, tuple[tuple[str, str, float], ...]] = {
    trim.NAME: (("step_end", "Trim's result: dropped messages are struck through.", 4),),
    ptl_retry.NAME: (
        (
            "step(1)",
            "Each retry parses the provider's error for the token gap, else drops 20 % of rounds.",
            4,
        ),
    ),
    hysteresis.NAME: (
        ("step(1)", "A volley becomes a local summary (yellow); its messages are struck through.", 4),
        ("toggle_split", "Side by side: before on the left, after on the right.", 4),
        ("toggle_split", "The timeline below replays the session round by round under this policy.", 4),
    ),
    microcompact.NAME: (("step(1)", "Old results are replaced by “[Old tool result content cleared]”.", 4),),
    claude_code.NAME: (
        ("step_end", "Claude Code's auto-compact: the history becomes one summary and re-read files.", 4),
    ),
    codex.NAME: (
        ("step_end", "Codex's auto-compact: initial context, recent user messages and a summary.", 4),
    ),
}

# Each registered strategy in turn: chosen with its description, then its own steps.
SCRIPT: list[tuple[str, str, float]] = [
    ("", INTRO, 4),
    *(
        step
        for name, s in REGISTRY.items()
        for step in ((f"strategy('{name}')", f"{s.label}: {s.description}.", 3), *TOUR[name])
    ),
    ("step_reset", OUTRO, 6),
]


class Stage(Protocol):
    """What the tour drives: the app's actions, its caption and the step it shows."""

    demo_runner: Demo | None

    @property
    def result(self) -> CompactionResult[Stats] | None: ...
    @property
    def shown_step(self) -> Step | None: ...
    def notify(self, message: str, *, timeout: float | None = None) -> None: ...
    def set_caption(self, text: str) -> None: ...
    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...
    def set_timer(self, delay: float, callback: Callable[[], Any]) -> object: ...
    async def run_action(self, action: str) -> object: ...


class Demo:
    def __init__(self, app: Stage) -> None:
        self.app = app
        self.position = 0
        self.running = False

    def start(self) -> None:
        self.running = True
        self.app.demo_runner = self
        self.app.notify("Demo: press any key to stop", timeout=4)
        self._next()

    def stop(self) -> None:
        self.running = False

    def _next(self) -> None:
        if not self.running:
            return
        action, caption, seconds = SCRIPT[self.position % len(SCRIPT)]
        self.position += 1
        if action:
            self.app.call_later(self.app.run_action, action)
        if action.startswith("step"):  # said once the step is on screen: what it really did
            self.app.call_later(self._say, caption)
        else:
            self.app.set_caption(caption)
        self.app.set_timer(seconds, self._next)

    def _say(self, caption: str) -> None:
        """The caption of a step, unless the step shown changes nothing: then what it says."""
        step, result = self.app.shown_step, self.app.result
        if step is not None and result is not None and not any(s.counted_delta for s in result.steps):
            caption = f"{step.title}: {step.explanation}"
        self.app.set_caption(caption)

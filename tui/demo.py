"""`--demo`: walk the bundled sample through each strategy with captions, for showing
teammates. Each caption says what is on screen; the walk loops until a key is pressed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compaction_inspector.core.strategies import REGISTRY

if TYPE_CHECKING:
    from compaction_inspector.tui.app import InspectorApp

INTRO = "The transcript, split into volleys (blue bands) and API rounds (rules). The gauge shows pressure."
OUTRO = "That's the tour. Press any key to take over; ? lists every key."

# Each registered strategy in turn: chosen with its description, then its own steps.
SCRIPT: list[tuple[str, str, float]] = [
    ("", INTRO, 4),
    *(
        step
        for name, s in REGISTRY.items()
        for step in ((f"strategy('{name}')", f"{s.label}: {s.description}.", 3), *s.demo)
    ),
    ("step_reset", OUTRO, 6),
]


class Demo:
    def __init__(self, app: InspectorApp) -> None:
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

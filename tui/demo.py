"""`--demo`: walk the bundled sample through each strategy with captions, for showing
teammates. Each caption says what is on screen; the walk loops until a key is pressed."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compaction_inspector.tui.app import InspectorApp

SCRIPT: list[tuple[str, str, float]] = [
    (
        "",
        "The transcript, split into volleys (blue bands) and API rounds (rules). The gauge shows pressure.",
        4,
    ),
    (
        "strategy('trim')",
        "Trim: keep the first user message and the last 2k messages once a trigger fires.",
        3,
    ),
    ("step_end", "Trim's result: dropped messages are struck through.", 4),
    (
        "strategy('ptl-retry')",
        "PTL retry: when even the summarize request is too long, drop the oldest API rounds.",
        3,
    ),
    ("step(1)", "Each retry parses the provider's error for the token gap, else drops 20 % of rounds.", 4),
    (
        "strategy('hysteresis')",
        "Volley hysteresis: summarize old volleys when pressure crosses 75 / 85 / 95 %.",
        3,
    ),
    ("step(1)", "A volley becomes a local summary (yellow); its messages are struck through.", 4),
    ("toggle_split", "Side by side: before on the left, after on the right.", 4),
    ("toggle_split", "The timeline below replays the session round by round under this policy.", 4),
    ("strategy('microcompact')", "Microcompact: clear old tool results, keep the most recent ones.", 3),
    ("step(1)", "Old results are replaced by “[Old tool result content cleared]”.", 4),
    ("step_reset", "That's the tour. Press any key to take over; ? lists every key.", 6),
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
        self.app.set_caption(caption)
        self.app.set_timer(seconds, self._next)

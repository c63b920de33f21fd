"""`--demo`: a presenter's tour of the bundled sample, for showing teammates.

Each stop sets the screen to a state of its own (absolute actions, so stepping back shows
a stop exactly as it was) and says what is on screen in the caption panel. The tour
advances by itself unless paused; space or → go on, ← goes back, p pauses, q or escape
end it. On this short sample the tour sets each strategy's trigger where it fires, and
the caption says so: a strategy that does nothing would show nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from textual import events
from textual.actions import parse

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.model import immutable
from compaction_inspector.core.strategies import (
    CompactionResult,
    Stats,
    Step,
    hysteresis,
    ptl_retry,
    trim,
)
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.tui.session import figures
from compaction_inspector.tui.widgets.panes import TranscriptPanes

# where each strategy fires on the 4,500-token sample (its own defaults are for real windows)
TOUR_OPTIONS: dict[str, dict[str, Any]] = {
    trim.NAME: {"trigger_turns": 2},
    ptl_retry.NAME: {"limit": 3_000},
    **{name: dict(tour.options) for agent in CATALOGUE.agents for name, tour in agent.tour.items()},
    # an API's own minimum may keep a preset from firing on the sample (Anthropic's 50,000)
    "langchain-summarization": {"trigger_tokens": 3_500},
}
# our strategies, the agents' own, and one preset of each family (the rest are alike): the
# first the tour tunes to fire on the sample, else the first
TOURED = tuple(
    name
    for name, s in CATALOGUE.strategies.items()
    if s.family is None
    or name
    == next(
        (n for n, o in CATALOGUE.strategies.items() if o.family == s.family and n in TOUR_OPTIONS),
        next(n for n, o in CATALOGUE.strategies.items() if o.family == s.family),
    )
)


@immutable()
class Stop:
    actions: tuple[str, ...]  # absolute: the stop looks the same however it is reached
    caption: str
    seconds: float = 5


# what each strategy's result shows, after it is chosen: (where to step, caption)
SHOWN: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    trim.NAME: ((("step_to(999)",), "Trim's result: the first message and the last turns stay."),),
    ptl_retry.NAME: (
        (("step_to(0)",), "The summarize request is refused as too long: a retry drops the oldest rounds."),
    ),
    hysteresis.NAME: (
        (("step_to(0)", "split(False)"), "A volley becomes a local summary (yellow), its messages struck."),
        (("step_to(0)", "split(True)"), "Side by side: before on the left, after on the right."),
        (("split(False)", "step_to(-1)"), "The timeline replays the session round by round under it."),
    ),
    **{
        name: (((f"step_to({tour.step})",), tour.caption),)
        for agent in CATALOGUE.agents
        for name, tour in agent.tour.items()
    },
    "langchain-summarization": (
        (("step_to(999)",), "Other agents are presets of two families: here the head becomes one summary."),
    ),
}


def _strategy_stops(name: str) -> tuple[Stop, ...]:
    s, tuned = CATALOGUE.strategies[name], TOUR_OPTIONS.get(name)
    settings = ", ".join(f"{k} {v:,}" for k, v in (tuned or {}).items())
    why = f" (the tour sets {settings} so it fires here)" if tuned else ""
    choose = Stop((f"strategy('{name}')", "step_to(-1)"), f"{s.label}: {s.description}{why}.", 4)
    return (choose, *(Stop(actions, caption) for actions, caption in SHOWN.get(name, ())))


SCRIPT: tuple[Stop, ...] = (
    Stop(
        (f"strategy('{hysteresis.NAME}')", "step_to(-1)", "own(False)", "compare('none')"),
        "The transcript in volleys (purple bands) and API rounds (rules). The gauge shows the context the "
        "agent sent next, measured from what its responses reported.",
        6,
    ),
    Stop(
        ("own(True)",), "The transcript's own compaction: the prompts the responses either side reported.", 6
    ),
    Stop(("own(False)",), "Back to the strategies, each in turn on the request the agent sends next.", 3),
    *(stop for name in TOURED for stop in _strategy_stops(name)),
    Stop(
        (f"strategy('{hysteresis.NAME}')", "target(60)", "step_to(999)"),
        "Tuning: the target down to 60 % (t and T); every figure and the timeline follow at once.",
        6,
    ),
    Stop(
        ("target(70)", "compare('as it ran')"),
        "c compares the policy with the session as it ran on the timeline.",
        6,
    ),
    Stop(
        ("compare('none')", "step_to(-1)"),
        "That's the tour. R writes this session's HTML report to share; ? lists every key; q ends the tour.",
        8,
    ),
)


class Stage(Protocol):
    """The screen the tour drives: its state, its caption and the actions it runs."""

    demo_runner: Demo | None
    step: int
    compare: str
    strategy: str
    wanted_step: int | None  # a step asked for while the strategy ran

    @property
    def result(self) -> CompactionResult[Stats] | None: ...
    @property
    def shown_step(self) -> Step | None: ...
    @property
    def busy(self) -> bool: ...
    @property
    def own(self) -> bool: ...
    @property
    def config(self) -> Config: ...
    def configure(self, config: Config) -> None: ...
    @property
    def panes(self) -> TranscriptPanes: ...
    def action_own_compactions(self) -> None: ...
    def run_simulation(self) -> None: ...
    async def action_tune(self, what: str, delta: int) -> None: ...
    def notify(self, message: str, *, timeout: float | None = None) -> None: ...
    def set_caption(self, text: str) -> None: ...
    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...
    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Any: ...
    async def run_action(self, action: str) -> object: ...


class Demo:
    """The tour on a screen: its stops in turn, the presenter's keys, and the moves a stop
    makes, absolute, so a stop shown again looks as it did; the rest of a stop's actions
    are the screen's own."""

    PRESENTER = "space or → next · ← back · p pause · q end"
    MOVES = frozenset({"step_to", "split", "own", "compare", "target"})  # the tour's own moves

    def __init__(self, app: Stage) -> None:
        self.app = app
        self.position = -1
        self.running = False
        self.paused = False
        self._timer: Any = None

    def start(self) -> None:
        self.running = True
        self.app.demo_runner = self
        self.tour_options(TOUR_OPTIONS)
        self.go(0)

    def tour_options(self, values: Mapping[str, Mapping[str, Any]]) -> None:
        """The tour's settings of strategies' options (where they fire on the sample)."""
        config = self.app.config
        for name, given in values.items():
            config = config.with_options(name, with_values(config.options(name), given))
        self.app.configure(config)

    def on_key(self, event: events.Key) -> None:
        """While the tour runs, the presenter's keys drive it; any other key ends it."""
        if not self.running:
            return
        if self.key(event.key):
            event.stop()
            event.prevent_default()
        else:  # any other key: the keys are the user's
            self.stop()
            self.app.notify("Tour stopped: the keys are yours (? for help)", timeout=3)

    async def run(self, action: str) -> None:
        """One of a stop's actions: the tour's own move, else the screen's action."""
        _, name, args = parse(action)
        if name in self.MOVES:
            done = getattr(self, name)(*args)
            if done is not None:
                await done
        else:
            await self.app.run_action(action)

    def step_to(self, index: int) -> None:
        """Show step `index` (-1: before, past the end: the last) once the result is in."""
        app = self.app
        if app.result is None or app.busy:
            app.wanted_step = index
        if app.result is not None:
            app.step = max(-1, min(index, len(app.result.steps) - 1))

    def split(self, on: bool) -> None:
        panes = self.app.panes
        if on != panes.split and (not on or panes.split_fits()):
            panes.split = on

    def own(self, on: bool) -> None:
        if on != self.app.own:
            self.app.action_own_compactions()

    def compare(self, name: str) -> None:
        if name != self.app.compare:
            self.app.compare = name
            self.app.run_simulation()

    async def target(self, percent: int) -> None:
        _, target = figures.bands(self.app.config, self.app.strategy)
        await self.app.action_tune("target", percent - target)

    def stop(self) -> None:
        self.running = False
        self._cancel()
        self.app.set_caption("")

    def go(self, position: int) -> None:
        """Show stop `position` (clamped to the tour), and go on after its time unless paused."""
        self._cancel()
        self.position = max(0, min(position, len(SCRIPT) - 1))
        stop = SCRIPT[self.position]
        for action in stop.actions:
            self.app.call_later(self.run, action)
        self.app.call_later(self.say)
        if not self.paused and self.position < len(SCRIPT) - 1:
            self._timer = self.app.set_timer(stop.seconds, lambda: self.go(self.position + 1))

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused:
            self._cancel()
            self.say()
        else:
            self.go(self.position + 1)

    def key(self, key: str) -> bool:
        """A presenter's key: True when the tour used it."""
        if key in ("space", "right"):
            self.go(self.position + 1)
        elif key == "left":
            self.go(self.position - 1)
        elif key == "p":
            self.toggle_pause()
        elif key in ("q", "escape"):
            self.stop()
            self.app.notify("The tour is over: the keys are yours (? for help)", timeout=3)
        else:
            return False
        return True

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def say(self) -> None:
        """The stop's caption, unless the step shown changes nothing: then what it says."""
        caption = SCRIPT[self.position].caption
        step, result = self.app.shown_step, self.app.result
        if step is not None and result is not None and not any(s.counted_delta for s in result.steps):
            caption = f"{step.title}: {step.explanation}"
        state = " · paused" if self.paused else ""
        self.app.set_caption(f"Tour {self.position + 1}/{len(SCRIPT)}{state} · {self.PRESENTER}\n{caption}")

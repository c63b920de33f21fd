"""What a session screen's workers and keys post, each a small dataclass: the screen
handles them as `on_session_screen_<name>`, the app the ones that leave the screen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.pricing.cost import Cost
from compaction_inspector.core.replaying.simulation import Simulation
from compaction_inspector.core.strategies import CompactionResult, Stats

SCREEN = "session_screen"  # handled as `on_session_screen_<name>`


@dataclass
class Loaded(Message, namespace=SCREEN):
    """The session is read and estimated; exact counts follow (`Counted`), counted once
    its rows are drawn unless `counted` (kept from before, and posted already)."""

    inspection: Inspection
    run: int
    counted: bool = False


@dataclass
class Previewed(Message, namespace=SCREEN):
    """The first lines of a large file, read while the whole is: rows to look at."""

    inspection: Inspection
    total: int
    run: int


@dataclass
class Counted(Message, namespace=SCREEN):
    """Exact counts of the session read."""

    inspection: Inspection
    run: int


@dataclass
class StrategyDone(Message, namespace=SCREEN):
    """A strategy's steps over the request the agent sends next."""

    run: int
    result: CompactionResult[Stats]


@dataclass
class Replayed(Message, namespace=SCREEN):
    """The replay under the policy, and under the compared one."""

    run: int
    main: Simulation
    other: Simulation | None


@dataclass
class Priced(Message, namespace=SCREEN):
    """What the replays would have cost (each replayed whole), and the session did."""

    run: int
    main: Cost
    other: Cost | None
    real: Cost


@dataclass
class OwnDone(Message, namespace=SCREEN):
    """The transcript's own compactions, as steps."""

    run: int
    result: CompactionResult[Stats]


@dataclass
class Failed(Message, namespace=SCREEN):
    """The session could not be read."""

    run: int
    reason: str


@dataclass
class Refused(Message, namespace=SCREEN):
    """The user's summarizer failed a strategy run or a replay (`kind`): nothing is shown
    in its place."""

    kind: str
    run: int
    reason: str


@dataclass
class Grown(Message, namespace=SCREEN):
    """The followed file holds `session` now (None: it was deleted)."""

    session: Session | None


class Settled(Message, namespace=SCREEN):
    """Counting, the strategy and the replay are done: the screen shows their figures."""


class Leave(Message, namespace=SCREEN):
    """Escape with nothing left to close: the app goes back to the session list."""


@dataclass
class Unreadable(Message, namespace=SCREEN):
    """The file cannot be opened and is not followed: the app says why and goes on."""

    path: Path
    reason: str


@dataclass
class SweepAsked(Message):
    """Sweep `strategy` over the sessions at `paths` (from the list or a session's folder):
    handled by the app, which opens the sweep screen (imported only then)."""

    paths: list[str]
    strategy: str

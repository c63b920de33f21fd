"""The rules of an agent's compaction: where it compacts in a window, what it counts
against that point, what it puts back after, and the strategy that replays it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Compaction, Message, Session, immutable
from compaction_inspector.core.own.autocompact import Count, Point

SESSION_PREFIX = "the session's"  # how every window a session brings is introduced


class ConfigView(Protocol):
    """What an agent reads of the inspector's settings (`core.config.Config`)."""

    @property
    def window(self) -> Window: ...

    @property
    def preset(self) -> str | None: ...

    @property
    def source(self) -> str | None: ...  # the file they were read from

    @property
    def agent_settings(self) -> Any: ...  # the user's own settings of the session's agent

    def options(self, name: str) -> Any: ...


@immutable()
class SessionWindow:
    """The window a session's agent had, as the session says: the preset it is, the
    window, why (the window's source), and the user's own settings of that agent where
    they say more (Codex's config.toml)."""

    preset: str
    window: Window
    source: str
    agent_settings: Any = None


@immutable()
class Preset:
    """Where a real tool's limits sit (docs/agents.md). An agent's preset takes its point
    from the agent's rule on the window in force (`core.own.autocompact`), so it follows a
    window the user changes; a tool with no agent here compacts at a share of it."""

    name: str
    context_window: int
    reserved_output: int
    description: str
    agent: str | None = None  # the agent (its format) whose rule and strategy this is
    fraction: float | None = None  # of the window, for a tool with no agent rule


class Named(Protocol):
    """Something registered by its name (an agent's strategy)."""

    @property
    def name(self) -> str: ...


@immutable()
class Tour:
    """How the demo tour shows one of an agent's strategies on the bundled sample of 4,500
    tokens: the options that make it fire there, the step shown (the last where it is past
    the end) and what the caption says."""

    options: Mapping[str, Any]
    step: int
    caption: str


@immutable()
class PutBack:
    """What an agent puts back after a compaction that the transcript does not record, in
    the model's tokens, and the range it spans where the transcript cannot tell what went
    back (`why` says what is not known; `low` == `high` == `tokens` where nothing is)."""

    tokens: int
    low: int
    high: int
    why: str = ""
    # the last API round it keeps as it ran, where the transcript does not write it after
    # the compaction (model tokens), and why it is kept
    kept: int = 0
    kept_why: str = ""

    @classmethod
    def known(cls, tokens: int) -> PutBack:
        return cls(tokens, tokens, tokens)


class Rules(ABC):
    """The rules of an agent's compaction, each a hook whose default says its transcripts
    record nothing more: `point` it must write."""

    presets: ClassVar[tuple[Preset, ...]] = ()  # its windows as presets, the usual one first
    # the strategies it brings (`core.strategies.declaration.Strategy`, which stands above this
    # record): the one named like its format replays its own compaction
    strategies: ClassVar[tuple[Named, ...]] = ()
    tour: ClassVar[Mapping[str, Tour]] = {}  # by strategy: how the demo shows it
    # its automatic compactions record the count it compared with its point (`core.own.evidence`)
    counts_recorded: ClassVar[bool] = False
    # the system prompt and tools it documents sending before the first message, assumed of a
    # session whose responses report no usage (None: it documents none)
    overhead_tokens: ClassVar[int | None] = None

    @abstractmethod
    def point(self, window: Window, settings: ConfigView) -> Point:
        """Where it compacts in `window`, under the settings' options."""

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        """The window a session of it had, where the session says (None: it says nothing)."""
        return None

    def checks(
        self, session: Session, settings: ConfigView, at: Point, point_in: Callable[[int], Point | None]
    ) -> tuple[Count, ...]:
        """Its own count at each check the transcript records, against a point (and another
        window's point, for the checks before a switch of model); none where it records none."""
        return ()

    def counted(self, session: Session) -> Mapping[int, int]:
        """What it counts against its point before each request `messages[:end]` by its
        own rule, by `end`, where the transcript records no check of its own (none by
        default: the context the request holds stands for it)."""
        return {}

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        """The count it recorded before a compaction, against a point (its own under
        `settings`), from the prompt last reported (None where it records none)."""
        return None

    def put_back(
        self, session: Session, boundary: int, after: Sequence[Message], counter: TokenCounter, scale: float
    ) -> PutBack:
        """What it puts back after the compaction at an index that the transcript does not
        record (the messages after it; a counter and the model's scale), in the model's tokens."""
        return PutBack.known(0)

    def first_only(self, session: Session, settings: ConfigView) -> tuple[int, str] | None:
        """What its first request carries that it may not send again after a compaction, or
        may send twice, where the transcript does not record it: the most it can be and what
        it is."""
        return None

    def carried(self, session: Session, counter: TokenCounter) -> tuple[int, str] | None:
        """What every request of the session carries that its transcript never records and
        files on this machine hold, in counted tokens, and what it is; None: nothing known."""
        return None

    def idle(self, settings: ConfigView) -> Point | None:
        """Where it compacts a conversation left idle, and why, under the settings; None:
        it has no idle compaction (its point's tokens None: it has one, and it was off)."""
        return None

    def recorded_settings(self, own: Any) -> Any:
        """What of its settings as its `window` read them (`own`) the session itself
        records, kept where today's settings are set aside (`core.own.account`); None by
        default: all of them are the user's settings as they are now."""
        return None

    def at_point(self, options: Any, tokens: int) -> Any | None:
        """Its replay strategy's `options` set to compact at `tokens`, where a session's own
        record puts its point there (`core.own.evidence`); None: its point is not moved so."""
        return None

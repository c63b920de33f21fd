"""What an agent is to the inspector (`Agent`), and a session file where one keeps it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Block, Compaction, Message, Session
from compaction_inspector.core.own.autocompact import Count, Point

if TYPE_CHECKING:
    from compaction_inspector.core.formats.kinds import Journal, Store, Writer
    from compaction_inspector.core.statusline import StatusLine

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


@dataclass(frozen=True)
class SessionWindow:
    """The window a session's agent had, as the session says: the preset it is, the
    window, why (the window's source), and the user's own settings of that agent where
    they say more (Codex's config.toml)."""

    preset: str
    window: Window
    source: str
    agent_settings: Any = None


@dataclass(frozen=True)
class Found:
    """A session file where an agent keeps it."""

    path: Path
    agent: str
    project: str  # Claude Code: the project folder decoded; Codex: the day folder
    subagents: tuple[Path, ...] = ()
    subagent_of: str | None = None  # a sub-agent's: the session it ran in
    stamp: int | None = None  # what changes when the session does, where one file holds many


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class OwnSetting:
    """One of the user's own settings of an agent: its value and the file that set it."""

    value: Any
    where: Path

    def told(self, name: str) -> str:
        """ "your CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of 70 (~/.claude/settings.json)"."""
        number = isinstance(self.value, int) and not isinstance(self.value, bool)
        return f"your {name} of {f'{self.value:,}' if number else str(self.value).lower()} ({self.where})"


@dataclass(frozen=True)
class Tour:
    """How the demo tour shows one of an agent's strategies on the bundled sample of 4,500
    tokens: the options that make it fire there, the step shown (the last where it is past
    the end) and what the caption says."""

    options: Mapping[str, Any]
    step: int
    caption: str


@dataclass(frozen=True)
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


class Agent(ABC):
    """One agent, as a class of its own in its package (`core.agents.<agent>`): the format it
    writes (the registry's key, and the name of the strategy that replays its own
    compaction), where it keeps its sessions and how to find them there, and where it
    compacts in a window. A subclass sets the class attributes and writes `home`, `find`
    and `point`; every other hook has a default that says its transcripts record nothing
    more, so an agent writes only what it has."""

    format: ClassVar[str]
    name: ClassVar[str]  # as the app names it: "Claude Code"
    folder_option: ClassVar[str]  # the command line's option naming its sessions' folder: "claude-dir"
    folder_help: ClassVar[str]  # what that option says: "Claude Code's projects folder (default …)"
    journal: ClassVar[Journal | None] = None  # its transcript format, read line by line
    store: ClassVar[Store | None] = None  # ... or the file it keeps its sessions in
    writer: ClassVar[Writer | None] = None  # its format written back, where it can be
    presets: ClassVar[tuple[Preset, ...]] = ()  # its windows as presets, the usual one first
    # the strategies it brings (`core.strategies.declaration.Strategy`, which stands above this
    # record): the one named like its format replays its own compaction
    strategies: ClassVar[tuple[Named, ...]] = ()
    tour: ClassVar[Mapping[str, Tour]] = {}  # by strategy: how the demo shows it
    status_line: ClassVar[StatusLine | None] = None  # the status line command it runs, if any
    task_tools: ClassVar[tuple[str, ...]] = ()  # the tools whose calls start a sub-agent
    # its strategy's options it takes in its own settings file, each by that setting's name
    settings_keys: ClassVar[Mapping[str, str]] = {}
    # the settings files `apply` may write, by name, each where it is in words (the first:
    # the default), as `settings_file` finds them
    settings_layers: ClassVar[Mapping[str, str]] = {"user": "its own settings file"}
    # bytes every line that records one of its compactions holds (b"": it records none)
    compaction_mark: ClassVar[bytes] = b""
    # its automatic compactions record the count it compared with its point (`core.own.evidence`)
    counts_recorded: ClassVar[bool] = False
    # the environment variables that move all of it the inspector reads (its sessions, its
    # settings, its caches): a test points each at a folder of its own
    homes: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def home(self) -> Path:
        """Its sessions' folder when none is named: its environment's, else the home's."""

    @abstractmethod
    def find(self, root: Path) -> list[Found]:
        """Its session files under `root`."""

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

    def subagent_files(self, session: Path, results: Sequence[Block]) -> list[Path]:
        """Where the sub-agents the results of its task calls (`results`) name keep their
        sessions, whether or not they are there; none by default."""
        return []

    def carried(self, session: Session, counter: TokenCounter) -> tuple[int, str] | None:
        """What every request of the session carries that its transcript never records and
        files on this machine hold, in counted tokens, and what it is; None: nothing known."""
        return None

    def at_point(self, options: Any, tokens: int) -> Any | None:
        """Its replay strategy's `options` set to compact at `tokens`, where a session's own
        record puts its point there (`core.own.evidence`); None: its point is not moved so."""
        return None

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """Its replay strategy's `options` with what the user's own settings of it (`own`,
        as its `window` read them) set where the inspector's leave a value unset, so its
        point and a replay of it agree; as they are by default."""
        return options

    def settings_file(self, layer: str | None = None) -> Path | None:
        """Its settings file of `layer` (one of `settings_layers`, None: the first), where
        `apply` writes, for a session in this folder (None: it has none here)."""
        return None

    def setting(self, text: str, key: str) -> str | None:
        """What its settings file's `text` sets `key` to (None: nothing)."""
        return None

    def with_setting(self, text: str, key: str, value: int) -> str:
        """Its settings file's `text` with `key` set to `value`, every other byte kept;
        ValueError where the file cannot take it."""
        raise ValueError(f"{self.name}'s settings are not written here")

    def folder(self, given: str | Path | None) -> Path:
        """Where its sessions are: the folder given, else its own."""
        return Path(given) if given else self.home()

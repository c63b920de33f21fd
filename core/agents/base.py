"""What an agent is to the inspector (`Agent`), and a session file where one keeps it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from compaction_inspector.core.autocompact import Count, Point
from compaction_inspector.core.model import Compaction, Message, Session
from compaction_inspector.core.pressure import Window
from compaction_inspector.core.tokens import TokenCounter

SESSION_PREFIX = "the session's"  # how every window a session brings is introduced


class Settings(Protocol):
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


@dataclass(frozen=True)
class Preset:
    """Where a real tool's limits sit (docs/agents.md). An agent's preset takes its point
    from the agent's rule on the window in force (`core.autocompact`), so it follows a
    window the user changes; a tool with no agent here compacts at a share of it."""

    name: str
    context_window: int
    reserved_output: int
    description: str
    agent: str | None = None  # the agent (its format) whose rule and strategy this is
    fraction: float | None = None  # of the window, for a tool with no agent rule


@dataclass(frozen=True)
class PutBack:
    """What an agent puts back after a compaction that the transcript does not record, in
    the model's tokens, and the range it spans where the transcript cannot tell what went
    back (`why` says what is not known; `low` == `high` == `tokens` where nothing is)."""

    tokens: int
    low: int
    high: int
    why: str = ""

    @classmethod
    def known(cls, tokens: int) -> PutBack:
        return cls(tokens, tokens, tokens)


@dataclass(frozen=True)
class Agent:
    """One agent: the format it writes (the registry's key, and the name of the strategy
    that replays its own compaction), where it keeps its sessions and how to find them
    there, the window a session of it had, and where it compacts in a window."""

    format: str
    name: str  # as the app names it: "Claude Code"
    folder_option: str  # the command line's option naming its sessions' folder: "claude-dir"
    folder_help: str  # what that option says: "Claude Code's projects folder (default …)"
    home: Callable[[], Path]  # that folder when none is named: its environment's, else the home's
    find: Callable[[Path], list[Found]]  # its session files under that folder
    point: Callable[[Window, Settings], Point]  # where it compacts, under the settings' options
    # the window a session of it had, where the session says (None: it says nothing)
    window: Callable[[Settings, Session], SessionWindow | None]
    presets: tuple[Preset, ...]  # its windows as presets, the usual one first
    # its own count at each check the transcript records, against a point (and another
    # window's point, for the checks before a switch of model); none where it records none
    checks: Callable[[Session, Settings, Point, Callable[[int], Point | None]], tuple[Count, ...]]
    # the count it recorded before a compaction, against a point, from the prompt last
    # reported (None where it records none)
    recorded: Callable[[Compaction, int | None, Point], Count | None]
    # what it puts back after the compaction at an index that the transcript does not
    # record (the messages after it; a counter and the model's scale), in the model's tokens
    put_back: Callable[[Session, int, Sequence[Message], TokenCounter, float], PutBack]
    # what its first request carries that it may not send again after a compaction, or may
    # send twice, where the transcript does not record it: the most it can be and what it is
    first_only: Callable[[Session, Settings], tuple[int, str] | None]
    # bytes every line that records one of its compactions holds (a file without them has none)
    compaction_mark: bytes

    def folder(self, given: str | Path | None) -> Path:
        """Where its sessions are: the folder given, else its own."""
        return Path(given) if given else self.home()

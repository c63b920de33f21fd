"""Reading an agent's files: where it keeps its sessions, how to find them, the formats
it writes them in, and what moves them."""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from compaction_inspector.core.model import immutable

if TYPE_CHECKING:
    from compaction_inspector.core.formats.kinds import Document, Journal, Store, TaskFolder, Writer
    from compaction_inspector.core.model import Block
    from compaction_inspector.core.statusline import StatusLine


@immutable()
class Found:
    """A session file where an agent keeps it."""

    path: Path
    agent: str
    project: str  # Claude Code: the project folder decoded; Codex: the day folder
    subagents: tuple[Path, ...] = ()
    subagent_of: str | None = None  # a sub-agent's: the session it ran in
    stamp: int | None = None  # what changes when the session does, where one file holds many


def folder(home: Callable[[], Path], given: str | Path | None) -> Path:
    """Where an agent's sessions are: the folder `given`, else its own (`home`)."""
    return Path(given) if given else home()


class Places(Protocol):
    """Where an agent keeps its sessions and how to find them there: its package's
    `places` module, which imports neither the agent's class nor its strategies or rules
    (its transcript module at most, for its format's name), so a session list answered
    from the index (`tui.cli.kept_sessions`) loads no agent, strategy or setting."""

    __name__: str  # the module's, which the index keeps to import it again

    def home(self) -> Path:
        """Its sessions' folder when none is named: its environment's, else the home's."""
        ...

    def find(self, root: Path) -> list[Found]:
        """Its session files under `root`."""
        ...


class Files(ABC):
    """What an agent is to the inspector as files: the format it writes (the catalogue's
    key, and the name of the strategy that replays its own compaction), its name, where
    it keeps its sessions and how to find them there."""

    format: ClassVar[str]
    name: ClassVar[str]  # as the app names it: "Claude Code"
    folder_option: ClassVar[str]  # the command line's option naming its sessions' folder: "claude-dir"
    folder_help: ClassVar[str]  # what that option says: "Claude Code's projects folder (default …)"
    journal: ClassVar[Journal | None] = None  # its transcript format, read line by line
    store: ClassVar[Store | None] = None  # ... or the file it keeps its sessions in
    task_folder: ClassVar[TaskFolder | None] = None  # ... or the VS Code task folder it keeps each in
    document: ClassVar[Document | None] = None  # ... or a JSON file it writes whole for each
    writer: ClassVar[Writer | None] = None  # its format written back, where it can be
    status_line: ClassVar[StatusLine | None] = None  # the status line command it runs, if any
    task_tools: ClassVar[tuple[str, ...]] = ()  # the tools whose calls start a sub-agent
    # bytes every line that records one of its compactions holds (b"": it records none)
    compaction_mark: ClassVar[bytes] = b""
    # the environment variables that move all of it the inspector reads (its sessions, its
    # settings, its caches): a test points each at a folder of its own
    homes: ClassVar[tuple[str, ...]] = ()
    # the names it signs commits and comments with: a shared report keeps them, as a bot's
    signs_as: ClassVar[tuple[str, ...]] = ()
    # the prefixes of its own models' names that count with o200k_base, where the
    # tokenizer's table of OpenAI's models does not name them
    o200k_models: ClassVar[tuple[str, ...]] = ()

    # where it keeps its sessions (`Places`): set, or `home` and `find` written
    places: ClassVar[Places | None] = None

    def home(self) -> Path:
        """Its sessions' folder when none is named: its environment's, else the home's."""
        return self._places().home()

    def find(self, root: Path) -> list[Found]:
        """Its session files under `root`."""
        return self._places().find(root)

    def _places(self) -> Places:
        if self.places is None:
            raise NotImplementedError(f"{type(self).__name__} sets `places`, or writes `home` and `find`")
        return self.places

    def folder(self, given: str | Path | None) -> Path:
        """Where its sessions are: the folder given, else its own."""
        return folder(self.home, given)

    def subagent_files(self, session: Path, results: Sequence[Block]) -> list[Path]:
        """Where the sub-agents the results of its task calls (`results`) name keep their
        sessions, whether or not they are there; none by default."""
        return []

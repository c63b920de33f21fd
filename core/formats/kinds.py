"""The kinds of format a transcript comes in: a JSONL an agent writes as it runs (each
agent's, in its package), an API request body, and a format a session is written back in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from compaction_inspector.core.formats.common import Records
from compaction_inspector.core.model import Compaction, Message, Session

if TYPE_CHECKING:
    from compaction_inspector.core.formats.task_folder import Task


class Journal(Protocol):
    """A JSONL an agent writes as it runs, told from any one of its lines."""

    FORMAT: str
    PROVIDER: str  # whose prices its responses are billed at
    DESCRIBED: str  # what it is, in a list of the formats tried: "Claude Code JSONL"

    def looks_like(self, record: dict[str, Any]) -> bool: ...

    def load(self, records: Records, path: str | None) -> Session: ...

    def appended(self, session: Session, records: Records) -> Session | None: ...


class TaskFolder(Protocol):
    """A VS Code agent's task folder (`core.formats.task_folder`), told by the extension's
    storage folder on its path, else by what only its files hold."""

    FORMAT: str
    PROVIDER: str
    DESCRIBED: str
    STORAGE: str  # the extension's folder in VS Code's global storage: "saoudrizwan.claude-dev"

    def looks_like(self, task: Task) -> bool: ...

    def load(self, task: Task, path: str) -> Session: ...


class Document(Protocol):
    """A JSON file an agent writes whole for each session, told by its name."""

    FORMAT: str
    PROVIDER: str
    DESCRIBED: str

    def claims(self, path: Path) -> bool: ...

    def companions(self, path: Path) -> tuple[Path, ...]: ...  # the files beside it read with it

    def load(self, path: Path) -> Session: ...


class Body(Protocol):
    """An API request body (one file, or each record of a proxy log)."""

    FORMAT: str
    PROVIDER: str

    def looks_like(self, body: dict[str, Any]) -> bool: ...

    def messages(
        self, body: dict[str, Any], line: int | None = None
    ) -> tuple[list[Message], dict[str, Any]]: ...


class Writer(Protocol):
    """A format a session can be written back in (`core.reporting.export`)."""

    FORMAT: str

    def write(
        self, messages: Sequence[Message], metadata: Mapping[str, Any], compactions: Mapping[int, Compaction]
    ) -> str: ...


class Store(Protocol):
    """A file an agent keeps many sessions in (a database), each named `FILE#SESSION`
    (`stored_in`), read without writing or making anything beside it."""

    FORMAT: str
    PROVIDER: str
    DESCRIBED: str
    SUFFIXES: tuple[str, ...]  # its files' name endings, for a folder searched for sessions
    NAMES: tuple[str, ...]  # the names the agent gives its files: one that is not a store is told so
    NOT_ONE: str  # what a file of one of those names that is not one is told ("not an SQLite database")

    def holds(self, head: bytes) -> bool: ...  # the file's first bytes say it is one

    def names(self, path: Path) -> list[Path]: ...  # every session it holds, named

    def stamp(self, path: Path) -> tuple[int, ...]: ...  # what changes when the agent writes to it

    def load(self, path: Path, session: str | None) -> Session: ...  # None: the newest


SEPARATOR = "#"  # between a store's file and the session named in it


def stored_in(path: str | Path) -> tuple[Path, str | None]:
    """A path as a file and the session it names inside (`FILE#SESSION`), or the path and
    None where it names none (a file of that whole name wins)."""
    text = str(path)
    if SEPARATOR not in text or Path(text).exists():
        return Path(text), None
    file, _, session = text.rpartition(SEPARATOR)
    return Path(file), session or None

"""What the modal screens that run long work share (the comparison, the sweep): a title,
a progress bar, a table, a note; the work in a worker posting its progress; a failure said
one way, in the title, the bar gone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeVar

from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.tui.text import safe

T = TypeVar("T")


def summarizer_failed(exc: SummarizerError) -> str:
    """How every screen says the user's summarizer failed."""
    return f"Stopped: your summarizer failed: {exc}"


@dataclass
class Failed(Message):
    """The work stopped: why."""

    reason: str


class ProgressScreen(ModalScreen[T]):
    """A modal whose work runs in a worker; `TITLE_ID` names its title's Static."""

    TITLE_ID: ClassVar[str]

    def said(self, text: str, style: str = "") -> None:
        """The title says `text` (its progress, what it found, or why it stopped)."""
        self.query_one(f"#{self.TITLE_ID}", Static).update(safe(text, style))

    def finished(self) -> None:
        self.query_one(ProgressBar).display = False

    def on_failed(self, event: Failed) -> None:
        self.finished()
        self.said(event.reason, "red")

"""A tuned setting about to be written into the agent's own settings file: the diff it
makes, shown whole before anything is written (`core.apply`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from compaction_inspector.core.apply import Change
from compaction_inspector.tui.text import safe


class ApplyScreen(ModalScreen[bool]):
    """The change to the agent's settings file; enter writes it, escape leaves it."""

    BINDINGS = [
        Binding("enter", "write", "Write it", id="apply.write"),
        Binding("escape,q", "leave", "Leave the file as it is", id="apply.leave"),
    ]

    def __init__(self, change: Change, agent: str) -> None:
        super().__init__()
        self.change = change
        self.agent = agent

    def compose(self) -> ComposeResult:
        had = f", replacing {self.change.had}" if self.change.had is not None else ""
        title = f"{self.agent}: {self.change.key} = {self.change.value:,} into {self.change.path}{had}"
        with Vertical(id="apply"):
            yield Static(safe(title), id="apply-title")
            with VerticalScroll(id="apply-diff"):
                yield Static(safe(self.change.diff.rstrip("\n")))
            yield Static(
                "enter writes it (the file as it was kept beside it) · esc leaves it", id="apply-help"
            )

    def action_write(self) -> None:
        self.dismiss(True)

    def action_leave(self) -> None:
        self.dismiss(False)

"""What a session screen opens to weigh strategies against each other: every strategy
on this session (`C`), and the strategy shown swept over the sessions in its folder
(the palette): the bodies of the screen's actions of those names."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from textual.app import App
from textual.message import Message

from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.sessions import transcripts_under
from compaction_inspector.tui.session.messages import SweepAsked


class Host(Protocol):
    """The screen these actions act on."""

    inspection: Inspection | None
    strategy: str
    path: Path

    @property
    def config(self) -> Config: ...

    @property
    def app(self) -> App[Any]: ...
    def notify(self, message: str, *, timeout: float | None = None) -> None: ...
    async def run_action(self, action: str) -> None: ...
    def post_message(self, message: Message) -> bool: ...


def compare_strategies(screen: Host) -> None:
    """Every strategy replayed and priced on this session, a row each; the one chosen is
    shown."""
    if screen.inspection is None:
        screen.notify("Still reading the session", timeout=2)
        return

    async def chosen(name: str | None) -> None:
        if name is not None:
            await screen.run_action(f"strategy('{name}')")

    from compaction_inspector.tui.screens.compare import CompareScreen  # a modal screen: when first asked

    screen.app.push_screen(CompareScreen(screen.inspection), chosen)


def sweep_folder(screen: Host) -> None:
    """The strategy shown swept over the sessions in this session's folder."""
    catalogue = screen.config.catalogue
    paths = [str(p) for p in transcripts_under(catalogue, [str(screen.path.parent)])]
    screen.post_message(SweepAsked(paths, screen.strategy))

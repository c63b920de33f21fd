"""`watch`: a few rows under the prompt (Textual's inline mode) following a session while its
agent works: the gauge, the agent's own count against its point, and a notice when its next
request may compact. For any agent (Codex's own status line takes only built-in items).

The file is looked at every second and read again when it grew; a file replaced or gone
is said, and followed again when it comes back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from compaction_inspector.core import statusline
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.strategies import DEFAULT
from compaction_inspector.tui.figures import gauge_state
from compaction_inspector.tui.text import safe
from compaction_inspector.tui.widgets.gauge import PressureGauge

CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class Stamp:
    """What says a file changed: its inode and size (None: it is not there)."""

    inode: int
    size: int

    @staticmethod
    def of(path: Path) -> Stamp | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return Stamp(st.st_ino, st.st_size)


def once(path: Path, config: Config) -> str:
    """The status line of the session at `path`, read whole."""
    return statusline.line(statusline.of_inspection(Inspection.open(path, config)))


class WatchApp(App[None]):
    """The gauge and the status line of one session, kept up to date as it grows."""

    CSS_PATH = "watch.tcss"
    BINDINGS = [Binding("q", "quit", "Quit", id="quit")]

    def __init__(self, path: Path, config: Config) -> None:
        super().__init__()
        self.path, self.config = path, config
        self.stamp: Stamp | None = None
        self.warned = False  # the notice that its next request may compact, given once a time

    def compose(self) -> ComposeResult:
        yield PressureGauge(id="gauge")
        yield Static(safe(f"reading {self.path.name}…"), id="line")

    def on_mount(self) -> None:
        self.check()
        self.set_interval(CHECK_SECONDS, self.check)

    def check(self) -> None:
        """Read the file again when it changed; say so when it is gone or replaced."""
        now = Stamp.of(self.path)
        if now is None:
            if self.stamp is not None or not self.query_one("#line", Static).has_class("gone"):
                self._say(f"{self.path} is gone: waiting for it to come back", gone=True)
            self.stamp = None
            return
        if now == self.stamp:
            return
        replaced = self.stamp is not None and (now.inode != self.stamp.inode or now.size < self.stamp.size)
        self.stamp = now
        self.read(replaced)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def read(self, replaced: bool) -> None:
        try:
            inspection = Inspection.open(self.path, self.config)
        except LoadError as exc:
            self.call_from_thread(self._say, f"{self.path.name}: {exc}", True)
            return
        self.call_from_thread(self._show, inspection, replaced)

    def _show(self, inspection: Inspection, replaced: bool) -> None:
        self.query_one(PressureGauge).update_state(gauge_state(inspection, None, -1, False, DEFAULT))
        figures = statusline.of_inspection(inspection)
        text = statusline.line(figures)
        self._say(("the file was replaced: read again · " if replaced else "") + text, gone=False)
        left = figures.left
        near = left is not None and (left.left <= 0 or (left.pace is not None and left.left <= left.pace))
        if near and not self.warned:
            self.notify(f"{inspection.session.path}: {left.line() if left else ''}", title="It may compact")
        self.warned = near

    def _say(self, text: str, gone: bool) -> None:
        line = self.query_one("#line", Static)
        line.update(safe(text))
        line.set_class(gone, "gone")

"""`watch`: a few rows under the prompt (Textual's inline mode) following a session while its
agent works: the gauge, the agent's own count against its point, and a notice when its next
request may compact. For any agent (Codex's own status line takes only built-in items).

The file is looked at every second through the follow mode's `Follower`: what was
appended is read, a file replaced, truncated or rewritten is read again and said so, a
file gone is said and followed again when it comes back.
"""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from compaction_inspector.core import statusline
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.strategies import DEFAULT
from compaction_inspector.tui.session.figures import gauge_state
from compaction_inspector.tui.session.follow import Follower
from compaction_inspector.tui.text import safe, whole_parts
from compaction_inspector.tui.widgets.gauge import PressureGauge

CHECK_SECONDS = 1.0


def once(path: Path, config: Config) -> str:
    """The status line of the session at `path`, read whole."""
    return statusline.line(Inspection.open(path, config).status)


class WatchApp(App[None]):
    """The gauge and the status line of one session, kept up to date as it grows."""

    CSS_PATH = "watch.tcss"
    BINDINGS = [Binding("q", "quit", "Quit", id="quit")]

    def __init__(self, path: Path, config: Config) -> None:
        super().__init__()
        self.path, self.config = path, config
        self.follower: Follower | None = None  # once the file could be read
        self.warned = False  # the notice that its next request may compact, given once a time

    def compose(self) -> ComposeResult:
        yield PressureGauge(id="gauge")
        yield Static(safe(f"reading {self.path.name}…"), id="line")

    def on_mount(self) -> None:
        self.check()
        self.set_interval(CHECK_SECONDS, self.check)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def check(self) -> None:
        """What the file holds now (`Follower`: only what was appended, read again when it
        was replaced, truncated or rewritten), shown when it changed; gone, said."""
        follower = self.follower
        if follower is None:
            try:
                session = self.config.catalogue.formats.load(self.path)
            except LoadError as exc:
                gone = not self.path.exists()
                said = (
                    f"{self.path} is gone: waiting for it to come back"
                    if gone
                    else f"{self.path.name}: {exc}"
                )
                self.call_from_thread(self._say, said, True)
                return
            self.follower = Follower(self.config.catalogue.formats, self.path, session)
            self._inspect(session, replaced=False)
            return
        was_gone = follower.gone
        changed = follower.poll()
        if follower.gone:
            self.call_from_thread(self._say, f"{self.path} is gone: waiting for it to come back", True)
        elif changed is not None:
            session, reloaded = changed
            self._inspect(session, replaced=reloaded and not was_gone)

    def _inspect(self, session: Session, replaced: bool) -> None:
        self.call_from_thread(self._show, Inspection.of(session, self.config), replaced)

    def _show(self, inspection: Inspection, replaced: bool) -> None:
        # the agent's own strategy where it has one: its point, not another strategy's bands
        own = inspection.session.format
        shown = own if own in inspection.config.catalogue.strategies else DEFAULT
        self.query_one(PressureGauge).update_state(gauge_state(inspection, None, -1, False, shown))
        figures = inspection.status
        text = statusline.line(figures)
        self._say(("the file was replaced: read again · " if replaced else "") + text, gone=False)
        left = figures.left
        near = left is not None and (left.left <= 0 or (left.pace is not None and left.left <= left.pace))
        if near and not self.warned:
            self.notify(f"{inspection.session.path}: {left.line() if left else ''}", title="It may compact")
        self.warned = near

    def _say(self, text: str, gone: bool) -> None:
        line = self.query_one("#line", Static)
        # the figures: the parts that fit whole, and a mark where more did not (never a figure cut)
        line.update(safe(text) if gone else whole_parts(safe(text), max(20, self.size.width - 2)))
        line.set_class(gone, "gone")

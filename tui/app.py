"""Compaction Inspector: the Textual app, the hub between its screens.

A session is shown by a `SessionScreen` (its state, workers and keys); the user's
sessions are listed by the `SessionBrowser`. The app opens one of them, goes from the
list to a session and back, says why a file cannot be opened, and shows every
notification as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from compaction_inspector.core.config import Config
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.text import visible
from compaction_inspector.tui.session import messages
from compaction_inspector.tui.session.commands import InspectorCommands
from compaction_inspector.tui.session.messages import SweepAsked
from compaction_inspector.tui.session.screen import SessionScreen
from compaction_inspector.tui.text import safe

if TYPE_CHECKING:
    from compaction_inspector.tui.screens.browser import SessionBrowser
    from compaction_inspector.tui.screens.sweep import Picked


class InspectorApp(App[None]):
    TITLE = "Compaction Inspector"
    CSS_PATH = "app.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (60, "-medium"), (120, "-wide"), (200, "-huge")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    COMMANDS = App.COMMANDS | {InspectorCommands}
    BINDINGS = [Binding("q", "quit", "Quit", id="quit")]
    KEPT_SESSIONS = 4  # sessions opened from the list kept as they were left, the newest

    def __init__(
        self,
        path: str | Path,
        config: Config,
        *,
        request: int | None = None,
        follow: bool = False,
        demo: bool = False,
        config_warning: str | None = None,
        export_dir: str | Path = ".",
        note: str | None = None,
        browse: list[tuple[str, Path]] | None = None,
    ) -> None:
        """`browse`: where to list the user's sessions from; the app opens on that list
        and `path` is opened only once one is chosen."""
        super().__init__()
        self.path = Path(path)
        self.config = config
        self.browser: SessionBrowser | None = None
        if browse:  # the list's module is imported only where the app opens on it
            from compaction_inspector.tui.screens.browser import SessionBrowser

            self.browser = SessionBrowser(self.config.catalogue, browse, self.config.keys)
        self.request, self.follow, self.demo = request, follow, demo
        self.config_warning, self.note = config_warning, note
        self.export_dir = Path(export_dir)
        # sessions opened from the list, installed by name, with the file's stamp then
        self._kept: dict[str, tuple[int, int] | None] = {}

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text shown, not obeyed: what it says comes from
        transcripts, file names and configs, never markup (the `markup` asked for is ignored)."""
        super().notify(
            visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False
        )

    def on_mount(self) -> None:
        if self.config.keys:
            self.set_keymap(dict(self.config.keys))
        if self.note:
            self.notify(self.note, timeout=8)
        if self.config_warning:
            self.notify(self.config_warning, title="Config not used", severity="warning", timeout=10)
        if self.browser is not None:
            # installed: kept, with its cursor, while a session is shown
            self.install_screen(self.browser, "browser")
            self.push_screen("browser")

    def get_default_screen(self) -> Screen[Any]:
        """The session itself when one is given: its first rows come without a screen
        under it to style and resume from (70 ms of a 0.2 s start, `benchmarks/startup.py`)."""
        return super().get_default_screen() if self.browser is not None else self._session(self.path)

    def _session(self, path: Path, strategy: str | None = None) -> SessionScreen:
        return SessionScreen(
            path,
            self.config,
            strategy=strategy,
            request=self.request,
            follow=self.follow,
            demo=self.demo,
            export_dir=self.export_dir,
        )

    def on_session_browser_chosen(self, event: SessionBrowser.Chosen) -> None:
        """Open the session chosen in the list, in its place: as it was left (strategy,
        tuning, step) when it was opened before and its file has not changed since."""
        self.path = Path(event.path)
        name, stamp = f"session:{self.path}", _stamp(self.path)
        if name in self._kept:
            kept = self._kept.pop(name)
            if kept == stamp and stamp is not None:
                self._kept[name] = stamp  # the newest now
                self.switch_screen(name)
                return
            self.uninstall_screen(name)
        while len(self._kept) >= self.KEPT_SESSIONS:
            self._forget(next(iter(self._kept)))
        self.install_screen(self._session(self.path), name)
        self._kept[name] = stamp
        self.switch_screen(name)

    def on_sweep_asked(self, event: SweepAsked) -> None:
        """The sweep screen over the sessions asked for; the point chosen opens a session."""
        if not event.paths:
            self.notify("No session to sweep", timeout=3)
            return
        from compaction_inspector.tui.screens.sweep import SweepScreen  # a screen few open: not at start-up

        self.push_screen(SweepScreen(event.paths, event.strategy, self.config, self.export_dir), self._picked)

    def _picked(self, picked: Picked | None) -> None:
        """The point applied as the policy (the app's config from now on), and the session
        it changes most opened afresh under it with its strategy shown."""
        if picked is None:
            return
        options = with_values(self.config.options(picked.strategy), picked.values)
        self.config = self.config.with_options(picked.strategy, options)
        self.path = Path(picked.path)
        name = f"session:{self.path}"
        self._forget(name)
        while len(self._kept) >= self.KEPT_SESSIONS:
            self._forget(next(iter(self._kept)))
        self.install_screen(self._session(self.path, picked.strategy), name)
        self._kept[name] = _stamp(self.path)
        self.switch_screen(name)

    def _forget(self, name: str) -> None:
        """Let a kept session go (it is not on the stack)."""
        if self._kept.pop(name, False) is not False:
            self.uninstall_screen(name)

    def on_session_screen_leave(self) -> None:
        """Back to the list, its cursor where it was (with no list: nothing to go back to)."""
        if self.browser is not None:
            self.switch_screen("browser")

    def on_session_screen_unreadable(self, event: messages.Unreadable) -> None:
        name = visible(event.path.name)
        if self.browser is not None:  # chosen from the list: say why, and back to it
            self.notify(event.reason, title=f"Cannot open {name}", severity="error", timeout=8)
            self.switch_screen("browser")
            self.call_after_refresh(self._forget, f"session:{event.path}")  # tried afresh next time
            return
        # nothing to show: end with the reason, as the command line does
        self.exit(return_code=2, message=safe(f"compaction-inspector: {event.path}: {event.reason}"))


def _stamp(path: Path) -> tuple[int, int] | None:
    """What says a file changed: its modification time and size (None: it cannot be read)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size

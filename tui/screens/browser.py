"""The session browser: the user's own Claude Code and Codex sessions, newest first.

Rows fill in as a worker scans the files (from the index in the user cache directory
where a file has not changed); typing filters, a column header sorts, enter opens the
session, escape from the session comes back here with the cursor where it was.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.worker import get_current_worker

from compaction_inspector.core.sessions import Found, Index, Row, find
from compaction_inspector.core.text import counted, one_line
from compaction_inspector.tui.text import safe

COLUMNS = (
    ("last activity", "last_activity"),
    ("started", "started"),
    ("agent", "agent"),
    ("model", "model"),
    ("project", "project"),
    ("title", "title"),
    ("messages", "messages"),
    ("rounds", "api_rounds"),
    ("peak context", "peak_context_tokens"),
    ("compactions", "compactions"),
    ("size", "bytes"),
)


class SessionBrowser(Screen[None]):
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="browser.filter"),
        Binding("q", "app.quit", "Quit", id="browser.quit"),
    ]

    class Chosen(Message):
        """A session was chosen to open."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, places: list[tuple[str, Path]]) -> None:
        super().__init__()
        self.places = places
        self.rows: list[Row] = []
        self.sort = "last_activity"
        self.reverse = True

    def compose(self) -> ComposeResult:
        where = "; ".join(f"{agent}: {root}" for agent, root in self.places)
        yield Static(
            safe(f"Your sessions ({where}). Type to filter, enter opens, a header sorts."), id="browser-head"
        )
        yield Input(
            placeholder="filter: title, project, model or agent", id="browser-filter", select_on_focus=False
        )
        yield ProgressBar(id="browser-progress", show_eta=False)
        yield DataTable(id="browser-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, key in COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.scan()

    @work(thread=True, exclusive=True, group="browse", description="scan sessions")
    def scan(self) -> None:
        worker = get_current_worker()
        found = find(self.places)

        def progress(done: int, total: int, row: Row) -> None:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._progress, done, total, row)

        rows = Index().rows(found, progress)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._scanned, rows, found)

    def _progress(self, done: int, total: int, row: Row) -> None:
        """A row as it is scanned, shown at once (the full list is sorted when all are)."""
        self.query_one(ProgressBar).update(total=max(1, total), progress=done)
        self.rows.append(row)
        if _matches(row, self.query_one(Input).value):
            self.query_one(DataTable).add_row(*_cells(row), key=row.path)

    def _scanned(self, rows: list[Row], found: list[Found]) -> None:
        self.rows = rows
        self.query_one(ProgressBar).display = False
        head = self.query_one("#browser-head", Static)
        head.update(f"{counted(len(rows), 'session')}: type to filter, enter opens, a header sorts, q quits.")
        self.query_one(DataTable).focus()
        self.show()

    def show(self) -> None:
        """The rows that match the filter, in the chosen order."""
        table = self.query_one(DataTable)
        wanted = self.query_one(Input).value
        cursor = table.cursor_row
        table.clear()
        shown = [r for r in self.rows if _matches(r, wanted)]
        shown.sort(key=lambda r: _sort_key(getattr(r, self.sort)), reverse=self.reverse)
        for r in shown:
            table.add_row(*_cells(r), key=r.path)
        if shown:
            table.move_cursor(row=min(cursor, len(shown) - 1))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.show()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(DataTable).focus()

    def action_focus_filter(self) -> None:
        self.query_one(Input).focus()

    def on_key(self, event: events.Key) -> None:
        """Typing filters: a printable key on the list goes to the filter."""
        box = self.query_one(Input)
        if (
            event.character
            and event.character.isprintable()
            and event.character not in "q/"
            and not box.has_focus
        ):
            box.focus()
            box.insert_text_at_cursor(event.character)
            event.stop()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        self.reverse = not self.reverse if key == self.sort else key != "title"
        self.sort = key
        self.show()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.Chosen(str(event.row_key.value)))

    def on_screen_resume(self) -> None:
        self.query_one(DataTable).focus()


def _matches(r: Row, wanted: str) -> bool:
    wanted = wanted.strip().lower()
    return (
        not wanted
        or wanted in " ".join(str(x) for x in (r.title, r.project, r.model, r.agent, r.path)).lower()
    )


def _when(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ")


def _sort_key(value: object) -> tuple[int, object]:
    return (0, "") if value is None else (1, value)


def _cells(r: Row) -> list[Text]:
    """A row's cells, each `Text`: the table would read a string as markup."""
    peak = f"{r.peak_context_tokens:,}" if r.peak_context_tokens is not None else "—"
    if r.peak_pressure is not None:
        peak += f" ({r.peak_pressure:.0%})"
    title = safe(one_line(r.problem, 60), "red") if r.problem else safe(one_line(r.title, 60))
    return [
        safe(_when(r.last_activity)),
        safe(_when(r.started)),
        safe(r.agent),
        safe(one_line(r.model or "", 20)),
        safe(one_line(r.project, 30)),
        title,
        safe(f"{r.messages:,}"),
        safe(f"{r.api_rounds:,}"),
        safe(peak),
        safe(str(r.compactions)),
        safe(f"{r.bytes / 1e6:.1f} MB" if r.bytes >= 100_000 else f"{r.bytes / 1e3:.0f} kB"),
    ]

"""The session browser: the user's own Claude Code and Codex sessions, newest first.

Rows fill in as a worker scans the files (from the index in the user cache directory
where a file has not changed); typing filters, a column header sorts, enter opens the
session, escape from the session comes back here with the cursor where it was.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from pathlib import Path

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.widgets.data_table import ColumnKey
from textual.worker import get_current_worker

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.session_index import Index, Row, short_project
from compaction_inspector.core.sessions import find, rows
from compaction_inspector.core.strategies import DEFAULT
from compaction_inspector.core.text import counted, one_line
from compaction_inspector.tui.screens.help import HelpScreen
from compaction_inspector.tui.session.messages import SweepAsked
from compaction_inspector.tui.text import safe

# (label, Row field, width) in the order shown; as the screen narrows, the columns
# at the end of DROPPED go first. The title takes the width that is left. The project
# (its last two folders) is never dropped: titles alone repeat across projects.
PROJECT_WIDTH = 14
MODEL_WIDTH = 20
COLUMNS = (
    ("title", "title", 0),
    ("project", "project", PROJECT_WIDTH),
    ("peak", "peak_context_tokens", 14),
    ("compactions", "compactions", 13),  # each wide enough for its label and the sort's arrow
    ("cost", "cost_usd", 10),  # "not priced"
    ("last activity", "last_activity", 16),
    ("messages", "messages", 10),
    ("rounds", "api_rounds", 8),
    ("model", "model", MODEL_WIDTH),
    ("agent", "agent", 11),
    ("started", "started", 16),
    ("size", "bytes", 8),
)
# Dropped first to last as the screen narrows: while the title would be narrower than
# TITLE_WANT, then the last three only while it would be narrower than TITLE_MIN.
DROPPED = ("size", "started", "agent", "rounds", "model", "messages", "last activity", "cost",
           "compactions", "peak")  # fmt: skip
TITLE_WANT, TITLE_MIN = 38, 17  # at 80 columns the cost still shows beside a title of 17
BATCH_S = 1.0  # a scan shows its first row at once, then new rows at most this often: drawing slows it
NUMBERS = frozenset({"peak_context_tokens", "compactions", "cost_usd", "messages", "api_rounds", "bytes"})


def fitting(width: int) -> list[tuple[str, str, int]]:
    """The columns a table `width` cells wide shows, the title's width first."""
    shown = list(COLUMNS)
    for n, label in enumerate(DROPPED):
        title = width - sum(w + 2 for _, _, w in shown[1:]) - 4
        if title >= (TITLE_WANT if n < len(DROPPED) - 3 else TITLE_MIN):
            break
        shown = [c for c in shown if c[0] != label]
    return shown


class SessionBrowser(Screen[None]):
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="browser.filter"),
        Binding("f2", "sort_next", "Sort by next column", id="browser.sort_next"),
        Binding("f3", "sort_reverse", "Reverse the order", id="browser.sort_reverse"),
        Binding("f4", "sweep", "Sweep these sessions", id="browser.sweep"),
        Binding("q", "app.quit", "Quit", id="browser.quit"),
        Binding("question_mark,f1", "help", "Help", id="help"),
    ]

    class Chosen(Message):
        """A session was chosen to open."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(
        self, catalogue: Catalogue, places: list[tuple[str, Path]], keymap: Mapping[str, str] | None = None
    ) -> None:
        """Lists the sessions of the catalogue's agents found under `places`; `keymap`:
        the keys remapped by id, as the help names them."""
        super().__init__()
        self.catalogue = catalogue
        self.places = places
        self.keymap = dict(keymap or {})
        self.rows: list[Row] = []
        self.listed = False  # the index's rows are shown while the files are checked
        self.scanned = asyncio.Event()  # set once every file is checked (what tests await)
        self.sort = "last_activity"
        self.reverse = True
        self.columns: list[tuple[str, str, int]] = []

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
        self.fit_columns()
        self.query_one(DataTable).focus()
        self.scan()

    def on_resize(self) -> None:
        if self.fit_columns():
            self.show()

    def fit_columns(self) -> bool:
        """Show the columns that fit the screen's width; True when they changed."""
        columns = fitting(self.size.width)
        if columns == self.columns:
            return False
        self.columns = columns
        table = self.query_one(DataTable)
        table.clear(columns=True)
        title = max(TITLE_MIN, self.size.width - sum(w + 2 for _, _, w in columns[1:]) - 4)  # the rest
        for label, key, width in columns:
            table.add_column(self.heading(label, key), key=key, width=width or title)
        return True

    def heading(self, label: str, key: str) -> Text:
        """A column's label, with an arrow on the one the list is sorted by."""
        return Text(label + ((" ▼" if self.reverse else " ▲") if key == self.sort else ""))

    @work(thread=True, exclusive=True, group="browse", description="scan sessions")
    def scan(self) -> None:
        """The rows the index knows, at once; then every file checked (only a changed one
        is read again), the rows it makes shown in batches, so drawing them never holds
        up the scan."""
        worker = get_current_worker()
        found = find(self.catalogue, self.places)
        index = Index()
        known = index.known(found)
        if known:
            self.app.call_from_thread(self._listed, known)
        batch: list[Row] = []
        shown_at = time.monotonic()

        def progress(done: int, total: int, row: Row) -> None:
            nonlocal shown_at
            batch.append(row)
            if not worker.is_cancelled and (done == 1 or time.monotonic() - shown_at >= BATCH_S):
                self.app.call_from_thread(self._progress, done, total, batch[:])
                batch.clear()
                shown_at = time.monotonic()

        made = rows(self.catalogue, found, progress, index=index)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._scanned, made, known)

    def _listed(self, rows: list[Row]) -> None:
        """The index's rows, before any file is checked: the scan replaces them once, at
        its end, if any changed."""
        self.rows, self.listed = rows, True
        self.show()

    def _progress(self, done: int, total: int, rows: list[Row]) -> None:
        """Rows as they are scanned; while the index listed none, each is added as it
        comes (the full list is sorted when all are)."""
        self.query_one(ProgressBar).update(total=max(1, total), progress=done)
        if self.listed:
            return
        self.rows += rows
        table, wanted = self.query_one(DataTable), self.query_one(Input).value
        for row in rows:
            if _matches(row, wanted):
                table.add_row(*self.cells(row), key=row.path)

    def _scanned(self, rows: list[Row], known: list[Row]) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one(DataTable).focus()
        if rows != known or not self.listed:  # a warm list already shows them all
            self.rows = rows
            self.show()
        self._count(self.query_one(DataTable).row_count)

    def _count(self, shown: int) -> None:
        """The header: how many sessions there are, and how many the filter leaves."""
        total = counted(len(self.rows), "session")
        some = f"{shown:,} of {total} match the filter" if self.query_one(Input).value else total
        self.query_one("#browser-head", Static).update(
            f"{some}: type to filter, enter opens, a header sorts, q quits."
        )
        self.scanned.set()

    def show(self) -> None:
        """The rows that match the filter, in the chosen order."""
        table = self.query_one(DataTable)
        wanted = self.query_one(Input).value
        cursor = table.cursor_row
        table.clear()
        shown = [r for r in self.rows if _matches(r, wanted)]
        shown.sort(key=lambda r: _sort_key(_sorted_by(r, self.sort)), reverse=self.reverse)
        for label, key, _ in self.columns:
            table.columns[ColumnKey(key)].label = self.heading(label, key)
        for r in shown:
            table.add_row(*self.cells(r), key=r.path)
        if shown:
            table.move_cursor(row=min(cursor, len(shown) - 1))
        if self.scanned.is_set():
            self._count(len(shown))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.show()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter opens the one session it leaves, else goes to the list."""
        event.stop()
        table = self.query_one(DataTable)
        if table.row_count == 1:
            self.post_message(self.Chosen(str(table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value)))
        table.focus()

    def action_focus_filter(self) -> None:
        self.query_one(Input).focus()

    def on_key(self, event: events.Key) -> None:
        """Typing filters wherever the focus is: a printable key on the list goes to the
        filter, backspace takes a letter off it, escape clears it (and leaves the box)."""
        box = self.query_one(Input)
        if event.key == "escape" and (box.value or box.has_focus):
            box.value = ""
            self.query_one(DataTable).focus()
            event.stop()
        elif box.has_focus:
            return
        elif event.key == "backspace" and box.value:
            box.value = box.value[:-1]
            event.stop()
        elif event.character and event.character.isprintable() and event.character not in "q/?":
            box.focus()
            box.insert_text_at_cursor(event.character)
            event.stop()

    def sort_by(self, key: str) -> None:
        """Sort by `key` (a Row field), most first, titles A to Z; again reverses it."""
        self.reverse = not self.reverse if key == self.sort else key != "title"
        self.sort = key
        self.show()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def action_sort_next(self) -> None:
        keys = [key for _, key, _ in self.columns]
        self.sort_by(keys[(keys.index(self.sort) + 1) % len(keys)] if self.sort in keys else keys[0])

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort)

    def action_sweep(self) -> None:
        """A strategy's settings swept over the sessions the filter leaves."""
        wanted = self.query_one(Input).value
        paths = [r.path for r in self.rows if _matches(r, wanted) and not r.problem]
        self.post_message(SweepAsked(paths, DEFAULT))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.Chosen(str(event.row_key.value)))

    def cells(self, r: Row) -> list[Text]:
        cells = [_cell(r, key) for _, key, _ in self.columns]
        for cell, (_, key, _) in zip(cells, self.columns, strict=True):
            cell.justify = "right" if key in NUMBERS else "left"
        return cells

    def on_screen_resume(self) -> None:
        self.query_one(DataTable).focus()

    def action_help(self) -> None:
        more = [
            ("any letter", "Filter the list by title, project, model or agent"),
            ("backspace, escape", "Take a letter off the filter; clear it"),
            ("up, down", "Move through the sessions"),
            ("enter", "Open the session (in the filter: the only match, or the list)"),
        ]
        keys = [b for b in self.BINDINGS if isinstance(b, Binding)]
        self.app.push_screen(HelpScreen(keys, self.keymap, more, legend=""))


def _matches(r: Row, wanted: str) -> bool:
    wanted = wanted.strip().lower()
    return (
        not wanted
        or wanted in " ".join(str(x) for x in (r.title, r.project, r.model, r.agent, r.path)).lower()
    )


def _when(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ")


def _model(name: str, width: int) -> str:
    """A model's name within `width`: without its snapshot's date (claude-opus-4-5-20251101
    is claude-opus-4-5), else cut where a part of it ends, never inside a version."""
    if len(name) <= width:
        return name
    name = re.sub(r"-\d{8}$", "", name)
    if len(name) <= width:
        return name
    cut = name.rfind("-", 0, width - 1)
    return name[: cut if cut > 0 else width - 1] + "…"


def _sorted_by(r: Row, key: str) -> object:
    """What a column sorts by: what it shows (a project by the folders shown, then its
    path), else the row's value."""
    if key == "project":
        return (short_project(r.project, PROJECT_WIDTH).casefold(), r.project)
    return getattr(r, key)


def _sort_key(value: object) -> tuple[int, object]:
    return (0, "") if value is None else (1, value)


def _cell(r: Row, key: str) -> Text:
    """One cell of a row, as `Text`: the table would read a string as markup."""
    if key == "title":
        if r.problem:
            return safe(one_line(r.problem, 60), "red")
        mark = "↳ sub-agent: " if r.subagent_of else ""  # in the title: shown at every width
        return safe(mark + one_line(r.title, 60))
    if key == "project":
        return safe(short_project(r.project, PROJECT_WIDTH))
    if key == "peak_context_tokens":
        peak = f"{r.peak_context_tokens:,}" if r.peak_context_tokens is not None else "—"
        return safe(peak + (f" ({r.peak_pressure:.0%})" if r.peak_pressure is not None else ""))
    if key in ("last_activity", "started"):
        return safe(_when(getattr(r, key)))
    if key == "cost_usd":  # priced from its reported usage (analyze names the prices' source)
        return safe(r.cost)
    if key == "model" and r.model:
        return safe(_model(r.model, MODEL_WIDTH))
    if key == "compactions" and r.problem:  # not read: nothing is known of them
        return safe("—")
    if key == "bytes":
        return safe(f"{r.bytes / 1e6:.1f} MB" if r.bytes >= 100_000 else f"{r.bytes / 1e3:.0f} kB")
    value = getattr(r, key)
    return safe(f"{value:,}" if isinstance(value, int) else one_line(value or "", 30))

"""Every strategy on the session, side by side (core/compare.py): replayed and priced in
a worker, each row shown as it is done; the table sorts by any column, and enter opens
that strategy's steps on the session screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from compaction_inspector.core.compare import Comparison, Row, compare
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.pricing.cost import signed
from compaction_inspector.core.replaying.simulate import Cancelled
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.tui.screens.progress import Failed, ProgressScreen, summarizer_failed
from compaction_inspector.tui.text import fitting, safe

# the table's columns: (head, the sort it goes by, the cell of a row)
COLUMNS: tuple[tuple[str, str, Callable[[Row], str]], ...] = (  # what tells them apart first
    ("strategy", "name", lambda r: r.label),
    ("cost", "cost", lambda r: r.cost.usd()),
    ("vs real", "cost", lambda r: signed(r.cost_change)),
    ("compactions", "compactions", lambda r: f"{r.compactions:,}"),
    ("peak", "peak", lambda r: f"{r.peak_pressure:.1%}"),
    ("re-written", "rewritten", lambda r: f"{r.cost.rewritten:,}"),
    ("kept", "kept", lambda r: "—" if r.kept is None else f"{r.kept:.0%}"),
    ("final", "final", lambda r: f"{r.final_pressure:.1%}"),
    ("over", "over", lambda r: f"{r.rounds_over:,}"),
    ("removed", "removed", lambda r: f"{r.tokens_removed:,}"),
)
NOTE = (
    "Each replay priced on the session's own requests (docs/cost.md): re-written, what the real "
    "requests read that it wrote again; kept, what its run on the next request kept of what it "
    "summarized or cleared. s: sort by the next column · S: reverse · enter: its steps · escape: back"
)


@dataclass
class Progressed(Message):
    """The comparison has replayed `done` of `of` policies; `name` is next."""

    done: int
    of: int
    name: str


@dataclass
class Ranked(Message):
    """The rows replayed and priced so far."""

    comparison: Comparison


@dataclass
class Compared(Message):
    """Every row replayed and priced."""

    comparison: Comparison


class CompareScreen(ProgressScreen[str | None]):
    """Dismissed with the strategy chosen (enter), or None."""

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Back", id="compare.close"),
        Binding("s", "sort(1)", "Sort by the next column", id="compare.sort"),
        Binding("S", "reverse", "Reverse the order", id="compare.reverse"),
        Binding("enter", "open", "Open its steps", id="compare.open"),
    ]
    sort: reactive[str] = reactive("cost")
    descending: reactive[bool] = reactive(False)
    comparison: reactive[Comparison | None] = reactive(None)

    TITLE_ID = "compare-title"

    def __init__(self, inspection: Inspection) -> None:
        super().__init__()
        self.inspection = inspection

    def compose(self) -> ComposeResult:
        with Vertical(id="compare"):
            yield Static(safe("Comparing every strategy on this session…"), id="compare-title")
            yield ProgressBar(
                total=len(self.inspection.config.catalogue.replayed) + 1,
                id="compare-progress",
                show_eta=False,
            )
            yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
            yield Static(safe(NOTE), id="compare-note")

    def on_mount(self) -> None:
        self._compare(self.inspection)

    @work(thread=True, exclusive=True, group="compare", description="compare strategies")
    def _compare(self, inspection: Inspection) -> None:
        worker = get_current_worker()
        try:
            done = compare(
                inspection,
                inspection.config.catalogue.replayed,
                self._progressed,
                lambda: worker.is_cancelled,
                self._ranked,
            )
        except Cancelled:
            return
        except SummarizerError as exc:
            self.post_message(Failed(summarizer_failed(exc)))
            return
        self.post_message(Compared(done))

    def _ranked(self, so_far: Comparison) -> None:
        self.post_message(Ranked(so_far))

    def _progressed(self, done: int, of: int, name: str) -> None:
        self.post_message(Progressed(done, of, name))

    def on_progressed(self, event: Progressed) -> None:
        self.query_one(ProgressBar).update(progress=event.done)
        self.said(f"Comparing every strategy on this session… {event.done}/{event.of}: {event.name}")

    def on_ranked(self, event: Ranked) -> None:
        if self.query_one(ProgressBar).display:  # the whole comparison may have come first
            self.comparison = event.comparison

    def on_compared(self, event: Compared) -> None:
        self.finished()
        self.said(f"What the session really cost: {event.comparison.real.line()}")
        self.comparison = event.comparison

    def watch_comparison(self) -> None:
        if self.comparison is not None:
            self.query_one("#compare-note", Static).update(
                safe("\n".join([NOTE, *self.comparison.caveats()]))
            )
        self._fill()

    def watch_sort(self) -> None:
        self._fill()

    def watch_descending(self) -> None:
        self._fill()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """The rows, with the columns that fit whole in the table's width (the strategy and
        its cost first): a figure or a name is shown whole or its column left out."""
        if self.comparison is None:
            return
        table = self.query_one(DataTable)
        # the cursor stays on the strategy it is on while rows come in and sort around it
        chosen = table.coordinate_to_cell_key(table.cursor_coordinate).row_key if table.row_count else None
        table.clear(columns=True)
        rows = self.comparison.sorted(self.sort, self.descending).rows
        cells = [{head: cell(row) for head, _, cell in COLUMNS} for row in rows]
        ranks = {head: n for n, (head, _, _) in enumerate(COLUMNS)}  # in the order of what matters
        shown = fitting(ranks, cells, 0, table.size.width or self.size.width, 2)
        for head, _, _ in COLUMNS:
            if head in shown:
                table.add_column(head, key=head)
        for row, by_head in zip(rows, cells, strict=True):
            table.add_row(*(safe(by_head[h]) for h, _, _ in COLUMNS if h in shown), key=row.strategy or "")
        if chosen is not None and chosen in table.rows:
            table.move_cursor(row=table.get_row_index(chosen))
        table.focus()

    def action_sort(self, step: int) -> None:
        keys = list(dict.fromkeys(key for _, key, _ in COLUMNS))
        self.sort = keys[(keys.index(self.sort) + step) % len(keys)]
        self.notify(f"Sorted by {self.sort}", timeout=2)

    def action_reverse(self) -> None:
        self.descending = not self.descending

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if self.comparison is None or not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        self.dismiss(key or None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.row_key.value or None)

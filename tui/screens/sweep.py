"""A strategy's settings swept over many sessions (core/sweeping/sweep.py): the grid run in a
worker with its progress shown, the points drawn on real axes with the front, the
current setting and the default marked, and a table of every point. Enter applies the
chosen point as the policy and opens the session it changes most."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from multiprocessing import resource_tracker
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Input, ProgressBar, Select, Static
from textual.worker import get_current_worker

from compaction_inspector.core.config import Config
from compaction_inspector.core.model import immutable
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.core.strategies import DEFAULT, OptionError
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.sweeping.grid import Grid, Values, suggested
from compaction_inspector.core.sweeping.points import COLUMNS, TIED, tied
from compaction_inspector.core.sweeping.sweep import Sweep, sweep
from compaction_inspector.core.text import counted
from compaction_inspector.tui.screens.progress import Failed, ProgressScreen, summarizer_failed
from compaction_inspector.tui.session import writing
from compaction_inspector.tui.text import fitting, safe, span
from compaction_inspector.tui.widgets.front import X_AXES, Y_AXES, FrontPlot

# what matters most first: a narrow screen leaves out the rest
SHOWN = sorted(COLUMNS, key=lambda c: COLUMNS[c])
SETTINGS_WIDTH = 56  # a point's settings are cut past this (or to fit), its figures never
NOTE = (
    "cost: each replay priced on the session's own requests, an estimate (docs/cost.md) · "
    "★ the front: none beats it on compactions, cost, rounds over and kept · C yours · D the default · "
    "x, y: the axes · enter: apply it, open the session it changes most · A: write it to the agent's own "
    "settings · w: an HTML page · escape: back"
)


@immutable()
class Picked:
    """The point chosen: its strategy and values, and the session to open."""

    strategy: str
    values: Values
    path: str


@dataclass
class Progressed(Message):
    done: int
    of: int
    left: float


@dataclass
class Swept(Message):
    done: Sweep


def _cut(label: str, width: int) -> Text:
    return safe(label if len(label) <= width else label[: width - 1] + "…")


class SweepScreen(ProgressScreen[Picked | None]):
    """Dismissed with the point chosen (enter on the table), or None."""

    TITLE_ID = "sweep-title"
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Back", id="sweep.close"),
        Binding("x", "axis('x')", "Next x axis", id="sweep.x_axis"),
        Binding("y", "axis('y')", "Next y axis", id="sweep.y_axis"),
        Binding("w", "write", "Write it as an HTML page", id="sweep.write"),
        Binding(
            "A",
            "apply_setting",
            "Write the chosen point to the agent's own settings",
            id="sweep.apply_setting",
        ),
    ]
    strategy: reactive[str] = reactive("", init=False)
    done: reactive[Sweep | None] = reactive(None)
    x_axis: reactive[int] = reactive(0)
    y_axis: reactive[int] = reactive(0)
    chosen: reactive[int | None] = reactive(None)

    def __init__(
        self, paths: list[str], strategy: str, config: Config, export_dir: Path, jobs: int | None = None
    ) -> None:
        super().__init__()
        self.paths, self.config, self.export_dir = paths, config, export_dir
        self.jobs = jobs or os.cpu_count() or 1
        replayed = config.catalogue.replayed
        self.set_reactive(SweepScreen.strategy, strategy if strategy in replayed else DEFAULT)

    def compose(self) -> ComposeResult:
        with Vertical(id="sweep"):
            yield Static(id="sweep-title")
            with Horizontal(id="sweep-ask"):
                yield Select(
                    [(self.config.catalogue.strategies[n].label, n) for n in self.config.catalogue.replayed],
                    value=self.strategy,
                    allow_blank=False,
                    id="sweep-strategy",
                )
                yield Input(
                    suggested(self.config.catalogue.strategies[self.strategy]),
                    placeholder="KEY=FROM:TO:STEP,…",
                    id="sweep-grid",
                )
            yield ProgressBar(id="sweep-progress", show_eta=False)
            yield FrontPlot(id="sweep-plot").data_bind(
                SweepScreen.x_axis, SweepScreen.y_axis, SweepScreen.chosen
            )
            yield DataTable(id="sweep-table", cursor_type="row", zebra_stripes=True)
            yield Static(safe(NOTE), id="sweep-note")

    def on_mount(self) -> None:
        # the pool's processes need multiprocessing's tracker, which passes on stderr's file:
        # the app's stand-in has none, so it is started here with the terminal's own
        with contextlib.redirect_stderr(sys.__stderr__):
            resource_tracker.ensure_running()
        self._start()

    def _start(self) -> None:
        """The grid in the box swept over the sessions, or what is wrong with it."""
        try:
            grid = Grid.of(self.strategy, self.query_one("#sweep-grid", Input).value, self.config)
        except OptionError as exc:
            self.said(f"The grid: {exc}", "red")
            return
        self.done = None
        self.query_one(ProgressBar).update(total=max(1, len(self.paths)), progress=0)
        self.query_one(ProgressBar).display = True
        self._title(f"Sweeping {counted(len(grid.values), 'point')} of {grid.strategy}…")
        self._sweep(grid)

    def _title(self, text: str) -> None:
        self.said(f"{text} over {counted(len(self.paths), 'session')}")

    @work(thread=True, exclusive=True, group="sweep", description="sweep settings")
    def _sweep(self, grid: Grid) -> None:
        worker = get_current_worker()

        def progress(done: int, of: int, left: float) -> None:
            self.post_message(Progressed(done, of, left))

        try:
            done = sweep(
                self.paths, grid, self.config, self.jobs, None, progress, lambda: worker.is_cancelled
            )
        except SummarizerError as exc:
            self.post_message(Failed(summarizer_failed(exc)))
            return
        if not worker.is_cancelled:
            self.post_message(Swept(done))

    def on_progressed(self, event: Progressed) -> None:
        self.query_one(ProgressBar).update(total=max(1, event.of), progress=event.done)
        self._title(f"Swept {event.done:,}/{event.of:,}, about {event.left:,.0f} s left,")

    def on_swept(self, event: Swept) -> None:
        self.finished()
        done = event.done
        skipped = f" ({counted(len(done.skipped), 'file')} could not be read)" if done.skipped else ""
        if done.unpriced:
            skipped += f" (cost over {counted(done.sessions - len(done.unpriced), 'priced session')})"
        self._title(f"{done.grid.strategy}: {counted(len(done.points), 'point')}{skipped}")
        if tied(done.points):
            self.notify(TIED, title="No point is better", timeout=8)
        self.done = done

    def watch_done(self, done: Sweep | None) -> None:
        self.query_one(FrontPlot).points = tuple(done.points) if done is not None else ()
        self._fill()
        if done is not None:
            self.query_one(DataTable).focus()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """The points, with the columns that fit whole in the table's width: a figure is
        shown whole or its column left out, never cut at the edge."""
        table, done = self.query_one(DataTable), self.done
        table.clear(columns=True)
        rows = done.rows() if done is not None else []
        cells = [c for _, _, c in rows]
        width = table.size.width or self.size.width
        # the settings give way (to 16) before the figures that matter most (cost, kept, vs real)
        core = span(cells, [c for c in SHOWN if COLUMNS[c] <= 2], 2)
        longest = max((len(label) for _, label, _ in rows), default=len("settings"))
        name = max(16, min(longest, SETTINGS_WIDTH, width - core - 3))
        shown = fitting(COLUMNS, cells, name + 2, width, 2)
        table.add_column("settings", width=name)
        for column in SHOWN:
            if column in shown:
                table.add_column(column, key=column)
        for n, label, row in rows:
            table.add_row(_cut(label, name), *(row[c] for c in SHOWN if c in shown), key=str(n))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.chosen = int(event.row_key.value) if event.row_key.value is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        done = self.done
        if done is None or event.row_key.value is None:
            return
        point = done.points[int(event.row_key.value)]
        changed = point.changed_most
        path = changed[2] if changed is not None else (self.paths[0] if self.paths else None)
        if path is None:
            return
        if changed is None:
            self.notify("This point changes no session's figures from your setting", timeout=4)
        self.dismiss(Picked(done.grid.strategy, point.values, path))

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.strategy:
            self.strategy = event.value
            self.query_one("#sweep-grid", Input).value = suggested(
                self.config.catalogue.strategies[event.value]
            )
            self._start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._start()

    def action_write(self) -> None:
        if self.done is None:
            self.notify("The sweep is not done yet", timeout=3)
            return
        writing.sweep_page(self, self.done, self.paths, self.export_dir)

    def action_apply_setting(self) -> None:
        """The chosen point's setting, written into the agent's own settings file once its
        diff is accepted, as the strategy panel's A writes the one tuned there."""
        done, chosen = self.done, self.chosen
        if done is None or chosen is None:
            self.notify("Choose a point of a finished sweep first", timeout=3)
            return
        strategy = done.grid.strategy
        options = with_values(self.config.strategies[strategy], done.points[chosen].values)
        writing.apply_setting(self, self.config.with_options(strategy, options), strategy)

    def action_axis(self, which: str) -> None:
        if which == "x":
            self.x_axis = (self.x_axis + 1) % len(X_AXES)
        else:
            self.y_axis = (self.y_axis + 1) % len(Y_AXES)

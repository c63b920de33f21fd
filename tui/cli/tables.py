"""The command line's tables over many: strategies compared on a session, a sweep's points,
the user's sessions."""

from __future__ import annotations

import os
import shlex
import sys

from rich.console import Console
from rich.table import Table

from compaction_inspector.core.compare import Comparison
from compaction_inspector.core.pricing.cost import signed
from compaction_inspector.core.sweeping.points import COLUMNS as SWEEP_COLUMNS
from compaction_inspector.core.sweeping.points import TIED, tied
from compaction_inspector.core.sweeping.sweep import Sweep
from compaction_inspector.core.text import counted
from compaction_inspector.tui.text import console, cut, fitting, safe, span


def print_comparison(comparison: Comparison, out: Console | None = None) -> None:
    """One row per strategy: its replay's figures, its cost beside the real cost, and
    what its run on the next request kept. A narrow terminal loses the columns that
    matter least first; piped, nothing is cut."""
    out = out or console()
    out.print(safe(f"what the session really cost: {comparison.real.line()}", style="bold"))
    rows = comparison.rows
    columns = [  # (head, cells, dropped before the columns of a lower number)
        ("compactions", [f"{r.compactions:,}" for r in rows], 0),
        ("peak", [f"{r.peak_pressure:.1%}" for r in rows], 2),
        ("final", [f"{r.final_pressure:.1%}" for r in rows], 5),
        ("over", [f"{r.rounds_over:,}" for r in rows], 4),
        ("removed", [f"{r.tokens_removed:,}" for r in rows], 6),
        ("re-written", [f"{r.cost.rewritten:,}" for r in rows], 3),
        ("cost", [r.cost.usd() for r in rows], 0),
        ("vs real", [signed(r.cost_change) for r in rows], 1),
        ("kept", ["—" if r.kept is None else f"{r.kept:.0%}" for r in rows], 3),
    ]
    name_width = max(len(r.label) for r in rows) if rows else 10

    def width(cs: list[tuple[str, list[str], int]]) -> int:
        return min(name_width, 30) + sum(max([len(h), *map(len, v)]) + 3 for h, v, _ in cs)

    piped = not out.is_terminal and "COLUMNS" not in os.environ
    while not piped and len(columns) > 2 and width(columns) > out.width:
        columns.remove(max(columns, key=lambda c: c[2]))
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("strategy", min_width=min(name_width, 30))  # gives way: cut, the figures whole
    for head, _, _ in columns:
        table.add_column(head, justify="right", no_wrap=True)
    for n, row in enumerate(rows):
        table.add_row(cut(safe(row.label)), *(cells[n] for _, cells, _ in columns))
    (Console(highlight=False, soft_wrap=False, width=name_width + width(columns)) if piped else out).print(
        table
    )
    out.print(
        safe(
            "Each replay is priced on the session's own requests: what a request shares with the one "
            "before is read from the cache (up to what the real one read), the rest written as the "
            "real one wrote; a summarize request's input uncached. re-written: tokens the real "
            "requests read that the replay wrote again. kept: what its run on the next request kept "
            "of what it summarized or cleared (— it changed nothing there). as it ran: the "
            "session with the agent's own compactions where it made them and none of ours (its "
            "compactions column counts ours).",
            style="dim",
        )
    )
    for row in comparison.rows:
        if row.uncompacted is not None:
            out.print(safe(f"{row.uncompacted.line()}.", style="dim"))
    for caveat in comparison.caveats():
        out.print(safe(caveat, style="dim"))


def print_sweep(done: Sweep, out: Console | None = None) -> None:
    """A row per point, the front first (★: no other point beats it on compactions, cost,
    rounds over the window and what it kept), the current setting and the default named.
    A narrow terminal loses the columns that matter least first; piped, nothing is cut."""
    out = out or console()
    stopped = " (stopped before the end: the sessions finished so far)" if done.stopped else ""
    strategy = done.grid.strategy
    out.print(safe(f"{strategy} over {counted(done.sessions, 'session')}{stopped}", style="bold"))
    for path, why in done.skipped.items():
        out.print(safe(f"skipped {path}: {why}", style="yellow"))
    if done.unpriced:
        out.print(safe(done.unpriced_note(), style="yellow"))
    if tied(done.points):
        out.print(safe(TIED, style="yellow"))
    rows = done.rows()
    cells = [c for _, _, c in rows]
    labels = [label for _, label, _ in rows]
    name_width = max(map(len, labels), default=10)
    piped = not out.is_terminal and "COLUMNS" not in os.environ
    columns = fitting(SWEEP_COLUMNS, cells, min(name_width, 40), sys.maxsize if piped else out.width, 3)

    table = Table(show_edge=False, pad_edge=False)
    table.add_column("settings", min_width=min(name_width, 40))
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    for label, row in zip(labels, cells, strict=True):
        table.add_row(cut(safe(label)), *(row[c] for c in columns))
    whole = name_width + min(name_width, 40) + span(cells, columns, 3)  # piped: every cell whole
    (Console(highlight=False, soft_wrap=False, width=whole) if piped else out).print(table)
    out.print(
        safe(
            "over: rounds over the usable window, summed; kept: of the facts (paths, commands, "
            "identifiers, numbers, URLs) in what it removed, the share each session's last request "
            "still holds; cost: each replay priced on the session's own requests, an estimate "
            "(docs/cost.md); vs real: that less what the sessions really cost.",
            style="dim",
        )
    )
    best = min((p for p in done.points if p.on_front), key=lambda p: p.cost, default=None)
    if best is not None:
        args = " ".join(shlex.quote(a) for a in best.simulate_args(done.grid.declared))
        out.print(
            safe(
                f"The front's cheapest on one session: compaction-inspector simulate SESSION {args}",
                style="dim",
            )
        )

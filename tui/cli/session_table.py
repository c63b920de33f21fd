"""The sessions `compaction-inspector sessions` lists, as a table: imports neither the
agents nor the reading of a session, so a list kept whole in the index prints without
them (`tui.cli.kept_sessions`)."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.table import Table

from compaction_inspector.core.session_index import Row, short_project
from compaction_inspector.core.text import counted, one_line
from compaction_inspector.tui.text import console, cut, safe


def print_sessions(rows: list[Row], places: list[tuple[str, Path]], out: Console | None = None) -> None:
    """The sessions found, newest first, and where they were looked for."""
    out = out or console()
    where = "; ".join(f"{agent}: {root}" for agent, root in places)
    # piped (and no width asked for), nothing is wrapped or dropped: a line a session, its
    # paths whole, for grep and cut
    piped = not out.is_terminal and "COLUMNS" not in os.environ
    out.print(safe(f"{counted(len(rows), 'session')} ({where})", style="bold"), soft_wrap=piped)
    # One line a session, what tells sessions apart first: the title (cut to fit), the
    # peak prompt and its share of the window, compactions, the time; as the terminal
    # narrows, the columns that matter least go first.
    columns = [  # (head, cells, kept before the columns of a higher number)
        ("peak", [(f"{r.peak_context_tokens:,}" if r.peak_context_tokens is not None else "—")
                  + (f" ({r.peak_pressure:.0%})" if r.peak_pressure is not None else "") for r in rows], 0),
        ("compactions", ["—" if r.problem else str(r.compactions) for r in rows], 1),
        ("cost", [r.cost for r in rows], 3),
        ("messages", [f"{r.messages:,}" for r in rows], 3),
        ("rounds", [f"{r.api_rounds:,}" for r in rows], 4),
        ("last activity", [(r.last_activity or "")[:16].replace("T", " ") for r in rows], 2),
        ("agent", [r.agent for r in rows], 5),
        ("project", [(one_line(r.project, 200) if piped else short_project(r.project))
                     + (f" · sub-agent of {r.subagent_of}" if r.subagent_of else "") for r in rows], 6),
    ]  # fmt: skip
    title_min = 20

    def width(cs: list[tuple[str, list[str], int]]) -> int:
        return title_min + sum(max([len(h), *map(len, v)]) + 3 for h, v, _ in cs)

    while not piped and len(columns) > 1 and width(columns) > out.width:
        columns.remove(max(columns, key=lambda c: c[2]))
    table = Table(show_edge=False, pad_edge=False)
    title_width = 50 if piped else max(title_min, min(50, out.width - width(columns) + title_min))
    table.add_column("title", width=title_width, no_wrap=True)
    for head, _, _ in columns:
        table.add_column(head, justify="left" if head in ("last activity", "agent", "project") else "right",
                         no_wrap=True, overflow="ellipsis")  # fmt: skip
    for n, r in enumerate(rows):
        title = cut(safe(one_line(r.problem or r.title, 50), style="red" if r.problem else ""))
        table.add_row(title, *(safe(cells[n]) for _, cells, _ in columns))
    if piped:  # as wide as its rows: never wrapped at the terminal's default 80 columns
        out = Console(highlight=False, soft_wrap=False, width=title_width + width(columns) - title_min + 4)
    out.print(table)

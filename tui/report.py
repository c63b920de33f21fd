"""Human-readable CLI output with Rich. Transcript text is always passed as `Text`
(never parsed as markup) and through `visible()` (escape sequences shown, not obeyed)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.analysis import Analysis
from core.text import one_line


def console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def pressure_text(pressure: float, width: int = 40) -> Text:
    filled = min(width, round(pressure * width))
    style = "green" if pressure < 0.75 else "yellow" if pressure < 0.95 else "red"
    bar = Text("█" * filled, style=style)
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {pressure:.1%}")
    return bar


def print_analysis(a: Analysis, out: Console | None = None) -> None:
    out = out or console()
    s = a.session
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("file", Text(str(s.path)))
    head.add_row(
        "format",
        Text(
            s.format
            + (
                f" (request {s.request_index + 1} of {s.request_count})"
                if s.request_count > 1
                else ""
            )
        ),
    )
    for key in ("model", "session_id", "cwd", "title"):
        if key in s.metadata:
            head.add_row(key.replace("_", " "), Text(one_line(str(s.metadata[key]), 100)))
    head.add_row(
        "messages",
        Text(
            f"{len(s.messages)} ({s.human_turns()} human turns, {len(a.api_rounds)} API rounds, "
            f"{len(a.volleys)} volleys, {len(s.sidechain)} sidechain set aside)"
        ),
    )
    head.add_row(
        "tokenizer",
        Text(a.counter.label + (f"  ⚠ {a.counter.warning}" if a.counter.warning else "")),
    )
    head.add_row(
        "tokens", Text(f"{a.total_tokens:,} in all, {a.context_tokens:,} in the live context")
    )
    if a.reported:
        head.add_row(
            "reported",
            Text(
                f"{a.reported.latest_prompt_tokens:,} prompt tokens in the last response "
                f"(peak {a.reported.peak_prompt_tokens:,}, {a.reported.responses} responses)"
            ),
        )
    head.add_row(
        "window",
        Text(
            f"{a.window.usable:,} usable of {a.window.context_window:,} "
            f"({a.window.reserved_output:,} reserved for output)"
        ),
    )
    head.add_row("pressure", pressure_text(a.pressure))
    out.print(head)

    table = Table(title="Volleys", title_justify="left", expand=False)
    for column in ("#", "messages", "rounds", "tokens", "starts with"):
        table.add_column(column, justify="right" if column != "starts with" else "left")
    round_starts = {g.start for g in a.api_rounds}
    for n, v in enumerate(a.volleys):
        rounds = sum(1 for i in range(v.start, v.end) if i in round_starts)
        first = s.messages[v.start]
        label = "prelude" if n == 0 and not first.is_human else one_line(first.text, 60)
        table.add_row(str(n), str(len(v)), str(rounds), f"{v.tokens:,}", Text(label))
    out.print(table)

    if a.pairing_problems:
        out.print(Text(f"Pairing problems ({len(a.pairing_problems)}):", style="bold red"))
        for p in a.pairing_problems:
            out.print(Text(f"  #{p.index}: {p.message}"))
    if s.diagnostics:
        out.print(Text(f"Diagnostics ({len(s.diagnostics)}):", style="bold"))
        for d in s.diagnostics:
            where = f"line {d.line}: " if d.line is not None else ""
            out.print(Text(f"  {where}{one_line(d.message, 140)}"))

"""A sweep as one self-contained HTML page (docs/commands.md#sweep): the front drawn on
real axes (compactions against rounds over the window, cost against what was kept), a
row per point, and the commands that make it again. No script, no network."""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from compaction_inspector.core.reporting.page_style import STYLE
from compaction_inspector.core.strategies import Strategy
from compaction_inspector.core.sweeping.points import COLUMNS, TIED, GridPoint, ticks, tied
from compaction_inspector.core.sweeping.sweep import Sweep
from compaction_inspector.core.text import counted, visible

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 520, 300, 64, 40, 14, 40
MARKS = {"current": ("#17becf", "your setting"), "default": ("#9467bd", "the default")}
FRONT, OTHER = "#d62728", "#aaaaaa"


def page(done: Sweep, command: Sequence[str]) -> str:
    """The whole HTML document; `command`: the sweep's own command line, to make it again."""
    strategy = html.escape(visible(done.grid.strategy))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>Sweep: {strategy}</title><style>{STYLE}</style></head><body>\n"
        f"<h1>Sweep: {strategy} over {counted(done.sessions, 'session')}</h1>\n"
        + section(done)
        + '\n<h2 id="reproduce">Make it again</h2>'
        + f"<pre>{html.escape(visible(shlex.join(command)))}</pre>\n"
        + "</body></html>\n"
    )


def section(done: Sweep) -> str:
    """The sweep's section: its charts, its table, what was skipped."""
    stopped = " It was stopped: the figures are of the sessions finished." if done.stopped else ""
    skipped = "".join(
        f"<li>{html.escape(visible(path))}: {html.escape(visible(why))}</li>"
        for path, why in done.skipped.items()
    )
    heads = "".join(f"<th class=n>{html.escape(c)}</th>" for c in COLUMNS)
    rows = "".join(
        f"<tr{' class=front' if done.points[n].on_front else ''}><td>{html.escape(visible(label))}</td>"
        + "".join(f"<td class=n>{html.escape(cells[c])}</td>" for c in COLUMNS)
        + "</tr>"
        for n, label, cells in done.rows()
    )
    best = min((p for p in done.points if p.on_front), key=lambda p: p.cost, default=None)
    simulate = (
        f"<p>The front's cheapest on one session: <code>compaction-inspector simulate SESSION "
        f"{html.escape(shlex.join(best.simulate_args(done.grid.declared)))}</code></p>"
        if best is not None
        else ""
    )
    return (
        '<h2 id="sweep">The trade-off front</h2>'
        + f'<p class="note">Every session replayed at every point of the grid.{stopped} A point is on the '
        + "front (★, red) when no other has fewer compactions, a lower cost, fewer rounds over the usable "
        + "window and keeps as much of what it removed (the paths, commands, identifiers, numbers and "
        + "URLs each segment's last request still holds). Cost: each replay priced on the session's own "
        + "requests, an estimate (what a request shares with the one before read from the cache, up to what "
        + "the real one read; the rest written as the real one wrote).</p>"
        + '<div id="sweep-charts">'
        + chart(done.points, done.grid.declared, ("compactions", lambda p: p.compactions, "{:,.0f}", True),
                ("rounds over the window", lambda p: p.rounds_over, "{:,.0f}", True))
        + chart(done.points, done.grid.declared, ("cost (USD)", lambda p: float(p.cost), "${:,.2f}", False),
                ("kept of what was removed", lambda p: p.retention, "{:.0%}", False))
        + "</div>"
        + f'<table id="sweep-table"><tr><th>settings</th>{heads}</tr>{rows}</table>'
        + simulate
        + (f"<p>Skipped:</p><ul>{skipped}</ul>" if skipped else "")
        + (f'<p class="note">{html.escape(visible(done.unpriced_note()))}</p>' if done.unpriced else "")
        + (f'<p class="note">{html.escape(TIED)}</p>' if tied(done.points) else "")
    )  # fmt: skip


# its name, a point's figure, a tick's format, whether its figures are whole numbers
Axis = tuple[str, Callable[[GridPoint], float | None], str, bool]


def chart(points: Sequence[GridPoint], declared: Strategy[Any], x: Axis, y: Axis) -> str:
    """One SVG scatter on real axes: ticks at both ends and the middle, the front red,
    your setting and the default ringed and named."""
    placed = [(p, x[1](p), y[1](p)) for p in points]
    shown = [(p, a, b) for p, a, b in placed if a is not None and b is not None]
    if not shown:
        return f'<p class="note">No point has a figure for {html.escape(y[0])}.</p>'
    xs, ys = [a for _, a, _ in shown], [b for _, _, b in shown]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    w, h = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def sx(v: float) -> float:
        return PAD_L + (w / 2 if x1 == x0 else w * (v - x0) / (x1 - x0))

    def sy(v: float) -> float:
        return PAD_T + (h / 2 if y1 == y0 else h * (1 - (v - y0) / (y1 - y0)))

    parts = [
        f'<svg class="sweep-chart" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
        f'aria-label="{html.escape(y[0])} against {html.escape(x[0])}">',
        f'<line x1="{PAD_L}" y1="{PAD_T + h}" x2="{PAD_L + w}" y2="{PAD_T + h}" stroke="#888"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{PAD_T + h}" stroke="#888"/>',
    ]
    for v in ticks(x0, x1, x[3]):
        tick = html.escape(x[2].format(v))
        parts.append(f'<text x="{sx(v):.1f}" y="{PAD_T + h + 14}" text-anchor="middle">{tick}</text>')
    for v in ticks(y0, y1, y[3]):
        tick = html.escape(y[2].format(v))
        parts.append(f'<text x="{PAD_L - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{tick}</text>')
    parts.append(f'<text x="{PAD_L + w / 2}" y="{H - 6}" text-anchor="middle">{html.escape(x[0])}</text>')
    parts.append(f'<text x="12" y="{PAD_T + h / 2}" transform="rotate(-90 12 {PAD_T + h / 2})" '
                 f'text-anchor="middle">{html.escape(y[0])}</text>')  # fmt: skip
    for p, a, b in sorted(shown, key=lambda s: s[0].on_front):  # the front drawn over the rest
        colour = FRONT if p.on_front else OTHER
        parts.append(f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="4" fill="{colour}"><title>'
                     f"{html.escape(visible(p.label(declared)))}</title></circle>")  # fmt: skip
        for mark in p.marks:
            ring = MARKS[mark][0]
            parts.append(f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="8" fill="none" stroke="{ring}" '
                         f'stroke-width="2" class="mark-{mark}"/>')  # fmt: skip
        if p.marks:
            names = " and ".join(MARKS[m][1] for m in p.marks)
            side = "end" if sx(a) > PAD_L + w / 2 else "start"  # the name stays inside the chart
            at = sx(a) - 10 if side == "end" else sx(a) + 10
            parts.append(f'<text x="{at:.1f}" y="{sy(b) - 8:.1f}" text-anchor="{side}">{names}</text>')
    parts.append("</svg>")
    return "".join(parts)

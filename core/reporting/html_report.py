"""A session's story as one self-contained HTML file, to hand to a teammate.

No script, no font, no URL to fetch: it opens from disk with the network off. It holds
where the figures come from, the pressure timeline as an inline SVG chart (with a table
of the same points), the transcript's own compactions, each strategy's steps and the
transcript itself, every message anchored by its number as the app numbers it. All text
from the transcript is escaped; `redact` and `max_chars` make it fit to share outside.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Iterator, Sequence
from typing import Any

from compaction_inspector.core.compare import Comparison, compare
from compaction_inspector.core.config import Config
from compaction_inspector.core.config_file import as_yaml
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.measuring.grouping import api_rounds, volleys
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.own.compactions import RealCompaction
from compaction_inspector.core.pricing.cost import signed
from compaction_inspector.core.replaying.retention import Retention
from compaction_inspector.core.replaying.simulation import RoundPoint, Simulation, shown_rounds
from compaction_inspector.core.reporting.diff import label, origin
from compaction_inspector.core.reporting.page_style import STYLE
from compaction_inspector.core.reporting.redact import redacted
from compaction_inspector.core.sessions import whole_cost
from compaction_inspector.core.strategies import DEFAULT, each_step, hysteresis
from compaction_inspector.core.strategies.declaration import Strategy, described
from compaction_inspector.core.text import counted, visible
from compaction_inspector.core.topic import title as topic_title

CHART_W, CHART_H, PAD_L, PAD_R, PAD_T, PAD_B = 960, 320, 70, 50, 20, 40
LEGEND_W, LEGEND_H = 210, 16  # a legend entry: 34 characters at 11 px
CHART_POINTS = 400  # a long replay is thinned to this many points on the chart
TABLE_ROWS = 400  # ... and to this many rows in its table
SETTINGS_FILE = "report-settings.yaml"
COLOURS = ("#1f77b4", "#9467bd", "#2ca02c", "#d62728", "#8c564b", "#e377c2", "#17becf")


@immutable()
class ReportOptions:
    """What a report holds and how: the strategies shown, the policy compared with the
    first of them on the chart, paths and secrets masked, and each text cut at."""

    strategies: tuple[str, ...] = (DEFAULT,)
    compare: str = BASELINE
    redact: bool = False
    max_chars: int | None = 4000
    jobs: int = 1  # processes its comparison's rows are replayed in (`core.compare`)

    def command(self, file: str, every: tuple[str, ...], request: int | None = None) -> str:
        """The command that makes this report of `file` again, with the settings it was
        made with saved beside it as SETTINGS_FILE (`every`: the strategies "all" names)."""
        shown = "all" if self.strategies == every else ",".join(self.strategies)
        words = ["compaction-inspector", "report", file, "--config", SETTINGS_FILE, "--strategy", shown]
        words += ["--compare", self.compare]
        words += ["--request", str(request)] if request is not None else []
        words += ["--max-chars", str(self.max_chars)] if self.max_chars is not None else []
        return shlex.join(words + ["--redact"] * self.redact)


DEFAULTS = ReportOptions()  # what a report holds when nothing is asked


def report(inspection: Inspection, options: ReportOptions = DEFAULTS) -> str:
    """The whole HTML document."""
    return "".join(pieces(inspection, options))


def pieces(inspection: Inspection, options: ReportOptions = DEFAULTS) -> Iterator[str]:
    """The HTML document in pieces, each made as it is read: a long session's transcript
    is tens of megabytes of HTML, written to its file without ever being one string."""
    return _Page(inspection, options).render()


class _Page:
    def __init__(self, inspection: Inspection, options: ReportOptions) -> None:
        self.inspection, self.options = inspection, options
        self.index = inspection.origins
        # the names the agents sign with: a shared report keeps them, as a bot's
        self.signers = tuple(name for a in inspection.config.catalogue.agents for name in a.signs_as)

    # --- text -----------------------------------------------------------------------------

    def text(self, value: str, cut: bool = True) -> str:
        """Text from a file, safe to put in HTML: shown, never obeyed."""
        value = visible(value)
        if self.options.redact:
            value = redacted(value, self.signers)
        limit = self.options.max_chars
        if cut and limit is not None and len(value) > limit:
            value = value[:limit] + f"… ({len(value) - limit:,} more characters)"
        return html.escape(value)

    # --- the page -------------------------------------------------------------------------

    def render(self) -> Iterator[str]:
        session = self.inspection.session
        # shared outside: its name, a folder and a session id, is left out, not masked piecemeal
        name = (
            "a transcript, its name left out"
            if self.options.redact
            else self.text(session.path or "transcript", cut=False)
        )
        yield "<!DOCTYPE html>\n"
        yield '<html lang="en"><head><meta charset="utf-8">\n'
        yield '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        yield f"<title>Compaction report: {name}</title><style>{STYLE}</style></head><body>\n"
        yield f"<h1>Compaction report: {name}</h1>\n"
        yield self.header() + "\n"
        compared = self.compared()  # first: the chart draws its rows' replays
        yield self.timeline() + "\n"
        yield self.own() + "\n"
        yield self.comparison(compared) + "\n"
        for n in self.options.strategies:
            yield self.strategy(n) + "\n"
        yield from self.transcript()
        yield "\n" + self.reproduce() + "\n"
        yield "</body></html>\n"

    def header(self) -> str:
        ins = self.inspection
        session, config, model = ins.session, ins.config, ins.model
        reading = model.reading(len(session.messages)) if ins.measured else None
        rows = [
            ("format", session.format),
            ("model", str(session.metadata.get("model") or "not recorded")),
            ("messages", f"{len(session.messages):,}, {counted(len(session.compactions), 'own compaction')}"),
            (
                "window",
                f"{config.window.context_window:,} (usable {config.window.usable:,}); {config.window_note}",
            ),
            ("auto-compact", config.account.note),
            ("cost", (cost := whole_cost(config.catalogue, session)).line()),
            ("tokens reported", cost.tokens_line() if cost.responses or cost.unpriced else "none"),
            ("tokenizer", ins.counter.label),
            (
                "context sent next",
                f"{reading.tokens:,} tokens: {reading.provenance()}"
                if reading is not None
                else "the transcript's messages only (pressure: messages)",
            ),
            ("fit", model.describe_fit() if ins.measured else "none"),
        ]
        if session.metadata.get("slice") is True:
            rows.append(("slice", "this file starts inside a longer session: its figures are estimates"))
        body = "".join(f"<tr><th>{k}</th><td>{self.text(v, cut=False)}</td></tr>" for k, v in rows)
        return f'<h2 id="source">Where the figures come from</h2><table>{body}</table>'

    # --- the timeline ---------------------------------------------------------------------

    def timeline(self) -> str:
        """A line per strategy shown that a replay means something for, and the compared
        policy (a strategy compared with itself: its contrast), once each."""
        ins = self.inspection
        names = [n for n in self.options.strategies if self._declared(n).timeline] or [DEFAULT]
        policies = [ins.policy(n) for n in names]
        compared = ins.policy(self.options.compare, against=names[0])
        if compared not in policies:
            policies.append(compared)
        sims = [ins.replay(p) for p in policies]
        return (
            '<h2 id="timeline">Pressure, round by round</h2>'
            + _chart(sims, ins)
            + "<details><summary>The same points as a table</summary>"
            + _points_table(sims)
            + "</details>"
        )

    # --- the transcript's own compactions -----------------------------------------------

    def own(self) -> str:
        found = self.inspection.own_compactions() if self.inspection.session.compactions else []
        head = '<h2 id="own">The transcript\'s own compactions</h2>'
        if not found:
            return head + '<p class="note">This transcript records no compaction of its own.</p>'
        rows = "".join(_own_row(c) for c in found)
        return (
            head
            + "<table><tr><th>at</th><th>kind</th><th class=n>recorded before</th>"
            + "<th class=n>measured before → after</th><th class=n>predicted after</th>"
            + "<th>paths kept: its summary / ours</th><th>why: the agent's own count</th>"
            + "<th>what it cost</th></tr>"
            + rows
            + "</table>"
        )

    # --- every strategy, compared ---------------------------------------------------------

    def compared(self) -> Comparison:
        """The strategies shown that a replay suits, each replayed and priced (core/compare.py),
        in `jobs` processes whose replays are kept here."""
        names = [n for n in self.options.strategies if self._declared(n).timeline]
        return compare(self.inspection, names, jobs=self.options.jobs, keep=True)

    def comparison(self, compared: Comparison) -> str:
        done = compared.sorted("cost")
        heads = ("strategy", "compactions", "peak", "final", "rounds over", "tokens removed",
                 "cache re-written", "cost", "vs real", "kept")  # fmt: skip
        rows = "".join(
            "<tr>"
            + f"<td>{self.text(r.label, cut=False)}</td>"
            + "".join(
                f"<td class=n>{v}</td>"
                for v in (
                    f"{r.compactions:,}",
                    f"{r.peak_pressure:.1%}",
                    f"{r.final_pressure:.1%}",
                    f"{r.rounds_over:,}",
                    f"{r.tokens_removed:,}",
                    f"{r.cost.rewritten:,}",
                    r.cost.usd(),
                    signed(r.cost_change),
                    "—" if r.kept is None else f"{r.kept:.0%}",
                )
            )
            + "</tr>"
            for r in done.rows
        )
        head = "".join(f"<th{' class=n' if h != 'strategy' else ''}>{h}</th>" for h in heads)
        return (
            '<h2 id="compare">Every strategy, compared</h2>'
            + f'<p class="note">What the session really cost: {self.text(done.real.line(), cut=False)}. '
            + "Each replay is priced on the session's own requests: what a request shares with the one "
            + "before is read from the cache, up to what the real one read, the rest written as the real "
            + "one wrote; a summarize request's input uncached. Cache re-written: what the real requests "
            + "read that the replay wrote again. Kept: what its run on the next request kept of what it "
            + "summarized or cleared.</p>"
            + f'<table id="compare-table"><tr>{head}</tr>{rows}</table>'
            + "".join(f'<p class="note">{self.text(c, cut=False)}</p>' for c in done.caveats())
        )

    # --- a strategy -----------------------------------------------------------------------

    def _declared(self, name: str) -> Strategy[Any]:
        return self.inspection.config.catalogue.strategies[name]

    def strategy(self, name: str) -> str:
        ins = self.inspection
        declared = self._declared(name)
        options = ins.config.options(name)
        result = ins.run(name, options)
        settings = described(options)
        parts = [
            f'<h2 id="strategy-{name}">{html.escape(declared.label)}</h2>',
            f'<p class="note">{html.escape(declared.description)}. Options: {self.text(settings)}.</p>',
        ]
        if not result.steps:
            parts.append('<p class="note">No step.</p>')
        for n, step in enumerate(each_step(result.steps), start=1):
            d, before = step.diff, step.before
            lines = [
                f"<h3>Step {n}: {self.text(step.title)}</h3>",
                f"<p>{self.text(step.explanation)}</p>",
                f"<p>tokens {d.tokens_before:,} → {d.tokens_after:,} ({d.token_delta:+,}); "
                f"pressure {step.pressure_before:.1%} → {step.pressure_after:.1%}</p>",
            ]
            gone = [(i, "dropped") for i in d.dropped] + [(i, "summarized") for i, _ in d.summarized]
            gone += [(i, "edited") for i, _ in d.edited]
            if gone:
                links = ", ".join(
                    f'<a class="{fate}" href="#{self.anchor(before[i])}">{label(before[i], self.index)}</a>'
                    for i, fate in sorted(gone)[:200]
                )
                more = f" and {len(gone) - 200:,} more" if len(gone) > 200 else ""
                lines.append(f"<p>{len(d.dropped)} dropped, {len(d.summarized)} summarized, "
                             f"{len(d.edited)} edited: {links}{more}</p>")  # fmt: skip
            for j in sorted({a for _, a in d.summarized} | set(d.inserted)):
                kind = "summary" if j in {a for _, a in d.summarized} else "inserted"
                lines.append(
                    f'<p class="inserted">New {kind}:</p><pre>{self.text(step.messages[j].text)}</pre>'
                )
            parts.append("".join(lines))
        if result.messages is None:
            parts.append(f'<p class="dropped">{self.text(str(result.error))}</p>')
        return "".join(parts)

    # --- the transcript -------------------------------------------------------------------

    def anchor(self, message: Message) -> str:
        """The id of the message's place in the transcript section (or of the section)."""
        found = origin(message, self.index)
        return f"m{found}" if found is not None else "transcript"

    def transcript(self) -> Iterator[str]:
        """The transcript's section, a volley at a time."""
        ins = self.inspection
        messages, tokens = ins.messages, ins.tokens
        round_starts = {s.start: n for n, s in enumerate(api_rounds(messages, tokens))}
        results = {
            tool_id: i for i, m in enumerate(messages) for tool_id in m.tool_result_ids()
        }  # a call's result, by its id
        calls = {tool_id: i for i, m in enumerate(messages) for tool_id in m.tool_use_ids()}
        yield '<h2 id="transcript">The transcript</h2>'
        for v, span in enumerate(volleys(messages, tokens)):
            parts: list[str] = []
            title = (
                topic_title(messages[span.start].text, 60)
                if v or messages[span.start].is_human
                else "prelude"
            )
            parts.append(
                f'<section class="volley" id="v{v}"><h3>volley {v} · “{self.text(title, cut=False)}” · '
                f"{counted(span.end - span.start, 'message')} · {span.tokens:,} tokens</h3>"
            )
            for i in range(span.start, span.end):
                if i in round_starts:
                    parts.append(f'<div class="round">round {round_starts[i]}</div>')
                m = messages[i]
                links = [
                    f'<a href="#m{results[t]}">⇢ #{results[t]}</a>' for t in m.tool_use_ids() if t in results
                ]
                links += [
                    f'<a href="#m{calls[t]}">⇠ #{calls[t]}</a>' for t in m.tool_result_ids() if t in calls
                ]
                parts.append(
                    f'<div class="msg" id="m{i}"><div class="head">#{i} {html.escape(m.role)} '
                    f"{html.escape(m.kind)} · {tokens[i]:,} tokens{' · ' if links else ''}{' '.join(links)}"
                    f"</div><pre>{self.text(m.text)}</pre></div>"
                )
            parts.append("</section>")
            yield "".join(parts)

    def reproduce(self) -> str:
        """The command and the settings in force (tuned in the app, or read from a file),
        so that the same command makes the same report anywhere."""
        session = self.inspection.session
        request = session.request_index + 1 if session.request_count > 1 else None
        every = tuple(self.inspection.config.catalogue.strategies)
        command = self.options.command(session.path or "FILE", every, request)
        config = self.inspection.config
        # a window the session brings comes again from it; any other is written down
        settings = as_yaml(config, window=not config.window_from_session)
        return (
            '<h2 id="reproduce">To make it again</h2>'
            f"<p>Save these settings as <code>{SETTINGS_FILE}</code>:</p>"
            f"<pre>{self.text(settings, cut=False)}</pre>"
            f"<p>and run:</p><pre>{self.text(command, cut=False)}</pre>"
        )


def _event_figures(p: RoundPoint) -> str:
    """A marker's figures: a policy's compaction from its request before to after; the
    transcript's own from what the agent recorded before it to the request after it."""
    event = p.event
    if event is not None and event.source == "transcript":
        recorded = event.recorded_tokens
        before = f"{recorded:,} recorded before it" if recorded is not None else "before: not recorded"
        return f"{before} → {p.tokens_after:,} sent after it"
    return f"{p.tokens_before:,} → {p.tokens_after:,}"


def _own_row(c: RealCompaction) -> str:
    d = c.to_dict()

    def figure(value: object) -> str:
        return f"{value:,}" if isinstance(value, int) else "—"

    def share(kept: Retention | None) -> str:
        value = kept.paths.value if kept is not None else None
        return "—" if value is None else f"{value:.0%}"

    at = c.compaction.index
    return (
        f'<tr><td><a href="#m{at}">#{at}</a> (line {figure(d["line"])})</td>'
        f"<td>{html.escape(str(d['trigger'] or 'unknown'))} {html.escape(c.kind)}</td>"
        f"<td class=n>{figure(d['pre_tokens'])}</td>"
        f"<td class=n>{figure(d['measured_before'])} → {figure(d['measured_after'])}</td>"
        f"<td class=n>{c.predicted_line}</td><td>{share(c.retention)} / {share(c.ours)}</td>"
        f"<td>{html.escape(c.count.line()) if c.count else '—'}</td>"
        f"<td>{html.escape(c.cost.line()) if c.cost else '—'}</td></tr>"
        + (
            f'<tr class="parts"><td colspan=8>predicted after: {html.escape(c.parts_line)}</td></tr>'
            if c.parts
            else ""
        )
    )


def _chart(sims: Sequence[Simulation], ins: Inspection) -> str:
    """The replays as lines, the reported prompts as dots, compactions as marks, and the
    window's lines, on real axes: API rounds across, tokens (and % of usable) up."""
    points = sims[0].points
    if not points:
        return '<p class="note">No API round to chart.</p>'
    usable = sims[0].usable_window
    config = ins.config
    top = max(
        [usable, *(p.tokens_before for s in sims for p in s.points), *(p.reported or 0 for p in points)]
    )
    top = int(top * 1.05) or 1
    last = max(p.round for p in points) or 1
    w, h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B

    def x(round_: int) -> float:
        return PAD_L + w * round_ / last

    def y(tokens: float) -> float:
        return PAD_T + h * (1 - tokens / top)

    legend = [(COLOURS[n % len(COLOURS)], s.policy.label) for n, s in enumerate(sims)]
    legend.append(("#ff7f0e", "a prompt the transcript reports"))
    per_row = (CHART_W - PAD_L - PAD_R) // LEGEND_W
    height = CHART_H + LEGEND_H * -(-len(legend) // per_row)  # the legend below the axis, off the lines
    out = [
        f'<svg role="img" aria-label="pressure timeline" viewBox="0 0 {CHART_W} {height}" '
        f'width="100%" xmlns="http://www.w3.org/2000/svg">',
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>',
    ]
    for k in range(6):  # token and % ticks
        tokens = top * k / 5
        out.append(
            f'<line x1="{PAD_L}" x2="{PAD_L + w}" y1="{y(tokens):.1f}" y2="{y(tokens):.1f}" stroke="#eee"/>'
            f'<text x="{PAD_L - 6}" y="{y(tokens) + 4:.1f}" text-anchor="end">{tokens:,.0f}</text>'
            f'<text x="{PAD_L + w + 6}" y="{y(tokens) + 4:.1f}">{tokens / usable:.0%}</text>'
        )
    for k in range(6):
        r = round(last * k / 5)
        out.append(f'<text x="{x(r):.1f}" y="{PAD_T + h + 16}" text-anchor="middle">{r:,}</text>')
    out.append(f'<text x="{PAD_L + w / 2}" y="{CHART_H - 6}" text-anchor="middle">API round</text>')
    for tokens, colour, name in _window_lines(config, usable):
        if 0 < tokens <= top:
            out.append(
                f'<line x1="{PAD_L}" x2="{PAD_L + w}" y1="{y(tokens):.1f}" y2="{y(tokens):.1f}" '
                f'stroke="{colour}" stroke-dasharray="4 3"><title>{html.escape(name)}</title></line>'
            )
    step = max(1, len(points) // CHART_POINTS)
    for n, sim in enumerate(sims):
        colour = COLOURS[n % len(COLOURS)]
        # every step-th point, and the last, once
        shown = sim.points[::step] + ((sim.points[-1],) if (len(sim.points) - 1) % step else ())
        path = " ".join(f"{x(p.round):.1f},{y(p.tokens_after):.1f}" for p in shown)
        out.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}">'
            f"<title>{html.escape(sim.policy.label)}</title></polyline>"
        )
        for p in sim.points:
            if p.event is not None:
                mark, what = (
                    ("⚑", "the transcript's own compaction")
                    if p.event.source == "transcript"
                    else ("✂", sim.policy.label)
                )
                said = html.escape(f"round {p.round}: {what}: {visible(p.event.description)}")
                out.append(
                    f'<text x="{x(p.round):.1f}" y="{PAD_T + 12}" text-anchor="middle" fill="{colour}">{mark}'
                    f"<title>{said} ({_event_figures(p)})</title></text>"
                )
    for p in points[::step]:
        if p.reported is not None:
            out.append(
                f'<circle cx="{x(p.round):.1f}" cy="{y(p.reported):.1f}" r="2" fill="#ff7f0e">'
                f"<title>round {p.round}: the response reported {p.reported:,}</title></circle>"
            )
    out += _legend(legend, per_row)
    out.append("</svg>")
    return "".join(out)


def _window_lines(config: Config, usable: int) -> list[tuple[float, str, str]]:
    """The chart's level lines: the usable window, hysteresis's thresholds and target, the
    agent's point; each with its colour and name."""
    h_options = config.options(hysteresis.NAME)
    lines: list[tuple[float, str, str]] = [(usable, "#000", f"usable window {usable:,}")]
    lines += [(usable * t / 100, "#bbb", f"threshold {t} %") for t in h_options.thresholds]
    lines.append((usable * h_options.target / 100, "#9c9", f"target {h_options.target} %"))
    if config.account.tokens is not None:
        lines.append((config.account.tokens, "#d62728", f"auto-compact {config.account.tokens:,}"))
    return lines


def _legend(legend: Sequence[tuple[str, str]], per_row: int) -> list[str]:
    """The legend under the axis, `per_row` a row: a colour and its name each."""
    out = []
    for n, (colour, name) in enumerate(legend):
        lx, ly = PAD_L + 8 + (n % per_row) * LEGEND_W, CHART_H + (n // per_row) * LEGEND_H
        out.append(
            f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{ly + 9}">{html.escape(name[:34])}</text>'
        )
    return out


def _points_table(sims: Sequence[Simulation]) -> str:
    """The chart's points as a table: every round of a short replay; of a longer one the
    rows the command line's table shows (`shown_rounds`), and a line saying so."""
    rows_shown, thinned = shown_rounds(sims[0].points, TABLE_ROWS)
    head = "".join(f"<th class=n>{html.escape(s.policy.label)}</th>" for s in sims)
    rows = [f"<table><tr><th class=n>round</th><th class=n>reported</th>{head}<th>event</th></tr>"]
    wanted = {sims[0].points[k].round for k in rows_shown}
    by_round = [{q.round: q for q in s.points if q.round in wanted} for s in sims]
    for k in rows_shown:
        p = sims[0].points[k]
        at = [r.get(p.round) for r in by_round]
        cells = "".join(f"<td class=n>{q.tokens_after if q else 0:,}</td>" for q in at)
        events = "; ".join(visible(q.event.description) for q in at if q is not None and q.event is not None)
        reported = f"{p.reported:,}" if p.reported is not None else ""
        row = f"<td class=n>{p.round}</td><td class=n>{reported}</td>{cells}<td>{html.escape(events)}</td>"
        rows.append(f"<tr>{row}</tr>")
    rows.append("</table>")
    total = len(sims[0].points)
    if len(rows_shown) < total:
        which = "the first, the last, the peak" + (
            ", compactions spaced evenly" if thinned else ", every compaction"
        )
        rows.append(
            f'<p class="note">{len(rows_shown):,} of {total:,} rounds shown: {which} of the first '
            "line, and rounds spaced between. <code>compaction-inspector simulate --json</code> "
            "gives every round.</p>"
        )
    return "".join(rows)

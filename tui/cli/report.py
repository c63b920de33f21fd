"""Human-readable CLI output with Rich. Every string from a transcript, a file name or a
config reaches it through `tui.text.safe`: `Text`, never markup, escapes shown, not obeyed."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from compaction_inspector.core import topic
from compaction_inspector.core.analysis import Analysis
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Message, Session
from compaction_inspector.core.own.autocompact import Count
from compaction_inspector.core.own.compactions import RealCompaction, said_range
from compaction_inspector.core.own.headroom import Headroom
from compaction_inspector.core.pricing.cost import CompactionsCost, Cost
from compaction_inspector.core.replaying.simulation import Simulation, shown_rounds
from compaction_inspector.core.reporting.diff import numbered, runs
from compaction_inspector.core.strategies import CompactionResult, Stats, each_step
from compaction_inspector.core.text import counted, one_line
from compaction_inspector.tui.text import console, cut, safe


def pressure_text(pressure: float, width: int = 40) -> Text:
    filled = min(width, round(pressure * width))
    style = "green" if pressure < 0.75 else "yellow" if pressure < 0.95 else "red"
    bar = Text("█" * filled, style=style)
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {pressure:.1%}")
    return bar


SHOWN = 40  # rows of a long list (volleys, steps, rounds) printed unless every one is asked for


def _ends(count: int, limit: int | None) -> list[int]:
    """The first and last `limit // 2` of `count` items, or all of them (None: no limit)."""
    if limit is None or count <= limit:
        return list(range(count))
    return [*range(limit // 2), *range(count - limit // 2, count)]


def print_analysis(a: Analysis, out: Console | None = None, all_volleys: bool = False) -> None:
    """The session's figures and its volleys (the first and last SHOWN // 2 of
    a longer one, unless `all_volleys`)."""
    out = out or console()
    out.print(_figures(a))
    out.print(_volleys(a, all_volleys))
    if a.pairing_problems:
        out.print(safe(f"Pairing problems ({len(a.pairing_problems)}):", style="bold red"))
        for p in a.pairing_problems:
            out.print(safe(f"  #{p.index}: {p.message}"))
    if a.session.diagnostics:
        out.print(safe(f"Diagnostics ({len(a.session.diagnostics)}):", style="bold"))
        for d in a.session.diagnostics:
            where = f"line {d.line}: " if d.line is not None else ""
            out.print(safe(f"  {where}{one_line(d.message, 140)}"))


def _figures(a: Analysis) -> Table:
    """The session's figures, a row each: what it is, its counts, its cost, then its context."""
    s = a.session
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("file", safe(str(s.path)))
    head.add_row(
        "format",
        safe(
            s.format
            + (f" (request {s.request_index + 1} of {s.request_count})" if s.request_count > 1 else "")
        ),
    )
    for key in ("model", "session_id", "cwd", "title"):
        if key in s.metadata:
            head.add_row(key.replace("_", " "), safe(one_line(str(s.metadata[key]), 100)))
    head.add_row(
        "messages",
        safe(
            f"{len(s.messages):,} ({counted(s.human_turns(), 'human turn')}, "
            f"{counted(len(a.api_rounds), 'round')}, {counted(a.requests, 'request')}, "
            f"{counted(len(a.volleys), 'volley')}, "
            f"{len(s.sidechain):,} sidechain set aside)"
        ),
    )
    head.add_row(
        "tokenizer",
        safe(a.counter.label + (f"  ⚠ {a.counter.warning}" if a.counter.warning else "")),
    )
    head.add_row(
        "tokens", safe(f"{a.total_tokens:,} counted in all, {a.context_tokens:,} in the live context")
    )
    if a.reported:
        head.add_row(
            "reported",
            safe(
                f"{a.reported.latest_prompt_tokens:,} prompt tokens in the last response "
                f"(peak {a.reported.peak_prompt_tokens:,}, {a.reported.responses} responses)"
            ),
        )
    head.add_row("cost", safe(a.cost.line()))
    if a.cost.tokens:
        head.add_row("usage", safe(a.cost.tokens_line() + " tokens reported, sub-agents included"))
    if a.session.compactions:
        head.add_row("", safe(a.compactions_cost.line(), style="dim"))
    _context_rows(a, head)
    return head


def _context_rows(a: Analysis, head: Table) -> None:
    """The context now, the window, the agent's point and its count, the pressure."""
    s = a.session
    if a.mode == "context":
        reading = a.model.reading(len(s.messages))
        head.add_row("context", safe(f"{reading.tokens:,}: {reading.provenance()}"))
        head.add_row("", safe(f"{reading.holds()} · {a.model.describe_fit()}", style="dim"))
    else:
        head.add_row("context", safe("messages only (--pressure messages)"))
    head.add_row(
        "window",
        safe(
            f"{a.window.usable:,} usable of {a.window.context_window:,} "
            f"({a.window.reserved_output:,} reserved for output; {a.account.window_source})"
        ),
    )
    if s.metadata.get("slice") is True:
        head.add_row(
            "slice",
            safe(
                "this file starts inside a longer session (its first line's parent is not in it): "
                f"figures are estimates; overhead from {a.model.overhead_source}",
                style="yellow",
            ),
        )
    if a.point is not None:
        at = f"{a.point.tokens:,}" if a.point.tokens else "none"
        head.add_row("auto-compact", safe(f"{at}: {a.point.rule}"))
    if (idle := a.account.idle) is not None:
        head.add_row("idle compact", safe(f"{f'{idle.tokens:,}' if idle.tokens else 'off'}: {idle.rule}"))
    counted_now, left = next_check(s, a.count_now, a.headroom)
    if counted_now:
        head.add_row("its own count", safe(counted_now))
    if left:
        head.add_row("", safe(left, style="magenta"))
    for c in s.compactions:
        why = a.why(c.index)
        if why is not None:
            head.add_row(
                "", safe(f"compaction at line {s.messages[c.index].line}: {why.line()}", style="dim")
            )
    head.add_row("pressure", pressure_text(a.pressure))


def _volleys(a: Analysis, all_volleys: bool) -> Table:
    """A row a volley: the first and last SHOWN // 2 of a longer session, unless `all_volleys`."""
    s = a.session
    table = Table(title="Volleys", title_justify="left", caption_justify="left", expand=False)
    for column in ("#", "messages", "rounds", "tokens", "starts with"):
        table.add_column(column, justify="right" if column != "starts with" else "left")
    round_starts = {g.start for g in a.api_rounds}
    shown = _ends(len(a.volleys), None if all_volleys else SHOWN)
    if len(shown) < len(a.volleys):
        table.caption = (
            f"{len(shown)} of {len(a.volleys):,} volleys shown: the first and last {SHOWN // 2}; "
            "--all-volleys shows every one, --json holds them all"
        )
    for k, n in enumerate(shown):
        v = a.volleys[n]
        if k and shown[k - 1] != n - 1:  # the volleys left out between the two ends
            table.add_row("…", "", "", "", safe(f"volleys {shown[k - 1] + 1}–{n - 1}", style="dim"))
        rounds = sum(1 for i in range(v.start, v.end) if i in round_starts)
        first = s.messages[v.start]
        label = "prelude" if n == 0 and not first.is_human else topic.title(first.text, 60)
        table.add_row(str(n), str(len(v)), str(rounds), f"{v.tokens:,}", safe(label))
    return table


def _ranges(messages: Sequence[Message], positions: Sequence[int], index: dict[Message, int]) -> str:
    """Messages at `positions` as the app numbers them: 1, 2, 3, 7 -> '#1–#3, #7', and how
    many a step made ('2 new')."""
    numbers = numbered(messages, positions, index)
    shown = [f"#{a}" if b == a + 1 else f"#{a}–#{b - 1}" for a, b in runs(sorted(set(numbers)))]
    made = len(positions) - len(numbers)
    return ", ".join([*shown, *([f"{made} new"] if made else [])])


def _preview(m: Message, width: int = 90) -> Text:
    line = safe(f"{m.role:<9} {m.kind:<11} ", style="dim")
    line.append(one_line(m.text, width))
    return line


def print_compaction(
    inspection: Inspection,
    result: CompactionResult[Stats],
    out: Console | None = None,
    all_steps: bool = False,
) -> None:
    """Each step of `result` (run on the request `inspection` sends next), its messages
    numbered as the app numbers them: by their place in the transcript. A run of more
    than SHOWN steps shows the first and last half of them unless `all_steps`."""
    out = out or console()
    session, index, context = inspection.session, inspection.origins, inspection.context
    out.print(safe(f"{result.strategy} on {session.path} ({len(session.messages)} messages)", style="bold"))
    if inspection.live:
        out.print(
            safe(
                f"the request the agent sends next: #{inspection.live}–#{len(session.messages) - 1}, "
                "after the transcript's own last compaction",
                style="dim",
            )
        )
    count = len(result.steps)
    shown = set(_ends(count, None if all_steps else SHOWN))
    for k, step in enumerate(each_step(result.steps)):
        n = k + 1
        if k not in shown:
            if k - 1 in shown:  # the first left out
                out.print(
                    safe(
                        f"… steps {n}–{count - SHOWN // 2} not shown ({count - len(shown):,} of {count:,}): "
                        "--all-steps shows every one, --json holds them all",
                        style="dim",
                    )
                )
            continue
        # read in place (a step of a long run is a few new messages and a slice of the transcript)
        d, before, after = step.diff, step.made_before, step.made
        body = safe(step.explanation + "\n")
        body.append(
            f"tokens {d.tokens_before:,} → {d.tokens_after:,} ({d.token_delta:+,}) · "
            f"pressure {step.pressure_before:.1%} → {step.pressure_after:.1%}\n",
            style="bold",
        )
        if d.dropped:
            dropped = _ranges(before, d.dropped, index)
            body.append(f"− dropped {dropped} ({len(d.dropped)} messages)\n", style="red")
        for j in sorted({a for _, a in d.summarized}):
            sources_of = [b for b, a in d.summarized if a == j]
            body.append(f"≈ summarized {_ranges(before, sources_of, index)} into:\n", style="yellow")
            body.append_text(safe(after[j].text + "\n", "yellow"))
        if d.edited:
            body.append(f"~ edited {_ranges(before, [b for b, _ in d.edited], index)}\n", style="cyan")
        for j in d.inserted:
            body.append("+ inserted ", style="green")
            body.append_text(_preview(after[j]))
            body.append("\n")
        out.print(Panel(body, title=safe(f"step {n}: {step.title}"), title_align="left", expand=False))
    stats = Table(title="stats", title_justify="left", show_header=False)
    for key, value in result.stats.to_dict().items():
        stats.add_row(safe(key), safe(json.dumps(value)))
    out.print(stats)
    if result.messages is None:
        out.print(safe(str(result.error), style="bold red"))
    else:
        final = result.messages  # the last step's messages, or the request when none changed it
        tokens = context.meter.tokens(context.tokens(final))
        out.print(safe(f"result: {len(final)} messages, {tokens:,} tokens", style="bold"))


def print_simulation(
    simulations: list[Simulation],
    out: Console | None = None,
    all_rounds: bool = False,
    costs: list[Cost] | None = None,
    real: Cost | None = None,
) -> None:
    """Each replay's totals, what it would have cost (`costs`, beside the `real` cost),
    and its table of rounds (`all_rounds`: every round, else at most SHOWN of them,
    saying which)."""
    out = out or console()
    if len(simulations) > 1:  # the policies side by side first, then each round by round
        both = Table(title="compared", title_justify="left", show_edge=False, pad_edge=False)
        both.add_column("policy")  # gives way: its text is cut, the figures stay whole
        for column in ("compactions", "peak", "uncompacted", "tokens removed", "rounds over"):
            both.add_column(column, justify="right", no_wrap=True)
        for sim in simulations:
            t = sim.totals
            both.add_row(
                cut(safe(sim.policy.label)),
                f"{t.compactions:,}",
                f"{t.peak_pressure:.1%}",
                f"{t.peak_pressure_uncompacted:.1%}",
                f"{t.tokens_removed:,}",
                f"{t.rounds_exceeding_window:,}",
            )
        out.print(both)
    for n, sim in enumerate(simulations):
        t = sim.totals
        out.print(
            safe(
                f"{sim.policy.label}: {t.rounds} rounds, {t.compactions} compaction(s){t.where}, "
                f"peak {t.peak_pressure:.1%} "
                f"(uncompacted {t.peak_pressure_uncompacted:.1%}), "
                f"{t.tokens_removed:,} tokens removed, "
                f"{t.rounds_exceeding_window} rounds over the "
                f"{sim.usable_window:,}-token window",
                style="bold",
            )
        )
        if sim.repaired_note:
            out.print(safe(sim.repaired_note, style="dim"))
        if costs is not None:
            out.print(
                safe(f"cost {costs[n].line()}" + (f"; really {real.line()}" if real is not None else ""))
            )
            if costs[n].compactions:
                out.print(safe(CompactionsCost(costs[n].compactions, costs[n]).line(), style="dim"))
        table = Table(show_edge=False, pad_edge=False)
        # figures and the bar never wrap or shrink; the event takes what is left, cut
        for column in ("round", "sent", "reported", "before", "after", "pressure"):
            table.add_column(column, justify="left" if column == "pressure" else "right", no_wrap=True)
        table.add_column("event")  # the one column that gives way: its text is cut, not wrapped
        rows, thinned = shown_rounds(sim.points, None if all_rounds else SHOWN)
        for p in (sim.points[i] for i in rows):
            event = ""
            if p.event is not None:
                event = ("⚑ " if p.event.source == "transcript" else "✂ ") + p.event.description
                if p.event.recorded_tokens is not None:
                    event += f" (at {p.event.recorded_tokens:,}, as recorded)"
            table.add_row(
                str(p.round),
                str(p.messages_sent),
                f"{p.reported:,}" if p.reported is not None else "",
                f"{p.tokens_before:,}",
                f"{p.tokens_after:,}",
                pressure_text(p.pressure_after, 10),
                cut(safe(one_line(event, 60))),
            )
        out.print(table)
        if len(rows) < len(sim.points):
            which = "compactions evenly spaced" if thinned else "every compaction, the rest evenly spaced"
            out.print(
                safe(
                    f"{len(rows)} of {len(sim.points):,} rounds shown: the first, the last, the peak, "
                    f"{which}; --all-rounds shows every round",
                    style="dim",
                )
            )


def next_check(session: Session, now: Count | None, left: Headroom | None) -> tuple[str, str]:
    """The agent's own count at its last check, and how far that is from its point: the
    same two lines wherever a surface says where the session stands (`analyze`,
    `compactions`); "" where there is nothing to say."""
    counted_now = ""
    if now is not None and now.index is not None:
        line = session.messages[now.index].line if now.index < len(session.messages) else None
        counted_now = f"{now.line()}, at its last check ({now.when}{f', line {line}' if line else ''})"
    return counted_now, left.line() if left is not None else ""


def print_compactions(
    session: Session,
    found: list[RealCompaction],
    config: Config,
    out: Console | None = None,
    now: Count | None = None,
    left: Headroom | None = None,
) -> None:
    """One block per compaction the transcript records, then where the session stands
    now against the agent's point (`next_check`)."""
    out = out or console()
    out.print(
        safe(
            f"{counted(len(found), 'compaction')} in {session.path} "
            f"(the preset's {config.account.note}; window {config.window_note})",
            style="bold",
        )
    )
    if found and found[0].slice:
        out.print(
            safe(
                f"this file is a slice of a longer session: its figures are estimates "
                f"(overhead from {found[0].overhead_source})",
                style="yellow",
            )
        )
    for c in found:
        if c.kind == "microcompact":
            _print_microcompact(c, out)
        else:
            _print_compaction(c, out)
    counted_now, stands = next_check(session, now, left)
    if counted_now or stands:
        point = f"{config.account.tokens:,}" if config.account.tokens is not None else "none"
        where = "; ".join(p for p in (f"its point {point}", counted_now, stands) if p)
        out.print(safe(f"now: {where}", style="magenta"))


def _figure(value: int | None) -> str:
    return f"{value:,}" if value is not None else "—"


def _print_microcompact(c: RealCompaction, out: Console) -> None:
    d = c.to_dict()
    out.print(
        safe(
            f"line {d['line']} · microcompact ({d['trigger'] or 'unknown'}) · "
            f"{counted(len(c.compaction.cleared), 'tool result')} cleared · "
            f"measured {_figure(d['measured_before'])} → {_figure(d['measured_after'])} · "
            + (
                f"predicted after {_figure(d['predicted_after'])} · "
                if d["predicted_after"] is not None
                else "not modelled: none of the results it cleared is in this file · "
            )
            + f"its own estimate: {_figure(d['pre_tokens'])} before, {_figure(d['tokens_saved'])} saved"
        )
    )
    if c.cost is not None:
        out.print(safe(f"  cost: {c.cost.line()}", style="dim"))


def _print_compaction(c: RealCompaction, out: Console) -> None:
    d = c.to_dict()
    offset = c.policy_round_offset
    fires = (
        "idle: its idle compaction's rule, below"
        if c.compaction.trigger == "idle" and c.count is not None
        else f"{c.compaction.trigger or 'unknown trigger'}: no rule to compare"
        if c.compaction.trigger != "auto"
        else "the file starts at it: the history it replaced is not here to replay"
        if c.replaced[0] == c.replaced[1]
        else "the preset fires here or at the next check: the estimate's range straddles its point"
        if c.count is not None and c.count.undecided
        else "the preset never reaches its point before it"
        if offset is None
        else f"the preset fires {counted(offset, 'API round')} before it"
        if offset
        else "the preset fires at the same request"
    )
    agent = d["agent_estimate_after"]
    out.print(
        safe(
            f"line {d['line']} · {d['trigger'] or 'unknown'} · "
            f"recorded before {_figure(d['pre_tokens'])} · "
            f"measured {_figure(d['measured_before'])} → {_figure(d['measured_after'])} · "
            f"predicted after {_figure(d['predicted_after'])}"
            + (f" ({'; '.join(said)})" if (said := _predicted_said(c)) else "")
            + (f" ({c.calibration})" if c.predicted_after is None and c.calibration else "")
            + (f" · the agent's own estimate after {agent:,}" if agent is not None else "")
            + f" · {fires}"
        )
    )
    if c.parts:
        out.print(safe(f"  predicted after: {c.parts_line}", style="dim"))
    if c.count is not None:
        out.print(safe(f"  why: {c.count.line()}", style="dim"))
    if c.cost is not None:
        out.print(safe(f"  cost: {c.cost.line()}", style="dim"))
    if c.recorded_line:
        out.print(safe(f"  the agent recorded: {c.recorded_line}", style="dim"))
    real = c.retention.line() if c.retention else "— (the summary is not in the transcript)"
    out.print(safe(f"  kept by its summary: {real}", style="dim"))
    if c.ours is not None:
        out.print(safe(f"  kept by ours:        {c.ours.line()}", style="dim"))


def _predicted_said(c: RealCompaction) -> list[str]:
    """What a compaction's predicted figure is said with: its range, what of it was put back."""
    span = c.predicted_range
    said = [said_range(span)] if span else []
    return said + ([f"{c.reread_tokens:,} of it put back: files, plan, skills"] if c.reread_tokens else [])

"""A compaction as Markdown: each step's explanation, diff and stats, for sharing."""

from __future__ import annotations

from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.reporting.diff import label
from compaction_inspector.core.strategies import CompactionResult, Stats, each_step
from compaction_inspector.core.text import one_line


def _cell(text: str) -> str:
    return one_line(text, 80).replace("|", "\\|")


def compaction_markdown(inspection: Inspection, result: CompactionResult[Stats], upto: int = -1) -> str:
    """Steps 1..upto+1 (all when `upto` is -1 or past the end) of `result` (run on the
    request `inspection` sends next) as a Markdown report; messages are numbered as the
    app numbers them, by their place in the transcript."""
    session, context, index = inspection.session, inspection.context, inspection.origins
    steps = result.steps if upto < 0 else result.steps[: upto + 1]
    request = session.messages[inspection.live :]
    sent = context.meter.tokens(context.tokens(request))
    since = f" (from #{inspection.live}, after its own last compaction)" if inspection.live else ""
    lines = [
        f"# {result.strategy} on `{session.path}`",
        "",
        f"The request the agent sends next: {len(request):,} of the transcript's {len(session.messages):,} "
        f"messages{since}, {sent:,} tokens of context ({context.counter.label}), usable window "
        f"{context.window.usable:,}.",
        "",
    ]
    for n, step in enumerate(each_step(steps), start=1):
        d = step.diff
        lines += [
            f"## Step {n}: {step.title}",
            "",
            step.explanation,
            "",
            f"- tokens {d.tokens_before:,} → {d.tokens_after:,} ({d.token_delta:+,})",
            f"- pressure {step.pressure_before:.1%} → {step.pressure_after:.1%}",
            f"- dropped {len(d.dropped)}, summarized {len(d.summarized)}, edited {len(d.edited)}, "
            f"inserted {len(d.inserted)}",
            "",
        ]
        changed = [(i, "dropped") for i in d.dropped] + [(i, "summarized") for i, _ in d.summarized]
        changed += [(i, "edited") for i, _ in d.edited]
        if changed:
            lines += ["| message | role | kind | fate | text |", "| --- | --- | --- | --- | --- |"]
            for i, fate in sorted(changed):
                m = step.before[i]
                lines.append(f"| {label(m, index)} | {m.role} | {m.kind} | {fate} | {_cell(m.text)} |")
            lines.append("")
        for j in sorted({a for _, a in d.summarized} | set(d.inserted)):
            text = step.messages[j].text.replace("```", "ʼʼʼ")
            lines += [
                f"New message ({j + 1} of {len(step.messages)} after the step):",
                "",
                "```",
                text,
                "```",
                "",
            ]
    lines += ["## Stats", "", "| key | value |", "| --- | --- |"]
    lines += [f"| {k} | {_cell(str(v))} |" for k, v in result.stats.to_dict().items()]
    return "\n".join(lines) + "\n"

"""How true the context figures are: `python3 -m benchmarks.fidelity PATH...`.

For every transcript given (a folder means every `.jsonl` and `.json` under it) and every
API response it reports, this compares the prompt the response reported with

- the messages-only count: the transcript's messages of the request, counted (what a
  tool that reads only the transcript shows), and
- the anchored estimate: the context model's prediction of that request from the
  response before it, at a scale fitted without that pair (`ContextModel.predictions`);
  for a proxy log, whose bodies each carry one logged response, the estimate without any
  report: the body's own system prompt and tools counted, plus its messages.

It prints each session's errors (mean, median, p95, relative to the reported prompt)
and the pooled figures per format, as a Markdown table (`--json` for one object). The
headline check: the figure the app shows for the session equals the last measured
prompt + its output + the estimate of what follows it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.context_model import ContextModel, fit
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.sessions import transcripts_under

load = CATALOGUE.formats.load

FAMILIES = {"claude-code": "Claude Code", "codex": "Codex"}


def inspections(given: Iterable[str]) -> Iterator[tuple[Path, Inspection]]:
    """Each transcript `given` (a folder: every one under it) read and counted once, with
    the default config; one that cannot be read is named on stderr and skipped."""
    counter = make_counter()
    for path in transcripts_under(CATALOGUE, given):
        try:
            session = load(path)
        except LoadError as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        yield path, Inspection.of(session, Config(CATALOGUE), counter)


def summary(errors: Sequence[float]) -> dict[str, float | int | None]:
    if not errors:
        return {"n": 0, "mean": None, "median": None, "p95": None}
    ordered = sorted(errors)
    return {
        "n": len(ordered),
        "mean": statistics.mean(ordered),
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


def messages_only(model: ContextModel) -> list[float]:
    """Each response's prompt against the counted messages of its request."""
    errors = []
    for r in model.responses:
        counted = model.prefix[r.start] - model.prefix[model.segment_start(r.start)]
        errors.append(abs(counted - r.prompt_tokens) / r.prompt_tokens)
    return errors


def measure(path: Path) -> dict[str, Any] | None:
    try:
        session = load(path)
    except LoadError as exc:
        print(f"skipped {path}: {exc}", file=sys.stderr)
        return None
    if session.request_usage is not None:
        return measure_bodies(path, session.request_count)
    model = fit(session, make_counter())
    if not model.responses:
        return None
    end = len(session.messages)
    reading = model.reading(end)
    last = model.responses[-1]
    return {
        "file": path.name,
        "format": session.format,
        "responses": len(model.responses),
        "scale": round(model.scale, 3),
        "pairs": model.pairs,
        "messages_only": summary(messages_only(model)),
        "anchored": summary([p.error for p in model.predictions if p.anchored]),
        "headline_tokens": reading.tokens,
        "last_measured": last.prompt_tokens,
        # the headline is the last report + its output + what came after it, nothing else
        "headline_matches": reading.response is not None
        and reading.tokens
        == reading.response.prompt_tokens + reading.output_tokens + reading.estimated_since,
        "_messages_only": messages_only(model),
        "_anchored": [p.error for p in model.predictions if p.anchored],
    }


def measure_bodies(path: Path, count: int) -> dict[str, Any]:
    """Each request body of a proxy log against what its logged response reported."""
    counter = make_counter()
    only: list[float] = []
    estimated: list[float] = []
    fmt = ""
    for request in range(1, count + 1):
        body = load(path, request=request)
        fmt = fmt or body.format
        if body.request_usage is None or body.request_usage.prompt_tokens == 0:
            continue
        without = replace(body, request_usage=None)  # the model as if nothing were reported
        model = fit(without, counter)
        reported = body.request_usage.prompt_tokens
        only.append(abs(sum(counter.count_all(body.messages)) - reported) / reported)
        estimated.append(abs(model.tokens(len(body.messages)) - reported) / reported)
    return {
        "file": path.name,
        "format": fmt,
        "responses": len(only),
        "scale": 1.0,
        "pairs": 0,
        "messages_only": summary(only),
        "anchored": summary([]),
        "body_estimate": summary(estimated),
        "headline_matches": True,
        "_messages_only": only,
        "_anchored": [],
    }


def percent(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.2f} %"


def table(rows: list[dict[str, Any]], pooled: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| session | responses | scale | messages-only error (mean / median) | anchored next-response error "
        "(mean / median / p95) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        m, a = r["messages_only"], r.get("body_estimate", r["anchored"])
        lines.append(
            f"| `{r['file']}` | {r['responses']} | {r['scale']:.2f} | {percent(m['mean'])} / {percent(m['median'])} "
            f"| {percent(a['mean'])} / {percent(a['median'])} / {percent(a['p95'])}"
            f"{' (body estimate)' if 'body_estimate' in r else ''} |"
        )
    for name, p in pooled.items():
        m, a = p["messages_only"], p["anchored"]
        lines.append(
            f"| **{name}, pooled** | {p['responses']} | | {percent(m['mean'])} / {percent(m['median'])} "
            f"| {percent(a['mean'])} / {percent(a['median'])} / {percent(a['p95'])} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.fidelity", description=__doc__.splitlines()[0]
    )
    parser.add_argument("paths", nargs="+", help="transcripts, or folders of them")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    rows = [r for p in transcripts_under(CATALOGUE, args.paths) if (r := measure(p)) is not None]
    pooled: dict[str, dict[str, Any]] = {}
    for family in (*FAMILIES.values(), "all"):
        members = [r for r in rows if family == "all" or FAMILIES.get(r["format"]) == family]
        if members:
            pooled[family] = {
                "sessions": len(members),
                "responses": sum(r["responses"] for r in members),
                "messages_only": summary([e for r in members for e in r["_messages_only"]]),
                "anchored": summary([e for r in members for e in r["_anchored"]]),
            }
    for r in rows:
        del r["_messages_only"], r["_anchored"]
    if args.json:
        print(json.dumps({"sessions": rows, "pooled": pooled}, indent=2))
    else:
        print(table(rows, pooled))
        wrong = [r["file"] for r in rows if not r["headline_matches"]]
        print(
            f"\nheadline = last measured + its output + estimate since: {len(rows) - len(wrong)}/{len(rows)} sessions"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

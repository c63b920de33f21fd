"""How well the real compactions are modelled: `python3 -m benchmarks.compactions PATH...`.

For every compaction a transcript records (a folder means every `.jsonl` under it): the
prompt reported before and after it, our prediction of the context after it and its
error, the API rounds between where the session's preset would first fire and where the
agent compacted (auto compactions), and what the agent's summary and our local summary
of the same span kept. Prints a Markdown table (`--json` for one object).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.fidelity import inspections


def rows(given: Sequence[str]) -> list[dict[str, Any]]:
    found = []
    for path, inspection in inspections(given):
        session, config = inspection.session, inspection.config
        for c in inspection.own_compactions():
            d = c.to_dict()
            after = d["measured_after"]
            d["file"] = path.name
            d["format"] = session.format
            predicted = d["predicted_after"]
            d["error_after"] = (predicted - after) / after if after and predicted is not None else None
            span = d["predicted_range"]
            d["inside_range"] = span[0] <= after <= span[1] if span and after else None
            d["range_half_width"] = (span[1] - span[0]) / 2 / after if span and after else None
            d["auto_compact_point"] = config.account.tokens
            found.append(d)
    return found


def _figure(value: int | None) -> str:
    """A token count, or — where the transcript has none (never a 0 it did not report)."""
    return "—" if value is None else f"{value:,}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _span(d: dict[str, Any]) -> str:
    """ " [52,149-68,951 ✓]": the range where a part is not known, and whether it holds what was sent."""
    span = d["predicted_range"]
    if not span:
        return ""
    inside = {True: " ✓", False: " ✗", None: ""}[d["inside_range"]]
    return f" [{span[0]:,}-{span[1]:,}{inside}]"


def table(found: list[dict[str, Any]]) -> str:
    lines = [
        "| session | line | kind | recorded before | measured before → after | predicted after (error) "
        "| agent's own after | preset fires, rounds before | paths kept: its summary / ours |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for d in found:
        real, ours = d["retention"] or {}, d["our_retention"] or {}
        error = d["error_after"]
        offset = d["policy_round_offset"]
        kind = f"{d['trigger'] or '?'} {'micro' if d['kind'] == 'microcompact' else 'full'}"
        fires = (
            "—"
            if d["trigger"] != "auto" or d["kind"] != "compact"
            else "never"
            if offset is None
            else str(offset)
        )
        name = f"`{d['file']}`" + (" (slice)" if d["slice"] else "")
        lines.append(
            f"| {name} | {d['line']} | {kind} | {_figure(d['pre_tokens'])} "
            f"| {_figure(d['measured_before'])} → {_figure(d['measured_after'])} "
            f"| {_figure(d['predicted_after'])} ({'—' if error is None else f'{error:+.1%}'}){_span(d)} "
            f"| {_figure(d['agent_estimate_after'])} | {fires} "
            f"| {_share(real.get('paths'))} / {_share(ours.get('paths'))} |"
        )
    return "\n".join(lines)


def tally(found: list[dict[str, Any]]) -> str:
    """The two measures on complete sessions, Claude Code and Codex apart; slices apart."""
    out = []
    for agent in ("claude-code", "codex"):
        rows = [d for d in found if d["format"] == agent and not d["slice"]]
        measured = [d for d in rows if d["error_after"] is not None]
        within = [d for d in measured if abs(d["error_after"]) <= 0.10]
        auto = [d for d in rows if d["trigger"] == "auto" and d["kind"] == "compact"]
        close = [d for d in auto if d["policy_round_offset"] is not None and d["policy_round_offset"] <= 1]
        ranged = [d for d in measured if d["inside_range"] is not None]
        inside = [d for d in ranged if d["inside_range"]]
        widest = max((d["range_half_width"] for d in ranged), default=None)
        out.append(
            f"{agent}: predicted after within 10 %: {len(within)}/{len(measured)}; "
            f"preset fires within 1 round: {len(close)}/{len(auto)}"
            + (
                f"; inside the stated range: {len(inside)}/{len(ranged)} (widest ±{widest:.0%})"
                if widest is not None
                else ""
            )
        )
    slices = [d for d in found if d["slice"]]
    if slices:
        out.append(f"slices (estimates, not counted above): {len(slices)} compaction(s)")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks.compactions", description=__doc__.splitlines()[0]
    )
    parser.add_argument("paths", nargs="+", help="transcripts, or folders of them")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    found = rows(args.paths)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(table(found))
    print()
    print(tally(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())

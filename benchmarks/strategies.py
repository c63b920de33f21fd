"""Every strategy on real sessions, priced: `python3 -m benchmarks.strategies PATH...`.

For every session (a folder means every `.jsonl` under it) whose responses report usage:
what it really cost (its reported usage, priced), the no-compaction replay priced on the
same request pattern (how far the replay's pricing is from the real cost when nothing
changes), and the comparison's rows: each strategy's compactions, peak pressure, cache
re-written and cost against the real one. Prints Markdown tables (`--json` for one
object). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from benchmarks.fidelity import inspections
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.compare import compare
from compaction_inspector.core.pricing.cost import signed


def sessions(given: Sequence[str]) -> list[dict[str, Any]]:
    found = []
    for path, inspection in inspections(given):
        start = time.perf_counter()
        done = compare(inspection, CATALOGUE.replayed)
        if not done.real.responses:
            continue
        baseline = done.rows[0]
        found.append(
            {
                "file": path.name,
                "seconds": round(time.perf_counter() - start, 2),
                "real_usd": float(done.real.total),
                "replay_none_usd": float(baseline.cost.total),
                "replay_none_error": float((baseline.cost.total - done.real.total) / done.real.total),
                "rows": [r.to_dict() for r in done.rows],
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = sessions(args.paths)
    if args.json:
        print(json.dumps(found, indent=2))
        return
    print("| session | real cost | no-compaction replay priced | its error | compare took |")
    print("| --- | --- | --- | --- | --- |")
    for s in found:
        print(
            f"| {s['file'][:48]} | ${s['real_usd']:.2f} | ${s['replay_none_usd']:.2f} "
            f"| {s['replay_none_error']:+.1%} | {s['seconds']:.1f} s |"
        )
    for s in found:
        print(f"\n#### {s['file']}\n")
        print("| strategy | compactions | peak | cache re-written | cost | vs real |")
        print("| --- | --- | --- | --- | --- | --- |")
        for r in sorted(s["rows"], key=lambda r: float(r["cost"]["total_usd"])):
            change = signed(None if r["cost_change_usd"] is None else Decimal(r["cost_change_usd"]))
            print(
                f"| {r['label']} | {r['compactions']} | {r['peak_pressure']:.1%} "
                f"| {r['cache_rewritten_tokens']:,} | ${float(r['cost']['total_usd']):.2f} | {change} |"
            )


if __name__ == "__main__":
    main()

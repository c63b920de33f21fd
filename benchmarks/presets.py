"""What each strategy costs against counting, on the generated sessions of benchmarks/run.py.

    .venv/bin/python -m benchmarks.presets [--sizes 100] [--strategies all|a,b]

For every registered strategy (our own, the agents' own and every preset of the clear
and summarize families), in a fresh interpreter of its own: the session loaded and
counted (the baseline, measured there), then one `run` on the whole session and one
replay (`simulate`) of it, each as a share of that counting. The issue's bar: every
added strategy costs at most 10 % of counting on the 100 MB session. Results go to
stdout and benchmarks/results/presets.md. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path
from typing import Any

from benchmarks.run import RESULTS, best, fresh, session_file
from compaction_inspector.core.agents.registry import CATALOGUE


def bench_preset(path: Path, name: str) -> dict[str, Any]:
    """Count the session, then time `run` and `simulate` of strategy `name` once each."""

    load = CATALOGUE.formats.load
    from compaction_inspector.core.measuring.tokens import make_counter
    from compaction_inspector.core.replaying.simulate import simulate
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.core.strategies import Context, run
    from compaction_inspector.tui import heap

    session = load(path)
    counter = make_counter("cl100k_base")
    count = best(lambda: counter.count_all(session.messages), 1)
    heap.settle()
    context = Context(counter)
    ran = best(lambda: run(CATALOGUE.strategies[name], session.messages, None, context), 1)
    replay = best(lambda: simulate(session.messages, Policy(CATALOGUE.strategies[name]), context), 1)
    return {"messages": len(session.messages), "count_s": count, "run_s": ran, "simulate_s": replay}


def main() -> None:

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100", help="MB, comma separated")
    parser.add_argument("--strategies", default="all", help="all, or names separated by commas")
    args = parser.parse_args()
    names = list(CATALOGUE.strategies) if args.strategies == "all" else args.strategies.split(",")
    lines = [f"# Strategies against counting ({platform.python_version()}, {platform.machine()})", ""]
    for mb in (int(x) for x in args.sizes.split(",")):
        path = session_file(mb)
        lines += [
            f"## {mb} MB",
            "",
            "| strategy | family | run | share of counting | replay | share of counting |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name in names:
            r = fresh("bench_preset", path, name, module="benchmarks.presets")
            family = CATALOGUE.strategies[name].family or "-"
            lines.append(
                f"| {name} | {family} | {r['run_s']:.2f} s | {r['run_s'] / r['count_s']:.1%} "
                f"| {r['simulate_s']:.2f} s | {r['simulate_s'] / r['count_s']:.1%} |"
            )
            print(lines[-1], flush=True)
        lines.append("")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "presets.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""`compaction-inspector simulate`: its arguments and what it does."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compaction_inspector.core.strategies import (
    DEFAULT,
)
from compaction_inspector.core.text import say
from compaction_inspector.tui.cli.common import (
    Shared,
    Subparsers,
    add_policy,
    checkpoint_triggers,
    inspect,
    simulated,
)
from compaction_inspector.tui.cli.json_out import print_json

NAME = "simulate"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "simulate",
        parents=[shared.source, shared.settings, shared.as_json],
        help="replay the session round by round under a policy",
    )
    p.add_argument("--strategy", default=DEFAULT, choices=sorted(simulated(shared.catalogue)))
    p.add_argument(
        "--compare", choices=sorted(simulated(shared.catalogue)), help="a second policy on the same chart"
    )
    add_policy(
        p, shared.catalogue, shared.catalogue.replayed
    )  # the flags of a strategy it replays (not PTL retry's)
    p.add_argument(
        "--all-rounds",
        action="store_true",
        help="the table shows every round (by default at most 40: the ends, the peak and each compaction)",
    )
    p.add_argument("--checkpoints", action="store_true", help="show where checkpoints would be written")
    p.add_argument("--checkpoint-every", type=int, default=10, help="API rounds between checkpoints")


def run(args: argparse.Namespace) -> int:
    inspection = inspect(args)
    policies = [inspection.policy(args.strategy)]
    if args.compare:
        policies.append(inspection.policy(args.compare, against=args.strategy))
    made = [inspection.priced(p) for p in policies]
    sims, costs = [s for s, _ in made], [c for _, c in made]
    points = (
        checkpoint_triggers(inspection.session, sims[0], inspection.config, args.checkpoint_every)
        if args.checkpoints
        else None
    )
    if args.json:
        # each point made as it is written (`print_json`), never all at once
        out: dict[str, Any] = {
            "simulations": [
                {**s.to_dict(streamed=True), "cost": c.to_dict()} for s, c in zip(sims, costs, strict=True)
            ],
            **sims[0].to_dict(streamed=True),
            "cost": costs[0].to_dict(),
            "real_cost": inspection.real_cost.to_dict(),
        }
        if points is not None:
            out["checkpoints"] = [t.to_dict() for t in points]
        print_json(out)
    else:
        from compaction_inspector.tui.cli.report import print_simulation

        print_simulation(sims, all_rounds=args.all_rounds, costs=costs, real=inspection.real_cost)
        if points is not None:
            say(f"checkpoints ({len(points)}):", sys.stdout)
            for t in points:
                say(f"  before message #{t.index}: {t.reason}", sys.stdout)
    return 0

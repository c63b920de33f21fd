"""`compaction-inspector compare`: its arguments and what it does."""

from __future__ import annotations

import argparse
from functools import partial

from compaction_inspector.core.compare import SORTS, compare
from compaction_inspector.tui.cli.common import (
    Shared,
    Subparsers,
    inspect,
    jobs_option,
    replayed_list,
)
from compaction_inspector.tui.cli.json_out import print_json

NAME = "compare"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "compare",
        parents=[shared.source, shared.settings, shared.as_json],
        help="every strategy replayed on the session: compactions, pressure, cache re-written, cost "
        "against what it really cost, what it kept",
    )
    p.add_argument(
        "--strategies",
        default=shared.catalogue.replayed,
        type=partial(replayed_list, shared.catalogue),
        metavar="NAME[,NAME...]|all",
        help="which (default all a replay suits: every one but ptl-retry)",
    )
    p.add_argument(
        "--sort",
        choices=tuple(SORTS),
        default="cost",
        help="the column the rows are ordered by (default cost)",
    )
    p.add_argument("--descending", action="store_true", help="largest first")
    jobs_option(p, "the strategies are replayed in")


def run(args: argparse.Namespace) -> int:
    inspection = inspect(args)
    done = compare(inspection, args.strategies, jobs=args.jobs).sorted(args.sort, args.descending)
    if args.json:
        print_json(done.to_dict())
    else:
        from compaction_inspector.tui.cli.tables import print_comparison

        print_comparison(done)
    return 0

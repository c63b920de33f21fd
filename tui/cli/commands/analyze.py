"""`compaction-inspector analyze`: its arguments and what it does."""

from __future__ import annotations

import argparse

from compaction_inspector.tui.cli.common import Shared, Subparsers, inspect
from compaction_inspector.tui.cli.json_out import print_json

NAME = "analyze"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "analyze",
        parents=[shared.source, shared.settings, shared.as_json],
        help="rounds, volleys, tokens and pressure of a transcript",
    )
    p.add_argument(
        "--all-volleys",
        action="store_true",
        help="list every volley (by default at most 40: the first and last 20; --json holds them all)",
    )


def run(args: argparse.Namespace) -> int:
    result = inspect(args).analysis()
    if args.json:
        print_json(result.to_dict())
    else:
        from compaction_inspector.tui.cli.report import print_analysis

        print_analysis(result, all_volleys=args.all_volleys)
    return 0

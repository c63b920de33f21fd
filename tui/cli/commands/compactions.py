"""`compaction-inspector compactions`: its arguments and what it does."""

from __future__ import annotations

import argparse

from compaction_inspector.tui.cli.common import Shared, Subparsers, inspect
from compaction_inspector.tui.cli.json_out import print_json

NAME = "compactions"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    sub.add_parser(
        "compactions",
        parents=[shared.source, shared.settings, shared.as_json],
        help="the transcript's own compactions: measured before and after, predicted, what survived",
    )


def run(args: argparse.Namespace) -> int:
    inspection = inspect(args)
    found = inspection.own_compactions()
    if args.json:
        print_json([c.to_dict() for c in found])
    else:
        from compaction_inspector.tui.cli.report import print_compactions

        now = inspection.agent_counts.at(len(inspection.messages))
        print_compactions(inspection.session, found, inspection.config, now=now, left=inspection.headroom)
    return 0

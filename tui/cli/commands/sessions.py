"""`compaction-inspector sessions`: its arguments and what it does."""

from __future__ import annotations

import argparse
import os

from compaction_inspector.core.sessions import find, rows
from compaction_inspector.tui.cli.common import Shared, Subparsers, UsageError, agents_named
from compaction_inspector.tui.cli.json_out import print_json
from compaction_inspector.tui.launch import places_given

NAME = "sessions"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "sessions",
        parents=[shared.places],
        help=f"your {agents_named(shared.catalogue)} sessions, newest first",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list: an object a session, titles whole")
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes the sessions not seen before are read in, forked from this one (default the cores)",
    )


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be a whole number >= 1")
    places = places_given(args.catalogue, args)
    listed = rows(args.catalogue, find(args.catalogue, places), jobs=args.jobs)
    if args.json:
        print_json([r.to_dict() for r in listed])
    else:
        from compaction_inspector.tui.cli.session_table import print_sessions

        print_sessions(listed, places)
    return 0

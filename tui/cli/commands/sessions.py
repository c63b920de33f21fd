"""`compaction-inspector sessions`: its arguments and what it does."""

from __future__ import annotations

import argparse

from compaction_inspector.core.sessions import find, rows
from compaction_inspector.tui.cli.common import Shared, Subparsers, agents_named, jobs_option
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
    jobs_option(p, "the sessions not seen before are read in")


def run(args: argparse.Namespace) -> int:
    places = places_given(args.catalogue, args)
    listed = rows(args.catalogue, find(args.catalogue, places), jobs=args.jobs)
    if args.json:
        print_json([r.to_dict() for r in listed])
    else:
        from compaction_inspector.tui.cli.session_table import print_sessions

        print_sessions(listed, places)
    return 0

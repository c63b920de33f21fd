"""`compaction-inspector watch`: its arguments and what it does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compaction_inspector.core.sessions import find
from compaction_inspector.core.text import say
from compaction_inspector.tui.cli.common import Shared, Subparsers, config_of, fail
from compaction_inspector.tui.launch import places_given

NAME = "watch"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "watch",
        parents=[shared.settings, shared.places],
        help="follow a session while its agent works (any agent): the gauge, its own count against its "
        "point, a notice before it may compact",
    )
    p.add_argument("file", nargs="?", help="the session (default the newest in your agents' folders)")
    p.add_argument(
        "--once", action="store_true", help="print the status line once and exit (for tmux and shells)"
    )


def run(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.watch import WatchApp, once  # Textual only when it runs

    if args.file is not None:
        path = Path(args.file)
    else:
        places = places_given(args.catalogue, args)
        found = [
            f for f in find(args.catalogue, places) if f.subagent_of is None
        ]  # a session, not its sub-agent
        if not found:
            return fail("no session found in your agents' folders: name one")
        path = max(found, key=lambda f: f.path.stat().st_mtime).path
    config = config_of(args, lenient=True)[0]
    if args.once:
        say(once(path, config), sys.stdout)
        return 0
    WatchApp(path, config).run(inline=True)
    return 0

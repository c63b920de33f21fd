"""`compaction-inspector statusline`: its arguments and what it does."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from compaction_inspector.core import statusline
from compaction_inspector.core.text import one_line, say, visible
from compaction_inspector.tui.cli.common import Shared, Subparsers, config_of, fail, status_agent_of, waiting

NAME = "statusline"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    status_agent, status_line = status_agent_of(shared.catalogue)
    p = sub.add_parser(
        "statusline",
        parents=[shared.settings],
        help=f"{status_agent.name}'s status line: its context against its own compaction point, how far "
        f"that is, compactions and cost (reads the JSON {status_agent.name} passes on stdin)",
    )
    p.add_argument(
        "--format",
        default=statusline.DEFAULT_FORMAT,
        help="the line's template; fields: {ctx} {point} {left} {requests} {compactions} {cost} {model}",
    )
    p.add_argument("--color", action="store_true", help="colour the line by how near the point it is (ANSI)")
    p.add_argument(
        "--setup",
        action="store_true",
        help=f"print the statusLine setting for {status_agent.name}'s {status_line.settings_path().name}",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="with --setup: add it to your settings.json (a backup is kept beside it)",
    )
    p.add_argument("--force", action="store_true", help="with --write: replace a statusLine already there")


def run(args: argparse.Namespace) -> int:
    """One line for the agent that runs it; any failure prints a short line instead and
    exits 0, since the agent blanks its status line on any other exit."""
    if args.setup:
        return _statusline_setup(args)
    agent, own = status_agent_of(args.catalogue)
    try:
        given = json.loads(sys.stdin.read() or "{}")
        given = given if isinstance(given, dict) else {}
        path = given.get("transcript_path")
        if not isinstance(path, str) or not path:
            raise ValueError("no transcript_path on stdin")
        index = statusline.index_path()
        tail = own.read(Path(path), index)
        if tail.foreign:
            raise ValueError(f"not a {agent.name} transcript: {Path(path).name}")
        # a file named on the command line is not stamped: its answer is not kept
        kept_in = index if args.config is None else None
        # the files stamped before they are read: one written meanwhile is read again next call
        files = own.stamped(tail, given) if kept_in is not None else None
        config = config_of(args, lenient=True)[0]
        asked = statusline.Asked(
            tuple(args.argv), os.getcwd(), args.format, args.color, config.status_colours
        )
        shown = own.figures(tail, config, given, (asked, files) if files is not None else None)
        print(statusline.drawn(shown, asked))
        if kept_in is not None:
            own.keep(Path(path), kept_in, tail)
    except statusline.FormatError as exc:  # the user's own template: said whole
        say(f"compaction-inspector: {visible(str(exc))}", sys.stdout)
    except Exception as exc:
        say(f"compaction-inspector: {one_line(str(exc) or type(exc).__name__, 60)}", sys.stdout)
    return 0


def _statusline_setup(args: argparse.Namespace) -> int:
    own = status_agent_of(args.catalogue)[1]
    if not args.write:
        say(json.dumps(own.snippet(), indent=2), sys.stdout)
        return 0
    target = own.settings_path()
    try:
        backup = own.install(target, args.force, waiting=waiting(target))
    except (statusline.SettingsRefused, OSError) as exc:
        return fail(str(exc))
    kept = f" (the file as it was: {backup})" if backup is not None else ""
    say(f"added the status line to {target}{kept}", sys.stdout)
    return 0

"""`compaction-inspector serve`: its arguments and what it does."""

from __future__ import annotations

import argparse

from compaction_inspector.core.formats.reading import check_readable
from compaction_inspector.tui.cli.common import Shared, Subparsers, port

NAME = "serve"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "serve",
        help="the app in a browser (textual-serve): on FILE or the bundled sample, never your session list",
    )
    p.add_argument("file", nargs="?", help="transcript to open (default the bundled sample)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default this machine only)")
    p.add_argument("--port", type=port, default=8000, help="port to listen on, 1-65535 (default 8000)")


def run(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.serve import serve

    if args.file is not None:
        check_readable(args.file)
    return serve(args.file, args.host, args.port)

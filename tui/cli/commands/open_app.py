"""`compaction-inspector open`: its arguments and what it does."""

from __future__ import annotations

import argparse

from compaction_inspector.tui.cli.common import Shared, Subparsers, config_of, source_options

NAME = "open"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "open",
        parents=[source_options("?"), shared.settings, shared.places],
        help="open the app (the default command)",
    )
    p.add_argument(
        "--follow", action="store_true", help="tail a session file still being written (any JSONL transcript)"
    )
    p.add_argument("--demo", action="store_true", help="walk the sample through every strategy")
    p.add_argument("--sample", action="store_true", help="open the bundled sample, not your own sessions")


def run(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.launch import run_app

    config, warning = config_of(args, lenient=True)
    return run_app(args, config, warning)

"""`compaction-inspector checkpoint`: its arguments and what it does."""

from __future__ import annotations

import argparse
import sys

from compaction_inspector.core.replaying.checkpoint import append_checkpoint, detect
from compaction_inspector.core.text import say
from compaction_inspector.tui.cli.common import Shared, Subparsers, UsageError
from compaction_inspector.tui.cli.json_out import print_json

NAME = "checkpoint"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "checkpoint",
        parents=[shared.source, shared.as_json],
        help="append a checkpoint to memory/YYYY-MM-DD.md, or detect truncation",
    )
    p.add_argument("--memory-dir", default="memory")
    p.add_argument("--at", type=int, help="message index to checkpoint (default the last)")
    p.add_argument("--detect", action="store_true", help="compare with the last checkpoint of this session")


def run(args: argparse.Namespace) -> int:
    session = args.catalogue.formats.load(args.file, request=args.request)
    if args.detect:
        try:
            found = detect(session, args.memory_dir)
        except OSError as exc:
            raise UsageError(
                f"cannot read the checkpoints in {args.memory_dir}: {exc.strerror or exc}"
            ) from exc
        if args.json:
            print_json(
                {
                    "truncated": found.truncated,
                    "message_count": found.message_count,
                    "checkpoint_count": found.checkpoint.message_count if found.checkpoint else None,
                    "recovery": found.checkpoint.recovery() if found.truncated and found.checkpoint else None,
                }
            )
        else:
            say(found.report, sys.stdout)
        return 4 if found.truncated else 0
    try:
        where, checkpoint = append_checkpoint(session, args.memory_dir, args.at)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print_json(
            {"path": str(where), "heading": checkpoint.heading, "message_count": checkpoint.message_count}
        )
    else:
        say(f"appended {checkpoint.heading!r} to {where}", sys.stdout)
    return 0

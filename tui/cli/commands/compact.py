"""`compaction-inspector compact`: its arguments and what it does."""

from __future__ import annotations

import argparse
from typing import Any

from compaction_inspector.core.analysis import message_fields
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.reporting.diff import origin
from compaction_inspector.core.reporting.export import marked, serialize
from compaction_inspector.core.strategies import (
    CompactionResult,
    Stats,
    each_step,
)
from compaction_inspector.core.text import say
from compaction_inspector.tui.cli.common import (
    Shared,
    Subparsers,
    UsageError,
    add_policy,
    free_to_write,
    inspect,
)
from compaction_inspector.tui.cli.json_out import print_json

NAME = "compact"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "compact",
        parents=[shared.source, shared.settings, shared.as_json],
        help="run one strategy and show each step",
    )
    p.add_argument("--strategy", required=True, choices=sorted(shared.catalogue.strategies))
    add_policy(p, shared.catalogue)
    p.add_argument("--write", metavar="OUT", help="save the compacted session to a new file")
    p.add_argument("--force", action="store_true", help="let --write replace an existing file")
    p.add_argument(
        "--all-steps",
        action="store_true",
        help="show every step (by default at most 40: the first and last 20; --json holds them all)",
    )


def run(args: argparse.Namespace) -> int:
    if args.write is not None:
        free_to_write(args.write, args.force, "--write", protect=args.file)
    inspection = inspect(args)
    session, live = inspection.session, inspection.live
    result = inspection.run(args.strategy)  # what the agent sends: after its own last compaction
    if args.json:
        print_json(compaction_json(inspection, result))
    else:
        from compaction_inspector.tui.cli.report import print_compaction

        print_compaction(inspection, result, all_steps=args.all_steps)
    if result.messages is None:
        say(f"compaction-inspector: {result.error}")
        return 3
    if args.write is not None:
        # the history before the transcript's own compaction stays as it was
        steps = result.steps
        before, after = (steps[0].tokens_before, steps[-1].tokens_after) if steps else (0, 0)
        whole = (*session.messages[:live], *result.messages)
        kept, mark = marked(whole, session.messages, args.strategy, before, after, live)
        # the transcript's own compactions before the mark keep their figures; the mark its own
        recorded = {c.index: c for c in session.compactions if mark is None or c.index < mark.index}
        if mark is not None:
            recorded[mark.index] = mark
        text, written = serialize(args.catalogue.formats, kept, session.format, session.metadata, recorded)
        try:
            write_atomic(args.write, text, protect=args.file, overwrite=args.force)
        except FileExistsError as exc:
            raise UsageError(f"{args.write} exists: choose another name (--write), or pass --force") from exc
        except OSError as exc:
            raise UsageError(str(exc)) from exc
        say(f"wrote {len(kept)} messages ({written}) to {args.write}")
    return 0


def compaction_json(inspection: Inspection, result: CompactionResult[Stats]) -> dict[str, Any]:
    """The result as JSON: its messages by their index in the session, and each step's
    diff by positions in the request, which is the session's messages from its live start on.
    The messages and steps are made as they are written (`print_json`), never all at once."""
    index, count = inspection.origins, inspection.counter.count
    messages = None
    if result.messages is not None:
        messages = (
            {**message_fields(m, origin(m, index), count(m)), "text": m.text} for m in result.messages
        )
    return {
        "strategy": result.strategy,
        "context_start": inspection.live,
        "messages": messages,
        "stats": result.stats.to_dict(),
        "steps": (s.to_dict() for s in each_step(result.steps)),
    }

"""`compaction-inspector report`: its arguments and what it does."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from compaction_inspector.core.inspection import BASELINE
from compaction_inspector.tui.cli.common import (
    Shared,
    Subparsers,
    UsageError,
    inspect,
    jobs_option,
    simulated,
    strategy_list,
    write_page,
)

NAME = "report"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "report",
        parents=[shared.source, shared.settings],
        help="one self-contained HTML file to share: the timeline, the transcript's own compactions, "
        "each strategy's steps and the transcript",
    )
    p.add_argument(
        "-o", "--output", metavar="OUT", help="the file to write (default FILE's name + -report.html)"
    )
    p.add_argument(
        "--strategy",
        default="all",
        type=partial(strategy_list, shared.catalogue),
        metavar="NAME[,NAME...]|all",
        help="whose steps it shows, the first's line first on the chart "
        f"({', '.join(shared.catalogue.strategies)})",
    )
    p.add_argument(
        "--compare",
        default=BASELINE,
        choices=sorted(simulated(shared.catalogue)),
        help="a policy the chart compares with (the strategy itself: its contrast)",
    )
    p.add_argument("--redact", action="store_true", help="mask file paths and secret-looking strings")
    p.add_argument("--max-chars", type=int, default=4000, metavar="N", help="cut each text at N characters")
    p.add_argument("--force", action="store_true", help="let the report replace an existing file")
    jobs_option(p, "its comparison's strategies are replayed in")


def run(args: argparse.Namespace) -> int:
    # the report's writer is imported when one is written, not at every start
    from compaction_inspector.core.reporting.html_report import ReportOptions, pieces

    if args.max_chars < 1:
        raise UsageError("--max-chars must be a whole number >= 1")
    inspection = inspect(args)
    out = Path(args.output) if args.output else Path(f"{Path(args.file).stem}-report.html")
    options = ReportOptions(args.strategy, args.compare, args.redact, args.max_chars, args.jobs)
    write_page(out, pieces(inspection, options), args.force, "-o", protect=args.file)
    return 0

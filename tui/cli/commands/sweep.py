"""`compaction-inspector sweep`: its arguments and what it does."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from compaction_inspector.core.sessions import find, transcripts_under
from compaction_inspector.core.strategies import (
    OptionError,
)
from compaction_inspector.core.sweeping.cluster import LOCAL, ClusterError
from compaction_inspector.core.text import say
from compaction_inspector.tui.cli.common import (
    STOPPED,
    Shared,
    Subparsers,
    UsageError,
    config_of,
    free_to_write,
    write_page,
)
from compaction_inspector.tui.cli.json_out import print_json
from compaction_inspector.tui.launch import places_given

if TYPE_CHECKING:
    from compaction_inspector.core.sweeping.sweep import Sweep

NAME = "sweep"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    p = sub.add_parser(
        "sweep",
        parents=[shared.settings, shared.as_json, shared.places],
        help="a strategy's settings over a grid, replayed on many sessions: per point the compactions, "
        "sessions over the window, peak pressure, cost; the points none beats on every count",
    )
    p.add_argument(
        "folders", nargs="*", help="where the sessions are (default: your own, as the list finds them)"
    )
    p.add_argument("--strategy", required=True, choices=shared.catalogue.replayed)
    p.add_argument(
        "--grid",
        required=True,
        metavar="KEY=FROM:TO:STEP[,...]",
        help="the strategy's numeric settings by their compaction.yaml keys, each range inclusive",
    )
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default the cores)")
    p.add_argument("--html", metavar="OUT", help="also write the sweep as one self-contained HTML page")
    p.add_argument("--force", action="store_true", help="let --html replace an existing file")
    p.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        metavar="ADDRESS",
        help="run the sessions on Ray (the [ray] extra): a cluster's address, or none to start one here "
        "with --jobs workers",
    )


def run(args: argparse.Namespace) -> int:
    # what only a sweep needs is imported when one runs, not at every start
    from compaction_inspector.core.sweeping.grid import Grid
    from compaction_inspector.core.sweeping.sweep import sweep

    if args.jobs < 1:
        raise UsageError("--jobs must be a whole number >= 1")
    config = config_of(args)[0]
    try:
        swept_grid = Grid.of(args.strategy, args.grid, config)
    except OptionError as exc:
        raise UsageError(f"--grid: {exc}") from exc
    if args.html:  # said before any session is read
        free_to_write(args.html, args.force, "--html")
    missing = [name for name in args.folders if not Path(name).exists()]
    if missing:
        raise UsageError(f"no such folder or file: {', '.join(missing)}")
    catalogue = args.catalogue
    places = places_given(catalogue, args)
    where = (
        transcripts_under(catalogue, args.folders)
        if args.folders
        else [f.path for f in find(catalogue, places)]
    )
    if not where:
        looked = ", ".join(args.folders) if args.folders else "; ".join(f"{a}: {r}" for a, r in places)
        raise UsageError(f"no sessions found ({looked})")
    shown = [0.0]

    def progress(done: int, of: int, left: float) -> None:
        if sys.stderr.isatty() and (time.monotonic() - shown[0] > 1 or done == of):
            shown[0] = time.monotonic()
            say(f"swept {done}/{of} sessions, about {left:,.0f} s left", sys.stderr)

    try:
        done = sweep(list(map(str, where)), swept_grid, config, args.jobs, args.ray, progress)
    except ClusterError as exc:
        raise UsageError(str(exc)) from exc
    if args.html:
        _write_sweep(args, done)
    if args.json:
        print_json(done.to_dict())
    else:
        from compaction_inspector.tui.cli.tables import print_sweep

        print_sweep(done)
    if done.stopped:  # a script can tell a sweep cut short from a whole one
        say(f"stopped: {done.sessions} of {len(where)} sessions swept", sys.stderr)
        return STOPPED
    return 0


def _write_sweep(args: argparse.Namespace, done: Sweep) -> None:
    """The sweep's HTML page, written atomically and never over a file unless --force."""
    from compaction_inspector.core.reporting.sweep_report import page

    settings = (
        "config",
        "preset",
        "tokenizer",
        "context_window",
        "reserved_output",
        "pressure",
        "overhead_tokens",
    )
    given = [
        a
        for name in settings
        if getattr(args, name) is not None
        for a in (f"--{name.replace('_', '-')}", str(getattr(args, name)))
    ]
    command = [
        "compaction-inspector",
        "sweep",
        *args.folders,
        "--strategy",
        args.strategy,
        "--grid",
        args.grid,
    ]
    write_page(Path(args.html), page(done, [*command, *given]), args.force, "--html")

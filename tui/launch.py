"""Open the app: `compaction-inspector [open] [FILE] [--follow] [--demo] [--config FILE] ...`."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import SAMPLE_WINDOW as SAMPLE_WINDOW_SOURCE
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.formats.reading import check_readable
from compaction_inspector.core.formats.task_folder import folder_of
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.sessions import FOLDER, find, roots
from compaction_inspector.core.text import say
from compaction_inspector.sample_sessions import path as sample_path

SAMPLE_WINDOW = Window(5000, 500)


def folder_dest(agent: Agent) -> str:
    """Where the parsed command line keeps the folder an agent's option names."""
    return agent.folder_option.replace("-", "_")


def places_given(catalogue: Catalogue, args: argparse.Namespace) -> list[tuple[str, Path]]:
    """Where each agent keeps its sessions: the folder its option names, else its own."""
    given = {name: getattr(args, folder_dest(agent), None) for name, agent in catalogue.by_format.items()}
    return roots(catalogue, given)


def run_app(args: argparse.Namespace, config: Config, warning: str | None) -> int:
    """Open the app with `compaction-inspector open`'s arguments and the config `tui.cli`
    made of them (`warning`: why a config file found was not used)."""
    note = None
    browse = None
    if args.file and Path(args.file).is_dir() and folder_of(Path(args.file)) is None:
        # a folder (not an agent's task folder, which is one session): its transcripts, to choose from
        browse = [(FOLDER, Path(args.file))]
    elif (
        not args.file and not args.sample and not args.demo
    ):  # the user's own sessions, where their agents keep them
        places = places_given(config.catalogue, args)
        if find(config.catalogue, places):
            browse = places
        else:
            looked = ", ".join(str(root) for _, root in places)
            note = f"No sessions found in {looked}: showing the bundled sample."
    if not args.file and browse is None and config.window_source is None:
        # The sample is small: a window it fills past the thresholds gives every strategy work.
        size, reserve = SAMPLE_WINDOW.context_window, SAMPLE_WINDOW.reserved_output
        sample = config.with_window(SAMPLE_WINDOW_SOURCE, size, reserve)
        config = replace(sample, preset=None)
        shown = (
            "Bundled sample, shown in a 5,000-token window so every strategy has work to do (w/W to resize)."
        )
        note = f"{note} {shown}" if note else shown
    if args.file and not args.follow and browse is None:  # a file that cannot be opened is said at once
        try:
            check_readable(args.file)
        except LoadError as exc:
            say(f"compaction-inspector: {args.file}: {exc}")
            return 2
    from compaction_inspector.tui.app import InspectorApp

    target = args.file if args.file and browse is None else str(sample_path())
    app = InspectorApp(
        target,
        config,
        request=args.request,
        follow=args.follow,
        demo=args.demo,
        config_warning=warning,
        note=note,
        browse=browse,
    )
    app.run()
    return app.return_code or 0

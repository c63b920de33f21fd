"""The command line whole: each command's arguments and handler, and errors said as
exit codes (`tui.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from compaction_inspector.core.agents import registry
from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.installed import ours
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.tui import heap
from compaction_inspector.tui.cli.commands import EVERY
from compaction_inspector.tui.cli.common import Command, Shared, UsageError, agents_named, fail

COMMANDS = tuple(command.NAME for command in EVERY)
HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {command.NAME: command.run for command in EVERY}


class _Version(argparse.Action):
    """`--version`, looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {ours()}")
        parser.exit()


def build_parser(catalogue: Catalogue | None = None) -> argparse.ArgumentParser:
    """The command line over the agents of `catalogue` (default: the registry's), which
    each handler reads as `args.catalogue`: each command adds its own arguments."""
    catalogue = catalogue if catalogue is not None else registry.CATALOGUE
    parser = argparse.ArgumentParser(
        prog="compaction-inspector",
        description="See how LLM agent transcripts are compacted. With no command, open FILE "
        f"in the app; without FILE, the list of your own {agents_named(catalogue)} sessions (the bundled "
        "sample when there are none). `open FILE` reaches a file named like a command. "
        "`open` also takes --sample (the bundled sample), --demo (a tour of it to present) and "
        "--follow (tail a session still being written).",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show program's version number and exit")
    parser.set_defaults(catalogue=catalogue)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Command)
    shared = Shared.of(catalogue)
    for command in EVERY:
        command.arguments(sub, shared)
    return parser


def run(argv: Sequence[str], catalogue: Catalogue | None = None) -> int:
    """The command `argv` names, over the agents of `catalogue` (default: the registry's)."""
    heap.configure()
    argv = list(argv)
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help", "--version"):
        argv.insert(0, "open")
    args = build_parser(catalogue).parse_args(argv)
    args.argv = tuple(argv[1:])  # as given: the status line keeps its answer under it
    try:
        return HANDLERS[args.command](args)
    except LoadError as exc:  # the file a command names, where it names one
        named = getattr(args, "file", None)
        return fail(f"{named}: {exc}" if named else str(exc))
    except (UsageError, SummarizerError) as exc:
        return fail(str(exc))

"""`compaction-inspector apply`: its arguments and what it does."""

from __future__ import annotations

import argparse
import sys

from compaction_inspector.core import apply as applying
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.files import Changed
from compaction_inspector.core.strategies import (
    OptionError,
)
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.text import say, visible
from compaction_inspector.tui.cli.common import Shared, Subparsers, fail, layers_of, waiting

NAME = "apply"


def arguments(sub: Subparsers, shared: Shared) -> None:
    """Its arguments, added to the command line's."""
    writable = [a for a in shared.catalogue.agents if a.settings_keys]
    p = sub.add_parser(
        "apply",
        help="write a tuned setting into the agent's own settings file: the diff first, --write to write it "
        "(the file as it was kept beside it)",
    )
    p.add_argument(
        "agent",
        choices=[a.format for a in shared.catalogue.agents],
        help="the agent whose settings take it, written to: "
        + "; ".join(f"{a.format}: {layers_of(a)}" for a in writable),
    )
    p.add_argument(
        "setting",
        metavar="OPTION=VALUE",
        help="its strategy's option and value: "
        + "; ".join(f"{a.format}: {', '.join(a.settings_keys)}" for a in writable),
    )
    p.add_argument(
        "--layer",
        choices=sorted({layer for a in writable for layer in a.settings_layers}),
        help="which of the agent's settings files takes it (default its first, as listed above)",
    )
    p.add_argument("--write", action="store_true", help="write it (else only the diff is printed)")
    p.add_argument("--force", action="store_true", help="replace a value the file already sets")


def run(args: argparse.Namespace) -> int:
    """The diff a tuned setting makes to the agent's settings file, written with --write."""
    agent = args.catalogue.by_format[args.agent]
    if not agent.settings_keys:
        return fail(f"apply: {agent.name}'s settings are not written here: {agent.not_written}")
    option, _, given = args.setting.partition("=")
    option = option.strip().replace("-", "_")
    if not given.strip().isdigit():
        return fail(f"apply: {args.setting!r} is not OPTION=VALUE with a whole number")
    value = int(given)
    try:
        strategy = args.catalogue.strategy(agent.format)
        strategy.checked(with_values(strategy.default_options(), {option: value}))
        change = applying.planned(agent, option, value, args.layer)
    except (OptionError, TypeError, applying.ApplyError) as exc:
        return fail(f"apply: {exc}")
    written = agent.setting(change.after, change.key) or str(value)  # as the file takes it
    if change.before == change.after:
        say(f"{change.path} sets {change.key} to {written} already: nothing to write", sys.stdout)
        return 0
    say(visible(change.diff), sys.stdout)
    if not args.write:
        say("(not written: --write writes it)", sys.stdout)
        return 0
    try:
        backup = applying.write(change, args.force, waiting=waiting(change.path))
    except Changed as exc:
        return _changed(exc, agent, option, value, args.layer)
    except (applying.ApplyError, OSError) as exc:
        return fail(str(exc))
    kept = f" (the file as it was: {backup})" if backup is not None else ""
    say(f"wrote {change.key} = {written} to {change.path}{kept}", sys.stdout)
    return 0


def _changed(exc: Changed, agent: Agent, option: str, value: int, layer: str | None) -> int:
    """The file changed between the diff and the write: nothing written, the diff now."""
    try:
        now = applying.planned(agent, option, value, layer)
    except applying.ApplyError as again:
        return fail(f"{exc.strerror}; {again}")
    diff = visible(now.diff) if now.before != now.after else f"(it now sets {now.key} to {value} already)\n"
    say(f"{exc.strerror}. The change as the file is now:\n{diff}(run it again to write this)", sys.stderr)
    return 1

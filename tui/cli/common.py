"""What the commands share: the options several take, the configuration they run under,
how they fail, how they print JSON and where they may write."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeAlias

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import PRESSURES, Config, ConfigError
from compaction_inspector.core.config_file import load as load_config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.files import same_file, write_atomic
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.measuring.tokens import TOKENIZER_CHOICES
from compaction_inspector.core.model import Session, immutable
from compaction_inspector.core.replaying.checkpoint import Trigger, triggers
from compaction_inspector.core.replaying.simulation import Simulation
from compaction_inspector.core.statusline import StatusLine
from compaction_inspector.core.strategies import (
    OptionError,
    hysteresis,
)
from compaction_inspector.core.strategies.declaration import Strategy, with_values
from compaction_inspector.core.text import say
from compaction_inspector.tui import heap
from compaction_inspector.tui.launch import folder_dest


class UsageError(Exception):
    """Bad options: reported on stderr with exit code 2."""


class Command(argparse.ArgumentParser):
    """A command's parser: a flag is taken only as spelled (`--keep-recent` never means
    `--keep-recent-turns`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})


def source_options(file_nargs: str | None = None) -> Command:
    """The options naming what to read, shared by every command."""
    p = Command(add_help=False)
    if file_nargs is None:
        p.add_argument("file", help="transcript to read (never written)")
    else:
        p.add_argument("file", nargs=file_nargs, help="transcript to open (never written)")
    p.add_argument(
        "--request",
        type=int,
        default=None,
        metavar="N",
        help="which body of a proxy log, from 1 (default the largest: the main conversation's latest)",
    )
    return p


def settings_options(catalogue: Catalogue) -> Command:
    """The options every command that counts or compacts shares."""
    p = Command(add_help=False)
    p.add_argument("--config", default=None, help="YAML settings (default ./compaction.yaml)")
    p.add_argument("--preset", choices=sorted(catalogue.presets), default=None)
    p.add_argument(
        "--tokenizer", choices=TOKENIZER_CHOICES, default=None, help="auto (default): the session's model's"
    )
    p.add_argument("--context-window", type=int, default=None)
    p.add_argument("--reserved-output", type=int, default=None)
    p.add_argument(
        "--pressure",
        choices=PRESSURES,
        default=None,
        help="context: what the agent sent, measured from the usage the transcript reports "
        "(default); messages: the transcript's messages only",
    )
    p.add_argument(
        "--overhead-tokens",
        type=int,
        default=None,
        help="system prompt and tools assumed when the transcript reports no usage",
    )
    return p


def jobs_option(p: argparse.ArgumentParser, work: str) -> None:
    """`--jobs N`: how many processes `work` is spread over, forked from this one."""
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=os.cpu_count() or 1,
        metavar="N",
        help=f"processes {work}, forked from this one (default the cores)",
    )


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("--jobs must be a whole number >= 1")
    return int(value)


def json_option() -> Command:
    p = Command(add_help=False)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def places_options(catalogue: Catalogue) -> Command:
    """Where the agents keep their sessions, for the commands that list them."""
    p = Command(add_help=False)
    for agent in catalogue.agents:
        p.add_argument(
            f"--{agent.folder_option}", dest=folder_dest(agent), default=None, help=agent.folder_help
        )
    return p


def add_policy(p: argparse.ArgumentParser, catalogue: Catalogue, names: Iterable[str] | None = None) -> None:
    """The options of the strategies `names` (default: all) as flags, one group each; a
    family's presets share the family's."""
    added: set[str] = set()
    for strategy in (catalogue.strategies[n] for n in (catalogue.strategies if names is None else names)):
        _add_aliases(p, strategy)
        if strategy.flag_key in added:
            continue
        added.add(strategy.flag_key)
        title = (
            f"{strategy.family} ({family_of(catalogue, strategy.family)})"
            if strategy.family
            else strategy.name
        )
        group = p.add_argument_group(title)
        for s in strategy.settings:
            if s.flag is None:
                continue
            dest = f"{strategy.flag_key}.{s.name}"
            text = s.option.help.replace("%", "%%")  # argparse formats help with %
            if s.option.kind == "bool":  # the flag turns the default the help describes the other way
                text = f"{'turn off' if s.default else 'turn on'}: {text}"
                group.add_argument(s.flag, dest=dest, action="store_const", const=not s.default, help=text)
            else:
                group.add_argument(s.flag, dest=dest, choices=s.option.choices or None, help=text)


def _add_aliases(p: argparse.ArgumentParser, strategy: Strategy[Any]) -> None:
    """A strategy's own flags for its family's options, in its agent's words."""
    if not strategy.aliases:
        return
    group = p.add_argument_group(f"{strategy.name} (its own names)")
    by_name = {s.name: s for s in strategy.settings}
    for option, flag in strategy.aliases.items():
        setting = by_name[option]
        text = f"{strategy.name}: {setting.option.help} ({setting.flag}, for {strategy.name} only)"
        group.add_argument(
            flag, dest=f"{strategy.name}.alias.{option}", metavar="N", help=text.replace("%", "%%")
        )


def family_of(catalogue: Catalogue, family: str) -> str:
    """The presets of a family, in words."""
    return ", ".join(n for n, s in catalogue.strategies.items() if s.family == family)


def agents_named(catalogue: Catalogue) -> str:
    """The registered agents' names in a sentence: "A, B and C"."""
    names = [a.name for a in catalogue.agents]
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def simulated(catalogue: Catalogue) -> tuple[str, ...]:
    return (BASELINE, *catalogue.replayed)


def config_of(args: argparse.Namespace, lenient: bool = False) -> tuple[Config, str | None]:
    """The config the command runs under: the file's, then the command line's settings and
    strategy flags on top. `lenient`: a config file found but not named that cannot be
    used gives the defaults and the reason, not an error (the app opens regardless)."""
    warning = None
    try:
        base = load_config(args.catalogue, args.config)
    except ConfigError as exc:
        if args.config or not lenient:  # a file named on the command line must be right
            raise UsageError(str(exc)) from exc
        base, warning = Config(args.catalogue), f"{exc} — using the defaults"
    try:
        config = base.overridden(
            preset=args.preset,
            tokenizer=args.tokenizer,
            context_window=args.context_window,
            reserved_output=args.reserved_output,
            pressure=args.pressure,
            overhead_tokens=args.overhead_tokens,
        )
        if "strategy" in args:
            config = with_flags(config, args)
    except (ConfigError, OptionError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if config.keys and getattr(args, "command", None) == "open":  # the app's keys, checked where it runs
        from compaction_inspector.tui.session.keymap import check_keymap

        try:
            check_keymap(dict(config.keys))
        except ValueError as exc:
            if args.config or not lenient:
                raise UsageError(f"{config.source}: {exc}") from exc
            config = dataclasses.replace(config, keys={})
            warning = f"{config.source}: {exc} — keys left as they are"
    return config, warning


def with_flags(config: Config, args: argparse.Namespace) -> Config:
    """The config with every strategy option given on the command line. An option of a
    strategy the command does not run is refused, naming whose it is."""
    used = {args.strategy, getattr(args, "compare", None)}
    if getattr(args, "checkpoints", False):
        used.add(hysteresis.NAME)  # its lowest threshold places checkpoints
    catalogue = config.catalogue
    for name, strategy in catalogue.strategies.items():
        values: dict[str, Any] = {}
        by_alias = {s.name: s for s in strategy.settings if s.name in strategy.aliases}
        for option, s in by_alias.items():
            given = getattr(args, f"{name}.alias.{option}", None)
            if given is None:
                continue
            if name not in used:
                raise UsageError(f"{strategy.aliases[option]} is an option of {name}, not of {args.strategy}")
            try:
                values[option] = s.parse(given)
            except OptionError as exc:
                raise UsageError(f"{strategy.aliases[option]} must be {exc}") from exc
        for s in strategy.settings:
            given = getattr(args, f"{strategy.flag_key}.{s.name}", None)
            if given is None:
                continue
            if name not in used:
                if strategy.family and any(
                    catalogue.strategies[u].family == strategy.family for u in used if u
                ):
                    continue  # a family's flag sets the preset the command runs
                whose = (
                    f"the {strategy.family} family ({family_of(catalogue, strategy.family)})"
                    if strategy.family
                    else name
                )
                raise UsageError(f"{s.flag} is an option of {whose}, not of {args.strategy}")
            try:
                values[s.name] = given if isinstance(given, bool) else s.parse(given)
            except OptionError as exc:
                raise UsageError(f"{s.flag} must be {exc}") from exc
        try:
            config = config.with_options(name, with_values(config.options(name), values))
        except OptionError as exc:
            raise UsageError(str(exc)) from exc
    return config


def inspect(args: argparse.Namespace) -> Inspection:
    """The file the command names, counted (from the persistent cache when it was counted
    before) and fitted, under the command line's config."""
    inspection = Inspection.open(args.file, config_of(args)[0], args.request)
    if inspection.counter.warning:
        say(f"warning: {inspection.counter.warning}")
    heap.settle()
    return inspection


STOPPED = 130  # a sweep cut short by Ctrl-C (128 + SIGINT, as a shell says it)


def port(value: str) -> int:
    """A TCP port: 1 to 65535."""
    try:
        port = int(value)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1 to 65535)")
    return port


def strategy_list(catalogue: Catalogue, value: str) -> tuple[str, ...]:
    """`all`, or the catalogue's strategies' names separated by commas, each once."""
    if value == "all":
        return tuple(catalogue.strategies)
    names = tuple(dict.fromkeys(n.strip() for n in value.split(",")))
    unknown = [n for n in names if n not in catalogue.strategies]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{', '.join(map(repr, unknown)) or 'nothing'}: not a strategy "
            f"(choose from {', '.join(catalogue.strategies)}, or all)"
        )
    return names


def replayed_list(catalogue: Catalogue, value: str) -> tuple[str, ...]:
    """`strategy_list`, of the strategies a replay suits (PTL retry runs only when a
    request is refused, so a replay of it means nothing)."""
    names = strategy_list(catalogue, value)
    if value == "all":
        return catalogue.replayed
    refused = [n for n in names if n not in catalogue.replayed]
    if refused:
        raise argparse.ArgumentTypeError(
            f"{', '.join(refused)}: runs only when a request is refused, so it has no replay to compare"
        )
    return names


def write_page(
    out: Path, text: str | Iterable[str], force: bool, flag: str, protect: str | None = None
) -> None:
    """An HTML page written atomically, never over a file unless --force (nor over
    `protect`, the transcript); what was written is said on stderr."""
    try:
        write_atomic(out, text, protect=protect, overwrite=force)
    except FileExistsError as exc:
        raise UsageError(f"{out} exists: choose another name ({flag}), or pass --force") from exc
    except OSError as exc:
        raise UsageError(str(exc)) from exc
    say(f"wrote {out}: open it in a browser (it needs no network)")


def status_agent_of(catalogue: Catalogue) -> tuple[Agent, StatusLine]:
    """The agent that runs a status line command, and its status line."""
    return next((a, a.status_line) for a in catalogue.agents if a.status_line is not None)


def layers_of(agent: Agent) -> str:
    """Each settings file `apply` may write for `agent`, by layer."""
    return ", ".join(f"{layer} {where}" for layer, where in agent.settings_layers.items())


def waiting(path: Path) -> Callable[[], None]:
    return lambda: say(f"waiting for another write to {path} to finish", sys.stderr)


def fail(message: str) -> int:
    """Bad input or options: said on stderr, exit code 2."""
    say(f"compaction-inspector: {message}")
    return 2


def free_to_write(out: str | Path, force: bool, flag: str, protect: str | None = None) -> None:
    """OwnSetting before any work is done: `out` is the input, or exists and --force was not given
    (the write itself refuses them again, atomically)."""
    if not str(out):
        raise UsageError("no file name given")
    target = Path(out)
    if protect is not None and target.exists() and same_file(target, protect):
        raise UsageError(f"refusing to overwrite the input file {protect}")
    if target.exists() and not force:
        raise UsageError(f"{out} exists: choose another name ({flag}), or pass --force")


def checkpoint_triggers(session: Session, sim: Simulation, config: Config, every: int) -> list[Trigger]:
    """Checkpoints every `every` rounds, before destructive calls, at the simulated
    compactions and where pressure first crosses the lowest threshold."""
    if every < 1:
        raise UsageError("--checkpoint-every must be a whole number >= 1")
    low = config.options(hysteresis.NAME).thresholds[0] / 100
    crossings = [
        b.message_end
        for a, b in zip(sim.points, sim.points[1:], strict=False)
        if a.pressure_before < low <= b.pressure_before
    ]
    events = [p.message_end for p in sim.points if p.event]
    return triggers(session.messages, every, events, crossings)


# the command line's commands, each added by its module
Subparsers: TypeAlias = "argparse._SubParsersAction[Command]"


@immutable()
class Shared:
    """What the commands' arguments share: the catalogue, and the options several take,
    each made once."""

    catalogue: Catalogue
    settings: Command
    source: Command
    as_json: Command
    places: Command

    @classmethod
    def of(cls, catalogue: Catalogue) -> Shared:
        return cls(
            catalogue, settings_options(catalogue), source_options(), json_option(), places_options(catalogue)
        )

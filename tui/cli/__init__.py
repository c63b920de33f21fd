"""The `compaction-inspector` command: open the app, or run the core from a shell.

    compaction-inspector [open] [FILE]          open the app (your sessions' list without FILE)
    compaction-inspector analyze FILE [--json]  rounds, volleys, tokens, pressure
    compaction-inspector compact FILE ...       run one strategy and show its steps
    compaction-inspector simulate FILE ...      replay the session under a policy
    compaction-inspector checkpoint FILE ...    append a checkpoint, or detect truncation
    compaction-inspector compactions FILE       the transcript's own compactions, measured
    compaction-inspector report FILE [-o OUT]   one self-contained HTML file to share
    compaction-inspector serve [FILE]           the app in a browser (the serve extra)
    compaction-inspector sessions [--json]      your agents' sessions

Exit codes: 0 success, 2 unreadable input or bad options, 3 nothing safe left to
compact, 4 truncation likely. Only the app imports Textual.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core import apply as applying
from compaction_inspector.core import statusline
from compaction_inspector.core.agents import registry
from compaction_inspector.core.analysis import message_fields
from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.compare import SORTS, compare
from compaction_inspector.core.config import PRESSURES, Config, ConfigError
from compaction_inspector.core.config import load as load_config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.files import Changed, same_file, write_atomic
from compaction_inspector.core.formats import LoadError, check_readable
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.measuring.tokens import TOKENIZER_CHOICES
from compaction_inspector.core.model import Session
from compaction_inspector.core.replaying.checkpoint import Trigger, append_checkpoint, detect, triggers
from compaction_inspector.core.replaying.simulate import Simulation
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.core.reporting.diff import origin
from compaction_inspector.core.reporting.export import marked, serialize
from compaction_inspector.core.reporting.html_report import ReportOptions, pieces
from compaction_inspector.core.reporting.sweep_report import page
from compaction_inspector.core.sessions import Index, find, transcripts_under
from compaction_inspector.core.statusline import StatusLine
from compaction_inspector.core.strategies import (
    DEFAULT,
    CompactionResult,
    OptionError,
    Stats,
    each_step,
    hysteresis,
)
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.sweeping.cluster import LOCAL, ClusterError
from compaction_inspector.core.sweeping.sweep import Grid, Sweep, sweep
from compaction_inspector.core.text import one_line, say, visible
from compaction_inspector.tui import heap
from compaction_inspector.tui.launch import folder_dest, places_given

COMMANDS = (
    "open",
    "analyze",
    "compact",
    "simulate",
    "checkpoint",
    "compactions",
    "report",
    "compare",
    "sweep",
    "serve",
    "sessions",
    "statusline",
    "watch",
    "apply",
)


class UsageError(Exception):
    """Bad options: reported on stderr with exit code 2."""


class _Command(argparse.ArgumentParser):
    """A command's parser: a flag is taken only as spelled (`--keep-recent` never means
    `--keep-recent-turns`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})


def _source(file_nargs: str | None = None) -> _Command:
    """The options naming what to read, shared by every command."""
    p = _Command(add_help=False)
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


def _settings(catalogue: Catalogue) -> _Command:
    """The options every command that counts or compacts shares."""
    p = _Command(add_help=False)
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


def _json() -> _Command:
    p = _Command(add_help=False)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _places(catalogue: Catalogue) -> _Command:
    """Where the agents keep their sessions, for the commands that list them."""
    p = _Command(add_help=False)
    for agent in catalogue.agents:
        p.add_argument(
            f"--{agent.folder_option}", dest=folder_dest(agent), default=None, help=agent.folder_help
        )
    return p


def _add_policy(p: argparse.ArgumentParser, catalogue: Catalogue, names: Iterable[str] | None = None) -> None:
    """The options of the strategies `names` (default: all) as flags, one group each; a
    family's presets share the family's."""
    added: set[str] = set()
    for strategy in (catalogue.strategies[n] for n in (catalogue.strategies if names is None else names)):
        if strategy.flag_key in added:
            continue
        added.add(strategy.flag_key)
        title = (
            f"{strategy.family} ({_family(catalogue, strategy.family)})" if strategy.family else strategy.name
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


def _family(catalogue: Catalogue, family: str) -> str:
    """The presets of a family, in words."""
    return ", ".join(n for n, s in catalogue.strategies.items() if s.family == family)


def _agents_named(catalogue: Catalogue) -> str:
    """The registered agents' names in a sentence: "A, B and C"."""
    names = [a.name for a in catalogue.agents]
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def build_parser(catalogue: Catalogue | None = None) -> argparse.ArgumentParser:
    """The command line over the agents of `catalogue` (default: the registry's), which
    each handler reads as `args.catalogue`."""
    catalogue = catalogue if catalogue is not None else registry.CATALOGUE
    status_agent, status_line = _status_agent(catalogue)
    parser = argparse.ArgumentParser(
        prog="compaction-inspector",
        description="See how LLM agent transcripts are compacted. With no command, open FILE "
        f"in the app; without FILE, the list of your own {_agents_named(catalogue)} sessions (the bundled "
        "sample when there are none). `open FILE` reaches a file named like a command. "
        "`open` also takes --sample (the bundled sample), --demo (a tour of it to present) and "
        "--follow (tail a session still being written).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('compaction-inspector')}")
    parser.set_defaults(catalogue=catalogue)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Command)
    settings, source, as_json, places = _settings(catalogue), _source(), _json(), _places(catalogue)
    p = sub.add_parser(
        "open", parents=[_source("?"), settings, places], help="open the app (the default command)"
    )
    p.add_argument(
        "--follow", action="store_true", help="tail a session file still being written (any JSONL transcript)"
    )
    p.add_argument("--demo", action="store_true", help="walk the sample through every strategy")
    p.add_argument("--sample", action="store_true", help="open the bundled sample, not your own sessions")
    p = sub.add_parser(
        "analyze",
        parents=[source, settings, as_json],
        help="rounds, volleys, tokens and pressure of a transcript",
    )
    p.add_argument(
        "--all-volleys",
        action="store_true",
        help="list every volley (by default at most 40: the first and last 20; --json holds them all)",
    )
    p = sub.add_parser(
        "compact", parents=[source, settings, as_json], help="run one strategy and show each step"
    )
    p.add_argument("--strategy", required=True, choices=sorted(catalogue.strategies))
    _add_policy(p, catalogue)
    p.add_argument("--write", metavar="OUT", help="save the compacted session to a new file")
    p.add_argument("--force", action="store_true", help="let --write replace an existing file")
    p.add_argument(
        "--all-steps",
        action="store_true",
        help="show every step (by default at most 40: the first and last 20; --json holds them all)",
    )
    p = sub.add_parser(
        "simulate",
        parents=[source, settings, as_json],
        help="replay the session round by round under a policy",
    )
    p.add_argument("--strategy", default=DEFAULT, choices=sorted(_simulated(catalogue)))
    p.add_argument(
        "--compare", choices=sorted(_simulated(catalogue)), help="a second policy on the same chart"
    )
    _add_policy(p, catalogue, catalogue.replayed)  # the flags of a strategy it replays (not PTL retry's)
    p.add_argument(
        "--all-rounds",
        action="store_true",
        help="the table shows every round (by default at most 40: the ends, the peak and each compaction)",
    )
    p.add_argument("--checkpoints", action="store_true", help="show where checkpoints would be written")
    p.add_argument("--checkpoint-every", type=int, default=10, help="API rounds between checkpoints")
    p = sub.add_parser(
        "checkpoint",
        parents=[source, as_json],
        help="append a checkpoint to memory/YYYY-MM-DD.md, or detect truncation",
    )
    p.add_argument("--memory-dir", default="memory")
    p.add_argument("--at", type=int, help="message index to checkpoint (default the last)")
    p.add_argument("--detect", action="store_true", help="compare with the last checkpoint of this session")
    sub.add_parser(
        "compactions",
        parents=[source, settings, as_json],
        help="the transcript's own compactions: measured before and after, predicted, what survived",
    )
    p = sub.add_parser(
        "report",
        parents=[source, settings],
        help="one self-contained HTML file to share: the timeline, the transcript's own compactions, "
        "each strategy's steps and the transcript",
    )
    p.add_argument(
        "-o", "--output", metavar="OUT", help="the file to write (default FILE's name + -report.html)"
    )
    p.add_argument(
        "--strategy",
        default="all",
        type=partial(_strategy_list, catalogue),
        metavar="NAME[,NAME...]|all",
        help=f"whose steps it shows, the first's line first on the chart ({', '.join(catalogue.strategies)})",
    )
    p.add_argument(
        "--compare",
        default=BASELINE,
        choices=sorted(_simulated(catalogue)),
        help="a policy the chart compares with (the strategy itself: its contrast)",
    )
    p.add_argument("--redact", action="store_true", help="mask file paths and secret-looking strings")
    p.add_argument("--max-chars", type=int, default=4000, metavar="N", help="cut each text at N characters")
    p.add_argument("--force", action="store_true", help="let the report replace an existing file")
    p = sub.add_parser(
        "compare",
        parents=[source, settings, as_json],
        help="every strategy replayed on the session: compactions, pressure, cache re-written, cost "
        "against what it really cost, what it kept",
    )
    p.add_argument(
        "--strategies",
        default=catalogue.replayed,
        type=partial(_replayed_list, catalogue),
        metavar="NAME[,NAME...]|all",
        help="which (default all a replay suits: every one but ptl-retry)",
    )
    p.add_argument(
        "--sort",
        choices=tuple(SORTS),
        default="cost",
        help="the column the rows are ordered by (default cost)",
    )
    p.add_argument("--descending", action="store_true", help="largest first")
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes the strategies are replayed in, forked from this one (default the cores)",
    )
    p = sub.add_parser(
        "sweep",
        parents=[settings, as_json, places],
        help="a strategy's settings over a grid, replayed on many sessions: per point the compactions, "
        "sessions over the window, peak pressure, cost; the points none beats on every count",
    )
    p.add_argument(
        "folders", nargs="*", help="where the sessions are (default: your own, as the list finds them)"
    )
    p.add_argument("--strategy", required=True, choices=catalogue.replayed)
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
    p = sub.add_parser(
        "serve",
        help="the app in a browser (textual-serve): on FILE or the bundled sample, never your session list",
    )
    p.add_argument("file", nargs="?", help="transcript to open (default the bundled sample)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default this machine only)")
    p.add_argument("--port", type=_port, default=8000, help="port to listen on, 1-65535 (default 8000)")
    p = sub.add_parser(
        "sessions", parents=[places], help=f"your {_agents_named(catalogue)} sessions, newest first"
    )
    p.add_argument("--json", action="store_true", help="print a JSON list: an object a session, titles whole")
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes the sessions not seen before are read in, forked from this one (default the cores)",
    )
    writable = [a for a in catalogue.agents if a.settings_keys]
    p = sub.add_parser(
        "apply",
        help="write a tuned setting into the agent's own settings file: the diff first, --write to write it "
        "(the file as it was kept beside it)",
    )
    p.add_argument(
        "agent",
        choices=[a.format for a in writable],
        help="the agent whose settings take it, written to: "
        + "; ".join(f"{a.format}: {_layers(a)}" for a in writable),
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
    p = sub.add_parser(
        "statusline",
        parents=[settings],
        help=f"{status_agent.name}'s status line: its context against its own compaction point, how far "
        f"that is, compactions and cost (reads the JSON {status_agent.name} passes on stdin)",
    )
    p.add_argument(
        "--format",
        default=statusline.DEFAULT_FORMAT,
        help="the line's template; fields: {ctx} {point} {left} {requests} {compactions} {cost} {model}",
    )
    p.add_argument("--color", action="store_true", help="colour the line by how near the point it is (ANSI)")
    p.add_argument(
        "--setup",
        action="store_true",
        help=f"print the statusLine setting for {status_agent.name}'s {status_line.settings_path().name}",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="with --setup: add it to your settings.json (a backup is kept beside it)",
    )
    p.add_argument("--force", action="store_true", help="with --write: replace a statusLine already there")
    p = sub.add_parser(
        "watch",
        parents=[settings, places],
        help="follow a session while its agent works (any agent): the gauge, its own count against its "
        "point, a notice before it may compact",
    )
    p.add_argument("file", nargs="?", help="the session (default the newest in your agents' folders)")
    p.add_argument(
        "--once", action="store_true", help="print the status line once and exit (for tmux and shells)"
    )
    return parser


def _simulated(catalogue: Catalogue) -> tuple[str, ...]:
    return (BASELINE, *catalogue.replayed)


def _config(args: argparse.Namespace, lenient: bool = False) -> tuple[Config, str | None]:
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
            config = _with_flags(config, args)
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


def _with_flags(config: Config, args: argparse.Namespace) -> Config:
    """The config with every strategy option given on the command line. An option of a
    strategy the command does not run is refused, naming whose it is."""
    used = {args.strategy, getattr(args, "compare", None)}
    if getattr(args, "checkpoints", False):
        used.add(hysteresis.NAME)  # its lowest threshold places checkpoints
    catalogue = config.catalogue
    for name, strategy in catalogue.strategies.items():
        values: dict[str, Any] = {}
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
                    f"the {strategy.family} family ({_family(catalogue, strategy.family)})"
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


def _inspect(args: argparse.Namespace) -> Inspection:
    """The file the command names, counted (from the persistent cache when it was counted
    before) and fitted, under the command line's config."""
    inspection = Inspection.open(args.file, _config(args)[0], args.request)
    if inspection.counter.warning:
        say(f"warning: {inspection.counter.warning}")
    heap.settle()
    return inspection


def cmd_analyze(args: argparse.Namespace) -> int:
    result = _inspect(args).analysis()
    if args.json:
        _print_json(result.to_dict())
    else:
        from compaction_inspector.tui.cli.report import print_analysis

        print_analysis(result, all_volleys=args.all_volleys)
    return 0


def compaction_json(inspection: Inspection, result: CompactionResult[Stats]) -> dict[str, Any]:
    """The result as JSON: its messages by their index in the session, and each step's
    diff by positions in the request, which is the session's messages from its live start on.
    The messages and steps are made as they are written (`_print_json`), never all at once."""
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


def _free_to_write(out: str | Path, force: bool, flag: str, protect: str | None = None) -> None:
    """OwnSetting before any work is done: `out` is the input, or exists and --force was not given
    (the write itself refuses them again, atomically)."""
    if not str(out):
        raise UsageError("no file name given")
    target = Path(out)
    if protect is not None and target.exists() and same_file(target, protect):
        raise UsageError(f"refusing to overwrite the input file {protect}")
    if target.exists() and not force:
        raise UsageError(f"{out} exists: choose another name ({flag}), or pass --force")


def cmd_compact(args: argparse.Namespace) -> int:
    if args.write is not None:
        _free_to_write(args.write, args.force, "--write", protect=args.file)
    inspection = _inspect(args)
    session, live = inspection.session, inspection.live
    result = inspection.run(args.strategy)  # what the agent sends: after its own last compaction
    if args.json:
        _print_json(compaction_json(inspection, result))
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


def cmd_simulate(args: argparse.Namespace) -> int:
    inspection = _inspect(args)
    policies = [inspection.policy(args.strategy)]
    if args.compare:
        policies.append(inspection.policy(args.compare, against=args.strategy))
    made = [inspection.priced(p) for p in policies]
    sims, costs = [s for s, _ in made], [c for _, c in made]
    points = (
        checkpoint_triggers(inspection.session, sims[0], inspection.config, args.checkpoint_every)
        if args.checkpoints
        else None
    )
    if args.json:
        # each point made as it is written (`_print_json`), never all at once
        out: dict[str, Any] = {
            "simulations": [
                {**s.to_dict(streamed=True), "cost": c.to_dict()} for s, c in zip(sims, costs, strict=True)
            ],
            **sims[0].to_dict(streamed=True),
            "cost": costs[0].to_dict(),
            "real_cost": inspection.real_cost.to_dict(),
        }
        if points is not None:
            out["checkpoints"] = [t.to_dict() for t in points]
        _print_json(out)
    else:
        from compaction_inspector.tui.cli.report import print_simulation

        print_simulation(sims, all_rounds=args.all_rounds, costs=costs, real=inspection.real_cost)
        if points is not None:
            say(f"checkpoints ({len(points)}):", sys.stdout)
            for t in points:
                say(f"  before message #{t.index}: {t.reason}", sys.stdout)
    return 0


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


def cmd_checkpoint(args: argparse.Namespace) -> int:
    session = args.catalogue.formats.load(args.file, request=args.request)
    if args.detect:
        try:
            found = detect(session, args.memory_dir)
        except OSError as exc:
            raise UsageError(
                f"cannot read the checkpoints in {args.memory_dir}: {exc.strerror or exc}"
            ) from exc
        if args.json:
            _print_json(
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
        _print_json(
            {"path": str(where), "heading": checkpoint.heading, "message_count": checkpoint.message_count}
        )
    else:
        say(f"appended {checkpoint.heading!r} to {where}", sys.stdout)
    return 0


# JSON escapes C0 controls itself; these it would leave raw: C1 controls (U+009B is a CSI
# to some terminals), bidi overrides, and lone surrogates (which UTF-8 cannot carry)
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ud800-\udfff]")


STOPPED = 130  # a sweep cut short by Ctrl-C (128 + SIGINT, as a shell says it)
JSON_BATCH = 1 << 20  # characters of encoded JSON escaped and written together
JSON_SPLIT_DEPTH = 2  # containers this shallow are written member by member


def _print_json(value: Any) -> None:
    """`value` as JSON on stdout, laid out as `json.dumps(indent=2)` lays it out, every
    character a terminal could obey written as its `\\uXXXX` escape: the same JSON to a
    parser, inert on a screen."""
    # written as it is encoded, never whole: a large session's JSON is tens of megabytes;
    # an escape never spans pieces, as a piece always ends outside a string
    escaped = lambda m: f"\\u{ord(m.group()):04x}"  # noqa: E731
    batch: list[str] = []
    size = 0
    for piece in _json_pieces(value):
        batch.append(piece)
        size += len(piece)
        if size >= JSON_BATCH:
            sys.stdout.write(_JSON_UNSAFE.sub(escaped, "".join(batch)))
            batch.clear()
            size = 0
    sys.stdout.write(_JSON_UNSAFE.sub(escaped, "".join(batch)) + "\n")


def _json_pieces(value: Any, depth: int = 0) -> Iterator[str]:
    """The JSON of `value` in pieces: iterators as arrays, member by member as they are
    made; the shallow containers and those holding an iterator member by member; each
    other member encoded whole, in C (orjson), and indented to its place."""
    split = isinstance(value, Iterator) or (
        isinstance(value, dict | list)
        and bool(value)
        and (depth < JSON_SPLIT_DEPTH or _holds_iterator(value))
    )
    if not split:
        yield _encoded(value).replace("\n", "\n" + "  " * depth)  # a JSON string holds no newline
        return
    keyed = isinstance(value, dict)
    members = value.items() if keyed else ((None, v) for v in value)
    pad = "\n" + "  " * (depth + 1)
    empty = True
    for key, member in members:
        # a key as json writes it: non-string keys become strings
        name = json.dumps({key: 0}, ensure_ascii=False)[1:-4] + ": " if keyed else ""
        yield ("{" if keyed else "[") * empty + "," * (not empty) + pad + name
        empty = False
        yield from _json_pieces(member, depth + 1)
    yield "[]" if empty else "\n" + "  " * depth + ("}" if keyed else "]")


def _holds_iterator(value: dict[Any, Any] | list[Any]) -> bool:
    return any(isinstance(v, Iterator) for v in (value.values() if isinstance(value, dict) else value))


def _encoded(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):  # an iterator deep inside; integers past 64 bits
        return json.dumps(_listed(value), ensure_ascii=False, indent=2)


def _listed(value: Any) -> Any:
    """`value` with every iterator in it made a list (untouched when orjson failed before
    reaching one: it reads none)."""
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    if isinstance(value, list | Iterator):
        return [_listed(v) for v in value]
    return value


def cmd_open(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.launch import run_app

    config, warning = _config(args, lenient=True)
    return run_app(args, config, warning)


def cmd_compactions(args: argparse.Namespace) -> int:
    inspection = _inspect(args)
    found = inspection.own_compactions()
    if args.json:
        _print_json([c.to_dict() for c in found])
    else:
        from compaction_inspector.tui.cli.report import print_compactions

        now = inspection.agent_counts.at(len(inspection.messages))
        print_compactions(inspection.session, found, inspection.config, now=now, left=inspection.headroom)
    return 0


def _port(value: str) -> int:
    """A TCP port: 1 to 65535."""
    try:
        port = int(value)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1 to 65535)")
    return port


def _strategy_list(catalogue: Catalogue, value: str) -> tuple[str, ...]:
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


def _replayed_list(catalogue: Catalogue, value: str) -> tuple[str, ...]:
    """`_strategy_list`, of the strategies a replay suits (PTL retry runs only when a
    request is refused, so a replay of it means nothing)."""
    names = _strategy_list(catalogue, value)
    if value == "all":
        return catalogue.replayed
    refused = [n for n in names if n not in catalogue.replayed]
    if refused:
        raise argparse.ArgumentTypeError(
            f"{', '.join(refused)}: runs only when a request is refused, so it has no replay to compare"
        )
    return names


def cmd_report(args: argparse.Namespace) -> int:
    if args.max_chars < 1:
        raise UsageError("--max-chars must be a whole number >= 1")
    inspection = _inspect(args)
    out = Path(args.output) if args.output else Path(f"{Path(args.file).stem}-report.html")
    options = ReportOptions(args.strategy, args.compare, args.redact, args.max_chars)
    _write_page(out, pieces(inspection, options), args.force, "-o", protect=args.file)
    return 0


def _write_page(
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


def cmd_compare(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be a whole number >= 1")
    inspection = _inspect(args)
    done = compare(inspection, args.strategies, jobs=args.jobs).sorted(args.sort, args.descending)
    if args.json:
        _print_json(done.to_dict())
    else:
        from compaction_inspector.tui.cli.report import print_comparison

        print_comparison(done)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be a whole number >= 1")
    config = _config(args)[0]
    try:
        swept_grid = Grid.of(args.strategy, args.grid, config)
    except OptionError as exc:
        raise UsageError(f"--grid: {exc}") from exc
    if args.html:  # said before any session is read
        _free_to_write(args.html, args.force, "--html")
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
        _print_json(done.to_dict())
    else:
        from compaction_inspector.tui.cli.report import print_sweep

        print_sweep(done)
    if done.stopped:  # a script can tell a sweep cut short from a whole one
        say(f"stopped: {done.sessions} of {len(where)} sessions swept", sys.stderr)
        return STOPPED
    return 0


def _write_sweep(args: argparse.Namespace, done: Sweep) -> None:
    """The sweep's HTML page, written atomically and never over a file unless --force."""
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
    _write_page(Path(args.html), page(done, [*command, *given]), args.force, "--html")


def cmd_serve(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.serve import serve

    if args.file is not None:
        check_readable(args.file)
    return serve(args.file, args.host, args.port)


def cmd_sessions(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be a whole number >= 1")
    places = places_given(args.catalogue, args)
    rows = Index().rows(args.catalogue, find(args.catalogue, places), jobs=args.jobs)
    if args.json:
        _print_json([r.to_dict() for r in rows])
    else:
        from compaction_inspector.tui.cli.report import print_sessions

        print_sessions(rows, places)
    return 0


def _status_agent(catalogue: Catalogue) -> tuple[Agent, StatusLine]:
    """The agent that runs a status line command, and its status line."""
    return next((a, a.status_line) for a in catalogue.agents if a.status_line is not None)


def cmd_statusline(args: argparse.Namespace) -> int:
    """One line for the agent that runs it; any failure prints a short line instead and
    exits 0, since the agent blanks its status line on any other exit."""
    if args.setup:
        return _statusline_setup(args)
    agent, own = _status_agent(args.catalogue)
    try:
        given = json.loads(sys.stdin.read() or "{}")
        given = given if isinstance(given, dict) else {}
        path = given.get("transcript_path")
        if not isinstance(path, str) or not path:
            raise ValueError("no transcript_path on stdin")
        config = _config(args, lenient=True)[0]
        tail = own.read(Path(path), own.index_path())
        if tail.foreign:
            raise ValueError(f"not a {agent.name} transcript: {Path(path).name}")
        shown = own.figures(tail, config, given)
        # what a transcript says is shown, not obeyed
        text = visible(statusline.line(shown, args.format))
        print(statusline.coloured(text, shown, config.status_colours) if args.color else text)
    except statusline.FormatError as exc:  # the user's own template: said whole
        say(f"compaction-inspector: {visible(str(exc))}", sys.stdout)
    except Exception as exc:
        say(f"compaction-inspector: {one_line(str(exc) or type(exc).__name__, 60)}", sys.stdout)
    return 0


def _statusline_setup(args: argparse.Namespace) -> int:
    own = _status_agent(args.catalogue)[1]
    if not args.write:
        say(json.dumps(own.snippet(), indent=2), sys.stdout)
        return 0
    target = own.settings_path()
    try:
        backup = own.install(target, args.force, waiting=_waiting(target))
    except (statusline.SettingsRefused, OSError) as exc:
        return _fail(str(exc))
    kept = f" (the file as it was: {backup})" if backup is not None else ""
    say(f"added the status line to {target}{kept}", sys.stdout)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from compaction_inspector.tui.watch import WatchApp, once  # Textual only when it runs

    if args.file is not None:
        path = Path(args.file)
    else:
        places = places_given(args.catalogue, args)
        found = [
            f for f in find(args.catalogue, places) if f.subagent_of is None
        ]  # a session, not its sub-agent
        if not found:
            return _fail("no session found in your agents' folders: name one")
        path = max(found, key=lambda f: f.path.stat().st_mtime).path
    config = _config(args, lenient=True)[0]
    if args.once:
        say(once(path, config), sys.stdout)
        return 0
    WatchApp(path, config).run(inline=True)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    """The diff a tuned setting makes to the agent's settings file, written with --write."""
    agent = args.catalogue.by_format[args.agent]
    option, _, given = args.setting.partition("=")
    option = option.strip().replace("-", "_")
    if not given.strip().isdigit():
        return _fail(f"apply: {args.setting!r} is not OPTION=VALUE with a whole number")
    value = int(given)
    try:
        strategy = args.catalogue.strategy(agent.format)
        strategy.checked(with_values(strategy.default_options(), {option: value}))
        change = applying.planned(agent, option, value, args.layer)
    except (OptionError, TypeError, applying.ApplyError) as exc:
        return _fail(f"apply: {exc}")
    if change.before == change.after:
        say(f"{change.path} sets {change.key} to {value} already: nothing to write", sys.stdout)
        return 0
    say(visible(change.diff), sys.stdout)
    if not args.write:
        say("(not written: --write writes it)", sys.stdout)
        return 0
    try:
        backup = applying.write(change, args.force, waiting=_waiting(change.path))
    except Changed as exc:
        return _changed(exc, agent, option, value, args.layer)
    except (applying.ApplyError, OSError) as exc:
        return _fail(str(exc))
    kept = f" (the file as it was: {backup})" if backup is not None else ""
    say(f"wrote {change.key} = {value} to {change.path}{kept}", sys.stdout)
    return 0


def _layers(agent: Agent) -> str:
    """Each settings file `apply` may write for `agent`, by layer."""
    return ", ".join(f"{layer} {where}" for layer, where in agent.settings_layers.items())


def _waiting(path: Path) -> Callable[[], None]:
    return lambda: say(f"waiting for another write to {path} to finish", sys.stderr)


def _changed(exc: Changed, agent: Agent, option: str, value: int, layer: str | None) -> int:
    """The file changed between the diff and the write: nothing written, the diff now."""
    try:
        now = applying.planned(agent, option, value, layer)
    except applying.ApplyError as again:
        return _fail(f"{exc.strerror}; {again}")
    diff = visible(now.diff) if now.before != now.after else f"(it now sets {now.key} to {value} already)\n"
    say(f"{exc.strerror}. The change as the file is now:\n{diff}(run it again to write this)", sys.stderr)
    return 1


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "open": cmd_open,
    "analyze": cmd_analyze,
    "compact": cmd_compact,
    "simulate": cmd_simulate,
    "checkpoint": cmd_checkpoint,
    "compactions": cmd_compactions,
    "report": cmd_report,
    "compare": cmd_compare,
    "sweep": cmd_sweep,
    "serve": cmd_serve,
    "sessions": cmd_sessions,
    "statusline": cmd_statusline,
    "apply": cmd_apply,
    "watch": cmd_watch,
}


def _fail(message: str) -> int:
    """Bad input or options: said on stderr, exit code 2."""
    say(f"compaction-inspector: {message}")
    return 2


def main(argv: Sequence[str] | None = None, catalogue: Catalogue | None = None) -> int:
    heap.configure()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help", "--version"):
        argv.insert(0, "open")
    args = build_parser(catalogue).parse_args(argv)
    try:
        return HANDLERS[args.command](args)
    except LoadError as exc:  # the file a command names, where it names one
        named = getattr(args, "file", None)
        return _fail(f"{named}: {exc}" if named else str(exc))
    except (UsageError, SummarizerError) as exc:
        return _fail(str(exc))

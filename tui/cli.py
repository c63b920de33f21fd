"""The `compaction-inspector` command: open the app, or run the core from a shell.

    compaction-inspector [FILE]                 open the app (a bundled sample without FILE)
    compaction-inspector analyze FILE [--json]  rounds, volleys, tokens, pressure
    compaction-inspector compact FILE ...       run one strategy and show its steps
    compaction-inspector simulate FILE ...      replay the session under a policy
    compaction-inspector checkpoint FILE ...    append a checkpoint, or detect truncation

Exit codes: 0 success, 2 unreadable input or bad options, 3 nothing safe left to
compact, 4 truncation likely. Only the app imports Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from core.analysis import analyze
from core.formats import LoadError, load
from core.model import Session
from core.pressure import Window
from core.tokens import TOKENIZERS, TokenCounter, make_counter

COMMANDS = ("analyze", "compact", "simulate", "checkpoint")


class UsageError(Exception):
    """Bad options: reported on stderr with exit code 2."""


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="transcript to read (never written)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--tokenizer", choices=TOKENIZERS, default=None)
    p.add_argument(
        "--request", type=int, default=None, help="which body of a proxy log (default last)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction-inspector", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("analyze", help="rounds, volleys, tokens and pressure of a transcript")
    _add_common(p)
    p.add_argument("--context-window", type=int, default=None)
    p.add_argument("--reserved-output", type=int, default=None)
    return parser


def _load(args: argparse.Namespace) -> Session:
    return load(args.file, request=args.request)


def _counter(name: str | None) -> TokenCounter:
    counter = make_counter(name or "cl100k_base")
    if counter.warning:
        print(f"warning: {counter.warning}", file=sys.stderr)
    return counter


def _window(args: argparse.Namespace) -> Window:
    try:
        return Window(
            context_window=args.context_window or Window().context_window,
            reserved_output=(
                args.reserved_output
                if args.reserved_output is not None
                else Window().reserved_output
            ),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_analyze(args: argparse.Namespace) -> int:
    session = _load(args)
    result = analyze(session, _counter(args.tokenizer), _window(args))
    if args.json:
        _print_json(result.to_dict())
    else:
        from tui.report import print_analysis

        print_analysis(result)
    return 0


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"analyze": cmd_analyze}


def _fail(message: str, code: int = 2) -> NoReturn:
    print(f"compaction-inspector: {message}", file=sys.stderr)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        from tui.launch import run_app

        return run_app(argv)
    args = build_parser().parse_args(argv)
    try:
        return HANDLERS[args.command](args)
    except LoadError as exc:
        _fail(f"{args.file}: {exc}")
    except UsageError as exc:
        _fail(str(exc))


if __name__ == "__main__":
    raise SystemExit(main())

"""Open the app: `compaction-inspector [FILE] [--follow] [--demo] [--config FILE] ...`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from compaction_inspector.core.config import PRESETS, Config, ConfigError
from compaction_inspector.core.config import load as load_config
from compaction_inspector.core.pressure import Window
from compaction_inspector.core.tokens import TOKENIZERS
from compaction_inspector.sample_sessions import path as sample_path

SAMPLE_WINDOW = Window(5000, 500)


def run_app(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="compaction-inspector",
        description="Open a session transcript in the app (a bundled sample without FILE). "
        "Subcommands: analyze, compact, simulate, checkpoint (see --help of each).",
    )
    parser.add_argument("file", nargs="?", help="transcript to open (never written)")
    parser.add_argument("--follow", action="store_true", help="tail a growing Claude Code session file")
    parser.add_argument("--demo", action="store_true", help="walk the sample through every strategy")
    parser.add_argument("--config", help="YAML settings (default ./compaction.yaml)")
    parser.add_argument("--preset", choices=sorted(PRESETS))
    parser.add_argument("--tokenizer", choices=TOKENIZERS)
    parser.add_argument("--context-window", type=int)
    parser.add_argument("--request", type=int, help="which body of a proxy log (default last)")
    args = parser.parse_args(list(argv))
    warning = None
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        if args.config:  # a file named on the command line must be right
            print(f"compaction-inspector: {exc}", file=sys.stderr)
            return 2
        config, warning = Config(), f"{exc} — using the defaults"
    try:
        config = config.overridden(
            preset=args.preset, tokenizer=args.tokenizer, context_window=args.context_window
        )
    except (ConfigError, ValueError) as exc:
        print(f"compaction-inspector: {exc}", file=sys.stderr)
        return 2
    note = None
    if not args.file and not args.context_window:
        # The sample is small: a window it fills past the thresholds gives every strategy work.
        config = replace(config, window=SAMPLE_WINDOW, preset=None)
        note = (
            "Bundled sample, shown in a 5,000-token window so every strategy has work to do (w/W to resize)."
        )
    from compaction_inspector.tui.app import InspectorApp

    target = args.file or str(sample_path())
    InspectorApp(
        target,
        config,
        request=args.request,
        follow=args.follow,
        demo=args.demo,
        config_warning=warning,
        note=note,
    ).run()
    return 0

"""The commands, one module each: its name (`NAME`), its arguments (`arguments`) and what
it does (`run`), in the order `--help` lists them."""

from __future__ import annotations

from compaction_inspector.tui.cli.commands import (
    analyze,
    apply,
    checkpoint,
    compact,
    compactions,
    compare,
    open_app,
    report,
    serve,
    sessions,
    simulate,
    statusline,
    sweep,
    watch,
)

EVERY = (
    open_app,
    analyze,
    compact,
    simulate,
    checkpoint,
    compactions,
    report,
    compare,
    sweep,
    serve,
    sessions,
    apply,
    statusline,
    watch,
)

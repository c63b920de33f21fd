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

import io
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compaction_inspector.core.catalogue import Catalogue


def main(argv: Sequence[str] | None = None, catalogue: Catalogue | None = None) -> int:
    """The command, as the console script runs it. A status line call whose answer the
    last one kept is drawn without loading the command line, the agents or the settings
    (`core.statusline.kept`): Claude Code makes one after each message. So is a list of
    sessions the index holds whole (`tui.cli.kept_sessions`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sessions"] and catalogue is None:
        from compaction_inspector.tui.cli import kept_sessions

        return 0 if kept_sessions.shown(argv[1:]) else _whole(argv, catalogue)
    if argv[:1] != ["statusline"] or catalogue is not None:
        return _whole(argv, catalogue)
    from compaction_inspector.core.statusline import kept

    given: list[str] = []  # what the agent passed on stdin, once read

    def read() -> str:
        given.append(sys.stdin.read())
        return given[0]

    shown = kept(argv[1:], read)
    if shown is not None:
        print(shown)
        return 0
    if not given:
        return _whole(argv, catalogue)
    stdin, sys.stdin = sys.stdin, io.StringIO(given[0])  # the command reads it again
    try:
        return _whole(argv, catalogue)
    finally:
        sys.stdin = stdin


def _whole(argv: list[str], catalogue: Catalogue | None) -> int:
    from compaction_inspector.tui.cli.commandline import run

    return run(argv, catalogue)

"""The command reference, docs/reference.md, made from the parser's own `--help`:
`python3 -m docs.make_reference` from the repository's root (`tests/test_docs.py` fails
when the file is not what this makes)."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.files import write_atomic
from compaction_inspector.tui.cli.commandline import COMMANDS, build_parser

PAGE = Path(__file__).parent / "reference.md"
WIDTH = "100"  # argparse wraps at the terminal's width: one width, so the page is the same anywhere


def reference() -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = [
            "# Command reference\n",
            "Every command's `--help`, as the program prints it (made by `python3 -m "
            "docs.make_reference`;\na test fails when it is out of date). What each command "
            "prints and its JSON are in\n[commands](commands.md).\n",
            f"```\n{parser.format_help().rstrip()}\n```\n",
        ]
        commands = next(a.choices for a in parser._actions if a.dest == "command")
        assert isinstance(commands, dict)
        for name in COMMANDS:
            help_text = commands[name].format_help().rstrip()
            parts.append(f"## `{name}`\n\n```\n{help_text}\n```\n")
        return "\n".join(parts)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


if __name__ == "__main__":
    write_atomic(PAGE, reference())
    print(f"wrote {PAGE}")

"""The one way a string from a transcript, a file name or a config reaches a screen, a
notification, a table cell or stdout: as Rich `Text` (never parsed as markup) with every
control character shown, not obeyed (`core.text.visible`)."""

from __future__ import annotations

from rich.text import Text

from compaction_inspector.core.text import visible


def safe(value: object, style: str = "") -> Text:
    """`value` as text a terminal shows and never obeys."""
    return Text(visible(str(value)), style=style)

"""The one way a string from a transcript, a file name or a config reaches a screen, a
notification, a table cell or stdout: as Rich `Text` (never parsed as markup) with every
control character shown, not obeyed (`core.text.visible`)."""

from __future__ import annotations

from rich.text import Text

from compaction_inspector.core.text import visible


def safe(value: object, style: str = "") -> Text:
    """`value` as text a terminal shows and never obeys."""
    return Text(visible(str(value)), style=style)


def fitting(
    ranks: dict[str, int], cells: list[dict[str, str]], fixed: int, width: int, gap: int, keep: int = 3
) -> list[str]:
    """The columns (`ranks`: 0 never dropped, higher dropped first) whose heads and cells
    fit whole in `width` beside `fixed` cells of name, `gap` cells between columns: a
    number is shown whole or not at all, never cut. At least the `keep` most important."""
    columns = list(ranks)

    def needed(cs: list[str]) -> int:
        return fixed + sum(max([len(c), *(len(r[c]) for r in cells)]) + gap for c in cs)

    while len(columns) > keep and needed(columns) > width:
        columns.remove(max(columns, key=lambda c: ranks[c]))
    return columns

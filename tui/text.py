"""The one way a string from a transcript, a file name or a config reaches a screen, a
notification, a table cell or stdout: as Rich `Text` (never parsed as markup) with every
control character shown, not obeyed (`core.text.visible`)."""

from __future__ import annotations

from rich.console import Console
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
    while len(columns) > keep and fixed + span(cells, columns, gap) > width:
        columns.remove(max(columns, key=lambda c: ranks[c]))
    return columns


def span(cells: list[dict[str, str]], columns: list[str], gap: int) -> int:
    """The cells `columns` take: each as wide as its head or its widest cell, plus `gap`."""
    return sum(max([len(c), *(len(r[c]) for r in cells)]) + gap for c in columns)


def within(parts: list[tuple[Text, int]], width: int, sep: str = " · ") -> Text:
    """`parts` joined by `sep` in their order, as many as fit in `width` cells: the
    highest rank is left out first (rank 0 never), so what shows is whole, never cut
    mid-figure. Past that, the line is cut at `width`."""
    kept = list(parts)

    def joined(chosen: list[tuple[Text, int]]) -> Text:
        line = Text()
        for n, (part, _) in enumerate(chosen):
            if n:
                line.append(sep, "bright_black")
            line.append_text(part)
        return line

    while len(kept) > 1 and joined(kept).cell_len > width and max(r for _, r in kept) > 0:
        kept.remove(max(kept, key=lambda p: p[1]))
    return at_word(joined(kept), width)


LEFT_OUT = " · …"  # where a line leaves parts out: said, so what shows is not taken for all of it


def whole_parts(line: Text, width: int, sep: str = " · ") -> Text:
    """`line` as far as its last whole part (`sep` between them) that fits in `width`,
    with `LEFT_OUT` saying that more did not fit; a single part too long, cut at a word."""
    if line.cell_len <= width:
        return line
    cut = line.plain.rfind(sep, 0, width - len(LEFT_OUT) + len(sep))
    if cut <= 0:
        return at_word(line, width)
    line.truncate(cut, overflow="crop")
    line.append(LEFT_OUT, "bright_black")
    return line


def at_word(line: Text, width: int) -> Text:
    """`line` cut to `width` cells at the end of a word, with "…": never inside a number."""
    if line.cell_len <= width:
        return line
    cut = line.plain.rfind(" ", 0, max(1, width - 1))
    line.truncate(cut if cut > 0 else max(0, width - 1), overflow="crop")
    line.append("…")
    return line


def console() -> Console:
    """What the command line's tables print to: nothing highlighted, nothing wrapped."""
    return Console(highlight=False, soft_wrap=False)


def cut(text: Text) -> Text:
    """A cell that stays on one line, cut with an ellipsis when its column gives way."""
    text.no_wrap, text.overflow = True, "ellipsis"
    return text

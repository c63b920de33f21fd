"""A text a strategy wrote as a selection: a head, then lists of items chosen from the
span it replaced ("\\n- paths: a.py; b.py"), as a summary lists a span's facts.

A replay writes thousands of summaries whose lists hold the same few thousand items in
other orders. Kept by its text (`keep`, `kept`), a summary is counted and read for its
facts by its items, each looked up in a table of items met before
(`core.measuring.tokens`, `core.replaying.retention`), never by cutting its text again.
Its clauses (`core.text.clauses`) are those of its `edges` and of each `middle` item
standing between two others as `" item;"`, so its count is their sum.
"""

from __future__ import annotations

from functools import cached_property
from itertools import chain, islice

from compaction_inspector.core.caching.memo import on_forget
from compaction_inspector.core.model import immutable

KEPT = 256  # selections kept by their text: each is asked for soon after it is written


@immutable()
class Selection:
    """`head`, then each list as "\\n- LABEL: " and its items joined by "; "."""

    head: str
    lists: tuple[tuple[str, tuple[str, ...]], ...]  # (label, items), none empty

    @cached_property
    def text(self) -> str:
        return self.head + "".join(f"\n- {label}: " + "; ".join(items) for label, items in self.lists)

    @property
    def middle(self) -> chain[str]:
        """Each list's items but its first and last, in order."""
        return chain.from_iterable(items[1:-1] for _, items in self.lists)

    @property
    def edges(self) -> str:
        """The text without its middle items: what is left of it between them."""
        return self.head + "".join(
            f"\n- {label}: " + "; ".join(items[:1] + items[-1:] if len(items) > 1 else items)
            for label, items in self.lists
        )

    @property
    def items(self) -> chain[str]:
        """Every item, list by list."""
        return chain.from_iterable(items for _, items in self.lists)


_KEPT: dict[str, Selection] = {}
on_forget(_KEPT.clear)


def keep(selection: Selection) -> str:
    """`selection`'s text, kept so that what counts or reads it finds the selection."""
    text = selection.text
    if len(_KEPT) >= KEPT:  # the oldest half goes
        for old in list(islice(_KEPT, KEPT // 2)):
            _KEPT.pop(old, None)
    _KEPT[text] = selection
    return text


def kept(text: str) -> Selection | None:
    """The selection `text` was written as, if it was and is still kept."""
    return _KEPT.get(text)

"""The transcript pane: a Line-API view that builds only the rows on screen.

Each message is a header row (index, role, kind, tokens, tool links) and a one-line
preview; an expanded message shows all of its text, wrapped. Volley bands and round
rules open the messages that start them. Text is transcript text, never markup: rows
are made of plain segments, and control characters are shown, not obeyed.
"""

from __future__ import annotations

import textwrap
from bisect import bisect_left, bisect_right
from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive, var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from compaction_inspector.core.model import Message
from compaction_inspector.core.text import one_line, visible
from compaction_inspector.tui.session.entries import ADDED, REMOVED, SHOWN, SUMMARY, Entry, Listing

BOUNDARY_MODES = ("both", "volleys", "rounds", "none")

STYLES = {
    "message": Style(),
    "tool_result": Style(color="cyan"),
    "summary": Style(color="yellow", bold=True),
    "marker": Style(color="magenta", bold=True),
    "meta": Style(color="bright_black", italic=True),
    "attachment": Style(color="bright_black", italic=True),
}
FATE_STYLES = {
    "dropped": Style(color="red", strike=True, dim=True),
    "summarized": Style(color="yellow", strike=True, dim=True),
    "replaced": Style(color="blue", strike=True, dim=True),
    "inserted": Style(color="green", bold=True),
    "summary": Style(color="black", bgcolor="yellow"),
    "edited": Style(color="blue", bold=True),
}
FATE_MARK = {
    "dropped": "−",
    "summarized": "≈",
    "replaced": "~",
    "inserted": "+",
    "summary": "+",
    "edited": "~",
}
ROLE_STYLE = {
    "user": Style(color="green"),
    "assistant": Style(color="bright_blue"),
    "system": Style(color="magenta"),
    "tool": Style(color="cyan"),
}
VOLLEY_STYLE = Style(color="black", bgcolor="bright_blue", bold=True)
ROUND_STYLE = Style(color="bright_black")
SIDE_STYLE = Style(color="bright_black", dim=True)
CURSOR = Style(reverse=True)
PAIRED = Style(underline=True)

INDENT = " " * 8  # a message's text under its header


class TranscriptView(ScrollView, can_focus=True):
    """Messages of one list, with a cursor; posts `Selected` when the cursor moves."""

    BINDINGS = [
        Binding("down,j", "cursor(1)", "Next msg", show=False, id="transcript.down"),
        Binding("up,k", "cursor(-1)", "Prev msg", show=False, id="transcript.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
        Binding("home,g", "edge(0)", "Top", show=False, id="transcript.top"),
        Binding("end,G", "edge(1)", "Bottom", show=False, id="transcript.bottom"),
        Binding("enter,space", "toggle_expand", "Expand", id="transcript.expand"),
        Binding(
            "right_square_bracket", "jump('round', 1)", "Next round", show=False, id="transcript.next_round"
        ),
        Binding(
            "left_square_bracket", "jump('round', -1)", "Prev round", show=False, id="transcript.prev_round"
        ),
        Binding(
            "right_curly_bracket", "jump('volley', 1)", "Next volley", show=False, id="transcript.next_volley"
        ),
        Binding(
            "left_curly_bracket", "jump('volley', -1)", "Prev volley", show=False, id="transcript.prev_volley"
        ),
    ]

    class Selected(TextualMessage):
        def __init__(self, view: TranscriptView, entry: Entry | None) -> None:
            super().__init__()
            self.view = view
            self.entry = entry

    boundaries: reactive[str] = reactive("both")
    cursor = var(0)  # a move repaints only the rows it changes (set_cursor), not the view

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.entries = Listing((), lambda m: 0)
        self.expanded: dict[int, list[str]] = {}  # position → its wrapped lines
        self.paired: set[int] = set()
        self._cache_key = 0

    # --- data -------------------------------------------------------------------------

    def show(self, listing: Listing, keep_cursor: bool = True) -> None:
        anchor = self.current.message if keep_cursor and self.current else None
        self.entries = listing
        self.expanded = {}
        target = listing.position(anchor, self.cursor) if anchor is not None else None
        self._resize_content()
        self.set_cursor(target or 0)

    @property
    def current(self) -> Entry | None:
        return self.entries[self.cursor] if 0 <= self.cursor < len(self.entries) else None

    # --- geometry: rows are computed, never stored --------------------------------------------

    @property
    def _volleys_shown(self) -> bool:
        return self.boundaries in ("both", "volleys")

    @property
    def _rounds_shown(self) -> bool:
        return self.boundaries in ("both", "rounds")

    def _band_rows(self, k: int) -> list[tuple[str, str]]:
        """The band rows that open position `k`: (kind, label)."""
        volley, round_ = self.entries.bands_at(k)
        rows = []
        if volley and self._volleys_shown:
            rows.append(("volley", volley))
        if round_ and self._rounds_shown:
            rows.append(("round", round_))
        return rows

    def _top(self, k: int) -> int:
        """The first row of position `k` (its bands, if any); `len` gives the row count.
        Each entry is a head and a preview line, plus one row per shown band before it
        and the extra lines of expanded entries."""
        j = self.entries.shown_before(k)
        rows = 2 * k
        if self._volleys_shown:
            rows += bisect_left(self.entries.volley_starts, j)
        if self._rounds_shown:
            rows += bisect_left(self.entries.round_starts, j)
        return rows + sum(len(lines) - 1 for q, lines in self.expanded.items() if q < k)

    def _at(self, y: int) -> int:
        """The position whose rows include row `y`."""
        lo, hi = 0, len(self.entries) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self._top(mid) <= y else (lo, mid - 1)
        return lo

    def _wrap(self, k: int) -> list[str]:
        # each line is drawn after the indent: wrapped any wider, its end falls off the view
        width = max(20, self.scrollable_content_region.width - len(INDENT) or 100)
        text = visible(self.entries.message(k).text) or _placeholder(self.entries.message(k))
        return [line for para in text.splitlines() or [""] for line in _wrap_paragraph(para, width)]

    def _resize_content(self) -> None:
        self._cache_key += 1
        self.virtual_size = Size(self.scrollable_content_region.width, self._top(len(self.entries)))
        self.refresh()

    def watch_boundaries(self) -> None:
        self._resize_content()
        self.scroll_to_cursor()

    def on_resize(self) -> None:
        self.expanded = {k: self._wrap(k) for k in self.expanded}
        self._resize_content()

    # --- cursor and navigation ------------------------------------------------------------

    def set_cursor(self, k: int) -> None:
        if not self.entries:
            self.cursor = 0
            self.post_message(self.Selected(self, None))
            return
        was = self.cursor
        self.cursor = max(0, min(k, len(self.entries) - 1))
        m = self.entries.message(self.cursor)
        found = [self.entries.partner(self.cursor, t, result=True) for t in m.tool_use_ids()]
        found += [self.entries.partner(self.cursor, t, result=False) for t in m.tool_result_ids()]
        marked = {was, *self.paired}
        self.paired = {q for q in found if q is not None}
        if not self.scroll_to_cursor():  # a scroll repaints the whole view itself
            for q in marked | {self.cursor, *self.paired}:
                if q < len(self.entries):
                    top = self._top(q)
                    self.refresh_lines(top, self._top(q + 1) - top)
        self.post_message(self.Selected(self, self.entries[self.cursor]))

    def scroll_to_cursor(self) -> bool:
        """Scroll so the cursor's entry is in view; True when the view moved."""
        if not self.entries:
            return False
        band_top = self._top(self.cursor)
        bottom = band_top + len(self._band_rows(self.cursor)) + 1
        height = self.scrollable_content_region.height or 1
        if band_top < self.scroll_y:
            self.scroll_to(y=band_top, animate=False)
        elif bottom >= self.scroll_y + height:
            self.scroll_to(y=bottom - height + 1, animate=False)
        else:
            return False
        return True

    def action_cursor(self, delta: int) -> None:
        self.set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        height = self.scrollable_content_region.height or 10
        self.set_cursor(self.cursor + direction * max(1, height // 2))

    def action_edge(self, end: int) -> None:
        self.set_cursor(len(self.entries) - 1 if end else 0)

    def action_toggle_expand(self) -> None:
        if not self.entries:
            return
        if self.expanded.pop(self.cursor, None) is None:
            self.expanded[self.cursor] = self._wrap(self.cursor)
        self._resize_content()
        self.scroll_to_cursor()

    def action_jump(self, what: str, direction: int) -> None:
        starts = self.entries.round_starts if what == "round" else self.entries.volley_starts
        j = self.entries.shown_before(self.cursor)
        on_shown = self.entries.locate(self.cursor)[0] == SHOWN
        if direction > 0:
            n = bisect_right(starts, j) if on_shown else bisect_left(starts, j)
        else:
            n = bisect_left(starts, j) - 1
        if 0 <= n < len(starts):
            self.set_cursor(self.entries.position_of_shown(starts[n]))
        else:
            self.app.bell()

    def find(self, query: str, direction: int = 1) -> bool:
        """Move the cursor to the next message containing `query` (case-insensitive)."""
        needle = query.lower()
        n = len(self.entries)
        for step in range(1, n + 1):
            k = (self.cursor + direction * step) % n
            if needle in self.entries.message(k).text.lower():
                self.set_cursor(k)
                return True
        return False

    def on_click(self, event: object) -> None:
        y = getattr(event, "y", None)
        if isinstance(y, int) and self.entries and 0 <= self.scroll_y + y < self.virtual_size.height:
            self.set_cursor(self._at(int(self.scroll_y) + y))

    # --- rendering ----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        if not self.entries or row >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        k = self._at(row)
        marked = 2 if k == self.cursor else 1 if k in self.paired else 0
        return self._strip(row, k, width, self._cache_key, marked)

    @lru_cache(maxsize=2048)  # noqa: B019 (the view lives as long as the app)
    def _strip(self, row: int, k: int, width: int, _key: int, _marked: int) -> Strip:
        entry = self.entries[k]
        bands = self._band_rows(k)
        line = row - self._top(k)
        if line < len(bands):
            kind, label = bands[line]
            if kind == "volley":
                segments = [Segment(f" ▌{one_line(label, width)} ".ljust(width), VOLLEY_STYLE)]
            else:
                label = f"── {label} "
                segments = [Segment(label + "─" * max(0, width - len(label)), ROUND_STYLE)]
        elif line == len(bands):
            segments = self._head(entry, k)
        else:
            segments = self._body(entry, k, line - len(bands) - 1)
        return Strip(segments).crop_extend(0, width, self.rich_style)

    def _head(self, e: Entry, k: int) -> list[Segment]:
        m = e.message
        style = FATE_STYLES.get(e.fate, STYLES.get(m.kind, Style()))
        if e.sidechain:
            style = SIDE_STYLE
        mark = FATE_MARK.get(e.fate, " ")
        where = f"#{e.origin}" if e.origin is not None else "side" if e.sidechain else "new"
        parts = [
            Segment(f"{mark}{where:>6} ", style + Style(bold=True)),
            Segment(
                f"{m.role:<9}", ROLE_STYLE.get(m.role, Style()) + (style if e.fate != "kept" else Style())
            ),
            Segment(f" {m.kind:<11}", style),
            Segment(f" {e.tokens:>7,} tok", Style(color="bright_black")),
        ]
        links = []
        for tid in m.tool_use_ids():
            target = self.entries.partner(k, tid, result=True)
            links.append(f"⇢ {self._label(target)}" if target is not None else "⇢ no result")
        for tid in m.tool_result_ids():
            target = self.entries.partner(k, tid, result=False)
            links.append(f"⇠ {self._label(target)}" if target is not None else "⇠ no call")
        if links:
            parts.append(Segment("  " + " ".join(links), Style(color="cyan")))
        if m.id and m.role == "assistant":
            parts.append(Segment(f"  {visible(_short_id(m.id))}", Style(color="bright_black", dim=True)))
        if e.sidechain:
            parts.append(Segment("  sub-agent", SIDE_STYLE))
        if e.fate in REMOVED or e.fate in ADDED:
            parts.append(Segment(f"  {e.fate}", style))
        if k == self.cursor:
            parts = [Segment(s.text, (s.style or Style()) + CURSOR) for s in parts]
        elif k in self.paired:
            parts = [Segment(s.text, (s.style or Style()) + PAIRED) for s in parts]
        return parts

    def _label(self, k: int | None) -> str:
        if k is None:
            return "?"
        e = self.entries[k]
        return f"#{e.origin}" if e.origin is not None else "side" if e.sidechain else "new"

    def _body(self, e: Entry, k: int, line: int) -> list[Segment]:
        m = e.message
        style = FATE_STYLES.get(e.fate, STYLES.get(m.kind, Style()))
        if e.fate == SUMMARY:
            style = Style(color="yellow")
        if e.sidechain:
            style = SIDE_STYLE
        if k in self.expanded:
            return [Segment(INDENT + self.expanded[k][line], style)]
        text = m.text
        lines = text.count("\n") + 1 if text else 0
        more = f"  … +{lines - 1} lines" if lines > 1 else ""
        preview = one_line(text[:2000], 400) or _placeholder(m)
        return [Segment(INDENT + preview, style), Segment(more, Style(color="bright_black"))]


def _placeholder(message: Message) -> str:
    """What a message with no text shows: thinking kept only as its signature was
    redacted by the provider, not empty."""
    if message.blocks and all(b.type == "thinking" for b in message.blocks):
        return "thinking (redacted)"
    return "(empty)"


def _short_id(message_id: str) -> str:
    """An API id's distinctive tail; the ids a loader makes up ("response-12") whole."""
    return message_id if len(message_id) <= 12 else message_id[-8:]


LONG_PARAGRAPH = 20_000  # characters: past this, textwrap's search for spaces takes seconds


def _wrap_paragraph(para: str, width: int) -> list[str]:
    """A paragraph's rows: wrapped at words, or a very long one (a minified file, a
    5 MB log line) cut at the width, so expanding it is immediate."""
    if len(para) > LONG_PARAGRAPH:
        return [para[i : i + width] for i in range(0, len(para), width)]
    return textwrap.wrap(para, width, replace_whitespace=False, drop_whitespace=False) or [""]

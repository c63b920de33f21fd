"""The transcript panes: the step's before (the whole transcript when not stepping) and,
side by side, its after. They keep the listings of the steps drawn and prepare those
either side in the background, so stepping through a long session redraws at once."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.timer import Timer
from textual.worker import get_current_worker

from compaction_inspector.core.model import Message
from compaction_inspector.tui import heap
from compaction_inspector.tui.session.listing_cache import Key, ListingCache, Source, build
from compaction_inspector.tui.widgets.transcript import BOUNDARY_MODES, TranscriptView

PREPARE_AFTER_S = 0.08
SPLIT_MIN = 30  # cells a side-by-side pane needs to show a message's head line


class TranscriptPanes(Horizontal):
    boundaries = reactive(BOUNDARY_MODES[0])  # which the transcripts mark, bound to both panes
    split = reactive(False)  # a step's before and after side by side
    sidechain = reactive(False)  # the transcript with its sidechain messages

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.listings = ListingCache()
        self._prepare_timer: Timer | None = None
        self._shown: tuple[Source, int, int] | None = None  # the step shown, of how many

    def watch_split(self) -> None:
        self.screen.refresh_bindings()  # the split key says what it does now
        self._redraw()

    def watch_sidechain(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        if self._shown is not None:
            self.show(*self._shown, keep_cursor=True)

    def toggle_split(self) -> None:
        if not self.split and not self.split_fits():
            return
        if self._shown is None or self._shown[1] < 0:
            self.notify("Step forward (n) to see a before/after diff.", timeout=3)
        self.split = not self.split

    def toggle_sidechain(self) -> None:
        count = len(self._shown[0].session.sidechain) if self._shown is not None else 0
        self.notify(f"Sidechains {'hidden' if self.sidechain else 'shown'} ({count} messages)", timeout=2)
        self.sidechain = not self.sidechain

    def on_resize(self) -> None:
        if self.split:  # once the new breakpoints' styles are applied and laid out
            self.set_timer(0.1, self._unsplit_if_narrow)

    def _unsplit_if_narrow(self) -> None:
        if self.split and not self.split_fits():
            self.split = False

    def compose(self) -> ComposeResult:
        yield TranscriptView(id="before").data_bind(TranscriptPanes.boundaries)
        yield TranscriptView(id="after", classes="hidden").data_bind(TranscriptPanes.boundaries)

    @property
    def before(self) -> TranscriptView:
        return self.query_one("#before", TranscriptView)

    @property
    def after(self) -> TranscriptView:
        return self.query_one("#after", TranscriptView)

    def split_fits(self) -> bool:
        """Side by side needs SPLIT_MIN cells a pane; narrower, it says so and the diff stays unified."""
        width = self.size.width
        if width >= 2 * SPLIT_MIN:
            return True
        self.notify(
            f"Side by side needs {2 * SPLIT_MIN} columns for the transcripts, {SPLIT_MIN} a side; "
            f"they have {width} here, so the diff stays unified (v hides the side panel).",
            title="Unified diff",
            timeout=5,
        )
        return False

    def cycle_boundaries(self) -> None:
        """Mark the next of BOUNDARY_MODES."""
        self.boundaries = BOUNDARY_MODES[(BOUNDARY_MODES.index(self.boundaries) + 1) % len(BOUNDARY_MODES)]
        self.notify(f"Boundaries: {self.boundaries}", timeout=2)

    def preview(self, source: Source) -> None:
        """The first rows of a file still being read: the transcript alone."""
        self.before.show(build(source, Key(-1, False, False))[0], keep_cursor=False)

    def show(self, source: Source, step: int, steps: int, keep_cursor: bool) -> None:
        """Step `step` of `steps` (-1: the transcript), in one pane or, `split`, two."""
        self._shown = (source, step, steps)
        split, sidechain = self.split, self.sidechain
        listings = self.listings.get(source, _key(step, split, sidechain))
        around = [_key(i, split, sidechain) for i in (step + 1, step - 1) if -1 <= i < steps]
        if self._prepare_timer is not None:
            self._prepare_timer.stop()
        if any(key not in self.listings for key in around):
            # Once the keys pause: a build running while this step is drawn (or while
            # a key is held down) would hold the interpreter the drawing needs.
            self._prepare_timer = self.set_timer(PREPARE_AFTER_S, lambda: self._prepare(source, around))
        before, after = self.before, self.after
        before.show(listings[0], keep_cursor)
        if len(listings) > 1:
            after.show(listings[1], keep_cursor)
            after.remove_class("hidden")
            before.border_title = f"before step {step + 1}"
            after.border_title = f"after step {step + 1}"
        else:
            after.add_class("hidden")
            before.border_title = None

    # Workers taking arguments are described by hand: by default Textual describes a
    # worker with the repr of its arguments, which for a session takes seconds.
    @work(thread=True, exclusive=True, group="prepare", description="prepare listings")
    def _prepare(self, source: Source, keys: list[Key]) -> None:
        worker = get_current_worker()
        self.listings.prepare(source, keys, lambda: worker.is_cancelled)
        heap.tidy()

    def with_partners(self) -> list[Message]:
        """The message under the transcript's cursor and the calls or results it pairs
        with (none: no message is there)."""
        if self.before.current is None:
            return []
        entries, k = self.before.entries, self.before.cursor
        m = entries.message(k)
        found = [entries.partner(k, t, result=True) for t in m.tool_use_ids()]
        found += [entries.partner(k, t, result=False) for t in m.tool_result_ids()]
        return [m, *(entries.message(q) for q in found if q is not None)]

    def find(self, text: str) -> None:
        """The cursor on the next message holding `text`, or it is said that none does."""
        if not self.before.find(text):
            self.notify(f"No message contains “{text}”", severity="warning", timeout=3)

    def to_tail(self) -> None:
        """The cursor on the last message, so new ones are followed."""
        self.before.set_cursor(len(self.before.entries) - 1)

    def go_to_request(self, message_end: int) -> None:
        """The cursor on the last message of the request before messages[message_end]."""
        view, target = self.before, message_end - 1
        k = next((k for k, e in enumerate(view.entries) if e.origin is not None and e.origin >= target), None)
        if k is not None:
            view.set_cursor(k)
            view.focus()


def _key(step: int, split: bool, sidechain: bool) -> Key:
    """A listing's key: a step shown split only when stepping, sidechains only when not."""
    return Key(step, split and step >= 0, sidechain and step < 0)

"""The line under the transcript panes: the message under the cursor, then the tuning in
force once it has been changed, each in parts shown whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.widgets import Static

from compaction_inspector.tui.session.figures import fitted
from compaction_inspector.tui.text import safe

GAP = "   │   "


class StatusLine(Static):
    def show(self, selection: Sequence[str], tuning: Sequence[str]) -> None:
        """`selection`'s parts, then `tuning`'s (none: not tuned) where the line has room."""
        room = (self.screen.size.width or 1_000) - 2  # the line's padding (1,000: not laid out yet)
        mine, shown = fitted(selection, room), ""
        if tuning:
            for share in (room, room // 2):  # the selection whole if the tuning still shows, else half
                mine = fitted(selection, share)
                shown = fitted(tuning, room - cell_len(mine) - len(GAP))
                if shown:
                    break
        # one row high: no layout is needed
        self.update(safe(GAP.join(p for p in (mine, shown) if p)), layout=False)

"""The help screen: every key, what it does, and the id to remap it in compaction.yaml."""

from __future__ import annotations

from collections.abc import Mapping

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from compaction_inspector.tui.text import safe
from compaction_inspector.tui.widgets.transcript import TranscriptView

INTRO = (
    "Compaction Inspector — step through how an agent's context is compacted.\n"
    "Keys can be remapped by id under `keys:` in compaction.yaml. Ctrl+P opens the command palette."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close")]

    def __init__(self, app: App[None], keymap: Mapping[str, str]) -> None:
        """`keymap`: the keys remapped by binding id (compaction.yaml's `keys:`)."""
        super().__init__()
        self.bindings_shown = [*app.BINDINGS, *TranscriptView.BINDINGS]
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        # the table scrolls itself (it has the focus), so every row can be reached
        with Vertical(id="help"):
            yield Static(INTRO, id="help-intro")
            yield DataTable(id="help-keys", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "does", "id")
        for b in self.bindings_shown:
            if isinstance(b, Binding):
                key = self.keymap.get(b.id or "", b.key)
                table.add_row(safe(key_names(key)), safe(b.description), safe(b.id or ""))
        table.focus()


def key_names(key: str) -> str:
    """A binding's keys as a reader names them: "n", "question mark, f1"."""
    return ", ".join(k.strip().replace("_", " ") for k in key.split(","))

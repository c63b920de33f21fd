"""The help screen: every key, what it does, and the id to remap it in compaction.yaml."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

from compaction_inspector.tui.text import safe

INTRO = (
    "Compaction Inspector — step through how an agent's context is compacted.\n"
    "Keys can be remapped by id under `keys:` in compaction.yaml. Ctrl+P opens the command palette."
)
# what the marks on screen mean, as the transcript, gauge and timeline draw them
LEGEND = (
    "In the transcript: − dropped · ≈ summarized · + inserted or a summary · ~ edited or replaced · "
    "⇢ #N the result of this call · ⇠ #N the call of this result.\n"
    "On the timeline: █ the policy's pressure · ● the compared policy · ◆ a prompt the transcript "
    "reports · ⚑ the transcript's own compaction · ✂ a compaction of the policy."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close")]

    def __init__(
        self,
        bindings: Sequence[Binding],
        keymap: Mapping[str, str],
        more: Sequence[tuple[str, str]] = (),
        legend: str = LEGEND,
    ) -> None:
        """Lists `bindings` (their keys as `keymap`, compaction.yaml's `keys:`, remaps
        them by id), then the keys `more` names that no binding holds, then `legend`."""
        super().__init__()
        self.bindings_shown = bindings
        self.keymap = keymap
        self.more = more
        self.legend = legend

    def compose(self) -> ComposeResult:
        # the table scrolls itself (it has the focus), so every row can be reached
        with Vertical(id="help"):
            yield Static(INTRO, id="help-intro")
            yield DataTable(id="help-keys", cursor_type="row", zebra_stripes=True)
            yield Static(self.legend, id="help-legend")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # the id beside the key, before the description that can run long: both in sight
        table.add_columns("key", "id", "does")
        for b in self.bindings_shown:
            key = self.keymap.get(b.id or "", b.key)
            table.add_row(safe(key_names(key)), safe(b.id or ""), safe(b.description))
        for key, does in self.more:
            table.add_row(safe(key), safe(""), safe(does))
        table.focus()


def acting(screen: Screen[Any], bindings: Iterable[BindingType]) -> list[Binding]:
    """The bindings that act on `screen` now: of two of one key (d: split or unify), the
    one its `check_action` allows."""
    return [b for b in bindings if isinstance(b, Binding) and screen.check_action(b.action, ()) is not False]


def key_of(bindings: Iterable[BindingType], keys: Mapping[str, str], binding_id: str) -> str:
    """The first key that runs binding `binding_id` of `bindings` now, remapped in `keys` or not."""
    binding = next(b for b in bindings if isinstance(b, Binding) and b.id == binding_id)
    return key_names(keys.get(binding_id, binding.key).split(",")[0])


def key_names(key: str) -> str:
    """A binding's keys as a reader names them: "n", "question mark, f1"."""
    return ", ".join(k.strip().replace("_", " ") for k in key.split(","))

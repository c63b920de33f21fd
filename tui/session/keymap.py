"""What `keys:` in compaction.yaml may remap: every binding's id in the app, checked
before the app opens (it reads every screen's bindings, so only the command line that
opens the app imports it)."""

from __future__ import annotations

from textual.binding import Binding

from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.screens.browser import SessionBrowser
from compaction_inspector.tui.screens.compare import CompareScreen
from compaction_inspector.tui.screens.help import HelpScreen
from compaction_inspector.tui.screens.sweep import SweepScreen
from compaction_inspector.tui.session.keys import SESSION_KEYS
from compaction_inspector.tui.widgets.transcript import TranscriptView


def key_ids() -> frozenset[str]:
    """Every id `keys:` in compaction.yaml can remap: the bindings of the app and of each
    of its screens and widgets."""

    owners = (InspectorApp, SessionBrowser, CompareScreen, HelpScreen, SweepScreen, TranscriptView)
    bindings = [*SESSION_KEYS, *(b for owner in owners for b in owner.BINDINGS)]
    return frozenset(b.id for b in bindings if isinstance(b, Binding) and b.id)


def check_keymap(keys: dict[str, str]) -> None:
    """Raises ValueError naming a `keys:` entry whose id no binding has, or that gives no key."""
    known = key_ids()
    for name, key in keys.items():
        if name not in known:
            raise ValueError(f"keys: no action {name!r}; the actions are: {', '.join(sorted(known))}")
        if not key.strip():
            raise ValueError(f"keys: {name} is given no key")

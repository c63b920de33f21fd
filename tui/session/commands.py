"""Command-palette entries for every strategy, preset, export and view toggle; on the
session list, a sort by each column shown."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from compaction_inspector.core.measuring.tokens import AUTO, TOKENIZER_CHOICES
from compaction_inspector.tui.session.screen import SessionScreen

# the session screen's actions the palette offers beside its strategies, presets and tokenizers
ACTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "Compare every strategy on this session",
        "Each replayed and priced: compactions, pressure, cache re-written, cost against the real",
        "compare_strategies",
    ),
    (
        "Sweep this strategy over the sessions in this folder",
        "Its settings over a grid, every session replayed: the trade-off front",
        "sweep_folder",
    ),
    (
        "Export: SVG screenshot and Markdown diff",
        "Write the current view and the step's diff and stats",
        "export",
    ),
    (
        "Export: HTML report",
        "One self-contained HTML file: the timeline, own compactions, every strategy's steps",
        "report",
    ),
    ("Write checkpoint", "Append a checkpoint for the message under the cursor to memory/", "checkpoint"),
    ("Save to compaction.yaml", "Write the current settings atomically", "save_config"),
    (
        "View: cycle boundaries (both, volleys, rounds, none)",
        "Which boundaries the transcript marks",
        "cycle_boundaries",
    ),
    (
        "View: unified / side-by-side diff",
        "Show a step's before and after merged or side by side",
        "toggle_split",
    ),
    ("View: show / hide sidechains", "Sub-agent messages set aside from the main chain", "toggle_sidechain"),
    ("Timeline: compare with another policy", "Cycle the second curve on the timeline", "cycle_compare"),
    ("Step: reset to before", "Show the transcript before the strategy", "step_reset"),
    ("Step: run to the end", "Show the strategy's final result", "step_end"),
    ("Help: keys", "Every key and what it does", "help"),
)


class InspectorCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        """The commands of the screen the palette was opened on."""
        from compaction_inspector.tui.screens.browser import SessionBrowser  # not imported at start

        screen = self.screen  # every entry runs one of its actions, as a key would
        if isinstance(screen, SessionBrowser):
            return [
                (f"Sort sessions by {label}", "Again to reverse the order", partial(screen.sort_by, key))
                for label, key, _ in screen.columns
            ] + [
                (
                    "Sweep these sessions",
                    "A strategy's settings over the sessions the filter leaves: the trade-off front",
                    partial(screen.run_action, "sweep"),
                ),
                ("Help: keys", "Every key of the session list", partial(screen.run_action, "help")),
            ]
        if not isinstance(screen, SessionScreen):
            return []
        catalogue = screen.config.catalogue
        out: list[tuple[str, str, Callable[[], object]]] = [
            (
                f"Strategy: {s.label}",
                s.description,  # most name their agent first: "Cline: at 0.9 …"
                partial(screen.run_action, f"strategy('{name}')"),
            )
            for name, s in catalogue.strategies.items()
        ]
        out += [
            (f"Preset: {name}", p.description, partial(screen.run_action, f"preset('{name}')"))
            for name, p in catalogue.presets.items()
        ]
        out += [
            (
                f"Tokenizer: {name}",
                "Count with the session's model's tokenizer"
                if name == AUTO
                else f"Count every message with {name}; the figures are refitted to the reports",
                partial(screen.run_action, f"tokenizer('{name}')"),
            )
            for name in TOKENIZER_CHOICES
        ]
        out += [(name, what, partial(screen.run_action, action)) for name, what, action in ACTIONS]
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)

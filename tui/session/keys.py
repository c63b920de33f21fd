"""The session screen's keys: each with an id (compaction.yaml's `keys:` remaps it by id)
and a description (the footer, the help screen and the palette show it). The number
keys choose the first nine strategies of the agents the app is built with (the front end's
catalogue: a screen's bindings are made with its class); the palette has every one."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from compaction_inspector.core.agents.registry import CATALOGUE

HELP = Binding("question_mark,f1", "help", "Help", id="help")

SESSION_KEYS: list[BindingType] = [
    Binding("n", "step(1)", "Next step", id="step_next"),
    Binding("p", "step(-1)", "Prev step", id="step_prev"),
    Binding("e", "step_end", "End", id="step_end"),
    Binding("r", "step_reset", "Reset", id="step_reset"),
    *(
        Binding(str(number), f"strategy('{name}')", s.label, show=False, id=f"strategy_{s.config_key}")
        for number, (name, s) in enumerate(CATALOGUE.strategies.items(), start=1)
        if number <= 9  # the rest are in the palette
    ),
    Binding("d", "toggle_split", "Split diff", id="toggle_split"),
    # the same key while split, so the footer names what it does then
    Binding("d", "unsplit", "Unified diff", id="unsplit"),
    Binding(
        "v",
        "toggle_side",
        "Hide or show the side panel (narrow: swap it in)",
        show=False,
        id="toggle_side",
    ),
    Binding("o", "own_compactions", "Own compactions", show=False, id="own_compactions"),
    Binding("a", "open_subagent", "Sub-agent", show=False, id="open_subagent"),
    Binding("b", "cycle_boundaries", "Boundaries", id="cycle_boundaries"),
    Binding("s", "toggle_sidechain", "Sidechains", show=False, id="toggle_sidechain"),
    Binding("slash", "search", "Search", id="search"),
    Binding("t", "tune('target', -1)", "What it keeps −", show=False, id="target_down"),
    Binding("T", "tune('target', 1)", "What it keeps +", show=False, id="target_up"),
    Binding("h", "tune('thresholds', -1)", "Its trigger −", show=False, id="thresholds_down"),
    Binding("H", "tune('thresholds', 1)", "Its trigger +", show=False, id="thresholds_up"),
    Binding("w", "tune('window', -1)", "Window −10%", show=False, id="window_down"),
    Binding("W", "tune('window', 1)", "Window +10%", show=False, id="window_up"),
    Binding("c", "cycle_compare", "Compare", show=False, id="cycle_compare"),
    Binding("C", "compare_strategies", "Every strategy, compared", show=False, id="compare_strategies"),
    Binding(
        "l",
        "focus_timeline",
        "Timeline cursor: ← → a round, enter shows it",
        show=False,
        id="focus_timeline",
    ),
    Binding("comma", "request(-1)", "Prev request", show=False, id="request_prev"),
    Binding("full_stop", "request(1)", "Next request", show=False, id="request_next"),
    Binding("ctrl+s", "save_config", "Save config", id="save_config"),
    Binding(
        "A", "apply_setting", "Write the setting to the agent's own settings", show=False, id="apply_setting"
    ),
    Binding("x", "export", "Export", id="export"),
    Binding("R", "report", "HTML report", show=False, id="report"),
    Binding("m", "checkpoint", "Checkpoint", show=False, id="checkpoint"),
    HELP,
]

"""One session shown: the transcript, the gauge, the strategy panel and the timeline.

The screen owns its state as reactives (`inspection`, `strategy`, `result`, `step`,
`mode`); any change to them redraws the view once, and the panes own how they show it.
Loading, counting, strategy runs, replays and following the file are its work
(tui/session/work.py), posting messages handled here; once none is under way the screen
posts `Settled`. A sub-agent opens as a screen of its own on top.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, ProgressBar, Static

from compaction_inspector.core.config import Config, WindowSource
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.replaying.simulation import AS_IT_RAN
from compaction_inspector.core.sessions import subagent
from compaction_inspector.core.strategies import (
    DEFAULT,
    CompactionResult,
    OptionError,
    Stats,
    Step,
)
from compaction_inspector.core.text import visible
from compaction_inspector.tui import heap
from compaction_inspector.tui.screens.help import HelpScreen, acting, key_of
from compaction_inspector.tui.session import comparing, figures, loading, messages, replays, writing
from compaction_inspector.tui.session.demo import Demo
from compaction_inspector.tui.session.keys import SESSION_KEYS
from compaction_inspector.tui.session.listing_cache import Source
from compaction_inspector.tui.session.work import Work
from compaction_inspector.tui.text import safe
from compaction_inspector.tui.widgets.gauge import PressureGauge
from compaction_inspector.tui.widgets.panes import TranscriptPanes
from compaction_inspector.tui.widgets.status_line import StatusLine
from compaction_inspector.tui.widgets.strategy_panel import StrategyPanel
from compaction_inspector.tui.widgets.timeline import Timeline
from compaction_inspector.tui.widgets.transcript import TranscriptView

# what the timeline's second curve cycles through: nothing, the baseline, each strategy a replay suits
OWN = "own"  # the mode that steps through the transcript's own compactions


class SessionScreen(Screen[None]):
    BINDINGS = SESSION_KEYS

    inspection: var[Inspection | None] = var(None, always_update=True)
    strategy = var(DEFAULT)
    result: var[CompactionResult[Stats] | None] = var(None, always_update=True)
    step = var(-1)
    mode = var("strategy")  # or OWN

    def __init__(
        self,
        path: Path,
        config: Config,
        *,
        request: int | None = None,
        follow: bool = False,
        demo: bool = False,
        export_dir: Path = Path("."),
        given: Session | None = None,
        subagent: bool = False,
        strategy: str | None = None,
    ) -> None:
        """`given`: a session no file holds alone (a sub-agent kept inline in `path`);
        `subagent`: shown on top of the session that started it (escape returns);
        `strategy`: the one shown first (default the app's)."""
        super().__init__()
        if strategy is not None:
            self.set_reactive(SessionScreen.strategy, strategy)
        self.path, self.request, self.follow, self.demo = path, request, follow, demo
        self.export_dir, self.subagent = export_dir, subagent
        self._config, self._given = config, given
        self.demo_runner: Demo | None = None
        self.wanted_step: int | None = None  # a step the tour asked for while the strategy ran
        self.selection = ""
        self.tuned = False  # the status line shows the window and thresholds once they are tuned
        self.compare = "none"
        self._waiting = False  # following a file that cannot be read yet
        self._strategy_result: CompactionResult[Stats] | None = None  # the strategy's, while OWN is shown
        self._ladders: figures.Ladders = {}  # where each tuned setting began, and the presses since
        self.runs = Work(self, self._settled)  # work under way, by kind
        self._redraw_queued = False
        self.previewed = False  # the first rows of a large file were shown while it was read

    # --- what the screen shows -------------------------------------------------------------

    @property
    def config(self) -> Config:
        """The config the session is read under: the command line's, the session's own
        window applied once it is read, and what was tuned since."""
        return self._config

    @property
    def session(self) -> Session | None:
        return self.inspection.session if self.inspection is not None else None

    @property
    def shown_name(self) -> str:
        """The file's name as the title shows it: a name can hold escape sequences too."""
        return visible(self.path.name)

    @property
    def shown_step(self) -> Step | None:
        return self.result.steps[self.step] if self.result and self.step >= 0 else None

    @property
    def panes(self) -> TranscriptPanes:
        return self.query_one(TranscriptPanes)

    @property
    def own(self) -> bool:
        return self.mode == OWN

    def compose(self) -> ComposeResult:
        yield Header()
        yield PressureGauge(id="gauge")
        with Horizontal(id="body"):
            yield TranscriptPanes(id="transcripts")
            with Vertical(id="side"):
                strategies = self.config.catalogue.strategies
                yield StrategyPanel(strategies, self.strategy, self.config.options(self.strategy), id="panel")
                yield Timeline(id="timeline")
        yield Input(placeholder="search: enter for next match, esc to close", id="search", classes="hidden")
        yield ProgressBar(id="progress", show_eta=False, classes="hidden")
        yield Static("", id="caption", classes="hidden")  # the tour's caption
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        panel = self.query_one(StrategyPanel)
        keys = self.BINDINGS, self.config.keys
        panel.keys_hint = f"({key_of(*keys, 'step_next')} next · {key_of(*keys, 'step_end')} end)"
        self.query_one("#before", TranscriptView).focus()
        self.sub_title = f"{self.shown_name} · loading…"
        self.load_session()

    # Every change of state redraws once, after the handler that made it.
    def watch_inspection(self) -> None:
        self._redraw()

    def watch_result(self) -> None:
        self._redraw()
        values = None if self.own else figures.in_force(self.config, self.strategy, self.inspection)
        if values is not None:
            self.query_one(StrategyPanel).show_in_force(values)

    def watch_step(self) -> None:
        # on the panel, not the screen: a screen's class restyles every widget on each step
        self.query_one(StrategyPanel).set_class(self.step >= 0, "-stepping")
        self._redraw()

    def watch_mode(self) -> None:
        self.query_one(StrategyPanel).show_own(self.own)

    def _redraw(self) -> None:
        if not self._redraw_queued:
            self._redraw_queued = True
            self.call_later(self._flush)

    def _flush(self) -> None:
        if self._redraw_queued:  # unless drawn meanwhile
            self.refresh_view()

    # --- work under way (tui/session/work.py), and when it is all done ------------------------

    def _settled(self) -> None:
        self.post_message(messages.Settled())
        if self.demo_runner is not None and self.demo_runner.running:
            self.demo_runner.say()  # what the stop shows, now that it is shown

    @property
    def settled(self) -> asyncio.Event:
        return self.runs.settled

    @property
    def busy(self) -> bool:
        """Some counting, strategy run or replay is still under way."""
        return self.runs.busy

    # --- loading and counting -----------------------------------------------------------------

    def load_session(self, run: int | None = None) -> None:
        first_rows = self.inspection is None
        self.runs.load(self.path, self._given, self.request, self._config, first_rows, run)

    def on_session_screen_previewed(self, event: messages.Previewed) -> None:
        """The first rows, while the rest is read: the transcript only (no figure is
        shown until the whole is read, as a part would give false ones)."""
        if not self.runs.latest("count", event.run) or self.inspection is not None:
            return
        preview = event.inspection
        source = Source(preview.session, None, preview.counter, preview.origins)
        self.panes.preview(source)
        self.previewed = True
        self.sub_title = loading.reading(self.shown_name, preview, event.total)

    def _progress(self, done: int, total: int) -> None:
        bar = self.query_one("#progress", ProgressBar)
        bar.remove_class("hidden")
        bar.update(total=max(1, total), progress=done)

    def on_session_screen_failed(self, event: messages.Failed) -> None:
        if not self.follow:
            self.runs.done("count", event.run)
            self.post_message(messages.Unreadable(self.path, event.reason))
            return
        # followed: the file may be about to be written (a new, still empty session)
        self.sub_title = f"{self.shown_name} · waiting · following"
        self.query_one("#status", Static).update(
            safe(f"Cannot open {self.path} yet: {event.reason}; trying again every second")
        )
        if not self._waiting:
            self.notify(event.reason, title="Waiting for the transcript", severity="warning", timeout=10)
        self._waiting = True
        self.set_timer(1.0, lambda: self.load_session(event.run))

    def on_session_screen_loaded(self, event: messages.Loaded) -> None:
        if not self.runs.latest("count", event.run):
            return
        self._config, self.inspection = event.inspection.config, event.inspection
        session = event.inspection.session
        heap.settle()
        self.sub_title = loading.subtitle(self.shown_name, session, self.follow)
        if self._waiting:
            self._waiting = False
            self.query_one("#status", Static).update("")
        skipped = loading.skipped(session)
        if skipped:
            self.notify(skipped, title="Some lines could not be read", severity="warning", timeout=10)
        view = self.query_one("#before", TranscriptView)
        cursor = view.cursor if self.previewed else 0  # where the reader got to in the first rows
        self.refresh_view(keep_cursor=False)
        view.set_cursor(min(cursor, max(0, len(view.entries) - 1)))
        # The strategy and the replay wait for exact counts (Counted always follows):
        # run now on the estimate, they would only slow the counting down.
        self.query_one(StrategyPanel).show_step(None, -1, running=True)
        if not event.counted:
            self.runs.count(event.inspection, event.run, self._progress)

    def on_session_screen_counted(self, event: messages.Counted) -> None:
        if not self.runs.latest("count", event.run):
            return
        self.query_one("#progress", ProgressBar).add_class("hidden")
        self.inspection = event.inspection.with_config(self._config)
        heap.settle()
        counter = event.inspection.counter
        if counter.warning:
            title = "Tokenizer" if counter.exact else "Token counts are estimates"
            self.notify(counter.warning, title=title, severity="warning", timeout=10)
        self.run_current_strategy()
        self.runs.done("count", event.run)
        if self.follow and not self.runs.following:
            self.runs.follow(self.config.catalogue.formats, self.path, event.inspection.session)
            self.call_later(self.panes.to_tail)
        if self.demo:
            self.demo = False
            Demo(self).start()

    # --- the view -------------------------------------------------------------------------------

    def refresh_view(self, keep_cursor: bool = True) -> None:
        """Redraw the transcript(s), gauge and panel for the step being shown."""
        self._redraw_queued = False
        if self.session is None or not self.is_attached:
            return
        inspection = self.inspection
        assert inspection is not None
        source = Source(inspection.session, self.result, inspection.counter, inspection.origins)
        steps = len(self.result.steps) if self.result else 0
        self.panes.show(source, self.step, steps, keep_cursor)
        self.query_one(StrategyPanel).show_step(self.result, self.step)
        state = figures.gauge_state(inspection, self.result, self.step, self.own, self.strategy)
        self.query_one(PressureGauge).update_state(state)

    # --- strategies and steps -------------------------------------------------------------------

    def run_current_strategy(self) -> None:
        if self.inspection is None:
            return
        self.query_one(StrategyPanel).show_step(None, -1, running=True)
        name = self.strategy
        self.runs.strategy(self.inspection, name, self.config.options(name))
        self.run_simulation()

    def on_session_screen_refused(self, event: messages.Refused) -> None:
        if self.runs.done(event.kind, event.run):
            self.notify(event.reason, severity="error", timeout=10)

    def on_session_screen_strategy_done(self, event: messages.StrategyDone) -> None:
        if not self.runs.done("strategy", event.run):
            return
        if self.own:  # shown once the transcript's own compactions are left
            self._strategy_result = event.result
            return
        self.result = event.result
        heap.settle()
        wanted, self.wanted_step = self.wanted_step, None
        self.step = min(self.step if wanted is None else wanted, len(event.result.steps) - 1)

    def run_simulation(self) -> None:
        if self.inspection is None or not self.query(Timeline):
            return
        self.runs.replay(self.inspection, self.strategy, self.compare)

    def on_session_screen_priced(self, event: messages.Priced) -> None:
        """The replay's run ends once it is priced too."""
        if self.runs.latest("replay", event.run):
            self.query_one(Timeline).priced(event.main, event.other, event.real)
            self.runs.done("replay", event.run)

    def on_session_screen_replayed(self, event: messages.Replayed) -> None:
        if not self.runs.latest("replay", event.run):
            return
        heap.settle()
        drawn = (
            self.config.catalogue.banded(self.strategy) == self.strategy
        )  # another strategy's rules would read as this one's
        self.query_one(Timeline).show(
            event.main, event.other, *figures.bands(self.config, self.strategy), drawn
        )

    def action_step(self, delta: int) -> None:
        if self.result is None:
            return
        index = max(-1, min(len(self.result.steps) - 1, self.step + delta))
        if index == self.step:
            self.app.bell()
            return
        self.step = index

    def action_step_end(self) -> None:
        if self.result is not None:
            self.step = len(self.result.steps) - 1

    def action_step_reset(self) -> None:
        self.step = -1

    async def action_strategy(self, name: str) -> None:
        await self.query_one(StrategyPanel).set_strategy(name, self.config.options(name))
        self._choose(name)
        # shown with the options it runs with now (the tour's, or a preset's since)
        await self.query_one(StrategyPanel).set_options(name, self.config.options(name))

    def _choose(self, name: str) -> None:
        if self.own:
            self.action_own_compactions()
        if name != self.strategy:
            self.strategy = name
            self.result, self.step = None, -1
            self.run_current_strategy()

    async def on_strategy_panel_chosen(self, event: StrategyPanel.Chosen) -> None:
        await self.action_strategy(event.strategy)

    def on_strategy_panel_changed(self, event: StrategyPanel.Changed) -> None:
        self.configure(self.config.with_options(event.strategy, event.options))
        self.run_current_strategy()

    def action_tokenizer(self, name: str) -> None:
        """Count the session again with another tokenizer (`auto`: its model's)."""
        self._config = self._config.overridden(tokenizer=name)
        self.notify(f"Counting with {name}…", title="Tokenizer", timeout=3)
        self.load_session()

    def configure(self, config: Config) -> None:
        self._config = config
        if self.inspection is not None:
            self.inspection = self.inspection.with_config(config)

    # --- toggles, tuning, search ----------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Of the two `d` bindings, the one that names what `d` does now."""
        if action in ("toggle_split", "unsplit"):  # asked before the panes are there too
            split = any(panes.split for panes in self.query(TranscriptPanes))
            return split == (action == "unsplit")
        return True

    def action_unsplit(self) -> None:
        self.action_toggle_split()

    def action_toggle_split(self) -> None:
        self.panes.toggle_split()

    def action_cycle_boundaries(self) -> None:
        self.panes.cycle_boundaries()

    def action_toggle_sidechain(self) -> None:
        self.panes.toggle_sidechain()

    def action_request(self, delta: int) -> None:
        """Open the previous or next request of a proxy log (the number wraps around)."""
        session = self.session
        if session is None or session.request_count <= 1:
            self.notify("This file holds one request", timeout=3)
            return
        self.request = (session.request_index + delta) % session.request_count + 1
        self.result, self.step = None, -1
        self.sub_title = f"{self.shown_name} · request {self.request}/{session.request_count} · loading…"
        self.load_session()

    def action_own_compactions(self) -> None:
        """Step through the compactions the transcript itself records (o again: back)."""
        if self.inspection is None:
            return
        if self.own:
            self.mode, self.result, self.step = "strategy", self._strategy_result, -1
            return
        if not self.inspection.session.compactions:
            self.notify("This transcript records no compaction of its own", timeout=4)
            return
        self.runs.own(self.inspection)

    def on_session_screen_own_done(self, event: messages.OwnDone) -> None:
        if not self.runs.done("own", event.run):
            return
        self._strategy_result = self.result
        self.mode, self.result, self.step = OWN, event.result, 0
        self.notify("The transcript's own compactions: n / p step through them, o returns", timeout=5)

    def action_toggle_side(self) -> None:
        """Hide the side panel so the transcripts take the width; on a narrow terminal,
        where it is hidden, swap it in for the transcript."""
        self.toggle_class("-side")  # the panes see their new width and unsplit if it is too narrow

    def action_cycle_compare(self) -> None:
        cycle = ("none", AS_IT_RAN, *self.config.catalogue.replayed)
        self.compare = cycle[(cycle.index(self.compare) + 1) % len(cycle)]
        self.notify(f"Timeline compares with: {self.compare}", timeout=2)
        self.run_simulation()

    async def action_tune(self, what: str, delta: int) -> None:
        try:
            context = self.inspection.context if self.inspection is not None else None
            config, self._ladders = figures.tuned(
                self.config, self.strategy, what, delta, self._ladders, context
            )
        except OptionError as exc:
            self.notify(str(exc), severity="warning", timeout=3)
            return
        self.configure(config)
        await self.query_one(StrategyPanel).set_options(self.strategy, config.options(self.strategy))
        self.tuned = True
        self.show_status()
        self.run_current_strategy()

    def action_preset(self, name: str) -> None:
        self.configure(self.config.with_preset(name, WindowSource("key", f"preset {name}")))
        self.notify(self.config.catalogue.presets[name].description, title=f"Preset {name}", timeout=4)
        self.show_status()
        self.run_current_strategy()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.remove_class("hidden")
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search" and event.value:
            self.panes.find(event.value)

    def key_escape(self) -> None:
        box = self.query_one("#search", Input)
        focused = self.focused
        timeline = self.query_one(Timeline)
        if timeline.cursor is not None:  # the timeline's cursor mode first, wherever the focus is
            timeline.leave_cursor()
            self.query_one("#before", TranscriptView).focus()
        elif focused is not None and (
            isinstance(focused, Timeline) or self.query_one(StrategyPanel) in focused.ancestors
        ):
            self.query_one("#before", TranscriptView).focus()  # out of the options form: keys are keys again
        elif not box.has_class("hidden"):
            box.add_class("hidden")
            self.query_one("#before", TranscriptView).focus()
        elif self.subagent:  # back to the session that started it, as it was
            self.dismiss()
        else:
            self.post_message(messages.Leave())

    def action_focus_timeline(self) -> None:
        self.query_one(Timeline).enter_cursor()

    def on_timeline_jump(self, event: Timeline.Jump) -> None:
        """The transcript at the round the timeline's cursor is on: its request's last message."""
        self.panes.go_to_request(event.message_end)

    def on_transcript_view_selected(self, event: TranscriptView.Selected) -> None:
        entry = event.entry
        if entry is None:
            return
        inspection = self.inspection
        counts = inspection.agent_counts if inspection is not None else None
        point = inspection.config.account.tokens if inspection is not None else None
        self.selection = entry.status(counts, point)
        self.show_status()

    def show_status(self) -> None:
        """The message under the cursor, then the tuning once it has been changed."""
        # made from the config each time, so a preset or a new window shows at once
        tuning = figures.tuning(self.config, self.strategy) if self.tuned else ()
        # query, not query_one: a cursor move queued before the screen closed may land
        # after its widgets are gone
        for status in self.query(StatusLine):
            status.show(self.selection.split(" · "), tuning)

    # --- sub-agents -----------------------------------------------------------------------------

    def action_open_subagent(self) -> None:
        """From a Task or Agent call (or its result), open the sub-agent's own transcript
        (`<session>/subagents/agent-<id>.jsonl`, the id its result names); escape returns."""
        selected = self.panes.with_partners()
        if not selected or self.session is None:
            return
        found = subagent(self.config.catalogue, self.session, selected)
        if isinstance(found, str):
            self.notify(found, title="No sub-agent to open", severity="warning", timeout=6)
            return
        path, given = (found, None) if isinstance(found, Path) else (self.path, found)
        self.app.push_screen(
            SessionScreen(path, self._config, export_dir=self.export_dir, given=given, subagent=True)
        )

    # --- saving and exporting (tui/session/writing.py) -----------------------------------------

    def shown_view(self) -> writing.Shown:
        stepped = "own-compactions" if self.own else self.strategy
        return writing.Shown(
            self.path, self.export_dir, stepped, self.session, self.inspection, self.result, self.step
        )

    def action_compare_strategies(self) -> None:
        comparing.compare_strategies(self)

    def action_sweep_folder(self) -> None:
        comparing.sweep_folder(self)

    def on_key(self, event: events.Key) -> None:
        if self.demo_runner is not None:
            self.demo_runner.on_key(event)

    def action_apply_setting(self) -> None:
        writing.apply_setting(self, self.config, self.strategy)

    def action_save_config(self) -> None:
        writing.save_config(self, self.shown_view(), self.config, self.configure)

    def action_export(self) -> None:
        """The screen as SVG and the steps up to the one shown as Markdown, to new files."""
        writing.export(self, self.shown_view())

    def action_report(self) -> None:
        """The session's story as one HTML file (`compaction-inspector report`)."""
        compare = replays.compared(self.compare)
        writing.report(self, self.shown_view(), self.strategy, compare)

    def action_checkpoint(self) -> None:
        writing.checkpoint(self, self.shown_view())

    # --- the tour, help -------------------------------------------------------------------------

    def set_caption(self, text: str) -> None:
        """The tour's caption, in its panel (hidden when empty)."""
        panel = self.query_one("#caption", Static)
        panel.update(safe(text))
        panel.set_class(not text, "hidden")

    def action_help(self) -> None:
        more = [("escape", "Close the search or a form; leave a sub-agent; back to the session list")]
        keys = acting(self, (*self.BINDINGS, *TranscriptView.BINDINGS, *self.app.BINDINGS))
        self.app.push_screen(HelpScreen(keys, self.config.keys, more))

    # --- follow mode ----------------------------------------------------------------------------

    def on_session_screen_grown(self, event: messages.Grown) -> None:
        session, inspection = event.session, self.inspection
        if session is None or inspection is None:  # deleted (followed only once read)
            self.sub_title = f"{self.shown_name} · deleted: what was read stays shown"
            return
        view = self.query_one("#before", TranscriptView)
        at_end = self.step < 0 and view.cursor >= len(view.entries) - 1
        self.inspection = inspection.appended(session)
        self.sub_title = loading.subtitle(self.shown_name, session, following=True)
        self.refresh_view()
        if at_end:  # the cursor was on the last message: it follows the new ones
            view.set_cursor(len(view.entries) - 1)
        self.run_current_strategy()

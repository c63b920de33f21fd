"""Compaction Inspector: the Textual app.

State lives here (session, counts, config, the strategy result and the step shown);
widgets only draw it. Loading, exact counting, strategy runs and simulations run in
workers, so the first screen appears at once and keys stay responsive.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, ProgressBar, Static
from textual.worker import get_current_worker

from compaction_inspector.core.compactions import as_steps, real_compactions
from compaction_inspector.core.config import PRESETS, Config, ConfigError, save
from compaction_inspector.core.context_model import ContextModel, fit
from compaction_inspector.core.files import WriteRefused, free_stem, write_atomic
from compaction_inspector.core.formats import LoadError, load
from compaction_inspector.core.markdown import compaction_markdown
from compaction_inspector.core.model import Message, Session
from compaction_inspector.core.pressure import Window, live_start
from compaction_inspector.core.segment import Segments
from compaction_inspector.core.sessions import inline_subagent, subagent_file
from compaction_inspector.core.simulate import Cancelled, Policy, Simulation, simulate
from compaction_inspector.core.strategies import (
    REGISTRY,
    CompactionResult,
    Context,
    OptionError,
    Step,
    hysteresis,
)
from compaction_inspector.core.strategies import run as run_strategy
from compaction_inspector.core.text import counted, visible
from compaction_inspector.core.token_cache import load_counts, store_counts
from compaction_inspector.core.tokens import TokenCounter, make_counter
from compaction_inspector.tui import heap
from compaction_inspector.tui.commands import InspectorCommands
from compaction_inspector.tui.demo import Demo
from compaction_inspector.tui.entries import Listing
from compaction_inspector.tui.follow import Follower
from compaction_inspector.tui.listing_cache import Key, ListingCache, Source
from compaction_inspector.tui.screens.browser import SessionBrowser
from compaction_inspector.tui.screens.help import HelpScreen, key_names
from compaction_inspector.tui.text import safe
from compaction_inspector.tui.widgets.gauge import GaugeState, PressureGauge
from compaction_inspector.tui.widgets.strategy_panel import StrategyPanel
from compaction_inspector.tui.widgets.timeline import Timeline
from compaction_inspector.tui.widgets.transcript import BOUNDARY_MODES, TranscriptView

TIMELINE_POINTS = 200
PREPARE_AFTER_S = 0.08
NO_COMPACTION = "no compaction"
SPLIT_MIN = 30  # cells a side-by-side pane needs to show a message's head line
# what the timeline's second curve cycles through: nothing, the baseline, each strategy a replay suits
COMPARE_CYCLE = ("none", NO_COMPACTION, *(name for name, s in REGISTRY.items() if s.timeline))


class InspectorApp(App[None]):
    TITLE = "Compaction Inspector"
    CSS_PATH = "app.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (60, "-medium"), (120, "-wide"), (200, "-huge")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    COMMANDS = App.COMMANDS | {InspectorCommands}

    BINDINGS = [
        Binding("n", "step(1)", "Next step", id="step_next"),
        Binding("p", "step(-1)", "Prev step", id="step_prev"),
        Binding("e", "step_end", "End", id="step_end"),
        Binding("r", "step_reset", "Reset", id="step_reset"),
        *(
            Binding(str(number), f"strategy('{name}')", s.label, show=False, id=f"strategy_{s.config_key}")
            for number, (name, s) in enumerate(REGISTRY.items(), start=1)
        ),
        Binding("d", "toggle_split", "Split diff", id="toggle_split"),
        # the same key while split, so the footer names what it does then
        Binding("d", "unsplit", "Unified diff", id="unsplit"),
        Binding("v", "toggle_side", "Side panel", show=False, id="toggle_side"),
        Binding("o", "own_compactions", "Own compactions", show=False, id="own_compactions"),
        Binding("a", "open_subagent", "Sub-agent", show=False, id="open_subagent"),
        Binding("b", "cycle_boundaries", "Boundaries", id="cycle_boundaries"),
        Binding("s", "toggle_sidechain", "Sidechains", show=False, id="toggle_sidechain"),
        Binding("slash", "search", "Search", id="search"),
        Binding("t", "tune('target', -1)", "Target −", show=False, id="target_down"),
        Binding("T", "tune('target', 1)", "Target +", show=False, id="target_up"),
        Binding("h", "tune('thresholds', -1)", "Thresholds −", show=False, id="thresholds_down"),
        Binding("H", "tune('thresholds', 1)", "Thresholds +", show=False, id="thresholds_up"),
        Binding("w", "tune('window', -1)", "Window −10%", show=False, id="window_down"),
        Binding("W", "tune('window', 1)", "Window +10%", show=False, id="window_up"),
        Binding("c", "cycle_compare", "Compare", show=False, id="cycle_compare"),
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
        Binding("x", "export", "Export", id="export"),
        Binding("m", "checkpoint", "Checkpoint", show=False, id="checkpoint"),
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(
        self,
        path: str | Path,
        config: Config | None = None,
        *,
        request: int | None = None,
        follow: bool = False,
        demo: bool = False,
        config_warning: str | None = None,
        export_dir: str | Path = ".",
        note: str | None = None,
        browse: list[tuple[str, Path]] | None = None,
    ) -> None:
        """`browse`: where to list the user's sessions from; the app opens on that list
        and `path` is opened only once one is chosen."""
        super().__init__()
        self.path = Path(path)
        self.browser = SessionBrowser(browse) if browse else None
        self.config = config or Config()
        self.request = request
        self.follow = follow
        self.demo = demo
        self.config_warning = config_warning
        self.note = note
        self.export_dir = Path(export_dir)
        self.session: Session | None = None
        self.counter: TokenCounter = make_counter("chars4", self.config.media_tokens)
        self.exact = False
        self.tokens: list[int] = []
        self.strategy = hysteresis.NAME
        self.result: CompactionResult | None = None
        self.step_index = -1
        self.split = False
        self.show_sidechain = False
        self.compare = "none"
        self.simulations: tuple[Simulation | None, Simulation | None] = (None, None)
        self.follower: Follower | None = None
        self.origins: dict[Message, int] = {}
        self.demo_runner: Demo | None = None
        self.selection = ""
        self.tuned = False  # the status line shows the window and thresholds once they are tuned
        self.caption = ""
        self.listings = ListingCache()
        self._prepare_timer: Timer | None = None
        self.model: ContextModel | None = None  # the session's, fitted with `counter`
        self._waiting = False  # following a file that cannot be read yet
        self.own: CompactionResult | None = None  # the transcript's own compactions, while shown
        # the sessions a sub-agent shown was opened from, with the cursor each had
        self._parents: list[tuple[Path, int]] = []
        self._given: Session | None = None  # a session to show that no file holds alone
        self._cursor_after_load: int | None = None
        self._strategy_result: CompactionResult | None = None  # the strategy's, kept meanwhile
        self.live = 0  # where the context the agent sends next starts
        self._segments: Segments | None = None  # the session's indexes, kept between replays
        self._window_ladder = (0, 0)  # the window `w`/`W` started from, and how many ×1.1 rungs up

    # --- layout -----------------------------------------------------------------------

    @property
    def shown_name(self) -> str:
        """The file's name as the title shows it: a name can hold escape sequences too."""
        return visible(self.path.name)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text shown, not obeyed: what it says comes from
        transcripts, file names and configs, never markup (the `markup` asked for is ignored)."""
        super().notify(
            visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False
        )

    def compose(self) -> ComposeResult:
        yield Header()
        yield PressureGauge(id="gauge")
        with Horizontal(id="body"):
            with Horizontal(id="transcripts"):
                yield TranscriptView(id="before")
                yield TranscriptView(id="after", classes="hidden")
            with Vertical(id="side"):
                yield StrategyPanel(self.strategy, dict(self.config.strategies), id="panel")
                yield Timeline(id="timeline")
        yield Input(placeholder="search: enter for next match, esc to close", id="search", classes="hidden")
        yield ProgressBar(id="progress", show_eta=False, classes="hidden")
        yield Static("", id="status")
        yield Footer()

    def key_of(self, binding_id: str) -> str:
        """The key that runs a binding now, remapped or not, as the help names it."""
        binding = next(b for b in self.BINDINGS if isinstance(b, Binding) and b.id == binding_id)
        return key_names(self.config.keys.get(binding_id, binding.key).split(",")[0])

    def on_mount(self) -> None:
        if self.config.keys:
            self.set_keymap(dict(self.config.keys))
        self.query_one(
            StrategyPanel
        ).keys_hint = f"({self.key_of('step_next')} next · {self.key_of('step_end')} end)"
        if self.note:
            self.notify(self.note, timeout=8)
        if self.config_warning:
            self.notify(self.config_warning, title="Config not used", severity="warning", timeout=10)
        self.query_one("#before", TranscriptView).focus()
        if self.browser is not None:
            self.install_screen(
                self.browser, "browser"
            )  # installed: kept, with its cursor, while a session is shown
            self.push_screen("browser")
            return
        self.sub_title = f"{self.shown_name} · loading…"
        self.load_session()

    def on_session_browser_chosen(self, event: SessionBrowser.Chosen) -> None:
        """Open the session chosen in the browser, in place of the one shown."""
        self.pop_screen()
        self._parents.clear()
        self.open_path(Path(event.path))

    def open_path(self, path: Path, session: Session | None = None, cursor: int | None = None) -> None:
        """Open another transcript in place of the one shown: the file at `path`, or
        `session` when given (a sub-agent kept inline in `path`); `cursor` is where the
        cursor goes once it is shown."""
        self.path = path
        self._given, self._cursor_after_load = session, cursor
        self.session, self.result, self.own, self._strategy_result = None, None, None, None
        self.step_index, self.model, self._segments, self.simulations = -1, None, None, (None, None)
        self.sub_title = f"{self.shown_name} · loading…"
        self.load_session()

    def action_open_subagent(self) -> None:
        """From a Task or Agent call (or its result), open the sub-agent's own transcript
        (`<session>/subagents/agent-<id>.jsonl`, the id its result names); escape returns."""
        view = self.query_one("#before", TranscriptView)
        entry = view.current
        if entry is None or self.session is None:
            return
        near = self._with_partners(view.cursor)
        found = subagent_file(self.path, near)
        inline = inline_subagent(self.session.sidechain, near) if found is None else ()
        if found is None and not inline:
            self.notify(
                "No sub-agent here: a Task or Agent call (or its result) opens the transcript it started",
                timeout=4,
            )
            return
        self._parents.append((self.path, view.cursor))
        if found is not None:
            self.open_path(found)
            return
        # kept inline, as older Claude Code did: its sidechain, shown as a transcript of its own
        self.open_path(
            self.path, dataclasses.replace(self.session, messages=inline, sidechain=(), content_hash=None)
        )

    def _with_partners(self, k: int) -> list[Message]:
        """The message at position `k` of the transcript and the calls or results it pairs with."""
        view = self.query_one("#before", TranscriptView)
        m = view.entries.message(k)
        found = [view.entries.partner(k, t, result=True) for t in m.tool_use_ids()]
        found += [view.entries.partner(k, t, result=False) for t in m.tool_result_ids()]
        return [m, *(view.entries.message(q) for q in found if q is not None)]

    # --- loading and counting -----------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def load_session(self) -> None:
        try:
            session = self._given or load(self.path, request=self.request)
        except LoadError as exc:
            self.call_from_thread(self._load_failed, str(exc))
            return
        estimate = make_counter("chars4", self.config.media_tokens)
        tokens = estimate.count_all(session.messages)
        model = fit(session, estimate, self.config.overhead_tokens)
        self.call_from_thread(self._loaded, session, estimate, tokens, model)
        self._count_exact(session)

    def _count_exact(self, session: Session) -> None:
        counter = make_counter(self.config.tokenizer, self.config.media_tokens)
        if not counter.exact:
            model = fit(session, counter, self.config.overhead_tokens)
            self.call_from_thread(self._counting_done, session, counter, self.tokens, model)
            return
        worker = get_current_worker()
        if not load_counts(session, counter):
            total = len(session.messages) + len(session.sidechain)
            self.call_from_thread(self._progress, 0, total)

            def progress(done: int, _todo: int) -> None:
                self.call_from_thread(self._progress, done, total)

            counter.count_all(session.messages, progress=progress)
            store_counts(session, counter)
        tokens = counter.count_all(session.messages)
        counter.count_all(session.sidechain)  # here, not on the UI thread when they are shown
        model = fit(session, counter, self.config.overhead_tokens)
        if not worker.is_cancelled:
            self.call_from_thread(self._counting_done, session, counter, tokens, model)

    def _progress(self, done: int, total: int) -> None:
        bar = self.query_one("#progress", ProgressBar)
        bar.remove_class("hidden")
        bar.update(total=max(1, total), progress=done)

    def _load_failed(self, reason: str) -> None:
        if self.browser is not None:  # chosen from the list: say why, and back to it
            self.notify(reason, title=f"Cannot open {self.shown_name}", severity="error", timeout=8)
            self.push_screen("browser")
            return
        if not self.follow:  # nothing to show: end with the reason, as the command line does
            self.exit(return_code=2, message=safe(f"compaction-inspector: {self.path}: {reason}"))
            return
        # followed: the file may be about to be written (a new, still empty session)
        self.sub_title = f"{self.shown_name} · waiting · following"
        self.query_one("#status", Static).update(
            safe(f"Cannot open {self.path} yet: {reason}; trying again every second")
        )
        if not self._waiting:
            self.notify(reason, title="Waiting for the transcript", severity="warning", timeout=10)
        self._waiting = True
        self.set_timer(1.0, self.load_session)

    def _loaded(
        self, session: Session, counter: TokenCounter, tokens: list[int], model: ContextModel
    ) -> None:
        self.config = self.config.for_session(session)
        self.session, self.counter, self.tokens, self.exact, self.model = (
            session,
            counter,
            tokens,
            False,
            model,
        )
        self.origins = {m: i for i, m in enumerate(session.messages)}
        self.live = live_start(session.messages)
        heap.settle()
        fmt = session.format + (
            f" · request {session.request_index + 1}/{session.request_count}"
            if session.request_count > 1
            else ""
        )
        following = " · following" if self.follow else ""
        sliced = " · a slice: figures estimated" if session.metadata.get("slice") is True else ""
        self.sub_title = (
            f"{self.shown_name} · {fmt} · {counted(len(session.messages), 'message')}{sliced}{following}"
        )
        if self._waiting:
            self._waiting = False
            self.query_one("#status", Static).update("")
        notes = [d for d in session.diagnostics if d.line is not None]
        if notes:
            self.notify(
                f"{len(notes)} line(s) skipped, first at line {notes[0].line}: {notes[0].message}",
                title="Some lines could not be read",
                severity="warning",
                timeout=10,
            )
        self.refresh_view(keep_cursor=False)
        # The strategy and the replay wait for exact counts (_counting_done always
        # follows): run now on the estimate, they would only slow the counting down.
        self.query_one(StrategyPanel).show_step(None, -1, running=True)

    def _counting_done(
        self, session: Session, counter: TokenCounter, tokens: list[int], model: ContextModel
    ) -> None:
        if session is not self.session:
            return
        self.query_one("#progress", ProgressBar).add_class("hidden")
        self.counter, self.tokens, self.exact, self.model = counter, tokens, counter.exact, model
        heap.settle()
        if counter.warning:
            self.notify(counter.warning, title="Token counts are estimates", severity="warning", timeout=10)
        self.refresh_view()
        if self._cursor_after_load is not None:  # back from a sub-agent: on the call that started it
            view = self.query_one("#before", TranscriptView)
            view.set_cursor(min(self._cursor_after_load, len(view.entries) - 1))
            self._cursor_after_load = None
        self.run_current_strategy()
        if self.follow and self.follower is None:
            self.follower = Follower(self.path, session)
            self.set_interval(1.0, self.poll_follow)
            view = self.query_one("#before", TranscriptView)
            view.set_cursor(len(view.entries) - 1)  # at the tail, so new messages are followed
        if self.demo:
            self.demo = False
            Demo(self).start()

    # --- the view -------------------------------------------------------------------------

    @property
    def measured(self) -> bool:
        """Pressure is the context the agent sent (else the messages only)."""
        return self.config.pressure == "context" and self.model is not None

    @property
    def context(self) -> Context:
        session_id = self.session.session_id if self.session else None
        window = self.config.window
        if not self.measured or self.session is None:
            touches = self.session.touches if self.session else {}
            return Context(self.counter, window, session_id, touches=touches)
        assert self.model is not None
        meter = self.model.meter(len(self.session.messages), window)
        return Context(self.counter, window, session_id, meter, self.model, self.session.touches)

    def refresh_view(self, keep_cursor: bool = True) -> None:
        """Redraw the transcript(s), gauge and panel for the step being shown."""
        if self.session is None:
            return
        before_view = self.query_one("#before", TranscriptView)
        after_view = self.query_one("#after", TranscriptView)
        listings = self._listings()
        before_view.show(listings[0], keep_cursor)
        if len(listings) > 1:
            after_view.show(listings[1], keep_cursor)
            after_view.remove_class("hidden")
            before_view.border_title = f"before step {self.step_index + 1}"
            after_view.border_title = f"after step {self.step_index + 1}"
        else:
            after_view.add_class("hidden")
            before_view.border_title = None
        self.query_one(StrategyPanel).show_step(self.result, self.step_index)
        self.update_gauge()

    @property
    def shown_step(self) -> Step | None:
        return self.result.steps[self.step_index] if self.result and self.step_index >= 0 else None

    def _listings(self) -> tuple[Listing, ...]:
        """The pane listings of the step shown; the steps either side are prepared in
        the background, so stepping through a long session redraws at once."""
        assert self.session is not None
        source = Source(self.session, self.result, self.counter, self.origins)
        made = self.listings.get(source, self._key(self.step_index))
        steps = len(self.result.steps) if self.result else 0
        around = [self._key(i) for i in (self.step_index + 1, self.step_index - 1) if -1 <= i < steps]
        if self._prepare_timer is not None:
            self._prepare_timer.stop()
        if any(key not in self.listings for key in around):
            # Once the keys pause: a build running while this step is drawn (or while
            # a key is held down) would hold the interpreter the drawing needs.
            self._prepare_timer = self.set_timer(PREPARE_AFTER_S, lambda: self._prepare(source, around))
        return made

    def _key(self, step: int) -> Key:
        return Key(step, self.split and step >= 0, self.show_sidechain and step < 0)

    # Workers taking arguments are described by hand: by default Textual describes a
    # worker with the repr of its arguments, which for a session takes seconds.
    @work(thread=True, exclusive=True, group="prepare", description="prepare listings")
    def _prepare(self, source: Source, keys: list[Key]) -> None:
        worker = get_current_worker()
        self.listings.prepare(source, keys, lambda: worker.is_cancelled)
        heap.tidy()

    def update_gauge(self) -> None:
        if self.session is None:
            return
        h = self.config.options(hysteresis.NAME)
        end = len(self.session.messages)
        reading = self.model.reading(end) if self.measured and self.model is not None else None
        tokens = reading.tokens if reading is not None else sum(self.tokens[self.live :])
        step = self.shown_step
        caption, note = "", ""
        if self.live:
            caption = "the context after the transcript's own last compaction"
        if step is not None and self.own is not None:
            caption = f"the transcript's own compaction {self.step_index + 1} of {len(self.own.steps)}"
            note = f"{step.title}: the prompts the responses either side reported"
            tokens = step.tokens_after
            reading = None  # a reported prompt: the transcript records no split of it
        elif step is not None:
            caption = f"after step {self.step_index + 1} of {self.strategy}"
            change = step.tokens_after - tokens
            scale = self.context.meter.scale
            note = (
                f"after step {self.step_index + 1}: {tokens:,} {'+' if change >= 0 else '−'} {abs(change):,} "
                f"(×{scale:.2f} the counted tokens the steps removed or added; the rest is as measured)"
                if reading is not None
                else f"after step {self.step_index + 1}: the messages the steps leave, counted"
            )
            tokens = step.tokens_after
            reading = reading.after(tokens) if reading is not None else None
        model = self.model
        self.query_one(PressureGauge).update_state(
            GaugeState(
                tokens=tokens,
                context_window=self.config.window.context_window,
                reserved_output=self.config.window.reserved_output,
                thresholds=h.thresholds,
                target=h.target,
                auto_compact=self.config.auto_compact_tokens,
                auto_compact_rule=self.config.point.rule if self.config.point else "",
                label=self.counter.label,
                estimate=not self.counter.exact,
                caption=caption,
                reading=reading,
                fit=model.describe_fit() if model is not None else "",
                step_note=note,
            )
        )

    # --- strategies and steps ----------------------------------------------------------------

    def run_current_strategy(self) -> None:
        if self.session is None:
            return
        self.query_one(StrategyPanel).show_step(None, -1, running=True)
        self._run_strategy(self.strategy, self.config.options(self.strategy), self.context)
        self.run_simulation()

    @work(thread=True, exclusive=True, group="strategy", description="run strategy")
    def _run_strategy(self, name: str, options: Any, context: Context) -> None:
        assert self.session is not None
        result = run_strategy(name, self.session.messages[self.live :], options, context)
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._strategy_done, name, result)

    def _strategy_done(self, name: str, result: CompactionResult) -> None:
        if name != self.strategy:
            return
        if self.own is not None:  # shown once the transcript's own compactions are left
            self._strategy_result = result
            return
        self.result = result
        heap.settle()
        self.step_index = min(self.step_index, len(result.steps) - 1)
        self.refresh_view()

    def run_simulation(self) -> None:
        timelines = self.query(Timeline)  # none while the app closes over a late count
        if self.session is None or not timelines:
            return
        timelines.first().message = "Simulating…"
        self._simulate(self.config, self.context, self.compare)

    @work(thread=True, exclusive=True, group="simulate", description="replay")
    def _simulate(self, config: Config, context: Context, compare: str) -> None:
        assert self.session is not None
        worker = get_current_worker()
        name = self.strategy if REGISTRY[self.strategy].timeline else hysteresis.NAME
        stop = lambda: worker.is_cancelled  # noqa: E731 (a newer replay supersedes this one)
        segments = self._segments
        if segments is None or segments.messages is not self.session.messages or segments.context != context:
            segments = self._segments = Segments(self.session.messages, context)
        # The chart has far fewer columns than a long session has rounds.
        every = max(1, len(segments.round_ends) // TIMELINE_POINTS)
        try:
            main = simulate(
                self.session.messages,
                Policy(name, config.options(name)),
                context,
                stop,
                every,
                segments=segments,
            )
        except Cancelled:
            return
        other = None
        if compare != "none":
            policy = Policy(None)
            if compare != NO_COMPACTION:
                declared, options = REGISTRY[compare], config.options(compare)
                policy = Policy(compare, declared.contrast(options) if declared.contrast else options)
            try:
                other = simulate(self.session.messages, policy, context, stop, every, segments=segments)
            except Cancelled:
                return
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._simulated, main, other)

    def _simulated(self, main: Simulation, other: Simulation | None) -> None:
        self.simulations = (main, other)
        heap.settle()
        h = self.config.options(hysteresis.NAME)
        for timeline in self.query(Timeline):  # none while the app closes over a late replay
            timeline.show(main, other, h.thresholds, h.target)

    def action_step(self, delta: int) -> None:
        if self.result is None:
            return
        index = max(-1, min(len(self.result.steps) - 1, self.step_index + delta))
        if index == self.step_index:
            self.bell()
            return
        self.step_index = index
        self.refresh_view()

    def action_step_end(self) -> None:
        if self.result is not None:
            self.step_index = len(self.result.steps) - 1
            self.refresh_view()

    def action_step_reset(self) -> None:
        self.step_index = -1
        self.refresh_view()

    async def action_strategy(self, name: str) -> None:
        await self.query_one(StrategyPanel).set_strategy(name)
        self._choose(name)

    def _choose(self, name: str) -> None:
        if self.own is not None:
            self.action_own_compactions()
        if name != self.strategy:
            self.strategy = name
            self.result = None
            self.step_index = -1
            self.refresh_view()
            self.run_current_strategy()

    def on_strategy_panel_changed(self, event: StrategyPanel.Changed) -> None:
        self.config = self.config.with_options(event.strategy, event.options)
        if event.strategy != self.strategy:
            self._choose(event.strategy)
        else:
            self.run_current_strategy()
            self.refresh_view()

    # --- toggles, tuning, search -------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Of the two `d` bindings, the one that names what `d` does now; on the session
        list, none of a session's keys (typing there filters)."""
        if self.browser is not None and self.screen is self.browser:
            return action in ("quit", "help", "command_palette")
        if action == "toggle_split":
            return not self.split
        if action == "unsplit":
            return self.split
        return True

    def action_unsplit(self) -> None:
        self.action_toggle_split()

    def action_toggle_split(self) -> None:
        if not self.split and not self._split_fits():
            return
        self.split = not self.split
        if self.step_index < 0:
            self.notify("Step forward (n) to see a before/after diff.", timeout=3)
        self.refresh_bindings()
        self.refresh_view()

    def _split_fits(self) -> bool:
        """Side by side needs SPLIT_MIN cells a pane; narrower, it says so and the diff stays unified."""
        width = self.query_one("#transcripts").size.width
        if width >= 2 * SPLIT_MIN:
            return True
        self.notify(
            f"Side by side needs {2 * SPLIT_MIN} columns for the transcripts, {SPLIT_MIN} a side; "
            f"they have {width} here, so the diff stays unified (v hides the side panel).",
            title="Unified diff",
            timeout=5,
        )
        return False

    def on_resize(self) -> None:
        if self.split:  # once the new breakpoints' styles are applied and laid out
            self.set_timer(0.1, self._unsplit_if_narrow)

    def _unsplit_if_narrow(self) -> None:
        if self.split and not self._split_fits():
            self.split = False
            self.refresh_bindings()
            self.refresh_view()

    def action_cycle_boundaries(self) -> None:
        views = self.query(TranscriptView)
        mode = BOUNDARY_MODES[(BOUNDARY_MODES.index(views.first().boundaries) + 1) % len(BOUNDARY_MODES)]
        for view in views:
            view.boundaries = mode
        self.notify(f"Boundaries: {mode}", timeout=2)

    def action_toggle_sidechain(self) -> None:
        self.show_sidechain = not self.show_sidechain
        count = len(self.session.sidechain) if self.session else 0
        self.notify(
            f"Sidechains {'shown' if self.show_sidechain else 'hidden'} ({count} messages)", timeout=2
        )
        self.refresh_view()

    def action_request(self, delta: int) -> None:
        """Open the previous or next request of a proxy log (the number wraps around)."""
        session = self.session
        if session is None or session.request_count <= 1:
            self.notify("This file holds one request", timeout=3)
            return
        self.request = (session.request_index + delta) % session.request_count + 1
        self.result, self.step_index = None, -1
        self.sub_title = f"{self.shown_name} · request {self.request}/{session.request_count} · loading…"
        self.load_session()

    def action_own_compactions(self) -> None:
        """Step through the compactions the transcript itself records (o again: back)."""
        if self.session is None or self.model is None:
            return
        if self.own is not None:
            self.own, self.result, self.step_index = None, self._strategy_result, -1
            self.refresh_view()
            return
        if not self.session.compactions:
            self.notify("This transcript records no compaction of its own", timeout=4)
            return
        self._own(self.session, self.model, self.context)

    @work(thread=True, exclusive=True, group="own", description="own compactions")
    def _own(self, session: Session, model: ContextModel, context: Context) -> None:
        found = real_compactions(session, model, context.counter, self.config)
        self.call_from_thread(self._own_done, session, as_steps(session, found, context))

    def _own_done(self, session: Session, result: CompactionResult) -> None:
        if session is not self.session:
            return
        self._strategy_result, self.result, self.own = self.result, result, result
        self.step_index = 0
        self.refresh_view()
        self.notify("The transcript's own compactions: n / p step through them, o returns", timeout=5)

    def action_toggle_side(self) -> None:
        """On a narrow terminal, swap the transcript for the strategy panel and timeline."""
        self.screen.toggle_class("-side")

    def action_cycle_compare(self) -> None:
        self.compare = COMPARE_CYCLE[(COMPARE_CYCLE.index(self.compare) + 1) % len(COMPARE_CYCLE)]
        self.notify(f"Timeline compares with: {self.compare}", timeout=2)
        self.run_simulation()

    async def action_tune(self, what: str, delta: int) -> None:
        h = self.config.options(hysteresis.NAME)
        try:
            if what == "target":
                h = dataclasses.replace(h, target=h.target + delta)
            elif what == "thresholds":
                h = dataclasses.replace(h, thresholds=tuple(t + delta for t in h.thresholds))
            else:
                w = self.config.window
                # sizes on one ladder of ×1.1 rungs, so w then W comes back to the same window
                base, rung = self._window_ladder
                if round(base * 1.1**rung) != w.context_window:  # set elsewhere since: a ladder from here
                    base, rung = w.context_window, 0
                rung += delta
                size = max(w.reserved_output + 1000, round(base * 1.1**rung))
                self._window_ladder = (base, rung)
                window = Window(size, w.reserved_output)
                self.config = dataclasses.replace(self.config, window=window, window_source="w/W")
        except OptionError as exc:
            self.notify(str(exc), severity="warning", timeout=3)
            return
        self.config = self.config.with_options(hysteresis.NAME, h)
        await self.query_one(StrategyPanel).set_options(hysteresis.NAME, h)
        self.tuned = True
        self.show_status()
        self.refresh_view()
        self.run_current_strategy()

    def action_preset(self, name: str) -> None:
        self.config = self.config.with_preset(name, f"preset {name}")
        self.notify(PRESETS[name].description, title=f"Preset {name}", timeout=4)
        self.show_status()
        self.refresh_view()
        self.run_current_strategy()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.remove_class("hidden")
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        if event.value and not self.query_one("#before", TranscriptView).find(event.value):
            self.notify(f"No message contains “{event.value}”", severity="warning", timeout=3)

    def key_escape(self) -> None:
        box = self.query_one("#search", Input)
        focused = self.focused
        if focused is not None and (
            isinstance(focused, Timeline) or self.query_one(StrategyPanel) in focused.ancestors
        ):
            self.query_one("#before", TranscriptView).focus()  # out of the options form: keys are keys again
        elif not box.has_class("hidden"):
            box.add_class("hidden")
            self.query_one("#before", TranscriptView).focus()
        elif self._parents:  # back from a sub-agent to the session that started it, cursor as it was
            path, cursor = self._parents.pop()
            self.open_path(path, cursor=cursor)
        elif self.browser is not None and self.screen is not self.browser:
            self.push_screen("browser")  # back to the list, its cursor where it was

    def action_focus_timeline(self) -> None:
        timeline = self.query_one(Timeline)
        timeline.focus()
        timeline.action_move(0)  # the cursor appears on the last round

    def on_timeline_jump(self, event: Timeline.Jump) -> None:
        """The transcript at the round the timeline's cursor is on: its request's last message."""
        view = self.query_one("#before", TranscriptView)
        target = event.message_end - 1
        k = next((k for k, e in enumerate(view.entries) if e.origin is not None and e.origin >= target), None)
        if k is not None:
            view.set_cursor(k)
            view.focus()

    def on_transcript_view_selected(self, event: TranscriptView.Selected) -> None:
        entry = event.entry
        if entry is None:
            return
        m = entry.message
        where = f"#{entry.origin}" if entry.origin is not None else "sidechain" if entry.sidechain else "new"
        line = f" · line {m.line}" if m.line else ""
        self.selection = f"{where} {m.role} {m.kind} · {entry.tokens:,} tokens{line} · {entry.fate}"
        self.show_status()

    def show_status(self) -> None:
        """The message under the cursor, and the tuning once it has been changed."""
        line = Text()
        if self.caption:
            line.append_text(safe(self.caption, "bold yellow"))
        tuning = ""
        if self.tuned:  # made from the config each time, so a preset or a new window shows at once
            w, h = self.config.window, self.config.options(hysteresis.NAME)
            tuning = (
                f"window {w.context_window:,} (usable {w.usable:,}; {self.config.window_note}) · "
                f"{self.config.point_note} · "
                f"thresholds {'/'.join(map(str, h.thresholds))} % · target {h.target} %"
            )
        for part in (tuning, self.selection):
            if part:
                line.append_text(safe(("   │   " if line else "") + part))
        # query, not query_one: a cursor move queued before the app closed may land
        # after its widgets are gone. The line is one row high, so no layout is needed.
        for status in self.query("#status").results(Static):
            status.update(line, layout=False)

    # --- saving and exporting ---------------------------------------------------------------

    def action_save_config(self) -> None:
        target = Path(self.config.source) if self.config.source else Path.cwd() / "compaction.yaml"
        try:
            save(self.config, target, protect=self.path)
        except (OSError, ConfigError) as exc:
            self.notify(str(exc), title="Not saved", severity="error")
            return
        self.config = dataclasses.replace(self.config, source=str(target))  # the next save updates that file
        self.notify(f"Saved to {target}", title="Config saved", timeout=4)

    def export_stem(self) -> Path:
        step = f"step{self.step_index + 1}" if self.step_index >= 0 else "before"
        return self.export_dir / f"{self.path.stem}-{self.strategy}-{step}"

    def action_export(self) -> None:
        stem = free_stem(self.export_stem(), (".svg", ".md"))
        try:
            svg = write_atomic(
                stem.with_name(stem.name + ".svg"),
                self.export_screenshot(),
                protect=self.path,
                overwrite=False,
            )
        except (OSError, WriteRefused) as exc:
            self.notify(str(exc), title="Export failed", severity="error")
            return
        if self.session and self.result:
            steps = len(self.result.steps) if self.step_index < 0 else self.step_index + 1
            what = counted(steps, "step")
            self.notify(
                f"{svg.name} written; {stem.name}.md, the Markdown of {what}, is being written", timeout=3
            )
            self._export_markdown(stem, self.session, self.result, self.context, self.step_index)
        else:
            self.notify(svg.name, title=f"Exported to {stem.parent.resolve()}", timeout=5)

    @work(thread=True, group="export", description="export Markdown")
    def _export_markdown(
        self, stem: Path, session: Session, result: CompactionResult, context: Context, upto: int
    ) -> None:
        """The steps up to the one shown, as Markdown: every step's diff, seconds for
        the thousands of a long session, so not on the UI thread."""
        try:
            md = compaction_markdown(session, result, context, upto)
            name = write_atomic(
                stem.with_name(stem.name + ".md"), md, protect=self.path, overwrite=False
            ).name
        except (OSError, WriteRefused) as exc:
            self.call_from_thread(self.notify, str(exc), title="Export failed", severity="error")
            return
        svg = f"{stem.name}.svg and "
        self.call_from_thread(
            self.notify, svg + name, title=f"Exported to {stem.parent.resolve()}", timeout=5
        )

    def action_checkpoint(self) -> None:
        if self.session is None:
            return
        from compaction_inspector.core.checkpoint import append_checkpoint

        view = self.query_one("#before", TranscriptView)
        entry = view.current
        if entry is not None and entry.origin is None:  # a summary or marker a step made
            self.notify(
                "This message was made by the step, not written in the transcript: "
                "put the cursor on one of the transcript's messages",
                title="Checkpoint not written",
                severity="warning",
            )
            return
        # the message's place in the transcript, whatever a step shows around it
        last = len(self.session.messages) - 1
        at = entry.origin if entry is not None and entry.origin is not None else last
        try:
            path, checkpoint = append_checkpoint(self.session, self.export_dir / "memory", at=at)
        except (OSError, ValueError) as exc:
            self.notify(str(exc), title="Checkpoint not written", severity="error")
            return
        self.notify(f"{checkpoint.heading} → {path}", title="Checkpoint written", timeout=5)

    def set_caption(self, text: str) -> None:
        self.caption = text
        self.show_status()

    def on_key(self) -> None:
        if self.demo_runner is not None and self.demo_runner.running:
            self.demo_runner.stop()
            self.set_caption("")
            self.notify("Demo stopped: the keys are yours (? for help)", timeout=3)

    def action_help(self) -> None:
        """The keys of the screen in front: the session list's, or a session's."""
        if self.browser is not None and self.screen is self.browser:
            keys = [
                b
                for b in (*SessionBrowser.BINDINGS, *self.BINDINGS)
                if isinstance(b, Binding) and (b in SessionBrowser.BINDINGS or b.id == "help")
            ]
            more = [
                ("any letter", "Filter the list by title, project, model or agent"),
                ("backspace, escape", "Take a letter off the filter; clear it"),
                ("up, down", "Move through the sessions"),
                ("enter", "Open the session (in the filter: the only match, or the list)"),
            ]
            self.push_screen(HelpScreen(keys, self.config.keys, more, legend=""))
            return
        more = [("escape", "Close the search or a form; leave a sub-agent; back to the session list")]
        keys = [b for b in (*self.BINDINGS, *TranscriptView.BINDINGS) if isinstance(b, Binding)]
        self.push_screen(HelpScreen(keys, self.config.keys, more))

    # --- follow mode ---------------------------------------------------------------------------

    def poll_follow(self) -> None:
        if self.follower is None or self.session is None:
            return
        was_gone = self.follower.gone
        update = self.follower.poll()
        if self.follower.gone and not was_gone:
            self.notify("The file was deleted: what was read stays shown", title="Following", timeout=8)
            self.sub_title = f"{self.shown_name} · deleted: what was read stays shown"
        if self.follower.event:
            self.notify(self.follower.event, title="Following", timeout=8)
            self.follower.event = None
        if update is None:
            return
        session, reloaded = update
        view = self.query_one("#before", TranscriptView)
        at_end = self.step_index < 0 and view.cursor >= len(view.entries) - 1
        new = session.messages[len(self.session.messages) :] if not reloaded else session.messages
        counts = self.counter.count_all(new)
        self.tokens = (self.tokens if not reloaded else []) + counts
        self.counter.count_all(session.sidechain)
        self.session = session
        self.origins = {m: i for i, m in enumerate(session.messages)}
        self.live = live_start(session.messages)
        self.model = fit(session, self.counter, self.config.overhead_tokens)
        self.sub_title = (
            f"{self.shown_name} · {session.format} · {counted(len(session.messages), 'message')} · following"
        )
        self.refresh_view()
        if at_end:  # the cursor was on the last message: it follows the new ones
            view.set_cursor(len(view.entries) - 1)
        self.run_current_strategy()

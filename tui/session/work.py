"""The session screen's work, each kind in a thread worker of its own: reading and counting
the session, the strategy's run, the timeline's replays, the transcript's own compactions;
and a followed file polled each second.
Each posts its answers as messages (`tui/session/messages.py`) the screen handles; as a
`Runs`, it says which answer is the latest of its kind and when nothing is under way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.reading import Formats
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.core.strategies.declaration import Options
from compaction_inspector.tui.screens.progress import summarizer_failed
from compaction_inspector.tui.session import loading, messages, replays
from compaction_inspector.tui.session.follow import Follower
from compaction_inspector.tui.session.runs import Runs


def _cancellation() -> Callable[[], bool]:
    """Whether the worker running the caller has been cancelled, asked from any thread
    (the work may hand it to threads of its own)."""
    worker = get_current_worker()
    return lambda: worker.is_cancelled


class Work(Runs):
    def __init__(self, screen: Screen[None], on_settled: Callable[[], None]) -> None:
        super().__init__(on_settled)
        self._screen = screen
        self._follower: Follower | None = None

    def _start(self, group: str, description: str, body: Callable[[], object]) -> None:
        # exclusive: a newer run of the group cancels the one before
        self._screen.run_worker(body, thread=True, exclusive=True, group=group, description=description)

    def load(
        self,
        path: Path,
        given: Session | None,
        request: int | None,
        config: Config,
        first_rows: bool,
        run: int | None = None,
    ) -> None:
        """Read the session (`loading.read`), as a new run or again as `run` (a followed
        file not readable yet). On a first read the screen's first frame holds its first
        rows: a file no larger than a preview is read at once, a larger one previewed at
        once (`loading.preview`) and read in a worker, as is any other."""
        run = self.start("count") if run is None else run
        post = self._screen.post_message

        def read() -> None:
            loading.read(path, given, request, config, run, post)

        if first_rows and given is None and loading.small(path):
            loading.read(path, given, request, config, run, self._handled_now)
            return
        if first_rows and given is None and request is None:
            loading.preview(path, config, run, self._handled_now)
            self._once_drawn(run, "load", read)
            return
        self._start("load", "load", read)

    def _handled_now(self, message: Message) -> None:
        """`message` handled by the screen before this returns, not queued behind the
        screen's first frame: what a first frame shows is ready before it is drawn."""
        getattr(self._screen, message.handler_name)(message)

    def count(self, estimate: Inspection, run: int, progress: Callable[[int, int], None]) -> None:
        """Count exactly the session `estimate` shows (`loading.count`), for the run that
        read it, once its rows are drawn; `progress` is called on the app's thread."""
        call, post = self._screen.app.call_from_thread, self._screen.post_message

        def recount() -> None:
            loading.count(estimate, run, post, lambda done, todo: call(progress, done, todo), _cancellation())

        self._once_drawn(run, "count", recount)

    def _once_drawn(self, run: int, description: str, body: Callable[[], None]) -> None:
        """`body` in the load worker once the screen has drawn what it holds now (a read or
        a count would hold the interpreter from that frame), unless a newer run has started."""

        def start() -> None:
            if self.latest("count", run):
                self._start("load", description, body)

        self._screen.call_after_refresh(start)

    def strategy(self, inspection: Inspection, name: str, options: Options) -> None:
        """The strategy's run on the session, posted as `StrategyDone`."""
        run, post = self.start("strategy"), self._screen.post_message

        def apply() -> None:
            cancelled = _cancellation()
            try:
                result = inspection.run(name, options)
            except SummarizerError as exc:
                post(messages.Refused("strategy", run, summarizer_failed(exc)))
                return
            if not cancelled():
                post(messages.StrategyDone(run, result))

        self._start("strategy", "run strategy", apply)

    def replay(self, inspection: Inspection, strategy: str, compare: str) -> None:
        """The timeline's replays (`replays.replay_and_price`)."""
        run, post = self.start("replay"), self._screen.post_message
        self._start(
            "simulate",
            "replay",
            lambda: replays.replay_and_price(inspection, strategy, compare, run, post, _cancellation()),
        )

    def own(self, inspection: Inspection) -> None:
        """The transcript's own compactions as steps, posted as `OwnDone`."""
        run, post = self.start("own"), self._screen.post_message
        self._start("own", "own compactions", lambda: post(messages.OwnDone(run, inspection.own_steps())))

    def follow(self, formats: Formats, path: Path, session: Session) -> None:
        """Poll the file each second once `session`, read from it, is shown."""
        self._follower = Follower(formats, path, session)
        self._screen.set_interval(1.0, self.poll)

    @property
    def following(self) -> bool:
        return self._follower is not None

    def poll(self) -> None:
        """What the followed file grew to is posted as `Grown`, and so is its deletion;
        a start over is said."""
        follower, screen = self._follower, self._screen
        if follower is None:
            return
        update = follower.poll()
        if follower.event is not None:  # deleted, or started over: said once
            screen.notify(follower.event, title="Following", timeout=8)
            follower.event = None
            if follower.gone:
                screen.post_message(messages.Grown(None))
        if update is not None:
            screen.post_message(messages.Grown(update[0]))

"""One transcript as the product inspects it: the pipeline every front end goes through.

Load → count (with the persistent cache) → fit the context model → the strategies'
context → where the live context starts → each message's place in the transcript. The
command line, follow mode, the benchmarks and the app all hold an `Inspection`; a new
count, a tuned config or appended messages make a new one, so a worker's result is
always about the inspection it was given.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path

from compaction_inspector.core.analysis import Analysis, analyze
from compaction_inspector.core.caching.fact_cache import load_facts, store_facts
from compaction_inspector.core.caching.token_cache import (
    count_session,
    load_counts,
    load_written,
    store_written,
)
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.rules import Rules
from compaction_inspector.core.measuring.context_model import ContextModel, fit
from compaction_inspector.core.measuring.pressure import live_start
from compaction_inspector.core.measuring.segment import Segments
from compaction_inspector.core.measuring.slices import is_slice
from compaction_inspector.core.measuring.tokens import TokenCounter, make_counter
from compaction_inspector.core.model import Message, Session, immutable
from compaction_inspector.core.own.calibration import Measured, across_sessions
from compaction_inspector.core.own.compactions import RealCompaction, real_compactions
from compaction_inspector.core.own.counts import AgentCounts, agent_counts
from compaction_inspector.core.own.headroom import Headroom, headroom
from compaction_inspector.core.own.steps import as_steps
from compaction_inspector.core.pricing.cost import Cost, session_cost
from compaction_inspector.core.pricing.replay import replay_cost
from compaction_inspector.core.replaying.context import Context, context_of
from compaction_inspector.core.replaying.retention import Facts, Finder
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy, Simulation
from compaction_inspector.core.sessions import whole_cost
from compaction_inspector.core.statusline import Figures, text_or_none
from compaction_inspector.core.strategies import CompactionResult, Stats
from compaction_inspector.core.strategies import run as run_strategy
from compaction_inspector.core.strategies.declaration import Options

Progress = Callable[[int, int], None]
BASELINE = "none"  # the policy name of replaying with no compaction


# the cached figures of the session itself, the same under any config (tuning keeps them)
_OF_THE_SESSION = ("tokens", "live", "origins", "real_cost", "finder", "facts", "counted")
# replays kept for the same messages and context: a tuning key and its reverse, each with
# the curve it is compared with (a replay priced holds about 1.8 KB a round: a 100 MB
# session's, tens of megabytes); more while their rounds stay within `POINTS_KEPT` (about
# 45 MB), so a report's comparison of a session of up to a thousand rounds finds every
# replay its timeline drew
REPLAYS_KEPT = 4
POINTS_KEPT = 25_000
_KEPT = threading.Lock()  # the app's workers replay at once


def carried(agent: Rules | None, session: Session, counter: TokenCounter) -> tuple[int, str] | None:
    """What the session's agent says every request carries beyond its transcript, read from
    files on this machine (`Rules.carried`), or None."""
    return agent.carried(session, counter) if agent is not None else None


@immutable()
class _Kept:
    replay: Simulation
    cost: Cost | None = None  # once priced


@immutable(eq=False)
class Inspection:
    """A session with its counts, its fitted context model and the config it is read
    under (the session's own window applied, `Config.for_session`)."""

    session: Session
    config: Config
    counter: TokenCounter
    model: ContextModel

    @classmethod
    def open(
        cls,
        path: str | Path,
        config: Config,
        request: int | None = None,
        *,
        estimate: bool = False,
        progress: Progress | None = None,
    ) -> Inspection:
        """The transcript at `path` (`request`: which body of a proxy log). Raises
        `LoadError` when it cannot be read."""
        session = config.catalogue.formats.load(path, request=request)
        return cls.of(session, config, estimate=estimate, progress=progress)

    @classmethod
    def of(
        cls,
        session: Session,
        config: Config,
        counter: TokenCounter | None = None,
        *,
        estimate: bool = False,
        progress: Progress | None = None,
    ) -> Inspection:
        """`session` counted by `counter`, else by the config's tokenizer through the
        persistent cache, or, with `estimate`, by the labelled chars/4 estimate (what the
        app shows while exact counts are made)."""
        config = config.for_session(session)
        if counter is None:
            tokenizer = "chars4" if estimate else config.tokenizer
            counter = make_counter(tokenizer, config.media_tokens)
            count_session(session, counter, progress)
        agent = config.catalogue.by_format.get(session.format)
        return cls(
            session,
            config,
            counter,
            fit(
                session,
                counter,
                config.overhead(agent),
                lambda: carried(agent, session, counter),
                config.catalogue.formats.load_text,
            ),
        )

    @classmethod
    def counted_before(cls, session: Session, config: Config) -> Inspection | None:
        """`session` counted exactly from the persistent cache, or None when it holds no
        counts of it (the app then shows an estimate while it counts)."""
        config = config.for_session(session)
        counter = make_counter(config.tokenizer, config.media_tokens)
        return cls.of(session, config, counter) if load_counts(session, counter) else None

    def recount(self, progress: Progress | None = None) -> Inspection:
        """This inspection counted by the config's tokenizer (after an estimate)."""
        return Inspection.of(self.session, self.config, progress=progress)

    def appended(self, session: Session) -> Inspection:
        """The same transcript grown to `session` (follow mode): only new messages are
        counted (by the fit), as the counter knows the others; the sidechain here, not on
        the UI thread when it is shown."""
        self.counter.count_all(session.sidechain)
        return Inspection.of(session, self.config, self.counter)

    def with_config(self, config: Config) -> Inspection:
        """Read under another config (tuning): the model is refitted only when the
        overhead it assumes changed."""
        model = self.model
        if config.overhead(self.agent) != self.config.overhead(self.agent):
            model = fit(
                self.session,
                self.counter,
                config.overhead(self.agent),
                lambda: carried(self.agent, self.session, self.counter),
                config.catalogue.formats.load_text,
            )
        tuned = dataclasses.replace(self, config=config, model=model)
        for name in _OF_THE_SESSION:  # what no setting changes, kept rather than made again
            if name in self.__dict__:
                tuned.__dict__[name] = self.__dict__[name]
        if model is self.model and "segments" in self.__dict__ and tuned.context == self.context:
            # options only: the indexes a replay reads (and strategies' tables of them) still hold
            tuned.__dict__["segments"] = self.segments
        return tuned

    # --- what every view reads -----------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.session.messages

    @cached_property
    def tokens(self) -> list[int]:
        """Counted tokens of each message."""
        return self.counter.count_all(self.session.messages)

    @cached_property
    def live(self) -> int:
        """Where the context the agent sends next starts: after its own last compaction."""
        return live_start(self.session.messages)

    @cached_property
    def origins(self) -> dict[Message, int]:
        """Each message's index in the transcript: the one numbering every view shows."""
        return {m: i for i, m in enumerate(self.session.messages)}

    @property
    def measured(self) -> bool:
        """Pressure is the context the agent sent (else the messages only)."""
        return self.config.pressure == "context"

    @cached_property
    def context(self) -> Context:
        """The strategies' context: the fitted model and the meter of the request the
        agent sends next, or the identity meter when pressure is the messages only."""
        config = self.config
        return context_of(
            self.session,
            self.counter,
            config.window,
            config.pressure,
            model=self.model,
            summarizer=config.summarizer,
            own_counts=self._own_counts() if config.pressure != "messages" else None,
            facts=self.facts,
        )

    @cached_property
    def facts(self) -> Facts:
        """The session's facts (`retention.Facts`): its own, never another session's."""
        return Facts((*self.session.messages, *self.session.sidechain))

    @property
    def agent(self) -> Agent | None:
        """The session's agent (None: a format no agent writes)."""
        return self.config.catalogue.by_format.get(self.session.format)

    @cached_property
    def counted(self) -> Mapping[int, int]:
        """What the session's agent counts against its point before each request by its own
        rule (`Agent.counted`), by the request's end: what a replay and `compactions` fire on."""
        agent = self.agent
        return agent.counted(self.session) if agent is not None else {}

    def _own_counts(self) -> dict[Message, dict[int, int]]:
        """The agent's own count at each check the transcript records, as the replay and
        a run look it up (`Context.own_count`): the same count `compactions` shows."""
        messages, model = self.session.messages, self.model
        found = {c.index: c.total for c in self.agent_counts.checks if c.index is not None}
        if not found:
            found = dict(self.counted)
        out: dict[Message, dict[int, int]] = {}
        for end, total in found.items():
            start = model.segment_start(end)
            if start < len(messages) and end > start:
                out.setdefault(messages[start], {})[end - start] = total
        return out

    @cached_property
    def segments(self) -> Segments:
        """The session's indexes, shared by every replay of this inspection."""
        return Segments(self.session.messages, self.context)

    # --- what is asked of it -------------------------------------------------------------

    def run(self, strategy: str, options: Options | None = None) -> CompactionResult[Stats]:
        """`strategy` over the request the agent sends next, with `options` or the config's;
        its latest run kept (what `compare` kept of it, then the steps a report or the app
        shows of the same run)."""
        chosen = options if options is not None else self.config.options(strategy)
        with _KEPT:
            last = self._runs.get(strategy)
        if last is not None and last[0] == chosen:
            return last[1]
        self._take_found()
        declared = self.config.catalogue.strategy(strategy)
        made = run_strategy(declared, self.session.messages[self.live :], chosen, self.context)
        self.keep_found()
        with _KEPT:
            self._runs[strategy] = (chosen, made)
        return made

    @cached_property
    def _runs(self) -> dict[str, tuple[Options, CompactionResult[Stats]]]:
        """Each strategy's latest run, with the options it ran with."""
        return {}

    def policy(self, name: str, against: str | None = None) -> Policy:
        """The replay policy `name` (BASELINE: no compaction) with the config's options.
        Compared `against` the same strategy, it takes the options the strategy declares
        as its contrast, else the two curves would be one."""
        if name == BASELINE:
            return Policy(None)
        options = self.config.options(name)
        declared = self.config.catalogue.strategy(name)
        contrast = declared.contrast
        return Policy(declared, contrast(options) if contrast and against == name else options)

    def replay(
        self, policy: Policy, stop: Callable[[], bool] | None = None, ends: bool = False
    ) -> Simulation:
        """The session replayed round by round under `policy`; `stop` cancels it (raises
        `Cancelled`); `ends` keeps each segment's last request as sent."""
        key = (policy, ends)
        with _KEPT:
            kept: _Kept | None = self.segments.replayed.get(key)
        if kept is not None:  # a tuning key pressed back, the curve it is compared with
            return kept.replay
        self._take_found()
        made = simulate(
            self.session.messages,
            policy,
            self.context,
            stop,
            segments=self.segments,
            segment_ends=ends,
        )
        self._keep(key, _Kept(made))
        self.keep_found()
        return made

    def _take_found(self) -> None:
        """What earlier runs kept of the session's messages' facts and of the counts of
        the texts its replays wrote (`keep_found`), taken before a run or a replay."""
        load_facts(self.session, self.counter, self.facts)
        load_written(self.session, self.counter)

    def keep_found(self) -> None:
        """Keep what was found of the session's messages' facts, and the counts of the
        texts its runs and replays wrote, for the next run (after a run, a replay, or
        the retentions `compare` asks of the finder)."""
        store_facts(self.session, self.counter, self.facts)
        store_written(self.session, self.counter)

    def find_facts(self) -> None:
        """Find every message's facts not kept yet, and keep them: before work that asks
        for nearly all (`compare`), and is spread over processes that would each find
        them."""
        load_facts(self.session, self.counter, self.facts)
        store_facts(self.session, self.counter, self.facts, every=True)

    def priced(self, policy: Policy, stop: Callable[[], bool] | None = None) -> tuple[Simulation, Cost]:
        """The whole replay under `policy` and what it would have cost."""
        replay = self.replay(policy, stop)
        with _KEPT:
            kept: _Kept | None = self.segments.replayed.get((policy, False))
        if kept is not None and kept.replay is replay and kept.cost is not None:
            return replay, kept.cost
        cost = replay_cost(self.session, replay, self.model.responses)
        self._keep((policy, False), _Kept(replay, cost))
        return replay, cost

    def keep_priced(self, replay: Simulation, cost: Cost) -> None:
        """Keep a replay and its cost made elsewhere (another process), as if `priced`
        made them here, unless one is kept already."""
        key = (replay.policy, False)
        with _KEPT:
            if key in self.segments.replayed:
                return
        self._keep(key, _Kept(replay, cost))

    def _keep(self, key: tuple[Policy, bool], entry: _Kept) -> None:
        with _KEPT:
            kept = self.segments.replayed
            kept[key] = entry
            kept.move_to_end(key)
            points = sum(len(k.replay.points) for k in kept.values())
            while len(kept) > REPLAYS_KEPT and points > POINTS_KEPT:
                points -= len(kept.popitem(last=False)[1].replay.points)

    @cached_property
    def finder(self) -> Finder:
        """Where each fact lies in the context the agent sends next: what a strategy's
        run on it kept of what it replaced (`compare`)."""
        load_facts(self.session, self.counter, self.facts)
        return Finder(self.session.messages[self.live :], self.facts)

    @cached_property
    def real_cost(self) -> Cost:
        """What the session really cost, its sub-agents' included."""
        return whole_cost(self.config.catalogue, self.session)

    @cached_property
    def headroom(self) -> Headroom | None:
        """How far the agent is from its own point now (None: no preset of this session's
        agent, or the context is not measured)."""
        point, count = self.config.account.tokens, self.count_now
        if point is None or count is None:
            return None
        prompts = [r.prompt_tokens for r in self.model.responses if r.start >= self.live]
        return headroom(count, point, prompts)

    @cached_property
    def count_now(self) -> int | None:
        """What the agent counts against its point now: its own count where it checked
        since its last compaction, else what it sends next (None: not this session's
        agent's preset, or the context is not measured)."""
        if self.config.agent != self.session.format or not self.measured:
            return None
        end = len(self.messages)
        now = self.agent_counts.at(end)
        fresh = now is not None and now.index is not None and now.index >= self.live
        return now.total if now is not None and fresh else self.model.reading(end).tokens

    @property
    def status(self) -> Figures:
        """What a status line says of the session read whole (any agent: `watch`)."""
        point = self.config.account.point
        cost = session_cost(self.session)  # the main chain, as a transcript's tail gives it
        return Figures(
            self.count_now,
            self.config.account.tokens,
            self.headroom,
            len([c for c in self.session.compactions if c.kind == "compact"]),
            cost.total if cost.priced else None,
            True,
            text_or_none(self.session.metadata.get("model")),
            off=point is not None and point.tokens is None,
            set_now=self.config.account.set_now,
        )

    @cached_property
    def agent_counts(self) -> AgentCounts:
        """The count the agent compared with its own point, at each check and before each
        of its compactions (why it fired there)."""
        return agent_counts(self.session, self.model, self.config)

    def own_compactions(self) -> list[RealCompaction]:
        """The transcript's own compactions, measured and predicted; where the session has
        not compacted before one, corrected by what the user's sessions beside it measured
        after theirs (`core.own.calibration`)."""
        session = self.session
        across = (
            across_sessions(session, self.agent, self._measured_beside, self.config.tokenizer)
            if session.compactions
            else None
        )
        # the agent's own point, as it ran: not a point the tuning keys moved since
        real = self.config.untuned or self.config
        return real_compactions(session, self.model, self.counter, real, across, self.facts, self.counted)

    def _measured_beside(self, path: Path) -> Measured:
        """What the session at `path` beside this one measured over predicted after each
        of its compactions, with its agent and version (whether it may calibrate this one
        is decided on that, so a kept figure answers every session that asks)."""
        other = self.config.catalogue.formats.load(path)
        version = other.metadata.get("version")
        named = version if isinstance(version, str) else None
        measured = Measured(other.format, named, not is_slice(other), ())
        if other.format != self.session.format or not measured.complete:
            return measured
        beside = Inspection.of(other, self.config)
        found = real_compactions(
            other, beside.model, beside.counter, beside.config, known=beside.facts, estimates=beside.counted
        )
        fixed = beside.model.overhead if beside.model.overhead_source == "first response" else None
        return dataclasses.replace(
            measured,
            fixed=fixed,
            residuals=tuple(
                (c.compaction.trigger, c.compaction.unrecorded, c.residual)
                for c in found
                if c.residual is not None and c.kind == "compact"
            ),
        )

    def own_steps(self) -> CompactionResult[Stats]:
        """The transcript's own compactions as steps to walk through."""
        return as_steps(self.session, self.own_compactions(), self.context)

    def analysis(self) -> Analysis:
        config = self.config
        return analyze(
            config.catalogue,
            self.session,
            self.counter,
            self.model,
            config.account,
            config.pressure,
            self.agent_counts,
            self.headroom,
        )

"""The one pipeline: what an Inspection holds is what each step of it gives alone."""

from __future__ import annotations

import dataclasses
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.measuring.context_model import fit
from compaction_inspector.core.measuring.pressure import Window, live_start
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.own.compactions import real_compactions
from compaction_inspector.core.replaying.context import context_of
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import hysteresis, run
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from compaction_inspector.sample_sessions import path
from tests.helpers import load

CONFIG = Config(CATALOGUE, window=Window(5000, 500), preset=None)


def test_an_inspection_is_the_pipeline_run_once() -> None:
    session = load(path())
    counter = make_counter("cl100k_base")
    inspection = Inspection.of(session, CONFIG, counter)
    assert inspection.live == live_start(session.messages) == 30
    assert inspection.origins[session.messages[42]] == 42
    assert inspection.tokens == counter.count_all(session.messages)
    assert inspection.model.scale == fit(session, counter, CONFIG.overhead(inspection.agent)).scale
    assert inspection.context == context_of(session, counter, CONFIG.window)
    ours = inspection.run(hysteresis.NAME)
    alone = run(CATALOGUE.strategies[hysteresis.NAME], session.messages[30:], None, inspection.context)
    assert (
        [s.title for s in ours.steps]
        == [s.title for s in alone.steps]
        == ["Summarize volley 1: “Next: support multi-line values. A line…”"]
    )
    found = inspection.own_compactions()
    assert [c.to_dict() for c in found] == [
        c.to_dict() for c in real_compactions(session, inspection.model, counter, inspection.config)
    ]
    assert [s.tokens_after for s in inspection.own_steps().steps] == [2093]


def stage(policy: Policy) -> str:
    options = policy.settings
    assert isinstance(options, HysteresisOptions)
    return options.stage


def test_a_strategy_compared_with_itself_takes_its_contrast() -> None:
    inspection = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    assert inspection.policy(BASELINE).strategy is None
    assert stage(inspection.policy(hysteresis.NAME)) == "preflight"
    assert stage(inspection.policy(hysteresis.NAME, against="trim")) == "preflight"
    assert stage(inspection.policy(hysteresis.NAME, against=hysteresis.NAME)) == "post-turn"


def test_tuning_options_keeps_the_indexes_and_a_new_window_does_not() -> None:
    inspection = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    segments = inspection.segments
    h = dataclasses.replace(CONFIG.options(hysteresis.NAME), target=60)
    tuned = inspection.with_config(inspection.config.with_options(hysteresis.NAME, h))
    assert tuned.segments is segments and tuned.config.options(hysteresis.NAME).target == 60
    wider = inspection.with_config(dataclasses.replace(inspection.config, window=Window(6000, 500)))
    assert wider.segments is not segments and wider.context.window == Window(6000, 500)


def test_a_tuning_key_pressed_back_finds_its_replay_and_its_cost_kept(monkeypatch: Any) -> None:
    """Replays of the same messages and context are kept by policy: the curve tuning
    returns to, and the one it is compared with, are not replayed or priced again; a
    new window replays afresh. What is kept is what a fresh replay gives."""
    from compaction_inspector.core import inspection as inspecting
    from compaction_inspector.core.pricing import replay as costing
    from compaction_inspector.core.replaying.simulate import simulate

    priced: list[int] = []

    def counted(*args: Any) -> Any:
        priced.append(1)
        return costing.replay_cost(*args)

    monkeypatch.setattr(inspecting, "replay_cost", counted)
    inspection = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    really = inspection.real_cost
    first, cost = inspection.priced(inspection.policy(hysteresis.NAME))
    h = dataclasses.replace(CONFIG.options(hysteresis.NAME), target=60)
    tuned = inspection.with_config(inspection.config.with_options(hysteresis.NAME, h))
    moved, _ = tuned.priced(tuned.policy(hysteresis.NAME))
    back = tuned.with_config(CONFIG)
    again, cost_again = back.priced(back.policy(hysteresis.NAME))
    assert moved is not first and again is first and cost_again is cost and len(priced) == 2
    fresh = simulate(back.messages, back.policy(hysteresis.NAME), back.context)
    assert again.totals == fresh.totals and again.points == fresh.points
    assert back.real_cost is really  # the session's own cost, under any setting
    wider = back.with_config(dataclasses.replace(CONFIG, window=Window(6000, 500)))
    assert wider.replay(wider.policy(hysteresis.NAME)) is not first


def test_every_strategys_replay_of_a_short_session_is_kept_a_long_ones_four(monkeypatch: Any) -> None:
    """A report draws each strategy's replay, then compares them: a short session's are
    all kept, so none is replayed twice; past `POINTS_KEPT` rounds in all, the four latest."""
    from compaction_inspector.core import inspection as inspecting
    from compaction_inspector.core.replaying.simulate import simulate

    replayed: list[str] = []

    def counted(messages: Any, policy: Policy, *args: Any, **kwargs: Any) -> Any:
        replayed.append(policy.label)
        return simulate(messages, policy, *args, **kwargs)

    monkeypatch.setattr(inspecting, "simulate", counted)
    inspection = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    names = [BASELINE, *CATALOGUE.strategies]
    first = [inspection.replay(inspection.policy(n)) for n in names]
    again = [inspection.replay(inspection.policy(n)) for n in names]
    assert all(a is b for a, b in zip(again, first, strict=True))
    assert len(replayed) == len(names) and len(names) > inspecting.REPLAYS_KEPT
    monkeypatch.setattr(inspecting, "POINTS_KEPT", len(first[0].points))  # as if each were long
    fresh = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    for n in names:
        fresh.replay(fresh.policy(n))
    replayed.clear()
    for n in names:
        fresh.replay(fresh.policy(n))
    assert len(replayed) == len(names)  # each replayed again: only the four latest were kept


def test_an_estimate_then_exact_counts() -> None:
    estimate = Inspection.open(path(), CONFIG, estimate=True)
    assert estimate.counter.name == "chars4" and not estimate.counter.exact
    seen: list[tuple[int, int]] = []
    exact = estimate.recount(lambda done, todo: seen.append((done, todo)))
    assert exact.counter.exact and exact.session is estimate.session
    assert seen == [] or seen[-1][0] == seen[-1][1]  # from the cache, or counted to the end


def test_appended_messages_are_counted_and_fitted_again() -> None:
    whole = load(path())
    head = dataclasses.replace(whole, messages=whole.messages[:40])
    inspection = Inspection.of(head, CONFIG, make_counter("chars4"))
    grown = inspection.appended(whole)
    assert grown.counter is inspection.counter and len(grown.tokens) == len(whole.messages)
    assert grown.model.responses != inspection.model.responses


def test_the_markdown_of_a_step_numbers_messages_as_the_app_does() -> None:
    from compaction_inspector.core.reporting.markdown import compaction_markdown

    inspection = Inspection.of(load(path()), CONFIG, make_counter("cl100k_base"))
    md = compaction_markdown(inspection, inspection.run(hysteresis.NAME))
    rows = [line for line in md.splitlines() if line.startswith("| #")]
    assert rows[0].startswith("| #32 | user | message | summarized | Next: support multi-line values.")
    assert rows[-1].startswith("| #53 |") and len(rows) == 22
    assert "New message (3 of 14 after the step):" in md


def test_a_strategys_latest_run_is_kept_by_its_options() -> None:
    """Compare's retention and then a report's or the app's steps of the same run share
    it; other options run afresh, and so does another setting's inspection."""
    inspection = Inspection.of(load(path()), CONFIG, make_counter("chars4"))
    first = inspection.run(hysteresis.NAME)
    assert inspection.run(hysteresis.NAME, CONFIG.options(hysteresis.NAME)) is first
    h = dataclasses.replace(CONFIG.options(hysteresis.NAME), target=60)
    other = inspection.run(hysteresis.NAME, h)
    live = inspection.session.messages[inspection.live :]
    fresh = run(CATALOGUE.strategies[hysteresis.NAME], live, h, inspection.context)
    assert other is not first and other.stats == fresh.stats
    assert inspection.run(hysteresis.NAME, h) is other and inspection.run(hysteresis.NAME) is not first
    wider = inspection.with_config(dataclasses.replace(CONFIG, window=Window(6000, 500)))
    assert wider.run(hysteresis.NAME) is not first

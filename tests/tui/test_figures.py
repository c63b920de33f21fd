"""The screen's figures as pure functions: the gauge at a step and the tuning keys' rule,
without a Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.strategies import OptionError, hysteresis
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.session.figures import Ladders, bands, gauge_state, tuned

SMALL = Config(CATALOGUE, window=Window(5000, 500), preset=None)
NAME = hysteresis.NAME


def test_the_gauge_is_the_context_sent_next_then_less_what_a_step_removed() -> None:
    inspection = Inspection.open(path(), SMALL)
    result = inspection.run(hysteresis.NAME)
    before = gauge_state(inspection, result, -1, False, hysteresis.NAME)
    assert before.tokens == inspection.model.reading(len(inspection.messages)).tokens
    assert before.caption == "the context after the transcript's own last compaction"
    first = gauge_state(inspection, result, 0, False, hysteresis.NAME)
    assert first.tokens == result.steps[0].tokens_after and first.caption == "after step 1 of hysteresis"
    assert first.agent_count == ""  # the agent's own count is of the transcript, not of a step


def test_w_then_w_again_comes_back_to_the_window_tuning_began_from() -> None:
    config, ladder = tuned(SMALL, NAME, "window", -1, {})
    assert config.window == Window(4500, 500) and str(config.window_source) == "w/W"
    config, ladder = tuned(config, NAME, "window", -1, ladder)
    assert config.window.context_window == 4000
    config, ladder = tuned(config, NAME, "window", 2, ladder)
    assert config.window == SMALL.window
    targeted, _ = tuned(SMALL, NAME, "target", -5, ladder)
    assert targeted.options(hysteresis.NAME).target == SMALL.options(hysteresis.NAME).target - 5
    with pytest.raises(OptionError):  # the target must stay under the lowest threshold
        tuned(SMALL, NAME, "target", 5, ladder)


def test_the_tuning_keys_move_the_shown_strategys_own_trigger_and_what_it_keeps() -> None:
    """The screen names no strategy: each declares what h/H (where it fires) and t/T
    (what it keeps) move; hysteresis's bands stay as they were with another one shown
    (they once moved hysteresis's target and thresholds whatever was on screen)."""
    from compaction_inspector.tui.session.figures import tuning

    assert bands(SMALL, "trim") == bands(SMALL, hysteresis.NAME) == ((75, 85, 95), 70)
    moved, _ = tuned(SMALL, "trim", "thresholds", -1, {})
    assert moved.options("trim").trigger_turns == SMALL.options("trim").trigger_turns - 1
    assert bands(moved, "trim") == ((75, 85, 95), 70)  # hysteresis's own, untouched
    cline, _ = tuned(SMALL, "cline", "thresholds", -1, {})
    cline, _ = tuned(cline, "cline", "target", 2, {})
    assert (cline.options("cline").trigger_percent, cline.options("cline").keep_tokens) == (80, 22_000)
    assert "Cline: h/H trigger_percent 80 · t/T keep_tokens 22,000" in tuning(cline, "cline")
    # Claude Code's override starts from its point in force: 155,000 of 168,000 is 92 %
    real = Inspection.open(path(), Config(CATALOGUE))
    claude, ladders = tuned(real.config, "claude-code", "thresholds", -1, {}, real.context)
    assert claude.untuned == real.config
    assert claude.options("claude-code").autocompact_pct_override == 91
    # and back: H returns to its point in force, the override unset again
    back, _ = tuned(claude, "claude-code", "thresholds", 1, ladders, real.context)
    assert back.options("claude-code") == real.config.options("claude-code")
    assert back.account.point == real.config.account.point
    with pytest.raises(OptionError, match="Claude Code has no keep setting for t/T to move"):
        tuned(real.config, "claude-code", "target", 1, {}, real.context)
    with pytest.raises(OptionError, match="PTL retry has no trigger setting"):
        tuned(SMALL, "ptl-retry", "thresholds", 1, {})
    assert tuning(SMALL, "ptl-retry")[1] == "PTL retry: nothing to tune"


def test_bands_a_strategy_does_not_draw_are_not_drawn_beside_it() -> None:
    """Cline draws no bands: the gauge shows none of hysteresis's marks or its
    70/75/85/95 % legend beside it (they read as Cline's own)."""
    inspection = Inspection.open(path(), SMALL)
    mine = gauge_state(inspection, None, -1, False, NAME)
    theirs = gauge_state(inspection, None, -1, False, "cline")
    assert (mine.bands_of, theirs.bands_of) == ("", NAME)
    from compaction_inspector.tui.widgets.gauge import PressureGauge

    gauge = PressureGauge()
    gauge.state = theirs
    drawn = gauge.render()
    assert isinstance(drawn, Text) and "target" not in drawn.plain and "75/85/95%" not in drawn.plain
    assert "┆" not in drawn.plain.splitlines()[1] and "│" not in drawn.plain.splitlines()[1]
    gauge.state = mine
    drawn = gauge.render()
    assert isinstance(drawn, Text) and "┆ target 70%  │ 75/85/95%" in drawn.plain


def test_the_transcripts_own_compactions_are_explained_by_the_agents_real_point() -> None:
    """A tuning key moves the point a replay uses, never the one the agent ran with:
    "why here" of its own compaction stays at the point its own record puts it, the
    16,194 it counted when it compacted (its rule says 167,000)."""
    real = Inspection.open(path("claude_code_compacted.jsonl"), Config(CATALOGUE))
    ladders: Ladders = {}
    config = real.config
    for delta in (-1, -1):
        config, ladders = tuned(config, "claude-code", "thresholds", delta, ladders, real.context)
    assert config.account.point != real.config.account.point
    (own,) = real.with_config(config).own_compactions()
    assert own.count is not None and own.count.point == real.config.account.point
    assert own.count.point.tokens == 16_194 and "the rule says 167,000" in own.count.point.rule
    # the gauge on that compaction (o) marks the point it ran with and says why there by it
    tuned_in = real.with_config(config)
    state = gauge_state(tuned_in, tuned_in.own_steps(), 0, True, "claude-code")
    assert state.auto_compact == 16_194 and state.agent_count.startswith(
        "why here: Claude Code counted 16,194 ≥ 16,194"
    )


def test_an_idle_compaction_says_the_rule_it_fired_by(tmp_path: Path) -> None:
    """The gauge marks the auto-compact point; an idle compaction fired at the size idle
    compaction waits for, so "why here" names that rule, where an automatic one leaves it
    to the mark."""
    from tests.unit.test_idle_compaction import idle_transcript

    file = tmp_path / "idle.jsonl"
    file.write_text(idle_transcript())
    inspection = Inspection.open(file, Config(CATALOGUE))
    own = inspection.own_steps()
    state = gauge_state(inspection, own, 0, True, "claude-code")
    assert state.agent_count == (
        "why here: Claude Code counted 210,500 ≥ 200,000 (idle compaction at 200,000 after 54 minutes "
        "idle): 210,000 reported + 500 added since"
    )


def test_a_point_the_sessions_record_puts_in_force_is_a_start_the_keys_move_from() -> None:
    """The compacted sample compacted on its own at 16,194: that is the point in force.
    h moves the point from there, a step a press, and H as often comes back to it, unset
    again; the transcript's own compactions are still explained by the point as it ran."""
    from tests.helpers import load

    inspection = Inspection.of(load(path("claude_code_compacted.jsonl")), Config(CATALOGUE))
    config: Config = inspection.config
    ladders: Ladders = {}
    points = []
    for delta in (-1, -1, 1, 1):
        config, ladders = tuned(config, "claude-code", "thresholds", delta, ladders, inspection.context)
        points.append((config.given("claude-code").autocompact_pct_override, config.account.tokens))
    assert points == [(7, 12_600), (6, 10_800), (7, 12_600), (None, 16_194)]
    config, _ = tuned(config, "claude-code", "thresholds", -1, ladders, inspection.context)
    (own,) = inspection.with_config(config).own_compactions()
    assert own.count is not None and own.count.line().startswith("Claude Code counted 16,194 ≥ 16,194")

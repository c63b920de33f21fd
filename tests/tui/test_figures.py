"""The screen's figures as pure functions: the gauge at a step and the tuning keys' rule,
without a Pilot."""

from __future__ import annotations

import pytest

from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.pressure import Window
from compaction_inspector.core.strategies import OptionError, hysteresis
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.figures import gauge_state, tuned

SMALL = Config(window=Window(5000, 500), preset=None)


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
    config, ladder = tuned(SMALL, "window", -1, (0, 0))
    assert config.window == Window(4500, 500) and config.window_source == "w/W"
    config, ladder = tuned(config, "window", -1, ladder)
    assert config.window.context_window == 4000
    config, ladder = tuned(config, "window", 2, ladder)
    assert config.window == SMALL.window
    targeted, _ = tuned(SMALL, "target", -5, ladder)
    assert targeted.options(hysteresis.NAME).target == SMALL.options(hysteresis.NAME).target - 5
    with pytest.raises(OptionError):  # the target must stay under the lowest threshold
        tuned(SMALL, "target", 5, ladder)

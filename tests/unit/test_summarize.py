"""The summarize family and its presets (docs/strategies.md): exact figures with chars/4 counts."""

from __future__ import annotations

import dataclasses

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import OptionError, run
from compaction_inspector.core.strategies.summarize import SummarizeOptions as S
from tests.helpers import snapshot
from tests.unit.test_agent_strategies import CONTEXT, session

SUMMARIZING = [n for n, s in CATALOGUE.strategies.items() if s.family == "summarize"]


def test_the_head_becomes_one_summary_and_the_newest_tokens_stay_as_they_were() -> None:
    msgs = session()
    before = snapshot(msgs)
    r = run(
        CATALOGUE.strategies["cline"],
        msgs,
        S(trigger_tokens=3000, keep_tokens=700, summary_tokens=100),
        CONTEXT,
    )
    assert snapshot(msgs) == before
    assert r.messages is not None
    assert [s.explanation for s in r.steps] == [
        "4,006 tokens reached 3,000 tokens: 21 messages (3,326 tokens) become one summary of 72 tokens; "
        "kept the newest 700 tokens (7 messages). The summarize request is sent 3,326 tokens."
    ]
    assert r.messages[0].is_compact_summary and len(r.messages[0].text) <= 400
    assert all(x is y for x, y in zip(r.messages[1:], msgs[21:], strict=True))  # the same objects
    stats = r.stats.to_dict()
    assert (stats["strategy"], stats["messages_summarized"], stats["tail_messages"]) == ("cline", 21, 7)
    assert (stats["summarize_input_tokens"], stats["summarize_output_tokens"]) == (3326, 72)


def test_a_planned_summary_holds_the_one_before_by_a_stand_in_that_stands_for_the_same() -> None:
    """A replay's next summary replaces the one before without holding its text: a
    stand-in with no blocks and the same sources, so what it stands for in the transcript
    is the same, and a replay's summaries do not all live as long as its last."""
    from compaction_inspector.core.measuring.segment import Segment
    from compaction_inspector.core.reporting.diff import sources
    from compaction_inspector.core.strategies.summarize import SummarizePlan, plan

    msgs = session()
    options = S(trigger_tokens=1000, keep_tokens=300, summary_tokens=100)
    segment = Segment(msgs, CONTEXT)
    first = plan(segment, 12, options)
    assert isinstance(first, SummarizePlan) and first.made is not None
    summary = next(m for m in first.made.front if m.is_compact_summary)
    second = plan(segment, len(msgs), options, first.made)
    assert isinstance(second, SummarizePlan) and second.made is not None
    latest = next(m for m in second.made.front if m.is_compact_summary)
    stand_in = next(m for m in latest.replaces if m.is_compact_summary)
    assert stand_in is not summary and stand_in.blocks == () and stand_in.replaces is summary.replaces
    transcript = {m: i for i, m in enumerate(msgs)}
    # the same transcript messages, in the same order, as if it held the summary itself
    holding = dataclasses.replace(
        latest, replaces=tuple(summary if m is stand_in else m for m in latest.replaces)
    )
    assert sources(latest, transcript) == sources(holding, transcript) == [*range(12, 24), *range(12)]


def test_the_head_the_persons_messages_and_a_tail_that_keeps_a_call_with_its_results() -> None:
    msgs = session()
    opts = S(trigger_messages=20, keep_first=1, keep_messages=2, keep_user="all", summary_tokens=100)
    r = run(CATALOGUE.strategies["cline"], msgs, opts, CONTEXT)
    assert r.messages is not None
    assert [m.text[:6] for m in r.messages] == [
        "<envir", "task 0", "task 1", "task 2", "task 3", "task 4", "task 5",
        "[memor", "TodoWr", "ok", "next",
    ]  # fmt: skip
    assert r.steps[0].explanation == (
        "28 messages reached 20: 24 messages (3,978 tokens) become one summary of 72 tokens; kept the "
        "first 1 message, the person's 6 messages, the newest 2 messages, widened to 3 to keep a call "
        "with its results. The summarize request is sent 3,978 tokens."
    )
    last = run(CATALOGUE.strategies["goose"], msgs, S(trigger_messages=20, keep_user="last"), CONTEXT)
    assert last.messages is not None and [m.text[:4] for m in last.messages] == ["next", "[mem"]


def test_a_share_of_the_window_is_clamped_and_named() -> None:
    r = run(CATALOGUE.strategies["aider"], session(), None, CONTEXT)
    assert r.steps[0].explanation == (
        "4,006 tokens reached 6.25 % of the 10,000-token window: 625, clamped to 1,024: 24 messages "
        "(3,938 tokens) become one summary of 82 tokens; kept the newest 512 tokens (3.125 % of the "
        "usable window, within 512-4,096) (4 messages). The summarize request is sent 3,938 tokens."
    )
    roo = run(CATALOGUE.strategies["roo-code"], session(), None, CONTEXT)
    assert roo.steps[0].explanation == (
        "4,006 tokens are under 90 % of the 10,000-token window less 1,000 for output: 8,000."
    )


def test_the_summarize_request_is_cut_and_trimmed_as_the_agent_sends_it() -> None:
    msgs = session()
    cut = run(
        CATALOGUE.strategies["opencode"],
        msgs,
        S(trigger_tokens=1, tool_output_chars=40, summary_tokens=60),
        CONTEXT,
    )
    trimmed = run(
        CATALOGUE.strategies["langchain-summarization"],
        msgs,
        S(trigger_tokens=1, summarize_tokens=500),
        CONTEXT,
    )
    # six results of about 2,018 characters each go as 40: 4,006 - 6 x 494 tokens
    assert cut.stats.summarize_input_tokens == 1042  # type: ignore[attr-defined]
    assert cut.steps[0].explanation.endswith(
        "sent 1,042 tokens (tool outputs cut to 40 characters, in proportion)."
    )
    assert trimmed.stats.summarize_input_tokens == 500  # type: ignore[attr-defined]
    assert trimmed.steps[0].explanation.endswith("sent 500 tokens (trimmed to its newest 500 tokens).")


def test_without_a_trigger_it_never_fires() -> None:
    r = run(CATALOGUE.strategies["langchain-summarization"], session(), S(), CONTEXT)
    assert [(s.title, s.explanation) for s in r.steps] == [
        ("Not triggered", "No trigger is set, so it never fires.")
    ]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"keep_tokens": 10, "keep_messages": 3}, "keep takes one of"),
        ({"trigger_percent": 0}, "trigger.percent must be a percent above 0"),
        ({"keep_message_percent": 101}, "keep.message_percent must be a percent"),
        ({"keep_user": "some"}, "keep_user must be none or last or all"),
    ],
)
def test_options_out_of_range_say_which(options: dict[str, object], error: str) -> None:
    with pytest.raises(OptionError, match=error):
        S(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", SUMMARIZING)
def test_every_preset_names_its_source_and_replays(name: str) -> None:
    strategy = CATALOGUE.strategies[name]
    assert strategy.source and strategy.default_options() != S()
    replay = simulate(session(), Policy(CATALOGUE.strategies[name]), CONTEXT)
    assert (
        replay.to_dict()
        == simulate(session(), Policy(CATALOGUE.strategies[name]), CONTEXT, incremental=False).to_dict()
    )


def test_the_presets_are_the_documented_defaults() -> None:
    defaults = {n: CATALOGUE.strategies[n].default_options() for n in SUMMARIZING}
    assert defaults["anthropic-compaction"].trigger_tokens == 150_000
    assert (defaults["cline"].trigger_percent, defaults["cline"].keep_tokens) == (81, 20_000)
    assert defaults["cline"].summary_tokens == 4_096
    assert (defaults["opencode"].keep_percent, defaults["opencode"].keep_max) == (25, 15_000)
    assert (defaults["gemini-cli"].trigger_percent, defaults["gemini-cli"].keep_history_percent) == (50, 30)
    assert (defaults["letta"].trigger_percent, defaults["letta"].keep_message_percent) == (90, 30)
    assert (defaults["roo-code"].keep_first, defaults["goose"].keep_user) == (0, "last")  # its fresh start
    assert defaults["openai-compaction"].keep_user == "all"
    assert defaults["langchain-summarization"].keep_messages == 20


def test_opencode_leaves_its_own_output_allowance_not_the_session_agents() -> None:
    """opencode's overflow for a model with no input limit is at the context less
    min(max output, 32,000): on a session whose agent reserved 20,000 (Claude Code 2.1) or
    nothing (a Codex window), opencode still leaves its own 32,000."""
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.core.strategies.summarize import trigger

    options = CATALOGUE.strategies["opencode"].default_options()
    for reserved in (20_000, 0):
        at, rule = trigger(options, Window(200_000, reserved))
        assert at == 168_000 and "less 32,000 for output" in rule


def test_a_setting_a_source_refuses_is_refused_everywhere_it_can_be_given(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Anthropic's compaction refuses a trigger under 50,000 input tokens: so do the
    command line, compaction.yaml, a sweep's grid and the app's config."""
    from compaction_inspector.core.config import Config, ConfigError
    from compaction_inspector.core.config_file import load
    from compaction_inspector.core.strategies.declaration import with_values
    from compaction_inspector.core.sweeping.grid import Grid
    from compaction_inspector.sample_sessions import path
    from tests.test_cli import run

    refused = "the API's trigger is at least 50,000 input tokens, not 30,000"
    ran = run(
        "simulate", str(path()), "--strategy", "anthropic-compaction", "--summarize-trigger-tokens", "30000"
    )
    assert ran.returncode == 2 and refused in ran.stderr
    config_file = tmp_path / "compaction.yaml"
    config_file.write_text("anthropic_compaction:\n  trigger:\n    tokens: 30000\n")
    with pytest.raises(ConfigError, match=refused):
        load(CATALOGUE, config_file)
    with pytest.raises(OptionError, match=refused):
        Grid.of("anthropic-compaction", "trigger.tokens=30000:60000:30000", Config(CATALOGUE))
    low = with_values(Config(CATALOGUE).options("anthropic-compaction"), {"trigger_tokens": 30_000})
    with pytest.raises(OptionError, match=refused):
        Config(CATALOGUE).with_options("anthropic-compaction", low)
    assert Grid.of("anthropic-compaction", "trigger.tokens=50000:60000:10000", Config(CATALOGUE)).values


def test_what_a_compared_row_does_not_model_is_said() -> None:
    import json

    from compaction_inspector.sample_sessions import path
    from tests.test_cli import run

    compared = json.loads(run("compare", str(path()), "--json").stdout)
    assert any(c.startswith("langchain-summarization: its default trigger never fires")
               for c in compared["caveats"])  # fmt: skip
    assert any(c.startswith("anthropic-context-editing: clear_tool_inputs") for c in compared["caveats"])

"""The clear family and its presets (docs/strategies.md): exact figures with chars/4 counts
(each result of `calls` is 117 tokens, 9 once cleared)."""

from __future__ import annotations

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.replaying.clearing import CLEARED_TEXT
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import OptionError, run
from compaction_inspector.core.strategies.clear import ClearOptions as C
from tests.helpers import snapshot, u
from tests.unit.test_microcompact import CTX, calls

CLEARING = [n for n, s in CATALOGUE.strategies.items() if s.family == "clear"]


def explained(name: str, options: C, msgs: list | None = None) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [
        (s.title, s.explanation)
        for s in run(CATALOGUE.strategies[name], msgs or calls(7), options, CTX).steps
    ]


def test_a_trigger_and_the_newest_tool_uses_kept() -> None:
    msgs = calls(7)
    before = snapshot(msgs)
    opts = C(trigger_tokens=500, keep_tool_uses=3, placeholder="[cleared]", persist=False)
    r = run(CATALOGUE.strategies["anthropic-context-editing"], msgs, opts, CTX)
    assert snapshot(msgs) == before
    assert [(s.title, s.explanation) for s in r.steps] == [
        (
            "Clear 4 old tool results",
            "883 tokens reached the trigger of 500: kept the 3 most recent tool uses; cleared 4 results, "
            "492 tokens, each replaced by “[cleared]”.",
        )
    ]
    assert r.messages is not None
    assert [m.blocks[0].text for m in r.messages if m.is_tool_result][3:5] == ["[cleared]", msgs[10].text]
    assert r.stats.to_dict()["tokens_freed"] == 492
    assert explained("anthropic-context-editing", C(trigger_tokens=5000)) == [
        ("Not triggered", "883 tokens are under the trigger of 5,000.")
    ]


def test_clear_at_least_or_nothing() -> None:
    assert explained("opencode-prune", C(keep_tokens=300, clear_at_least=100)) == [
        (
            "Clear 5 old tool results",
            "It runs on every request (neither a trigger nor an idle gap is set): kept the newest 300 tokens "
            "of tool output; cleared 5 results, 585 tokens, above clear_at_least 100, each replaced by "
            f"“{CLEARED_TEXT}”.",
        )
    ]
    assert explained("opencode-prune", C(keep_tokens=300, clear_at_least=1000)) == [
        (
            "Not enough to clear",
            "It runs on every request (neither a trigger nor an idle gap is set), but clearing would free "
            "585 tokens, under clear_at_least 1,000: nothing is cleared.",
        )
    ]


def test_the_newest_messages_and_the_persons_last_turns_are_kept() -> None:
    assert explained("openhands", C(keep_messages=6, placeholder="<MASKED>"))[0][1].startswith(
        "It runs on every request (neither a trigger nor an idle gap is set): kept results in the newest "
        "6 messages; cleared 4 results, 492 tokens"
    )
    two_turns = [*calls(3), u("again"), *calls(2)[1:]]
    r = run(CATALOGUE.strategies["opencode-prune"], two_turns, C(keep_turns=1), CTX)
    assert r.stats.results_cleared == 3  # type: ignore[attr-defined]
    assert "kept results in the person's last turn; cleared 3 results" in r.steps[0].explanation


def test_excluded_tools_are_never_cleared() -> None:
    assert explained("opencode-prune", C(keep_tool_uses=0, exclude_tools=frozenset({"Read"}))) == [
        ("Nothing to clear", "No result of a tool it may clear.")
    ]


def test_an_edit_made_anew_for_each_request_leaves_the_history_as_it_was() -> None:
    msgs = calls(7)
    opts = C(trigger_tokens=500, keep_tool_uses=3)
    kept = simulate(msgs, Policy(CATALOGUE.strategies["anthropic-context-editing"], opts), CTX)
    anew = simulate(
        msgs,
        Policy(
            CATALOGUE.strategies["anthropic-context-editing"],
            C(trigger_tokens=500, keep_tool_uses=3, persist=False),
        ),
        CTX,
    )
    # kept: the history holds what was cleared before; anew: each request starts from all 883
    assert (kept.points[-1].tokens_before, anew.points[-1].tokens_before) == (532, 883)
    assert (kept.totals.compactions, anew.totals.compactions) == (4, 4)


def test_a_placeholder_must_say_something() -> None:
    with pytest.raises(OptionError, match="placeholder must be some text"):
        C(placeholder="")


@pytest.mark.parametrize("name", CLEARING)
def test_every_preset_names_its_source_and_replays(name: str) -> None:
    strategy = CATALOGUE.strategies[name]
    assert strategy.source and strategy.default_options() != C()
    msgs = calls(7)
    fast = simulate(msgs, Policy(CATALOGUE.strategies[name]), CTX)
    assert (
        fast.to_dict() == simulate(msgs, Policy(CATALOGUE.strategies[name]), CTX, incremental=False).to_dict()
    )


def test_the_presets_are_the_documented_defaults() -> None:
    d = {n: CATALOGUE.strategies[n].default_options() for n in CLEARING}
    editing = d["anthropic-context-editing"]
    assert (editing.trigger_tokens, editing.keep_tool_uses, editing.persist) == (100_000, 3, False)
    assert (d["langchain-clear-tool-uses"].placeholder, d["langchain-clear-tool-uses"].keep_tool_uses) == (
        "[cleared]",
        3,
    )
    assert (d["openhands"].keep_messages, d["openhands"].persist) == (100, False)
    prune = d["opencode-prune"]
    assert (prune.keep_tokens, prune.keep_turns, prune.clear_at_least) == (40_000, 2, 20_000)
    assert prune.exclude_tools == {"skill"} and d["microcompact"].keep_tool_uses == 5

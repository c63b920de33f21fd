from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.replaying.clearing import CLEARED_TEXT
from compaction_inspector.core.replaying.context import Context
from compaction_inspector.core.strategies import run
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.variants import CLEARABLE_TOOLS
from tests.helpers import call, result, u

CTX = Context()


def calls(n: int, name: str = "Read") -> list[Message]:
    msgs: list[Message] = [u("go")]
    for i in range(n):
        msgs += [call(f"t{i}", name=name, id=f"A{i}"), result(f"t{i}", text=f"content {i} " * 50)]
    return msgs


def test_clears_all_but_the_most_recent_results() -> None:
    msgs = calls(7)
    r = run(
        CATALOGUE.strategies["microcompact"], msgs, ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=5), CTX
    )
    assert r.messages is not None
    cleared = [m.blocks[0].text == CLEARED_TEXT for m in r.messages if m.is_tool_result]
    assert cleared == [True, True, False, False, False, False, False]
    assert r.stats.to_dict()["results_cleared"] == 2 and r.stats.to_dict()["results_clearable"] == 7
    assert r.steps[0].diff.edited == ((2, 2), (4, 4))
    assert r.messages[2].blocks[0].tool_use_id == "t0"
    assert r.steps[0].explanation == (
        "It runs on every request (neither a trigger nor an idle gap is set): kept the 5 most recent tool "
        "uses; cleared 2 results, 234 tokens, each replaced by “[Old tool result content cleared]”."
    )


def test_only_clearable_tools_are_cleared() -> None:
    msgs = calls(3, name="TodoWrite")
    r = run(
        CATALOGUE.strategies["microcompact"], msgs, ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=0), CTX
    )
    assert r.messages == tuple(msgs) and r.steps[0].title == "Nothing to clear"


def test_idle_gap_trigger() -> None:
    def at(m: Message, t: str) -> Message:
        return Message(m.role, m.blocks, id=m.id, timestamp=t)

    msgs = calls(3)
    msgs = [at(m, "2026-01-01T10:00:00Z") for m in msgs] + [
        Message("user", (Block("text", text="back"),), timestamp="2026-01-01T10:30:00Z")
    ]
    quiet = run(
        CATALOGUE.strategies["microcompact"],
        msgs,
        ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=0, idle_gap_minutes=60),
        CTX,
    )
    assert quiet.stats.to_dict()["triggered"] is False and quiet.stats.to_dict()["idle_minutes"] == 30.0
    late = run(
        CATALOGUE.strategies["microcompact"],
        msgs,
        ClearOptions(
            tools=CLEARABLE_TOOLS, keep_tool_uses=0, idle_gap_minutes=60, now="2026-01-01T11:30:00Z"
        ),
        CTX,
    )
    assert late.stats.to_dict()["triggered"] is True and late.stats.to_dict()["reason"] == "idle_gap"
    assert late.stats.to_dict()["results_cleared"] == 3
    assert late.steps[0].explanation == (
        "90 minutes idle, past the gap of 60: kept none; cleared 3 results, 351 tokens, each replaced by "
        "“[Old tool result content cleared]”."
    )


def test_a_repeated_call_id_is_named_by_its_first_call() -> None:
    # repair keeps the first call of a repeated id, so its name decides the result
    msgs = [
        u("go"),
        call("t0", name="Read", id="A0"),
        result("t0", text="file " * 50),
        call("t0", name="TodoWrite", id="A1"),
        result("t0", text="todo"),
    ]
    r = run(
        CATALOGUE.strategies["microcompact"], msgs, ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=0), CTX
    )
    assert r.stats.to_dict()["results_clearable"] == 2 and r.stats.to_dict()["results_cleared"] == 2

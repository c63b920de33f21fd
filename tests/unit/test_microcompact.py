from compaction_inspector.core.clearing import CLEARED_TEXT
from compaction_inspector.core.context import Context
from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.strategies.microcompact import MicrocompactOptions, run
from tests.helpers import call, result, u

CTX = Context()


def calls(n: int, name: str = "Read") -> list[Message]:
    msgs: list[Message] = [u("go")]
    for i in range(n):
        msgs += [call(f"t{i}", name=name, id=f"A{i}"), result(f"t{i}", text=f"content {i} " * 50)]
    return msgs


def test_clears_all_but_the_most_recent_results() -> None:
    msgs = calls(7)
    r = run(msgs, MicrocompactOptions(keep_recent=5), CTX)
    assert r.messages is not None
    cleared = [m.blocks[0].text == CLEARED_TEXT for m in r.messages if m.is_tool_result]
    assert cleared == [True, True, False, False, False, False, False]
    assert r.stats.results_cleared == 2 and r.stats.results_clearable == 7
    assert r.steps[0].diff.edited == ((2, 2), (4, 4))
    assert r.messages[2].blocks[0].tool_use_id == "t0"
    assert r.steps[0].explanation == (
        "Results of clearable tools are replaced by “[Old tool result content cleared]”, keeping the 5 most "
        "recent intact; with no idle gap set it clears on every request, where Claude Code waits for one "
        "(set idle gap minutes to model it)."
    )


def test_only_clearable_tools_are_cleared() -> None:
    msgs = calls(3, name="TodoWrite")
    r = run(msgs, MicrocompactOptions(keep_recent=0), CTX)
    assert r.messages == tuple(msgs) and r.steps[0].title == "Nothing to clear"


def test_idle_gap_trigger() -> None:
    def at(m: Message, t: str) -> Message:
        return Message(m.role, m.blocks, id=m.id, timestamp=t)

    msgs = calls(3)
    msgs = [at(m, "2026-01-01T10:00:00Z") for m in msgs] + [
        Message("user", (Block("text", text="back"),), timestamp="2026-01-01T10:30:00Z")
    ]
    quiet = run(msgs, MicrocompactOptions(keep_recent=0, idle_gap_minutes=60), CTX)
    assert quiet.stats.triggered is False and quiet.stats.idle_minutes == 30.0
    late = run(
        msgs,
        MicrocompactOptions(keep_recent=0, idle_gap_minutes=60, now="2026-01-01T11:30:00Z"),
        CTX,
    )
    assert late.stats.triggered is True and late.stats.reason == "idle_gap"
    assert late.stats.results_cleared == 3
    assert late.steps[0].explanation.endswith(
        "keeping the 0 most recent intact (90 minutes idle, past the gap of 60)."
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
    r = run(msgs, MicrocompactOptions(keep_recent=0), CTX)
    assert r.stats.results_clearable == 2 and r.stats.results_cleared == 2

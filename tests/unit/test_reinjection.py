"""What Claude Code puts back after it compacts (docs/agents.md), with chars/4 counts:
a text of 4n characters is n tokens."""

from compaction_inspector.core.agents.claude_code.reinjection import (
    PLAN_FILE,
    reference,
    reinjected,
    reinjected_range,
)
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Block, FileTouch, Message, text_message
from tests.helpers import call, result, u

COUNTER = make_counter("chars4")


def touch(k: int, tool: str, path: str, text: str = "ok", **given: object) -> list[Message]:
    return [call(f"c{k}", tool, input={"file_path": path, **given}), result(f"c{k}", text=text)]


def test_the_five_newest_files_go_back_whole_or_as_a_reference_never_cut() -> None:
    msgs = [u("go")]
    for k in range(7):  # f0..f6; f6 read last
        msgs += touch(k, "Read", f"/src/f{k}.py", "     1→" + "x" * 400)
    msgs += touch(7, "Read", "/src/big.py", "     1→" + "y" * 40_000)  # 10,000 tokens of content
    msgs += touch(8, "Read", "/repo/CLAUDE.md", "     1→memory")  # memory files stay out
    back = reinjected(msgs, {}, COUNTER, 1.0)
    assert [(r.name, r.whole) for r in back] == [
        ("/src/big.py", False), ("/src/f6.py", True), ("/src/f5.py", True), ("/src/f4.py", True),
        ("/src/f3.py", True),
    ]  # fmt: skip
    assert back[0].message.text == reference("/src/big.py")
    assert back[1].message.text == "/src/f6.py\n     1→" + "x" * 400 and back[1].tokens == 104


def test_an_edit_the_transcript_records_puts_back_the_file_as_edited() -> None:
    msgs = [u("go"), *touch(1, "Read", "/a.py", "     1→old"), *touch(2, "Edit", "/a.py", "updated")]
    touches = {"c2": FileTouch("/a.py", "new line\nsecond")}
    (back,) = reinjected(msgs, touches, COUNTER, 1.0)
    assert back.message.text == "/a.py\n     1→new line\n     2→second"
    # without the record, the file as last read
    (last,) = reinjected(msgs, {}, COUNTER, 1.0)
    assert last.message.text == "/a.py\n     1→old"


def test_a_part_read_stands_for_the_whole_file_the_plan_and_skills_follow() -> None:
    msgs = [u("go"), *touch(1, "Read", "/part.py", "     1→" + "z" * 4_000, offset=1, limit=10)]
    msgs += touch(2, "Write", "/home/me/.claude/plans/plan.md", "ok", content="the plan")
    msgs += [call("s", "Skill", input={"skill": "review"}), result("s", text="Launching skill: review")]
    msgs += [text_message("user", "skill body " * 10, is_meta=True)]
    back = reinjected(msgs, {"c1": FileTouch("/part.py", None, 0.1)}, COUNTER, 1.0)
    assert [(r.kind, r.name, r.whole) for r in back] == [
        ("file", "/part.py", False),  # 1,000 tokens shown of a tenth: 10,000 in all
        ("plan", "/home/me/.claude/plans/plan.md", True),
        ("skill", "review", True),
    ]
    assert back[1].message.text == "/home/me/.claude/plans/plan.md\nthe plan"


def test_after_a_compaction_only_what_it_put_back_is_remembered() -> None:
    boundary = text_message("system", "compacted", is_compact_boundary=True)
    msgs = [u("go")]
    for k in range(7):
        msgs += touch(k, "Read", f"/f{k}.py", "     1→x")
    msgs += [boundary, u("again"), *touch(9, "Read", "/new.py", "     1→y")]
    names = [r.name for r in reinjected(msgs, {}, COUNTER, 1.0)]
    assert names == ["/new.py", "/f6.py", "/f5.py", "/f4.py", "/f3.py"]
    assert [r.name for r in reinjected(msgs, {}, COUNTER, 1.0, max_files=2)] == ["/new.py", "/f6.py"]


def test_skills_go_back_newest_first_each_cut_to_its_first_5000_tokens() -> None:
    msgs = [u("go")]
    for k, (name, size) in enumerate((("old", 100), ("long", 6_000))):
        msgs += [
            call(f"s{k}", "Skill", input={"skill": name}),
            result(f"s{k}", text=f"Launching skill: {name}"),
        ]
        msgs += [text_message("user", "word " * (size * 4 // 5), is_meta=True)]  # `size` tokens
    back = reinjected(msgs, {}, COUNTER, 1.0)
    assert [(r.name, r.whole, r.tokens) for r in back] == [("long", False, 5_000), ("old", True, 100)]
    assert back[0].message.text == ("word " * 4_800)[:20_000]


def test_files_go_back_by_when_they_were_last_changed_not_when_last_read() -> None:
    # Claude Code sorts by the modification time it noted: a file it edited outranks any
    # file it only read since, and reading a changed file again keeps its change's time
    msgs = [u("go"), *touch(1, "Read", "/old.py", "     1→o")]
    msgs += touch(2, "Write", "/written.py", "ok", content="w")
    msgs += touch(3, "Edit", "/edited.py", "ok")
    msgs += touch(4, "Read", "/written.py", "     1→w")
    msgs += touch(5, "Read", "/late.py", "     1→l")
    touches = {"c3": FileTouch("/edited.py", "e")}
    names = [r.name for r in reinjected(msgs, touches, COUNTER, 1.0)]
    assert names == ["/edited.py", "/written.py", "/late.py", "/old.py"]
    assert [r.name for r in reinjected(msgs, touches, COUNTER, 1.0, max_files=2)] == [
        "/edited.py",
        "/written.py",
    ]


def test_a_skill_run_as_a_slash_command_goes_back_a_local_command_does_not() -> None:
    msgs = [
        u("<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        u("<local-command-stdout></local-command-stdout>"),
        u(
            "<command-message>security:review</command-message>\n<command-name>/security:review</command-name>"
        ),
        text_message("user", "Review the code " * 5, is_meta=True),
        u("thanks"),
        text_message("user", "a reminder, not a skill", is_meta=True),
    ]
    back = reinjected(msgs, {}, COUNTER, 1.0)
    assert [(r.kind, r.name, r.message.text) for r in back] == [
        ("skill", "security:review", "Review the code " * 5)
    ]


def test_a_skill_invoked_again_goes_back_as_the_newest() -> None:
    msgs = []
    for k, name in enumerate(("a", "b", "a")):
        msgs += [
            u(f"<command-name>/{name}</command-name>"),
            text_message("user", f"skill {name} {k}", is_meta=True),
        ]
    assert [(r.name, r.message.text) for r in reinjected(msgs, {}, COUNTER, 1.0)] == [
        ("a", "skill a 2"),
        ("b", "skill b 1"),
    ]


def test_the_plan_a_session_carries_out_goes_back() -> None:
    msgs = [
        Message("user", (Block("text", text="Implement the following plan: ..."),), plan="# Plan\nstep 1")
    ]
    (back,) = reinjected(msgs, {}, COUNTER, 1.0)
    assert (back.kind, back.name, back.message.text) == ("plan", PLAN_FILE, f"{PLAN_FILE}\n# Plan\nstep 1")


def test_files_it_only_read_make_a_range_where_they_may_have_changed_after_others() -> None:
    # five files edited, then one only read: Claude Code noted that file's time on disk,
    # which may be later than the first edit (it changed since, outside the session) or
    # earlier than all; a file read before every edit cannot outrank any of them
    msgs = [u("go"), *touch(0, "Read", "/old.py", "     1→" + "o" * 400)]
    touches = {}
    for k in range(1, 6):
        msgs += touch(k, "Edit", f"/e{k}.py")
        touches[f"c{k}"] = FileTouch(f"/e{k}.py", "e" * 40)
    msgs += touch(6, "Read", "/late.py", "     1→" + "l" * 4_000)
    back = reinjected(msgs, touches, COUNTER, 1.0)
    assert [r.name for r in back] == ["/e5.py", "/e4.py", "/e3.py", "/e2.py", "/e1.py"]
    # each edited file "/eN.py\n     1→" and 40 characters: 13 tokens; /late.py: 4,016 characters, 1,004
    assert sum(r.tokens for r in back) == 65
    same, span = reinjected_range(msgs, touches, COUNTER, 1.0)
    assert [(r.name, r.tokens) for r in same] == [(r.name, r.tokens) for r in back]
    assert span == (65, 4 * 13 + 1_004)
    # with no more files than it restores, every one goes back: nothing is unknown
    assert reinjected_range(msgs[:5], touches, COUNTER, 1.0)[1] == (103 + 13, 103 + 13)

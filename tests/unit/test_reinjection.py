"""What Claude Code puts back after it compacts (docs/agents.md), with chars/4 counts:
a text of 4n characters is n tokens."""

from compaction_inspector.core.model import FileTouch, Message, text_message
from compaction_inspector.core.reinjection import reference, reinjected
from compaction_inspector.core.tokens import make_counter
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

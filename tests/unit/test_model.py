import dataclasses

from compaction_inspector.core.model import Block, Message, Reasoning, Usage


def test_an_edited_copy_keeps_every_field_but_its_blocks() -> None:
    original = Message(
        "assistant",
        (Block("text", text="a"),),
        id="m1",
        line=7,
        uuid="u",
        parent_uuid="p",
        request_id="r",
        timestamp="2026-01-01T00:00:00Z",
        is_meta=True,
        is_sidechain=True,
        is_compact_summary=True,
        is_compact_boundary=True,
        is_synthetic=True,
        usage=Usage(1, 2, 3, 4),
        attachment="file",
        is_microcompact=True,
        reasoning=Reasoning(encrypted=10, reported=4),
        plan="# Plan",
    )
    edited = original.with_blocks((Block("text", text="b"),))
    for f in dataclasses.fields(Message):
        if f.name not in ("blocks", "replaces"):
            assert getattr(edited, f.name) == getattr(original, f.name), f.name
    assert edited.text == "b" and edited.replaces == (original,)

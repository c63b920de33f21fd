import dataclasses

from compaction_inspector.core.model import Block, Message, Reasoning, Usage, immutable


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


@immutable()
class _Point:
    x: int
    y: int = 0


@immutable(eq=False)
class _Handle:
    name: str


@immutable()
class _Named:
    name: str

    def __hash__(self) -> int:
        return 7


@immutable(slots=True, kw_only=True)
class _Slotted:
    a: int
    b: str = "b"


def test_an_immutable_record_hashes_as_a_frozen_dataclass_would() -> None:
    """By value where it compares by value (a key of a dict or a set), by identity where
    it does not, and by its own hash where it defines one."""
    assert _Point(1, 2) == _Point(1, 2) and hash(_Point(1, 2)) == hash(_Point(1, 2))
    assert len({_Point(1, 2), _Point(1, 2), _Point(2, 1)}) == 2
    first, second = _Handle("a"), _Handle("a")
    assert first != second and len({first, second}) == 2 and hash(first) == object.__hash__(first)
    assert hash(_Named("a")) == 7 == hash(_Named("b"))


def test_an_immutable_record_is_a_dataclass_of_the_fields_asked() -> None:
    made = _Slotted(a=1)
    assert not hasattr(made, "__dict__") and hasattr(_Point(1), "__dict__")
    assert dataclasses.replace(made, b="c") == _Slotted(a=1, b="c")
    assert [f.name for f in dataclasses.fields(_Point)] == ["x", "y"]
    assert repr(_Point(3)) == "_Point(x=3, y=0)"

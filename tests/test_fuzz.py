"""Hostile transcripts: every input yields a usable session (with diagnostics) or a
clear LoadError, and nothing downstream (analysis, every strategy, a replay, the
pairing check, terminal-safe text) raises. Never an exception escaping, never a hang.

`HYPOTHESIS_PROFILE=thorough python3 -m pytest tests/test_fuzz.py` tries many more.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pairing import check, repair
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.replaying.simulate import simulate
from compaction_inspector.core.replaying.simulation import Policy
from compaction_inspector.core.strategies import Context, run
from compaction_inspector.core.text import visible
from compaction_inspector.sample_sessions import names, path
from tests.helpers import load, load_bytes

pytestmark = pytest.mark.slow  # many seeded inputs through every command

SAMPLES = {name: path(name).read_bytes() for name in names()}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
KNOWN_KEYS = [
    "type",
    "uuid",
    "parentUuid",
    "message",
    "role",
    "content",
    "id",
    "usage",
    "isSidechain",
    "isMeta",
    "isCompactSummary",
    "subtype",
    "payload",
    "request",
    "messages",
    "tool_calls",
    "tool_use_id",
    "name",
    "input",
    "text",
    "summary",
    "call_id",
    "arguments",
    "output",
]
TYPES = [
    "user",
    "assistant",
    "system",
    "summary",
    "response_item",
    "event_msg",
    "session_meta",
    "compacted",
    "message",
    "tool_use",
    "tool_result",
    "thinking",
    "function_call",
    "function_call_output",
    "reasoning",
    "token_count",
    "compact_boundary",
    "text",
    "image",
]


@st.composite
def records(draw: st.DrawFn) -> Any:
    """Objects shaped like transcript lines, with the wrong types where it hurts."""
    value = {
        k: draw(json_values) for k in draw(st.lists(st.sampled_from(KNOWN_KEYS), max_size=8, unique=True))
    }
    if draw(st.booleans()):
        value["type"] = draw(st.sampled_from(TYPES))
    if draw(st.booleans()):
        value["message"] = {
            "role": draw(st.sampled_from(["user", "assistant", "tool", 5])),
            "id": draw(st.sampled_from(["A", "B", None, 7])),
            "content": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(TYPES)}, optional={k: json_values for k in KNOWN_KEYS[1:12]}
                    ),
                    max_size=3,
                )
                | json_values
            ),
        }
    if draw(st.booleans()):
        value["payload"] = {
            "type": draw(st.sampled_from(TYPES)),
            **draw(st.dictionaries(st.sampled_from(KNOWN_KEYS), json_values, max_size=4)),
        }
    return value


def exercise(data: bytes) -> None:
    try:
        session = load_bytes(data)
    except LoadError as exc:
        assert str(exc)
        return
    with tempfile.TemporaryDirectory() as folder:
        # Opening the file streams JSONL line by line: it must read exactly the same.
        target = Path(folder) / "t.jsonl"
        target.write_bytes(data)
        streamed = load(target)
        assert [(m.role, m.text) for m in streamed.messages] == [(m.role, m.text) for m in session.messages]
        assert streamed.content_hash == session.content_hash
    counter = make_counter("chars4")
    json.dumps(Inspection.of(session, Config(CATALOGUE), counter).analysis().to_dict())
    context = Context(counter)
    for name in CATALOGUE.strategies:
        result = run(CATALOGUE.strategies[name], session.messages, None, context)
        if result.messages is not None:
            assert [p for p in check(result.messages) if p.kind != "first_not_user"] == []
        for step in result.steps:
            step.diff.fate()
    simulate(session.messages, Policy(CATALOGUE.strategies["hysteresis"]), context)
    assert [p for p in check(repair(session.messages)) if p.kind != "first_not_user"] == []
    for m in session.messages[:50]:
        assert "\x1b" not in visible(m.text)


@given(st.binary(max_size=2000))
def test_arbitrary_bytes(data: bytes) -> None:
    exercise(data)


@given(st.lists(records(), min_size=1, max_size=12), st.sampled_from(["jsonl", "list", "body", "proxy"]))
def test_transcript_shaped_garbage(items: list[Any], shape: str) -> None:
    if shape == "jsonl":
        data = "\n".join(json.dumps(i) for i in items)
    elif shape == "list":
        data = json.dumps(items)
    elif shape == "body":
        data = json.dumps({"system": "s", "messages": items})
    else:
        data = "\n".join(json.dumps({"request": {"body": {"messages": items}}}) for _ in range(2))
    exercise(data.encode())


@st.composite
def mutated_samples(draw: st.DrawFn) -> bytes:
    data = bytearray(SAMPLES[draw(st.sampled_from(sorted(SAMPLES)))])
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["cut", "delete", "insert", "truncate", "nul", "utf8", "dup"]))
        if action == "cut":  # a line cut off mid-write
            end = data.find(b"\n", at)
            del data[at : end if end >= 0 else len(data)]
        elif action == "delete":
            del data[at : at + draw(st.integers(1, 400))]
        elif action == "insert":
            data[at:at] = draw(
                st.sampled_from([b"{", b"}", b"]", b'"', b"\n", b"\\", b'{"type":"user"}\n', b"[1,2"])
            )
        elif action == "truncate":
            del data[at:]
        elif action == "nul":
            data[at:at] = b"\x00" * draw(st.integers(1, 4))
        elif action == "utf8":
            data[at:at] = b"\xff\xc3("
        else:  # duplicated lines: repeated ids and uuids
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = bytes(data[start : end if end >= 0 else len(data)])
            data[start:start] = line + b"\n"
    return bytes(data)


@given(mutated_samples())
def test_mutated_samples(data: bytes) -> None:
    exercise(data)


def test_pathological_shapes() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    long_line = json.dumps(
        {"type": "user", "uuid": "u", "message": {"role": "user", "content": "x" * 3_000_000}}
    ).encode()
    cycle = b"\n".join(
        json.dumps(
            {"type": t, "uuid": u, "parentUuid": p, "message": {"role": t, "id": "m", "content": c}}
        ).encode()
        for t, u, p, c in [
            ("user", "a", "b", "hi"),
            ("assistant", "b", "a", [{"type": "tool_use", "id": "t1", "name": "R", "input": {}}]),
            ("assistant", "b", "b", [{"type": "tool_use", "id": "t1", "name": "R", "input": {}}]),
            ("user", "c", "zz", [{"type": "tool_result", "tool_use_id": "nope", "content": "r"}]),
        ]
    )
    for data in (
        deep,
        long_line,
        b"- " * 5000 + b"x",
        b"a: " + b"[" * 20_000,
        cycle,
        b"\x00" * 1000,
        b"\n\n\n",
    ):
        exercise(data)
    assert len(load_bytes(long_line).messages) == 1
    assert [p.kind for p in check(load_bytes(cycle).messages)].count("duplicate_tool_use") == 1

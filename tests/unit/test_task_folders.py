"""Whatever a VS Code agent's task folder or the current Cline's session files hold, reading
them gives a session or a clear error, never a crash, and writes nothing beside them
(Hypothesis: every field of the agents' types given values of any JSON kind)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.formats.common import LoadError

ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300_000) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
HISTORY_KEYS = ["role", "content", "ts", "isSummary", "condenseId", "condenseParent", "truncationParent",
                "isTruncationMarker", "truncationId", "type", "metrics", "modelInfo", "id"]  # fmt: skip
PANEL_KEYS = ["ts", "type", "say", "text", "contextCondense", "contextTruncation", "conversationHistoryIndex",
              "conversationHistoryDeletedRange", "modelInfo"]  # fmt: skip


def items(keys: list[str]) -> st.SearchStrategy[list[Any]]:
    fields = st.dictionaries(
        st.sampled_from(keys), ANY | st.sampled_from(["user", "assistant", "api_req_started"])
    )
    return st.lists(fields | ANY, max_size=6)


def read(path: Path) -> None:
    before = sorted(p.name for p in path.parent.iterdir())
    try:
        session = CATALOGUE.formats.load(path)
    except LoadError:
        pass
    else:
        assert session.format in ("roo-code", "cline")
        assert all(c.index < len(session.messages) for c in session.compactions)
    assert sorted(p.name for p in path.parent.iterdir()) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=items(HISTORY_KEYS), panel=items(PANEL_KEYS), storage=st.sampled_from(["", "roo", "cline"]))
def test_a_task_folder_of_anything_reads_or_says_why(
    history: list[Any], panel: list[Any], storage: str
) -> None:
    names = {"roo": "rooveterinaryinc.roo-cline", "cline": "saoudrizwan.claude-dev", "": "somewhere"}
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / names[storage] / "tasks" / "t"
        folder.mkdir(parents=True)
        (folder / "api_conversation_history.json").write_text(json.dumps(history))
        (folder / "ui_messages.json").write_text(json.dumps(panel))
        read(folder / "api_conversation_history.json")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=items(HISTORY_KEYS), state=ANY, manifest=ANY)
def test_a_cline_session_of_anything_reads_or_says_why(
    messages: list[Any], state: Any, manifest: Any
) -> None:
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / "s1"
        folder.mkdir()
        (folder / "s1.messages.json").write_text(json.dumps({"version": 1, "messages": messages}))
        if isinstance(state, dict):
            state = {**state, "source_message_count": len(messages) // 2, "messages": messages[:2]}
        (folder / "s1.compaction.json").write_text(json.dumps(state))
        (folder / "s1.json").write_text(json.dumps(manifest))
        read(folder / "s1.messages.json")

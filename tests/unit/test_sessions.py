"""Finding the user's sessions and keeping their rows between runs."""

from __future__ import annotations

import json
from pathlib import Path

from compaction_inspector.core.formats import load
from compaction_inspector.core.sessions import CLAUDE_CODE, Index, find, subagent_file
from compaction_inspector.sample_sessions import path


def home(tmp_path: Path) -> Path:
    project = tmp_path / "projects" / "-nowhere"
    (project / "s1" / "subagents").mkdir(parents=True)
    (project / "s1.jsonl").write_bytes(path("claude_code_compacted.jsonl").read_bytes())
    (project / "s1" / "subagents" / "agent-x.jsonl").write_text("{}\n")
    (tmp_path / "projects" / "loop").symlink_to(tmp_path / "projects")  # a link is never followed
    return tmp_path / "projects"


def test_rows_are_kept_by_size_and_time_and_a_corrupt_index_is_rescanned(tmp_path: Path) -> None:
    found = find([(CLAUDE_CODE, home(tmp_path))])
    assert [(f.path.name, [a.name for a in f.subagents]) for f in found] == [
        ("s1.jsonl", ["agent-x.jsonl"]),
        ("agent-x.jsonl", []),  # a row of its own, named by its session
    ]
    found = found[:1]
    index = tmp_path / "index.json"
    [row] = Index(index).rows(found)
    assert (row.title, row.compactions, row.subagents, row.problem) == (
        "Make test_expiry deterministic with a fake clock", 1, 1, None,
    )  # fmt: skip
    kept = json.loads(index.read_text())
    assert list(kept["rows"]) == [str(found[0].path)]
    index.write_text("{not json")  # corrupt: ignored, the file scanned again, the index rewritten
    assert Index(index).rows(found) == [row]
    assert json.loads(index.read_text()) == kept


def test_the_sub_agent_file_a_task_result_names() -> None:
    session = path("claude_code_compacted.jsonl")
    assert subagent_file(session, load(session).messages) is None  # it names none

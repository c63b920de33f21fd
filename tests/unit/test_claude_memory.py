"""The memory files Claude Code sends with every request and never writes to its
transcript (code.claude.com/docs, memory), read from this machine as they are now: the
layers are built here as the docs lay them out."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from compaction_inspector.core.agents.claude_code import memory
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.context_model import DEFAULT_OVERHEAD_TOKENS
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import text_message
from tests.helpers import load_text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def test_every_layer_is_read_in_order_and_what_loads_later_is_left_out(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "work" / "repo"
    project = repo / "app"
    expected = [
        write(home / "CLAUDE.md", "user"),
        write(home / "rules" / "style.md", "user rule"),
        write(repo / "CLAUDE.md", "repo"),
        write(project / "CLAUDE.md", "project"),
        write(project / "CLAUDE.local.md", "mine"),
        write(project / ".claude" / "CLAUDE.md", "shared"),
        write(project / ".claude" / "rules" / "always.md", "---\ndescription: x\n---\nalways"),
    ]
    write(project / ".claude" / "rules" / "tests.md", "---\npaths:\n  - tests/**\n---\nonly with tests")
    write(project / "sub" / "CLAUDE.md", "nested: loads when a file there is read")
    lines = "\n".join(f"note {n}" for n in range(300))
    auto = home / "projects" / memory.project_folder(str(project)) / "memory" / "MEMORY.md"
    expected.append(write(auto, lines))
    found = memory.read(str(project))
    assert found is not None
    assert [f for f in found.files if f not in memory.MANAGED] == expected
    assert "only with tests" not in found.text and "nested" not in found.text
    assert "note 199" in found.text and "note 200" not in found.text  # its first 200 lines
    assert memory.read(None) is not None  # the user's own alone
    assert memory.project_folder("/home/me/my.app") == "-home-me-my-app"


def test_a_session_measured_by_nothing_adds_them_to_the_presets_overhead_and_says_so(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    write(project / "CLAUDE.md", "Always run the tests. " * 100)
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(project), "version": "2.1.49",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "cwd": str(project),
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    ]  # fmt: skip
    text = "\n".join(json.dumps(x) for x in lines)
    kept = home / "projects" / memory.project_folder(str(project)) / "s.jsonl"
    write(kept, text)
    session = load_text(text, str(kept))
    counter = make_counter("chars4")
    config = Config(CATALOGUE).for_session(session)
    inspection = Inspection.of(session, config, counter)
    model = inspection.model
    carried = counter.count(text_message("user", "Always run the tests. " * 100), remember=False)
    assert model.overhead == DEFAULT_OVERHEAD_TOKENS + carried  # Claude Code documents none of its own
    assert model.overhead_source == (
        f"preset, with CLAUDE.md and memory counted from 1 file as they are now ({carried:,})"
    )
    elsewhere = dataclasses.replace(session, metadata={**session.metadata, "cwd": str(tmp_path / "none")})
    assert Inspection.of(elsewhere, config, counter).model.overhead_source == (
        f"preset; CLAUDE.md and memory left out: it ran in {tmp_path / 'none'}, which is not on this machine"
    )


def test_a_session_recorded_on_another_machine_gains_none_of_this_ones_memory(
    home: Path, tmp_path: Path
) -> None:
    """A 36 KB ~/.claude/CLAUDE.md here says nothing of a session whose transcript was
    copied from elsewhere, though its folder exists here too."""
    project = tmp_path / "proj"
    write(home / "CLAUDE.md", "Mine. " * 6_000)
    write(project / "CLAUDE.md", "Always run the tests. " * 100)
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "cwd": str(project), "version": "2.1.49",
         "message": {"role": "user", "content": "hello"}},
    ]  # fmt: skip
    copied = tmp_path / "downloads" / "s.jsonl"
    write(copied, json.dumps(lines[0]))
    session = load_text(copied.read_text(), str(copied))
    config = Config(CATALOGUE).for_session(session)
    model = Inspection.of(session, config, make_counter("chars4")).model
    assert model.overhead == DEFAULT_OVERHEAD_TOKENS
    assert model.overhead_source == (
        "preset; CLAUDE.md and memory left out: its transcript is not in this machine's projects "
        f"folder ({home / 'projects'})"
    )

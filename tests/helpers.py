"""Small builders for transcripts in tests: u("hi"), a("ok", id="A"), tool calls and results."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.model import Block, Message, text_message


def u(text: str = "u", **flags: Any) -> Message:
    return text_message("user", text, **flags)


def a(text: str = "a", id: str | None = None, **flags: Any) -> Message:
    return text_message("assistant", text, id=id, **flags)


def call(
    tool_id: str,
    name: str = "Read",
    id: str | None = None,
    input: Any = None,
    text: str | None = None,
) -> Message:
    blocks = ([Block("text", text=text)] if text else []) + [Block.tool_use(tool_id, name, input or {})]
    return Message(role="assistant", blocks=tuple(blocks), id=id or f"msg-{tool_id}")


def result(*tool_ids: str, text: str = "ok") -> Message:
    return Message(role="user", blocks=tuple(Block.tool_result(t, text) for t in tool_ids))


def texts(messages: Any) -> list[str]:
    return [m.text for m in messages]


def snapshot(messages: Any) -> list[tuple[Any, ...]]:
    """A deep value copy, to prove a function left its input unchanged."""
    return [(m.role, m.blocks, m.id, m.is_meta, m.replaces) for m in messages]


# the tests are a front end: they make the catalogue from the registry, as the app does
FORMATS = CATALOGUE.formats
load = FORMATS.load
load_bytes = FORMATS.load_bytes
load_text = FORMATS.load_text
STRATEGIES = CATALOGUE.strategies


def isolated_homes(agents: Iterable[Agent], root: str) -> dict[str, str]:
    """Every environment variable that moves an agent's files (`Agent.homes`), each to a
    folder of its own under `root`: the tests never read whoever runs them's sessions or
    settings, and a new agent is isolated by its registration alone."""
    return {name: os.path.join(root, name.lower()) for agent in agents for name in agent.homes}


ROOT = Path(__file__).resolve().parent.parent
INSTALLED = ("core", "tui", "sample_sessions")  # the folders that install as compaction_inspector


def installed_tree(where: Path, copied: bool) -> Path:
    """The folders laid out under `compaction_inspector` as they install: links to the
    checkout (the editable install's finder is one grimp cannot read), or copies to edit."""
    package = where / "compaction_inspector"
    package.mkdir(parents=True)
    for name in INSTALLED:
        if copied:
            shutil.copytree(ROOT / name, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (package / name).symlink_to(ROOT / name, target_is_directory=True)
    return where

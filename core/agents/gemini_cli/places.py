"""Where Gemini CLI keeps its recordings (`<folder>/tmp/<project>/chats/session-*`, a
session's sub-agents in `chats/<its id>/`) and how they are found there; it imports neither
the agent's class nor its strategies or rules (`core.contract.files.Places`)."""

from __future__ import annotations

from pathlib import Path

from compaction_inspector.core.agents.gemini_cli import settings
from compaction_inspector.core.agents.gemini_cli.transcript import FORMAT
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.files import walk


def home() -> Path:
    return settings.folder()


def find(root: Path) -> list[Found]:
    """Each project's recordings (`tmp/<project>/chats/session-*`), a session's
    sub-agents (`chats/<its id>/*.jsonl`) after it."""
    found: list[Found] = []
    subagents: dict[Path, dict[str, tuple[Path, ...]]] = {}  # by chats folder, by short id: read once
    for path in walk(root / "tmp", "session-*.json*"):
        chats = path.parent
        if chats.name != "chats" or path.suffix not in (".json", ".jsonl"):
            continue
        if path.suffix == ".json" and path.with_suffix(".jsonl").exists():
            continue  # Gemini CLI moved it to a `.jsonl` when it resumed it
        if chats not in subagents:
            subagents[chats] = _subagents(chats)
        project, short = chats.parent.name, path.stem.rsplit("-", 1)[-1]
        subs = subagents[chats].get(short, ())
        found.append(Found(path, FORMAT, project, subs))
        found += [Found(p, FORMAT, project, subagent_of=p.parent.name) for p in subs]
    return found


def _subagents(chats: Path) -> dict[str, tuple[Path, ...]]:
    """The sub-agents' recordings in a chats folder, by the first 8 characters of the
    session that started them (the end of its file's name)."""
    found: dict[str, tuple[Path, ...]] = {}
    try:
        folders = sorted(chats.iterdir())
    except OSError:  # unreadable: its sessions are listed without their sub-agents
        return found
    for folder in folders:
        if folder.is_dir():
            found[folder.name[:8]] = found.get(folder.name[:8], ()) + tuple(walk(folder, "*.jsonl"))
    return found

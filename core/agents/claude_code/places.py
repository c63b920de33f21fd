"""Where Claude Code keeps its sessions (`<projects>/<project>/<session>.jsonl`, its
sub-agents in `<session>/subagents/agent-*.jsonl`) and how they are found there; it imports
neither the agent's class nor its strategies or rules (`core.contract.files.Places`)."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.agents.claude_code.transcript import FORMAT
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.files import files, folders


def home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"


def find(root: Path) -> list[Found]:
    """Every session in each project folder, its sub-agents after it, each a row of its own
    named by the session it ran in."""
    found: list[Found] = []
    for project in folders(root):
        for f in files(project, "*.jsonl"):
            agents = tuple(files(project / f.stem / "subagents", "agent-*.jsonl"))
            found.append(Found(f, FORMAT, decode_project(project.name), agents))
            found += [Found(a, FORMAT, decode_project(project.name), subagent_of=f.stem) for a in agents]
    return found


def decode_project(name: str) -> str:
    """A project folder's name back to its path where that path exists
    (`-Users-dain-workspace-x` is /Users/dain/workspace/x), else the name as it is."""
    candidate = "/" + name.lstrip("-").replace("-", "/")
    return candidate if name.startswith("-") and Path(candidate).exists() else name

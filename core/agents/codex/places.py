"""Where Codex keeps its rollouts (`<sessions>/YYYY/MM/DD/rollout-*.jsonl`) and how they are
found there; it imports neither the agent's class nor its strategies or rules
(`core.contract.files.Places`)."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.agents.codex.transcript import FORMAT
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.files import walk


def home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"


def find(root: Path) -> list[Found]:
    """Every rollout under the day folders."""
    return [Found(f, FORMAT, str(f.parent.relative_to(root))) for f in walk(root, "rollout-*.jsonl")]

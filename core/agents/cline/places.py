"""Where Cline keeps its sessions (Cline 3's task folders in its VS Code global storage
folder, the current Cline's in its own sessions folder) and how they are found there; it
imports neither the agent's class nor its strategies or rules
(`core.contract.files.Places`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from compaction_inspector.core.agents.cline import sdk
from compaction_inspector.core.agents.cline.transcript import FORMAT, STORAGE
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.formats import task_folder


def home() -> Path:
    return task_folder.storage(STORAGE)


def find(root: Path) -> list[Found]:
    """Cline 3's task folders under its VS Code folder, and the current Cline's sessions
    (a sub-agent's after its root session): under `root` where it is a sessions folder,
    and in its own sessions folder where `root` is its VS Code folder."""
    found = [
        Found(f / task_folder.HISTORY, FORMAT, str(root), stamp=task_folder.stamp(f))
        for f in task_folder.tasks(root)
    ]
    folders = [root, *([sessions_folder()] if root == home() else [])]
    return found + [f for folder in dict.fromkeys(folders) for f in _sessions(folder)]


def sessions_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The current Cline's sessions folder (`sdk/packages/shared/src/storage/paths.ts`):
    `$CLINE_SESSION_DATA_DIR`, else `sessions` in `$CLINE_DATA_DIR`, else in `data` of
    `$CLINE_DIR`, else of `~/.cline`."""
    env = os.environ if environ is None else environ
    if env.get("CLINE_SESSION_DATA_DIR"):
        return Path(env["CLINE_SESSION_DATA_DIR"])
    if env.get("CLINE_DATA_DIR"):
        return Path(env["CLINE_DATA_DIR"]) / "sessions"
    return Path(env.get("CLINE_DIR") or Path.home() / ".cline") / "data" / "sessions"


def _sessions(folder: Path) -> list[Found]:
    """Each session folder's messages (`<id>/<id>.messages.json`), its sub-agents' after it."""
    found: list[Found] = []
    try:
        folders = sorted(f for f in folder.iterdir() if f.is_dir())
    except OSError:
        return found
    for f in folders:
        main = f / (f.name + sdk.MESSAGES)
        if not main.is_file():
            continue
        subs = tuple(p for p in sorted(f.glob("*" + sdk.MESSAGES)) if p != main)
        found.append(Found(main, FORMAT, str(folder), subs))
        found += [Found(p, FORMAT, str(folder), subagent_of=f.name) for p in subs]
    return found

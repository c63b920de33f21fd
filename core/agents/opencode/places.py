"""Where opencode keeps its sessions (its data folder's database, `opencode.db`) and how
they are found there; it imports neither the agent's class nor its strategies or rules
(`core.contract.files.Places`)."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.agents.opencode import database
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.formats.common import LoadError

FORMAT = database.FORMAT
DATABASES = database.NAMES[:1]  # its data folder's database


def folder(variable: str, fallback: str) -> Path:
    """One of its folders: `opencode` in the XDG folder `variable` names, else in `fallback`
    under the home."""
    return Path(os.environ.get(variable) or Path.home() / fallback) / "opencode"


def home() -> Path:
    return folder("XDG_DATA_HOME", ".local/share")


def find(root: Path) -> list[Found]:
    """Every session of the database in its data folder, a main session's sub-agents after it."""
    found: list[Found] = []
    for name in DATABASES:
        file = root / name
        if not file.is_file():
            continue
        try:
            stored = database.sessions(file)
        except LoadError:  # a database that cannot be read is one row that says why
            found.append(Found(file, FORMAT, str(root)))
            continue
        children: dict[str | None, list[database.Stored]] = {}
        for s in stored:
            children.setdefault(s.parent, []).append(s)
        for s in children.get(None, []):
            subs = children.get(s.id, [])
            paths = tuple(database.named(file, c.id) for c in subs)
            found.append(Found(database.named(file, s.id), FORMAT, s.directory, paths, stamp=s.updated))
            found += [
                Found(database.named(file, c.id), FORMAT, c.directory, subagent_of=s.id, stamp=c.updated)
                for c in subs
            ]
    return found

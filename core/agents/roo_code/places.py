"""Where Roo Code keeps its tasks (`tasks/<id>/` in its VS Code global storage folder) and
how they are found there; it imports neither the agent's class nor its strategies or rules
(`core.contract.files.Places`)."""

from __future__ import annotations

from pathlib import Path

from compaction_inspector.core.agents.roo_code.transcript import FORMAT, STORAGE, WORKSPACE
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.formats import task_folder


def home() -> Path:
    return task_folder.storage(STORAGE)


def find(root: Path) -> list[Found]:
    """Each task folder, a sub-task after the task that started it."""
    items = {f: task_folder.extra(f, WORKSPACE) for f in task_folder.tasks(root)}
    parents = {f.name: f for f in items}
    children: dict[str, list[Path]] = {}
    for folder, item in items.items():
        parent = item.get("parentTaskId")
        if isinstance(parent, str) and parent in parents:
            children.setdefault(parent, []).append(folder / task_folder.HISTORY)
    found: list[Found] = []
    for folder, item in items.items():
        if isinstance(item.get("parentTaskId"), str) and item["parentTaskId"] in parents:
            continue
        workspace = item.get("workspace")
        project = workspace if isinstance(workspace, str) else str(root)
        subs = tuple(children.get(folder.name, ()))
        found.append(
            Found(folder / task_folder.HISTORY, FORMAT, project, subs, stamp=task_folder.stamp(folder))
        )
        found += [
            Found(s, FORMAT, project, subagent_of=folder.name, stamp=task_folder.stamp(s.parent))
            for s in subs
        ]
    return found

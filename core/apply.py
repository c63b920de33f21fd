"""A tuned setting written back into the agent's own settings file (docs/agents.md,
"Your own settings"): the inspector's option of the agent's strategy, as the agent names
it, in the file the agent reads (`Agent.settings_file`). The change is shown as a diff
first; written atomically, the file as it was kept beside it (`.bak`); a value the file
already sets is replaced only when asked."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from compaction_inspector.core.agents import Agent
from compaction_inspector.core.files import free_stem, read_text, write_atomic


class ApplyError(ValueError):
    """Nothing was written; the message says why."""


@dataclass(frozen=True)
class Change:
    """What writing the setting does to the agent's file."""

    path: Path
    key: str
    value: int
    had: str | None  # what the file set the key to (None: nothing)
    before: str
    after: str

    @property
    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            str(self.path),
            str(self.path),
        )
        return "".join(lines)


def planned(agent: Agent, option: str, value: int) -> Change:
    """What setting the agent's `option` to `value` changes in its settings file."""
    key = agent.settings_keys.get(option)
    path = agent.settings_file()
    if key is None or path is None:
        offered = ", ".join(agent.settings_keys) or "none"
        raise ApplyError(f"{agent.name} takes no {option!r} in its settings (it takes: {offered})")
    try:
        before = read_text(path) if path.exists() else ""
        after = agent.with_setting(before, key, value)
    except (OSError, ValueError) as exc:
        raise ApplyError(f"{path}: {exc}") from exc
    return Change(path, key, value, agent.setting(before, key), before, after)


def write(change: Change, force: bool = False) -> Path | None:
    """Write the change; the backup's path (None where there was no file). Refuses to
    replace a value the file already sets unless `force`."""
    if change.had is not None and change.had != str(change.value) and not force:
        raise ApplyError(f"{change.path} sets {change.key} to {change.had} already: --force replaces it")
    backup = None
    if change.path.exists():
        backup = free_stem(change.path.with_name(change.path.name + ".bak"), ("",))
        write_atomic(backup, change.path.read_bytes(), overwrite=False)
    change.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(change.path, change.after)
    return backup

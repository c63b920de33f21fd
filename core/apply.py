"""A tuned setting written back into the agent's own settings file (docs/agents.md,
"Your own settings"): the inspector's option of the agent's strategy, as the agent names
it, in the file the agent reads (`OwnSettings.settings_file`). The change is shown as a diff
first; written atomically, the file as it was kept beside it (`.bak`), and only if the
file still holds what the diff was made from; a value the file already sets is replaced
only when asked."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from compaction_inspector.core.contract.own_settings import OwnSettings
from compaction_inspector.core.files import held, rewrite
from compaction_inspector.core.model import immutable


class ApplyError(ValueError):
    """Nothing was written; the message says why."""


@immutable()
class Change:
    """What writing the setting does to the agent's file."""

    path: Path
    key: str
    value: int
    had: str | None  # what the file set the key to (None: nothing)
    raw: bytes | None  # the file as the diff was made from it (None: no file)
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


def planned(agent: OwnSettings, option: str, value: int, layer: str | None = None) -> Change:
    """What setting the agent's `option` to `value` changes in its settings file (of
    `layer`, one of `agent.settings_layers`; None: the first)."""
    if layer is not None and layer not in agent.settings_layers:
        raise ApplyError(
            f"{agent.name} has no {layer!r} settings (it has: {', '.join(agent.settings_layers)})"
        )
    key = agent.settings_keys.get(option)
    path = agent.settings_file(layer)
    if key is not None and path is None:
        raise ApplyError(f"{agent.name}'s settings file is not here: {agent.not_written}")
    if key is None or path is None:
        offered = ", ".join(agent.settings_keys) or "none"
        raise ApplyError(f"{agent.name} takes no {option!r} in its settings (it takes: {offered})")
    try:
        raw = held(path)
    except OSError as exc:
        raise ApplyError(f"{path}: {exc}") from exc
    before = text(path, raw)
    try:
        after = agent.with_setting(before, key, value)
    except ValueError as exc:
        raise ApplyError(f"{path}: {exc}") from exc
    return Change(path, key, value, agent.setting(before, key), raw, before, after)


def text(path: Path, raw: bytes | None) -> str:
    """A settings file's text; a file that is not UTF-8 is refused, since writing it back
    would change bytes the change does not touch."""
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApplyError(
            f"{path} is not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}): not changed"
        ) from None


def write(change: Change, force: bool = False, waiting: Callable[[], None] | None = None) -> Path | None:
    """Write the change; the backup's path (None where there was no file). Refuses to
    replace a value the file already sets unless `force`, and raises `files.Changed`
    where the file changed since the diff (plan it again to show the new one);
    `waiting` is called if another writer holds the file's lock (`files.rewrite`)."""
    if change.had is not None and change.had != str(change.value) and not force:
        raise ApplyError(f"{change.path} sets {change.key} to {change.had} already: --force replaces it")
    return rewrite(change.path, change.raw, change.after, waiting=waiting)

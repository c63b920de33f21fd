"""What the user's own Roo Code settings say of its condense: `autoCondenseContext`,
`autoCondenseContextPercent` and the current profile's own threshold (`profileThresholds`,
by the profile's id; -1 inherits the global one, a value outside 5-100 is not taken:
`src/core/context-management/index.ts`). Roo Code keeps them in VS Code's global state, the
`state.vscdb` database beside its storage folder, under its extension's key: read there,
read-only, for a task folder of that storage (a session that ran on this machine). VS Code
owns that database, so nothing writes it. Where the user has Roo Code import an exported
settings file at start (VS Code's `roo-cline.autoImportSettingsPath`,
`src/utils/autoImportSettings.ts`), that file is read where the database says nothing, and
is the file `apply` writes (its `globalSettings`, as `src/core/config/importExport.ts`
exports them)."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core.contract.own_settings import OwnSetting
from compaction_inspector.core.files import sqlite_as_it_is
from compaction_inspector.core.formats.common import as_dict, as_list
from compaction_inspector.core.jsonedit import load_jsonc
from compaction_inspector.core.model import immutable

STATE = "state.vscdb"  # VS Code's global state, in its globalStorage folder
AUTO_IMPORT = "roo-cline.autoImportSettingsPath"  # VS Code's setting naming the file it imports
KEY = "globalSettings.autoCondenseContextPercent"  # where an exported file holds the threshold
EXTENSION = "rooveterinaryinc.roo-cline"  # its key there (VS Code's extension id, any case)
MIN_THRESHOLD, MAX_THRESHOLD = 5, 100  # src/core/condense/index.ts


@immutable()
class RooSettings:
    """Its condense settings as VS Code holds them now, where it holds any: whether it
    condenses on its own, and the threshold in force (the current profile's, else the
    global one), each with the database it was read from."""

    auto: OwnSetting | None = None
    percent: OwnSetting | None = None
    said: str = "autoCondenseContextPercent"  # the setting the threshold came from, in its words


def database(task: Path) -> Path | None:
    """VS Code's global state beside the storage folder a task folder is in (`None`: it is
    not in one, or there is none: the session did not run here)."""
    found = task.parents[2] / STATE if len(task.parents) > 2 else None
    return found if found is not None and found.is_file() else None


def imported(storage: Path) -> Path | None:
    """The exported settings file VS Code's user settings (beside the storage folder of the
    extension at `storage`) have Roo Code import at start, where they name one: `~` is the
    home folder, and a relative path is taken from it."""
    user = storage.parent.parent / "settings.json"
    try:
        data = load_jsonc(user.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    named = data.get(AUTO_IMPORT) if isinstance(data, dict) else None
    if not isinstance(named, str) or not named.strip():
        return None
    return Path.home() / Path(named.strip()).expanduser()


def read(task: Path) -> RooSettings | None:
    """Its settings for a task folder of this machine's storage, as they are now: VS Code's
    state, else the file it imports at start."""
    file = database(task)
    state = _state(file) if file is not None else {}
    if not state and len(task.parents) > 1:
        file = imported(task.parents[1])
        state = _exported(file) if file is not None else {}
    if not state or file is None:
        return None
    auto = state.get("autoCondenseContext")
    percent = state.get("autoCondenseContextPercent")
    found = RooSettings(
        OwnSetting(auto, file) if isinstance(auto, bool) else None,
        OwnSetting(percent, file) if _taken(percent) else None,
    )
    profile = _profile_threshold(state)
    if profile is not None:
        name, value = profile
        return RooSettings(found.auto, OwnSetting(value, file), f"profileThresholds of {name}")
    return found if found.auto is not None or found.percent is not None else None


def _profile_threshold(state: dict[str, Any]) -> tuple[str, int] | None:
    """The current profile's own threshold, where it sets one it takes."""
    name = state.get("currentApiConfigName")
    listed = [as_dict(p) for p in as_list(state.get("listApiConfigMeta"))]
    ids = [p.get("id") for p in listed if p.get("name") == name]
    value = as_dict(state.get("profileThresholds")).get(ids[0]) if ids and isinstance(ids[0], str) else None
    return (str(name), value) if isinstance(value, int) and _taken(value) else None


def _taken(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and MIN_THRESHOLD <= value <= MAX_THRESHOLD


def _exported(file: Path) -> dict[str, Any]:
    """An exported settings file's global settings, with its profiles' names and ids as
    VS Code's state holds them ({}: none, or not one)."""
    try:
        data = as_dict(load_jsonc(file.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}
    profiles = as_dict(data.get("providerProfiles"))
    configs = as_dict(profiles.get("apiConfigs"))
    listed = [{"name": name, "id": as_dict(c).get("id")} for name, c in configs.items()]
    current = {"currentApiConfigName": profiles.get("currentApiConfigName"), "listApiConfigMeta": listed}
    return {**as_dict(data.get("globalSettings")), **current} if data.get("globalSettings") else {}


def _state(file: Path) -> dict[str, Any]:
    """Its extension's global state: one JSON object under its key ({}: none); read once
    while the database and its log are as they were (a list asks for each of its tasks)."""
    stamp = tuple(
        (s.st_size, s.st_mtime_ns) for p in (file, Path(f"{file}-wal")) if (s := _stat(p)) is not None
    )
    key = (str(file), stamp)
    if key not in _READ:
        _READ.clear()  # one database at a time: a newer state replaces the older
        _READ[key] = _read_state(file)
    return _READ[key]


_READ: dict[tuple[str, tuple[tuple[int, int], ...]], dict[str, Any]] = {}


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _read_state(file: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compaction-inspector-") as folder:
        try:
            db = sqlite_as_it_is(file, lambda: Path(folder))
            try:
                rows = db.execute("SELECT value FROM ItemTable WHERE lower(key) = ?", (EXTENSION,)).fetchall()
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            return {}
    try:
        return as_dict(orjson.loads(rows[0][0])) if rows else {}
    except (orjson.JSONDecodeError, TypeError):
        return {}

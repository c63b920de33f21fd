"""What the user's own opencode configuration says of compaction (opencode.ai/docs/config):
its `compaction` object (`auto`, `prune`, `reserved`) in the global `opencode.json` (or
`.jsonc`, in `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`), then the project's in
the session's working directory, a later one winning. Read as the files are now."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compaction_inspector.core.contract.own_settings import OwnSetting
from compaction_inspector.core.files import read_settings
from compaction_inspector.core.jsonedit import load_jsonc
from compaction_inspector.core.model import MAX_COUNT, immutable

NAMES = ("opencode.json", "opencode.jsonc")


@immutable()
class OpencodeSettings:
    """The `compaction` settings the user's opencode configuration holds, each where it was set."""

    auto: OwnSetting | None = None  # False: it never compacts on its own
    reserved: OwnSetting | None = None  # tokens kept free under the input the model takes
    prune: OwnSetting | None = None
    refused: tuple[str, ...] = ()  # each file or value that could not be used, and why


def layers(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    home = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"
    return [home / n for n in NAMES] + ([Path(cwd) / n for n in NAMES] if cwd else [])


def written_file(layer: str, cwd: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Where `apply` writes `layer` ("user": the global configuration, "project": the
    folder's): the `.jsonc` file where only that one is there, else `opencode.json`."""
    folder = layers(None, environ)[0].parent if layer == "user" else Path(cwd or Path.cwd())
    json, jsonc = (folder / n for n in NAMES)
    return jsonc if jsonc.exists() and not json.exists() else json


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> OpencodeSettings | None:
    """The `compaction` settings of every layer there is; None where no layer sets one or
    holds one that cannot be used (a file that is not JSON, a value opencode would not
    take: each named in `refused`)."""
    found: dict[str, OwnSetting] = {}
    refused: list[str] = []
    for path, data in read_settings(layers(cwd, environ), load_jsonc, refused):
        section = data.get("compaction") if isinstance(data, dict) else None
        if section is None:
            continue
        if not isinstance(section, dict):
            refused.append(f"{path}: compaction not used: not an object")
            continue
        for key, value in section.items():
            if _taken(key, value):
                found[key] = OwnSetting(value, path)
            elif key in ("auto", "prune", "reserved"):
                kind = "true or false" if key != "reserved" else "a whole number of tokens"
                refused.append(f"{path}: compaction.{key} of {str(value)[:40]!r} not used: not {kind}")
    if not found and not refused:
        return None
    return OpencodeSettings(found.get("auto"), found.get("reserved"), found.get("prune"), tuple(refused))


def _taken(key: str, value: Any) -> bool:
    """Whether opencode takes `value` for the compaction key `key` (its config schema)."""
    if key == "reserved":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT
    return key in ("auto", "prune") and isinstance(value, bool)

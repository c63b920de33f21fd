"""What the user's own Gemini CLI settings say of its compression (its `docs/cli/settings.md`):
`model.compressionThreshold`, the share of its token limit at which it compresses, in the
user's `settings.json` (`$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`) and then the
workspace's (`.gemini/settings.json` in the project), the workspace's winning. Read as the
files are now; written back by `apply` with every other byte kept."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core.contract.own_settings import OwnSetting
from compaction_inspector.core.files import read_settings
from compaction_inspector.core.model import immutable

KEY = "model.compressionThreshold"


@immutable()
class GeminiSettings:
    """The compression threshold the user's settings hold, where it was set, and each file
    or value that could not be used, and why."""

    threshold: OwnSetting | None = None
    refused: tuple[str, ...] = ()


def folder(environ: Mapping[str, str] | None = None) -> Path:
    """Gemini CLI's own folder: `.gemini` in `$GEMINI_CLI_HOME`, else in the home folder."""
    env = os.environ if environ is None else environ
    return Path(env.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def layers(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    user = folder(environ) / "settings.json"
    return [user, *([Path(cwd) / ".gemini" / "settings.json"] if cwd else [])]


def written_file(layer: str, cwd: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Where `apply` writes `layer` ("user", or "project": the folder's workspace settings)."""
    return (
        layers(None, environ)[0] if layer == "user" else Path(cwd or Path.cwd()) / ".gemini" / "settings.json"
    )


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> GeminiSettings | None:
    """The threshold of every layer there is, the last one's winning; None where no layer
    sets one or holds one that cannot be used."""
    found: OwnSetting | None = None
    refused: list[str] = []
    section, _, name = KEY.partition(".")
    for path, data in read_settings(layers(cwd, environ), orjson.loads, refused):
        held = data.get(section) if isinstance(data, dict) else None
        value = held.get(name) if isinstance(held, dict) else None
        if value is None:
            continue
        if _taken(value):
            found = OwnSetting(value, path)
        else:
            refused.append(f"{path}: {KEY} of {str(value)[:40]!r} not used: not a share above 0, at most 1")
    if found is None and not refused:
        return None
    return GeminiSettings(found, tuple(refused))


def _taken(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1

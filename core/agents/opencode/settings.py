"""What the user's own opencode configuration says of compaction (opencode.ai/docs/config):
its `compaction` object (`auto`, `prune`, `reserved`) in the global `opencode.json` (or
`.jsonc`, in `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`), then the project's in
the session's working directory, a later one winning. Read as the files are now."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from compaction_inspector.core.agents.base import Said
from compaction_inspector.core.files import read_text
from compaction_inspector.core.model import MAX_COUNT

NAMES = ("opencode.json", "opencode.jsonc")
_COMMENT = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)  # JSONC's comments, strings kept
_TRAILING = re.compile(r",(\s*[}\]])")


@dataclass(frozen=True)
class OpencodeSettings:
    """The `compaction` settings the user's opencode configuration holds, each where it was set."""

    auto: Said | None = None  # False: it never compacts on its own
    reserved: Said | None = None  # tokens kept free under the input the model takes
    prune: Said | None = None


def layers(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    home = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"
    return [home / n for n in NAMES] + ([Path(cwd) / n for n in NAMES] if cwd else [])


def _parsed(text: str) -> Any:
    """JSON, or JSON with comments and trailing commas (what opencode accepts)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        plain = _TRAILING.sub(r"\1", _COMMENT.sub(lambda m: m.group(1) or "", text))
        return orjson.loads(plain)


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> OpencodeSettings | None:
    """The `compaction` settings of every layer there is; None where none sets one."""
    found: dict[str, Said] = {}
    for path in layers(cwd, environ):
        try:
            data = _parsed(read_text(path))
        except (OSError, orjson.JSONDecodeError):
            continue
        section = data.get("compaction") if isinstance(data, dict) else None
        if not isinstance(section, dict):
            continue
        for key in ("auto", "prune"):
            if isinstance(section.get(key), bool):
                found[key] = Said(section[key], path)
        reserved = section.get("reserved")
        if isinstance(reserved, int) and not isinstance(reserved, bool) and 0 <= reserved <= MAX_COUNT:
            found["reserved"] = Said(reserved, path)
    return OpencodeSettings(found.get("auto"), found.get("reserved"), found.get("prune")) if found else None

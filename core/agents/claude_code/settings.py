"""What the user's own Claude Code settings say of compaction (code.claude.com/docs, settings):
the `env` of `settings.json` in the user's folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`),
then the project's `.claude/settings.json` and `.claude/settings.local.json` in the
session's working directory, a later layer winning. Read as the files are now, never
written here; a file that is not a JSON object is left out."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from compaction_inspector.core.files import read_text
from compaction_inspector.core.model import MAX_COUNT

PCT_OVERRIDE = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"  # lowers the point to this % of the effective window
DISABLED = "DISABLE_AUTO_COMPACT"  # it never compacts on its own
WINDOW = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"  # the window its point is worked out in, in tokens


@dataclass(frozen=True)
class Said:
    """One setting: its value and the file that set it."""

    value: int
    where: Path

    def told(self, name: str) -> str:
        return f"your {name} of {self.value:,} ({self.where})"


@dataclass(frozen=True)
class ClaudeSettings:
    """The compaction settings the user's Claude Code settings hold, each where it was set."""

    pct_override: Said | None = None
    disabled: Said | None = None
    window: Said | None = None


def layers(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in the order Claude Code layers them, the last winning."""
    env = os.environ if environ is None else environ
    user = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"
    project = (
        [Path(cwd) / ".claude" / name for name in ("settings.json", "settings.local.json")] if cwd else []
    )
    return [user, *project]


def _number(value: object, lowest: int, highest: int) -> int | None:
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    return int(text) if text.isdigit() and lowest <= int(text) <= highest else None


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> ClaudeSettings | None:
    """The settings that bear on compaction, from every layer there is; None where no
    layer sets one."""
    found: dict[str, Said] = {}
    for path in layers(cwd, environ):
        try:
            data = orjson.loads(read_text(path))
        except (OSError, orjson.JSONDecodeError):
            continue
        env = data.get("env") if isinstance(data, dict) else None
        if not isinstance(env, dict):
            continue
        for key, lowest, highest in ((PCT_OVERRIDE, 1, 100), (DISABLED, 0, 1), (WINDOW, 1_000, MAX_COUNT)):
            value = _number(env.get(key), lowest, highest)
            if value is not None:
                found[key] = Said(value, path)
    if not found:
        return None
    disabled = found.get(DISABLED)
    return ClaudeSettings(
        found.get(PCT_OVERRIDE),
        disabled if disabled is not None and disabled.value else None,
        found.get(WINDOW),
    )

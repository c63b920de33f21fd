"""What the user's own Claude Code settings say of compaction (code.claude.com/docs, settings):
`idleCompaction` and the `env` of `settings.json` in the user's folder (`$CLAUDE_CONFIG_DIR`,
else `~/.claude`), then the project's `.claude/settings.json` and `.claude/settings.local.json` in the
session's working directory, a later layer winning. Read as the files are now, never
written here; a file that is not a JSON object is left out."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import orjson

from compaction_inspector.core.contract.own_settings import OwnSetting
from compaction_inspector.core.files import read_text
from compaction_inspector.core.jsonedit import with_entry
from compaction_inspector.core.model import MAX_COUNT, immutable

PCT_OVERRIDE = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"  # lowers the point to this % of the effective window
DISABLED = "DISABLE_AUTO_COMPACT"  # it never compacts on its own
WINDOW = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"  # the window its point is worked out in, in tokens
NO_1M = "CLAUDE_CODE_DISABLE_1M_CONTEXT"  # a 1M model held to the 200,000 window
IDLE_TOKENS = "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS"  # the context idle compaction waits for
IDLE = "idleCompaction"  # a setting of its own, not in `env`: false turns idle compaction off
IDLE_TOKENS_LEAST = 100_000  # what the changelog (2.1.299) allows CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS


@immutable()
class ClaudeSettings:
    """The compaction settings the user's Claude Code settings hold, each where it was set."""

    pct_override: OwnSetting | None = None
    disabled: OwnSetting | None = None
    window: OwnSetting | None = None
    no_1m: OwnSetting | None = None
    idle_tokens: OwnSetting | None = None
    idle_off: OwnSetting | None = None  # `idleCompaction: false`
    # the context idle compaction waits for in the session (None: it does not) and why,
    # worked out with its version (`rules.claude_code_idle`)
    idle: tuple[int | None, str] | None = None
    refused: tuple[str, ...] = ()  # each file or value that could not be used, and why


def layers(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in the order Claude Code layers them, the last winning."""
    env = os.environ if environ is None else environ
    user = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"
    project = (
        [Path(cwd) / ".claude" / name for name in ("settings.json", "settings.local.json")] if cwd else []
    )
    return [user, *project]


_JS_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
TRUTHY = frozenset({"1", "true", "yes", "on"})  # what its `isEnvTruthy` takes as set


def _number(value: object, lowest: int, highest: int) -> int | str:
    """A setting's number as Claude Code reads it (JavaScript's `parseFloat`: ASCII digits
    at the start, the rest ignored), or why it is not used."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return "not a number"
    match = _JS_FLOAT.match(str(value).lstrip(" \t\n\r\v\f"))
    if match is None:
        return "not a number"
    number = float(match.group())
    if number != number or number in (float("inf"), float("-inf")):
        return "not a finite number"
    if number != int(number):
        return "not a whole number"
    if not lowest <= number <= highest:
        return f"not from {lowest:,} to {highest:,}"
    return int(number)


def _truthy(value: object) -> bool:
    return (
        isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip().lower() in TRUTHY
    )


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> ClaudeSettings | None:
    """The settings that bear on compaction, from every layer there is, and each file or
    value that could not be used and why; None where no layer says anything of them."""
    found: dict[str, OwnSetting] = {}
    refused: list[str] = []
    for path in layers(cwd, environ):
        try:
            data = orjson.loads(read_text(path))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            refused.append(f"{path} not read: {getattr(exc, 'strerror', None) or exc}")
            continue
        except orjson.JSONDecodeError as exc:
            refused.append(f"{path} not used: not JSON ({exc})")
            continue
        if not isinstance(data, dict):
            refused.append(f"{path} not used: not a JSON object")
            continue
        if isinstance(data.get(IDLE), bool):
            found[IDLE] = OwnSetting(data[IDLE], path)
        env = data.get("env")
        if not isinstance(env, dict):
            continue
        for key in (DISABLED, NO_1M):
            if key in env:  # a later layer's value that is not set turns an earlier one off
                found[key] = OwnSetting(str(env[key]) if _truthy(env[key]) else "", path)
        for key, lowest, highest in (
            (PCT_OVERRIDE, 1, 100),
            (WINDOW, 1_000, MAX_COUNT),
            (IDLE_TOKENS, IDLE_TOKENS_LEAST, MAX_COUNT),
        ):
            if key not in env:
                continue
            value = _number(env[key], lowest, highest)
            if isinstance(value, int):
                found[key] = OwnSetting(value, path)
            else:
                refused.append(f"{path}: {key} of {str(env[key])[:40]!r} not used: {value}")
    if not found and not refused:
        return None
    disabled, no_1m, idle = found.get(DISABLED), found.get(NO_1M), found.get(IDLE)
    return ClaudeSettings(
        found.get(PCT_OVERRIDE),
        disabled if disabled is not None and disabled.value else None,
        found.get(WINDOW),
        no_1m if no_1m is not None and no_1m.value else None,
        found.get(IDLE_TOKENS),
        idle if idle is not None and not idle.value else None,
        refused=tuple(refused),
    )


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    """The user's own settings file, where a tuned setting is written (`apply`)."""
    return layers(None, environ)[0]


def current(text: str, key: str) -> str | None:
    """What the settings' `env` sets `key` to (None: nothing, or no JSON object)."""
    try:
        data = orjson.loads(text) if text.strip() else {}
    except orjson.JSONDecodeError:
        return None
    env = data.get("env") if isinstance(data, dict) else None
    value = env.get(key) if isinstance(env, dict) else None
    return None if value is None else str(value)


def written(text: str, key: str, value: int) -> str:
    """`text` with `env.key` set to `value` (a string, as Claude Code's `env` holds
    values), every other byte as it was (`jsonedit.with_entry`). Raises ValueError where
    the file is not a JSON object or the edit would change anything else."""
    return with_entry(text, "env", key, str(value))

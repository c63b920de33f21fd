"""Codex's own `config.toml` (`$CODEX_HOME`, else `~/.codex`) written back with a tuned
setting (`apply`): the value set through a round-trip TOML library, so its comments,
order and every other byte stay as they were. The library is imported where the file is
read or written: every start of the app loads this agent."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path.home() / ".codex") / "config.toml"


def _in_force(document: Any, key: str) -> Any:
    """The table whose `key` Codex reads: the default profile's (`profile = "name"`,
    `[profiles.name]`) where that sets it, else the top level."""
    name = document.get("profile")
    profiles = document.get("profiles")
    chosen = profiles.get(name) if isinstance(name, str) and isinstance(profiles, Mapping) else None
    return chosen if isinstance(chosen, Mapping) and key in chosen else document


def current(text: str, key: str) -> str | None:
    """What the file sets `key` to where Codex reads it (None: nothing, or not TOML)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(text)
    except TOMLKitError:
        return None
    value = _in_force(document, key).get(key)
    return None if value is None else str(value)


def written(text: str, key: str, value: int) -> str:
    """`text` with `key` set to `value` where Codex reads it (the default profile's
    table where that sets it: a top-level value would be overridden), the rest as it
    was. Raises ValueError where the file is not TOML."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ValueError(f"not TOML that can be read: {exc}") from exc
    _in_force(document, key)[key] = value
    return tomlkit.dumps(document)

"""Codex's own `config.toml` (`$CODEX_HOME`, else `~/.codex`) written back with a tuned
setting (`apply`): the value set through a round-trip TOML library, so its comments,
order and every other byte stay as they were."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError


def user_file(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path.home() / ".codex") / "config.toml"


def current(text: str, key: str) -> str | None:
    """What the file's top level sets `key` to (None: nothing, or not TOML)."""
    try:
        value = tomlkit.parse(text).get(key)
    except TOMLKitError:
        return None
    return None if value is None else str(value)


def written(text: str, key: str, value: int) -> str:
    """`text` with its top-level `key` set to `value`, the rest as it was. Raises
    ValueError where the file is not TOML."""
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ValueError(f"not TOML that can be read: {exc}") from exc
    document[key] = value
    return tomlkit.dumps(document)

"""The user's own settings of an agent: what its strategy takes from them, and its
settings files, read and written back."""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from compaction_inspector.core.model import immutable


@immutable()
class OwnSetting:
    """One of the user's own settings of an agent: its value and the file that set it."""

    value: Any
    where: Path

    def told(self, name: str) -> str:
        """ "your CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of 70 (~/.claude/settings.json)"."""
        number = isinstance(self.value, int) and not isinstance(self.value, bool)
        return f"your {name} of {f'{self.value:,}' if number else str(self.value).lower()} ({self.where})"


class OwnSettings(ABC):
    """The user's own settings of an agent, read (`with_own_settings`) and written back
    (`settings_file`, `with_setting`); none by default."""

    name: ClassVar[str]  # as the app names it, in what it refuses
    # its strategy's options it takes in its own settings file, each by that setting's name
    settings_keys: ClassVar[Mapping[str, str]] = {}
    # the settings files `apply` may write, by name, each where it is in words (the first:
    # the default), as `settings_file` finds them
    settings_layers: ClassVar[Mapping[str, str]] = {"user": "its own settings file"}
    # why `apply` does not write its settings, where it takes none (`settings_keys` empty)
    not_written: ClassVar[str] = "it keeps no settings file of its compaction"

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """Its replay strategy's `options` with what the user's own settings of it (`own`,
        as its `window` read them) set where the inspector's leave a value unset, so its
        point and a replay of it agree; as they are by default."""
        return options

    def settings_file(self, layer: str | None = None) -> Path | None:
        """Its settings file of `layer` (one of `settings_layers`, None: the first), where
        `apply` writes, for a session in this folder (None: it has none here)."""
        return None

    def setting(self, text: str, key: str) -> str | None:
        """What its settings file's `text` sets `key` to (None: nothing)."""
        return None

    def with_setting(self, text: str, key: str, value: int) -> str:
        """Its settings file's `text` with `key` set to `value`, every other byte kept;
        ValueError where the file cannot take it."""
        raise ValueError(f"{self.name}'s settings are not written here")

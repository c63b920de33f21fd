"""Where the inspector's own settings file is (docs/configuration.md): the file named on
the command line, else `./compaction.yaml`, else the user's in their config folder. Apart
from the reading (`core.config_file`), so the status line can tell whether the file has
changed without loading what reads it."""

from __future__ import annotations

from pathlib import Path

FILE_NAME = "compaction.yaml"


def user_config_path() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("compaction-inspector")) / FILE_NAME


def candidates() -> tuple[Path, Path]:
    """Where a file not named on the command line is looked for, the first found in force."""
    return Path.cwd() / FILE_NAME, user_config_path()


def find(explicit: str | Path | None = None) -> Path | None:
    """The config file in force: `explicit`, else ./compaction.yaml, else the user's."""
    if explicit is not None:
        return Path(explicit)
    return next((candidate for candidate in candidates() if candidate.is_file()), None)

"""What a status line says, whichever agent runs it (docs/statusline.md): the agent's
count against its own compaction point, how far that is, the compactions so far and the
cost, as `Figures`, written by a template and coloured by how near the point it is. An
agent that runs a status line command reads its own transcript into figures
(`StatusLine`, in its package); `watch` makes the same figures from a session read whole
(`Inspection.status`)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from compaction_inspector.core.own.headroom import Headroom

DEFAULT_FORMAT = "ctx {ctx} of {point} · {left} · {compactions} · {cost}"


class StatusLine(Protocol):
    """An agent's status line command: its transcript read from where the last call left
    it (`read`, the calls' entries kept at `index_path`), the figures of what it read
    (`given`: what the agent passes on stdin), and the setting that installs it in the
    agent's own settings file."""

    def read(self, path: Path, index: Path | None) -> Any: ...

    def index_path(self) -> Path | None: ...

    def figures(self, tail: Any, config: Any, given: Mapping[str, Any]) -> Figures: ...

    def snippet(self, command: str | None = None) -> dict[str, Any]: ...

    def settings_path(self) -> Path: ...

    def install(
        self,
        settings: Path,
        force: bool = False,
        command: str | None = None,
        waiting: Callable[[], None] | None = None,
    ) -> Path | None: ...


@dataclass(frozen=True)
class Figures:
    """What the line says: the agent's count against its point, how far that is, the
    compactions and the cost; `whole`: the figures cover the transcript from its start."""

    count: int | None
    point: int | None
    left: Headroom | None
    compactions: int
    cost: Decimal | None
    whole: bool
    model: str | None
    off: bool = False  # the agent does not compact on its own (its settings say so)
    set_now: int | None = None  # the point today's settings give, where the session runs with another


def text_or_none(value: Any) -> str | None:
    """A non-empty string as it is, else None."""
    return value if isinstance(value, str) and value else None


def _k(tokens: int | None) -> str:
    if tokens is None:
        return "?"
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k"


def line(f: Figures, template: str = DEFAULT_FORMAT) -> str:
    """The status line: `template`'s fields are ctx, point, left, requests, compactions,
    cost and model."""
    at_least = "" if f.whole else "≥"  # the part before the tail is still being read (a call at a time)
    if f.left is None:
        left = (
            "auto-compact off"
            if f.off
            else "no point known"
            if f.point is None
            else "just compacted"
            if f.count is None and f.compactions
            else "no response read yet"
        )
    elif f.left.left <= 0:
        left = "compacts at the next request"
    else:
        left = f"compacts in ~{_k(f.left.left)}"
        if f.left.requests is not None:
            left += f" (about {f.left.requests:,} request{'s' if f.left.requests != 1 else ''} at this pace)"
    n = f.compactions
    fields = {
        "ctx": _k(f.count),
        "point": "no point"
        if f.off
        else _k(f.point) + (f" ({_k(f.set_now)} after a restart)" if f.set_now is not None else ""),
        "left": left,
        "requests": "?" if f.left is None or f.left.requests is None else f"{f.left.requests:,}",
        "compactions": f"{at_least}{n} compaction{'s' if n != 1 else ''}"
        if n or at_least
        else "no compaction yet",
        "cost": f"{at_least}${f.cost:,.2f}" if f.cost is not None else "not priced",
        "model": f.model or "?",
    }
    try:
        return template.format_map(fields)
    except KeyError as exc:
        raise FormatError(f"--format: no field {{{exc.args[0]}}}; fields: {', '.join(fields)}") from exc
    except (ValueError, IndexError) as exc:
        raise FormatError(f"--format: {exc}") from exc


class FormatError(ValueError):
    """A status line template that names no field or is not a template."""


_ANSI = {"green": "\x1b[32m", "yellow": "\x1b[33m", "red": "\x1b[31m", "reset": "\x1b[0m"}


def coloured(text: str, f: Figures, at: tuple[int, int]) -> str:
    """`text` (made safe already) in the colour of how near the point the count is: yellow
    and red from `at`'s percents of it (`statusline` in compaction.yaml)."""
    if f.count is None or not f.point:
        return text
    share = 100 * f.count / f.point
    colour = "red" if share >= at[1] else "yellow" if share >= at[0] else "green"
    return f"{_ANSI[colour]}{text}{_ANSI['reset']}"


SCRIPT = "compaction-inspector"  # the console script pyproject.toml installs


def installed_command(executable: str | None = None) -> str:
    """The status line's command as Claude Code runs it, whatever its PATH holds: the
    console script beside the interpreter running this one (a virtual environment's
    `bin`, which is on PATH only while it is active), by its full path; else that
    interpreter running the command's module."""
    python = Path(executable or sys.executable)
    script = python.parent / (SCRIPT + (".exe" if os.name == "nt" else ""))
    if script.is_file():
        return f"{shlex.quote(str(script))} statusline"
    return f"{shlex.quote(str(python))} -m compaction_inspector.tui.cli statusline"


class SettingsRefused(ValueError):
    """The settings were left as they were; the message says why."""

"""What a status line says, whichever agent runs it (docs/statusline.md): the agent's
count against its own compaction point, how far that is, the compactions so far and the
cost, as `Figures`, written by a template and coloured by how near the point it is. An
agent that runs a status line command reads its own transcript into figures
(`StatusLine`, in its package); `watch` makes the same figures from a session read whole
(`Inspection.status`)."""

from __future__ import annotations

import importlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.caching.records import decoded, encoded
from compaction_inspector.core.files import read_text
from compaction_inspector.core.model import immutable
from compaction_inspector.core.own.headroom import Headroom
from compaction_inspector.core.text import visible

DEFAULT_FORMAT = "ctx {ctx} of {point} · {left} · {compactions} · {cost}"


class StatusLine(Protocol):
    """An agent's status line command: its transcript read from where the last call left
    it (`read`, the calls' entries kept at `index_path()`), the figures of what it read
    (`given`: what the agent passes on stdin; `kept`: keep the settings' answer with the
    entry, `keep`, under the settings files as `stamped` found them before they were
    read), the figures a kept answer gives without the settings (`answered`), and the
    setting that installs it in the agent's own settings file."""

    def read(self, path: Path, index: Path | None) -> Any: ...

    def figures(
        self, tail: Any, config: Any, given: Mapping[str, Any], kept: tuple[Asked, Stamp] | None = None
    ) -> Figures: ...

    def stamped(self, tail: Any, given: Mapping[str, Any]) -> Stamp: ...

    def keep(self, path: Path, index: Path, tail: Any) -> None: ...

    def answered(
        self, path: Path, index: Path, entry: Mapping[str, Any], given: Mapping[str, Any], asked: Asked
    ) -> Figures | None: ...

    def snippet(self, command: str | None = None) -> dict[str, Any]: ...

    def settings_path(self) -> Path: ...

    def install(
        self,
        settings: Path,
        force: bool = False,
        command: str | None = None,
        waiting: Callable[[], None] | None = None,
    ) -> Path | None: ...


@immutable()
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


@immutable()
class Asked:
    """How a call asked for its line: the command line after `statusline`, the folder it
    ran in (a `./compaction.yaml` there is a setting), and what the line is drawn with."""

    argv: tuple[str, ...]
    folder: str
    template: str = DEFAULT_FORMAT
    colour: bool = False
    colours: tuple[int, int] = (85, 95)


def drawn(f: Figures, asked: Asked) -> str:
    """The line as printed: what a transcript says is shown, not obeyed; coloured where asked."""
    text = visible(line(f, asked.template))
    return coloured(text, f, asked.colours) if asked.colour else text


Stamp = tuple[tuple[str | int, ...], ...]
Facts = tuple[str | int | None, ...]


@immutable()
class Answer:
    """What the settings said of the point for one call, kept in its transcript's entry: a
    later call asked the same way, with each settings file as it was (`stamp`), the
    session's `facts` the same and its `counts` (the prompts the point depends on) from
    `counts` to `ceiling`, takes it without loading the settings (the status line's own
    door, `tui.cli`). Every count enters the point by a comparison with a fixed figure, so
    a point found the same at both ends of that range holds between them."""

    module: str  # the agent's status line, which reads the transcript
    asked: Asked
    stamp: Stamp
    facts: Facts
    counts: tuple[int, ...]
    ceiling: tuple[int, ...]
    point: int | None
    set_now: int | None
    off: bool

    def holds(
        self, argv: Sequence[str], folder: str, stamp: Stamp, facts: Facts, counts: Sequence[int]
    ) -> bool:
        return (
            self.asked.argv == tuple(argv)
            and self.asked.folder == folder
            and self.stamp == stamp
            and self.facts == facts
            and len(counts) == len(self.counts)
            and all(low <= n <= high for low, n, high in zip(self.counts, counts, self.ceiling, strict=True))
        )

    def to_dict(self) -> Any:
        return encoded(self)

    @staticmethod
    def of(raw: Any) -> Answer | None:
        """A kept answer, or None where `raw` is none this version wrote."""
        try:
            found = decoded(raw, _ANSWER_RECORDS)
        except (ValueError, TypeError, RecursionError):
            return None
        return found if isinstance(found, Answer) else None


_ANSWER_RECORDS: dict[str, type] = {"Answer": Answer, "Asked": Asked}


def stamp(paths: Iterable[Path]) -> Stamp:
    """Each file as it is now: its inode, size and time written, or that there is none."""
    found: list[tuple[str | int, ...]] = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            found.append((str(path),))
        else:
            found.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(found)


def index_path() -> Path | None:
    """Where the transcripts' entries are kept (None: the cache is off)."""
    root = cache_root()
    return root / "statusline.json" if root is not None else None


def entries(index: Path) -> dict[str, Any]:
    """The kept entries, by transcript path (none where the index cannot be read)."""
    try:
        found = json.loads(read_text(index))
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


_OWN_MODULES = "compaction_inspector.core.agents."  # a kept answer names its agent's status line under here


def kept(argv: Sequence[str], given: Callable[[], str]) -> str | None:
    """The line of a call whose answer is kept (`Answer`), drawn from the transcript's
    entry and what it gained, without loading the settings, the agents or a strategy;
    None where there is no such answer or it does not hold (the command then works the
    line out whole, and says what went wrong). What the agent passes on stdin is read
    (`given`) only for a command line a kept answer was asked with: never for `--setup`."""
    try:
        index = index_path()
        found = entries(index) if index is not None else {}
        asked = Asked(tuple(argv), os.getcwd())
        if index is None or not any(_asked_so(entry, asked) for entry in found.values()):
            return None
        said = json.loads(given() or "{}")
        path = said.get("transcript_path") if isinstance(said, dict) else None
        if not isinstance(path, str) or not path:
            return None
        entry = found.get(str(Path(path).resolve()))
        answer = Answer.of(entry.get("answer")) if isinstance(entry, dict) else None
        if answer is None or not isinstance(entry, dict) or not answer.module.startswith(_OWN_MODULES):
            return None
        own: StatusLine = importlib.import_module(answer.module)
        shown = own.answered(Path(path), index, entry, said, asked)
        return drawn(shown, answer.asked) if shown is not None else None
    except Exception:  # whatever it is, the whole command meets it again and says it
        return None


def _asked_so(entry: Any, asked: Asked) -> bool:
    """Whether `entry` keeps an answer asked with `asked`'s command line: looked up as it
    is kept, not read back (the index holds an entry for every transcript seen)."""
    answer = entry.get("answer") if isinstance(entry, dict) else None
    was = answer.get("asked") if isinstance(answer, dict) else None
    return isinstance(was, dict) and was.get("argv") == encoded(asked.argv)


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

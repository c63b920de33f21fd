"""Reading a session for the screen: the first rows of a large file while the whole is
read in a worker, then estimated figures, then, once those rows are drawn, exact counts
(or exact at once where the counts were kept from before). Each stage is posted as a
message (`tui/messages.py`)."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from textual.message import Message

from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.formats.reading import HEAD_BYTES
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.model import Session
from compaction_inspector.core.text import counted
from compaction_inspector.tui.session import messages


def preview(path: Path, config: Config, run: int, post: Callable[[Message], object]) -> None:
    """Post `Previewed`, the first rows of a large file (nothing for a small one)."""
    found = config.catalogue.formats.head(path)
    if found is not None:
        first, total = found
        post(messages.Previewed(Inspection.of(first, config, estimate=True), total, run))


def read(
    path: Path,
    given: Session | None,
    request: int | None,
    config: Config,
    run: int,
    post: Callable[[Message], object],
) -> None:
    """Read `path` (or take the session `given`) and post what is known as it is known:
    `Failed`, `Loaded`, and `Counted` at once where the counts were kept (else `count`
    follows)."""
    try:
        session = given or config.catalogue.formats.load(path, request=request)
    except LoadError as exc:
        post(messages.Failed(run, str(exc)))
        return
    known = Inspection.counted_before(session, config)
    if known is not None:  # counted before: exact figures at once, no estimate first
        post(messages.Loaded(known, run, counted=True))
        post(messages.Counted(known, run))
        return
    post(messages.Loaded(Inspection.of(session, config, estimate=True), run))


def count(
    estimate: Inspection,
    run: int,
    post: Callable[[Message], object],
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> None:
    """Count the session `estimate` shows exactly and post it as `Counted`; `progress` is
    told the counting's (done, total). Started once the estimate's rows are drawn: the
    tokenizer's load would hold the interpreter while the first rows wait for it."""
    exact = estimate.recount(progress)
    if not cancelled():
        post(messages.Counted(exact, run))


def small(path: Path) -> bool:
    """`path` is a regular file no larger than a preview of a large one reads: read
    whole as fast as its first rows would be."""
    try:
        found = path.stat()
    except OSError:  # not there yet (followed), or unreadable: the read says which
        return False
    return stat.S_ISREG(found.st_mode) and found.st_size <= HEAD_BYTES


def reading(name: str, preview: Inspection, total: int) -> str:
    """The title line while a large file is read: its first rows shown, its size."""
    first, size = counted(len(preview.session.messages), "message"), f"{total / 1e6:,.1f} MB"
    return f"{name} · the first {first} · reading {size}… · token counts: {preview.counter.label}"


def skipped(session: Session) -> str | None:
    """The lines the read skipped, and why the first was."""
    notes = [d for d in session.diagnostics if d.line is not None]
    if not notes:
        return None
    return f"{len(notes)} line(s) skipped, first at line {notes[0].line}: {notes[0].message}"


def subtitle(name: str, session: Session, following: bool) -> str:
    """The screen's title line: the file, its format (and request), its size, whether it
    is a slice or followed."""
    fmt = session.format + (
        f" · request {session.request_index + 1}/{session.request_count}" if session.request_count > 1 else ""
    )
    sliced = " · a slice: figures estimated" if session.metadata.get("slice") is True else ""
    follow = " · following" if following else ""
    return f"{name} · {fmt} · {counted(len(session.messages), 'message')}{sliced}{follow}"

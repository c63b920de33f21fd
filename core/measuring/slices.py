"""A transcript file that is a slice of a longer session (docs/agents.md): its first line's
`parentUuid` names a line the file does not hold, so its first response already carries
history the file does not show, and the session's overhead (system prompt, tools) cannot
be taken from it. It is taken instead from the first response of another complete
session beside it, the nearest in time, of the same project, model and agent version
(a system prompt and tools differ between them), and the figure says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from compaction_inspector.core.files import open_regular
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Session

HEAD_BYTES = 4_000_000  # read no further into a sibling for its first response
MAX_SIBLINGS = 20  # the nearest in time; a project folder can hold thousands
# a transcript's text read as a session, named by its path (`Formats.load_text`)
Read = Callable[[str, str], Session]


def is_slice(session: Session) -> bool:
    return session.metadata.get("slice") is True


def sibling_overhead(
    session: Session, counter: TokenCounter, scale: float, read: Read
) -> tuple[int, str] | None:
    """The overhead of the complete session beside `session` nearest in time to it, of
    the same project, model and agent version: its first reported prompt less `scale` ×
    the messages before it; None when no such session is there."""
    if session.path is None:
        return None
    for path in sessions_beside(Path(session.path))[:MAX_SIBLINGS]:
        try:
            found = _first_response_overhead(path, counter, scale, session, read)
        except Exception:  # a neighbour's failure is the neighbour's: this file reads on without it
            found = None
        if found is not None:
            same = "a complete session of the same project, model and version"
            return found, f"the first response of {path.name}, {same}"
    return None


def sessions_beside(path: Path) -> list[Path]:
    """The other session files in `path`'s folder (not sub-agents' `agent-*` files), the
    nearest in time to it first; none where the folder cannot be read."""
    try:
        mine = path.stat().st_mtime
        beside = [
            p for p in path.parent.glob("*.jsonl") if p.name != path.name and not p.name.startswith("agent-")
        ]
        return sorted(beside, key=lambda p: abs(p.stat().st_mtime - mine))
    except OSError:
        return []


LENDS = ("cwd", "model", "version")  # what a session lending its overhead shares with the slice


def _first_response_overhead(
    path: Path, counter: TokenCounter, scale: float, session: Session, read: Read
) -> int | None:
    """Read `path` only as far as its first assistant line that reports usage; None
    unless it is a complete session of the slice's project, model and agent version."""
    lines: list[bytes] = []
    taken = 0
    try:
        with open_regular(path) as f:
            for line in f:
                lines.append(line)
                taken += len(line)
                if (b'"assistant"' in line and b'"usage"' in line) or taken > HEAD_BYTES:
                    break
    except OSError:
        return None
    try:
        sibling = read(b"".join(lines).decode("utf-8", errors="replace"), str(path))
    except (LoadError, RecursionError, MemoryError):
        return None
    if sibling.format != session.format or is_slice(sibling) or sibling.metadata.get("session_id") is None:
        return None
    if any(sibling.metadata.get(key) != session.metadata.get(key) for key in LENDS):
        return None
    for i, m in enumerate(sibling.messages):
        if m.usage is not None and m.usage.prompt_tokens:
            before = sum(counter.count(n, remember=False) for n in sibling.messages[:i])
            return max(0, round(m.usage.prompt_tokens - scale * before))
        if m.is_compact_boundary:
            return None
    return None

"""Follow a growing session file: read only complete new lines, and start over when the
file is truncated, replaced, rotated or rewritten in place, so messages are never lost
or duplicated. Each start over is said (`event`) for the app to announce."""

from __future__ import annotations

import os
from pathlib import Path

from compaction_inspector.core.files import open_regular
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.formats.reading import Formats
from compaction_inspector.core.model import Session

# bytes compared at each end of what was read: an in-place rewrite changes them
SAMPLE = 4096
Fingerprint = tuple[bytes, bytes]


def _fingerprint(data: bytes) -> Fingerprint:
    return data[:SAMPLE], data[-SAMPLE:]


class Follower:
    def __init__(self, formats: Formats, path: str | Path, session: Session) -> None:
        self.formats = formats
        self.path = Path(path)
        self.session = session
        self.gone = False  # the file was deleted: what was read stays shown
        self.event: str | None = None  # why it last started over, until the app has said it
        self.restart = False  # what the file holds next is read whole (it was emptied)
        self.offset, self.lines, self.identity, self.seen = self._stat_now()
        self.stamp = formats.stored_stamp(self.path)  # a session inside a file of many: that file's

    def _stat_now(self) -> tuple[int, int, tuple[int, int] | None, Fingerprint]:
        """Where the complete lines end, how many there are, the file's identity, and
        the fingerprint of what was read."""
        try:
            st = os.stat(self.path)
            with open_regular(self.path) as f:
                data = f.read()
        except OSError:
            return 0, 0, None, (b"", b"")
        complete = data.rfind(b"\n") + 1  # a half-written last line waits for its newline
        return complete, data.count(b"\n", 0, complete), (st.st_dev, st.st_ino), _fingerprint(data[:complete])

    def _read_so_far(self) -> Fingerprint | None:
        """The fingerprint of the file's first `offset` bytes as they are now."""
        try:
            with open_regular(self.path) as f:
                head = f.read(min(SAMPLE, self.offset))
                f.seek(max(0, self.offset - SAMPLE))
                tail = f.read(self.offset - max(0, self.offset - SAMPLE))
        except OSError:
            return None
        return head, tail

    def poll(self) -> tuple[Session, bool] | None:
        """(session, reloaded) when something changed, else None. Never raises."""
        if self.stamp is not None:  # a file of many sessions: read again when it changed
            now = self.formats.stored_stamp(self.path)
            if now is None or now == self.stamp:
                return None
            self.stamp = now
            return self._reload(None, replaced=False)
        try:
            st = os.stat(self.path)
        except OSError:
            # Deleted for now: keep what we have; whatever appears here next (even on a
            # reused inode) is a new file and is read whole.
            self.identity = None
            if not self.gone:
                self.event = "The file was deleted: what was read stays shown"
            self.gone = True
            return None
        self.gone = False
        if self.restart:
            return self._reload(None) if st.st_size else None
        if (st.st_dev, st.st_ino) != self.identity:
            return self._reload("The file was replaced by another: read again from the start")
        if st.st_size < self.offset:
            return self._reload("The file was truncated: read again from the start")
        if self._read_so_far() != self.seen:
            return self._reload("The file was rewritten in place: read again from the start")
        if st.st_size == self.offset:
            return None
        try:
            with open_regular(self.path) as f:
                f.seek(self.offset)
                chunk = f.read(st.st_size - self.offset)
        except OSError:
            return None
        end = chunk.rfind(b"\n") + 1
        if end == 0:
            return None
        grown = self.formats.appended(
            self.session, chunk[:end].decode("utf-8", errors="replace"), self.lines + 1
        )
        if grown is None:  # its format is read whole (a Codex rollout): appended to, not replaced
            return self._reload(None, replaced=False)
        head, tail = self.seen
        self.seen = (head + chunk[:end])[:SAMPLE], (tail + chunk[:end])[-SAMPLE:]
        self.offset += end
        self.lines += chunk.count(b"\n", 0, end)
        was = self.session
        self.session = grown
        changed = (len(grown.messages), len(grown.sidechain)) != (len(was.messages), len(was.sidechain))
        return (grown, False) if changed else None

    def _reload(self, why: str | None, replaced: bool = True) -> tuple[Session, bool] | None:
        """Read the file again from the start; `why` is said, if there is a reason to;
        `replaced` False where only what was appended made it read again."""
        self.offset, self.lines, self.identity, self.seen = self._stat_now()
        try:
            session = self.formats.load(self.path)
        except LoadError as exc:
            # emptied, or no transcript now: what was read stays shown, and whatever is
            # written next is read whole
            self.restart = True
            self.event = (
                f"{why or 'The file changed'}; it cannot be read now ({exc}): what was read stays shown"
            )
            return None
        self.restart = False
        self.session = session
        self.event = why
        return session, replaced

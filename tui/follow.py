"""Follow a growing session file: read only complete new lines, and start over when the
file is truncated, replaced or rotated, so messages are never lost or duplicated."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from compaction_inspector.core.formats import LoadError, load
from compaction_inspector.core.formats.claude_code import load as load_claude_code
from compaction_inspector.core.formats.common import read_jsonl
from compaction_inspector.core.model import Session


class Follower:
    def __init__(self, path: str | Path, session: Session) -> None:
        self.path = Path(path)
        self.session = session
        self.gone = False  # the file was deleted: what was read stays shown
        self.offset, self.lines, self.identity = self._stat_now()

    def _stat_now(self) -> tuple[int, int, tuple[int, int] | None]:
        """Where the complete lines end, how many there are, and the file's identity."""
        try:
            st = os.stat(self.path)
        except OSError:
            return 0, 0, None
        data = self.path.read_bytes()
        complete = data.rfind(b"\n") + 1  # a half-written last line waits for its newline
        return complete, data.count(b"\n", 0, complete), (st.st_dev, st.st_ino)

    def poll(self) -> tuple[Session, bool] | None:
        """(session, reloaded) when something changed, else None. Never raises."""
        try:
            st = os.stat(self.path)
        except OSError:
            # Deleted for now: keep what we have; whatever appears here next (even on a
            # reused inode) is a new file and is read whole.
            self.identity = None
            self.gone = True
            return None
        self.gone = False
        identity = (st.st_dev, st.st_ino)
        if identity != self.identity or st.st_size < self.offset:
            return self._reload()
        if st.st_size == self.offset:
            return None
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read(st.st_size - self.offset)
        except OSError:
            return None
        end = chunk.rfind(b"\n") + 1
        if end == 0:
            return None
        if self.session.format != "claude-code":
            return self._reload()
        records = read_jsonl(chunk[:end].decode("utf-8", errors="replace"), self.lines + 1)
        fresh = load_claude_code(records, self.session.path)
        self.offset += end
        self.lines += chunk.count(b"\n", 0, end)
        if not fresh.messages and not fresh.sidechain:
            return None
        self.session = replace(
            self.session,
            messages=self.session.messages + fresh.messages,
            sidechain=self.session.sidechain + fresh.sidechain,
            metadata={**fresh.metadata, **self.session.metadata},
        )
        return self.session, False

    def _reload(self) -> tuple[Session, bool] | None:
        try:
            session = load(self.path)
        except LoadError:
            return None
        self.session = session
        self.offset, self.lines, self.identity = self._stat_now()
        return session, True

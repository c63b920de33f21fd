"""The user's own summarizer (docs/configuration.md#your-own-summarizer): a command that
reads the span to summarize as JSON on stdin and prints the summary on stdout.

It is run only when `compaction.yaml` names it (`summarizer: {command: ...}`), never
through a shell, with a timeout; its summaries are kept by the hash of what it was sent,
so a replay asks it once for each span. A failure says what failed and how; nothing
falls back silently to the local summary.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction_inspector.core.model import Message

KEPT = 4096  # summaries kept in memory, the least recently used let go first


class SummarizerError(RuntimeError):
    """The user's summarizer failed: the message says how (not found, timed out, exit code
    and the first line it wrote to stderr, nothing printed)."""


@dataclass(frozen=True)
class Command:
    """A summarizer command line and how long it may take."""

    command: str
    timeout_seconds: float = 60.0

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "timeout_seconds": self.timeout_seconds}

    def __call__(self, span: Sequence[Message], cap: int, session_id: str | None) -> str:
        """The summary of `span` within `cap` characters (longer output is cut there)."""
        payload = json.dumps(
            {
                "cap_chars": cap,
                "session_id": session_id,
                "messages": [{"role": m.role, "kind": m.kind, "text": m.text} for m in span],
            },
            ensure_ascii=False,
        )
        key = hashlib.sha256(f"{self.command}\0{payload}".encode()).hexdigest()
        if key in _KEPT:
            _KEPT.move_to_end(key)
            return _KEPT[key]
        text = self._run(payload)[:cap]
        _KEPT[key] = text
        if len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
        return text

    def _run(self, payload: str) -> str:
        argv = shlex.split(self.command)
        if not argv:
            raise SummarizerError("summarizer.command is empty")
        try:
            done = subprocess.run(
                argv, input=payload, capture_output=True, text=True, timeout=self.timeout_seconds, check=False
            )
        except FileNotFoundError:
            raise SummarizerError(f"summarizer {argv[0]!r} was not found") from None
        except subprocess.TimeoutExpired:
            raise SummarizerError(
                f"summarizer {argv[0]!r} did not answer within {self.timeout_seconds:g} seconds"
            ) from None
        except OSError as exc:
            raise SummarizerError(f"summarizer {argv[0]!r} could not run: {exc}") from None
        if done.returncode != 0:
            said = next((line for line in done.stderr.splitlines() if line.strip()), "")
            raise SummarizerError(
                f"summarizer {argv[0]!r} exited with {done.returncode}" + (f": {said[:200]}" if said else "")
            )
        if not done.stdout.strip():
            raise SummarizerError(f"summarizer {argv[0]!r} printed no summary")
        return done.stdout.strip()


_KEPT: OrderedDict[str, str] = OrderedDict()

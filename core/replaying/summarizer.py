"""The user's own summarizer (docs/configuration.md#your-own-summarizer): a command that
reads the span to summarize as JSON on stdin and prints the summary on stdout.

It is run only when `compaction.yaml` names it (`summarizer: {command: ...}`), never
through a shell, with a timeout; its summaries are kept by the hash of what it was sent,
so a replay asks it once for each span. A failure says what failed and how; nothing
falls back silently to the local summary.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import subprocess
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compaction_inspector.core.model import Message, immutable

KEPT = 4096  # summaries kept in memory, the least recently used let go first


class SummarizerError(RuntimeError):
    """The user's summarizer failed: the message says how (not found, timed out, exit code
    and the first line it wrote to stderr, nothing printed)."""


@immutable()
class Command:
    """A summarizer command line and how long it may take."""

    command: str
    timeout_seconds: float = 60.0

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "timeout_seconds": self.timeout_seconds}

    def fingerprint(self) -> str:
        """What its summaries depend on, for figures kept between runs: the command, its
        timeout, and the contents of each file the command names (a script edited gives
        other summaries under the same command line)."""
        digest = hashlib.sha256(json.dumps(self.to_dict()).encode())
        for word in _words(self.command):
            path = Path(word).expanduser()
            with contextlib.suppress(OSError):
                if path.is_file():
                    digest.update(path.read_bytes())
        return digest.hexdigest()

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
        argv = _words(self.command)
        named = f"summarizer {self.command!r}"  # the whole command: its interpreter alone tells nothing
        if not argv:
            raise SummarizerError(f"{named} has no words to run (empty, or a quote left open)")
        try:
            done = subprocess.run(
                argv, input=payload, capture_output=True, text=True, timeout=self.timeout_seconds, check=False
            )
        except FileNotFoundError:
            raise SummarizerError(f"{named}: {argv[0]!r} was not found") from None
        except subprocess.TimeoutExpired:
            raise SummarizerError(f"{named} did not answer within {self.timeout_seconds:g} seconds") from None
        except OSError as exc:
            raise SummarizerError(f"{named} could not run: {exc}") from None
        if done.returncode != 0:
            said = next((line for line in done.stderr.splitlines() if line.strip()), "")
            raise SummarizerError(
                f"{named} exited with {done.returncode}" + (f": {said[:200]}" if said else "")
            )
        if not done.stdout.strip():
            raise SummarizerError(f"{named} printed no summary")
        return done.stdout.strip()


def _words(command: str) -> list[str]:
    """The command line as its words, as it is run (no shell); none where it cannot be split."""
    try:
        return shlex.split(command)
    except ValueError:  # an unclosed quote: the run says the command is empty
        return []


_KEPT: OrderedDict[str, str] = OrderedDict()

"""What Claude Code sends with every request that its transcripts never record: the
memory files it loads at start (code.claude.com/docs, memory). The managed policy's
CLAUDE.md, the user's (`$CLAUDE_CONFIG_DIR`, else `~/.claude`) and their rules; each
CLAUDE.md and CLAUDE.local.md from the session's folder up to (not including) the root,
with `.claude/CLAUDE.md`; the project's rules that name no `paths:`; and the first 200
lines of the project's auto memory, `projects/<folder>/memory/MEMORY.md`.

Read as the files are now, which may not be as they were when the session ran; `@`
imports are not followed. Nested CLAUDE.md files below the folder load only when a file
there is read, so they are left out."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from compaction_inspector.core.files import read_text
from compaction_inspector.core.model import immutable

MEMORY_LINES = 200  # of MEMORY.md, loaded at start
MANAGED = (Path("/etc/claude-code/CLAUDE.md"), Path("/Library/Application Support/ClaudeCode/CLAUDE.md"))
_PROJECT_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")


@immutable()
class Memory:
    """The memory files found for a session's folder, and their text as sent."""

    files: tuple[Path, ...]
    text: str


def _scoped(text: str) -> bool:
    """A rule whose front matter names `paths:` loads only with a matching file."""
    if not text.startswith("---"):
        return False
    head = text[3:].split("\n---", 1)[0]
    return any(line.strip().startswith("paths:") for line in head.splitlines())


def _rules(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.md") if p.is_file())
    except OSError:
        return []


def project_folder(cwd: str) -> str:
    """The name Claude Code gives the session's folder under `projects/`."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def candidates(cwd: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the memory files it loads at start may be, in the order it reads them."""
    env = os.environ if environ is None else environ
    home = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    found = [*MANAGED, home / "CLAUDE.md", *_rules(home / "rules")]
    if cwd:
        folder = Path(cwd)
        above = [d for d in reversed(folder.parents) if d != d.parent]  # the root itself is left out
        for d in [*above, folder]:
            found += [d / name for name in _PROJECT_FILES]
        found += _rules(folder / ".claude" / "rules")
        found.append(home / "projects" / project_folder(cwd) / "memory" / "MEMORY.md")
    return found


def read(cwd: str | None, environ: Mapping[str, str] | None = None) -> Memory | None:
    """The memory files there are for the session's folder, as they are now; None where
    there is none."""
    files: list[Path] = []
    texts: list[str] = []
    for path in candidates(cwd, environ):
        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError):
            continue
        if path.parent.name == "rules" and _scoped(text):
            continue
        if path.name == "MEMORY.md":
            text = "\n".join(text.splitlines()[:MEMORY_LINES])
        files.append(path)
        texts.append(text)
    return Memory(tuple(files), "\n\n".join(texts)) if files else None

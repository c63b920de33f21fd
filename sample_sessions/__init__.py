"""Small realistic sessions in every supported format, and a generator for large ones."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
DEFAULT = "claude_code_session.jsonl"


def path(name: str = DEFAULT) -> Path:
    """The bundled sample `name` (the Claude Code session by default)."""
    return HERE / name


def names() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if p.suffix in (".jsonl", ".json", ".yaml"))

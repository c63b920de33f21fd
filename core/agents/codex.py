"""Codex CLI (docs/agents.md): its rollouts under `~/.codex/sessions/YYYY/MM/DD/`; each
records the model's context window, and it compacts at its configured limit, at most
90 % of the raw window."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from compaction_inspector.core import autocompact
from compaction_inspector.core.agents.base import (
    SESSION_PREFIX,
    Agent,
    Found,
    Preset,
    PutBack,
    SessionWindow,
    Settings,
)
from compaction_inspector.core.autocompact import Count, Point
from compaction_inspector.core.files import walk
from compaction_inspector.core.model import Compaction, Message, Session
from compaction_inspector.core.pressure import Window
from compaction_inspector.core.tokens import TokenCounter

FORMAT = "codex"
SESSION_WINDOW = f"{SESSION_PREFIX} model_context_window"
PRESET = Preset(
    FORMAT,
    258_400,
    0,
    "Codex CLI: model_auto_compact_token_limit, at most 90 % of the raw window (the 258,400 a "
    "rollout records is 95 % of 272,000)",
    agent=FORMAT,
)


def home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"


def find(root: Path) -> list[Found]:
    """Every rollout under the day folders."""
    return [Found(f, FORMAT, str(f.parent.relative_to(root))) for f in walk(root, "rollout-*.jsonl")]


def point(window: Window, config: Settings) -> Point:
    """The limit the settings give, else the user's own config.toml's, else 90 % of the raw window."""
    options = config.options(FORMAT)
    if options.auto_compact_token_limit is not None:
        return autocompact.codex_limit(
            window, options.auto_compact_token_limit, config.source or "the settings"
        )
    codex = config.agent_settings
    if codex is not None:
        return autocompact.codex_limit(
            window, codex.auto_compact_token_limit, str(codex.path), codex.context_window
        )
    return autocompact.codex_limit(window)


def window(config: Settings, session: Session) -> SessionWindow | None:
    """The model_context_window the rollout records, with the user's Codex config.toml."""
    recorded = session.metadata.get("context_window")
    if not (isinstance(recorded, int) and recorded > 0):
        return None
    return SessionWindow(PRESET.name, Window(recorded, 0), SESSION_WINDOW, autocompact.codex_settings())


def checks(
    session: Session, config: Settings, at: Point, point_in: Callable[[int], Point | None]
) -> tuple[Count, ...]:
    """Its count at every check the rollout records, term by term; a check before a
    switch of model against that model's own limit."""
    if not session.checks:
        return ()
    rate = autocompact.codex_reasoning_rate(session.messages, config.options(FORMAT).reasoning_per_100)
    recorded_window = session.metadata.get("context_window")

    def limit_in(window: int) -> Point | None:
        return None if window == recorded_window else point_in(window)

    return tuple(
        autocompact.codex_counts(session.messages, session.checks, at, rate, limit_in, session.compactions)
    )


def recorded(compaction: Compaction, reported: int | None, at: Point) -> Count | None:
    """Nothing beyond its checks."""
    return None


def put_back(
    session: Session, boundary: int, after: Sequence[Message], counter: TokenCounter, scale: float
) -> PutBack:
    """Nothing the rollout leaves out: its new history is recorded whole."""
    return PutBack.known(0)


def first_only(session: Session, config: Settings) -> tuple[int, str] | None:
    """Nothing: what its first request held that a compaction changes is in the rollout."""
    return None


AGENT = Agent(
    FORMAT,
    "Codex",
    "codex-dir",
    "Codex's sessions folder (default $CODEX_HOME/sessions, else ~/.codex/sessions)",
    home,
    find,
    point,
    window,
    (PRESET,),
    checks,
    recorded,
    put_back,
    first_only,
    b'"compacted"',
)

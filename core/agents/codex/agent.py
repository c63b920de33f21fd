"""Codex CLI (docs/agents.md): its rollouts under `~/.codex/sessions/YYYY/MM/DD/`; each
records the model's context window, and it compacts at its configured limit, at most
90 % of the raw window."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from compaction_inspector.core.agents.codex import config_toml, rules
from compaction_inspector.core.agents.codex import places as own_places
from compaction_inspector.core.agents.codex import transcript as transcript_format
from compaction_inspector.core.agents.codex.strategy import STRATEGY
from compaction_inspector.core.agents.codex.transcript import FORMAT
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Places
from compaction_inspector.core.contract.rules import SESSION_PREFIX, ConfigView, Preset, SessionWindow, Tour
from compaction_inspector.core.formats.kinds import Journal
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Check, Session
from compaction_inspector.core.own.autocompact import Count, Point

SESSION_WINDOW = f"{SESSION_PREFIX} model_context_window"
__all__ = ["FORMAT", "PRESET", "Codex"]

PRESET = Preset(
    FORMAT,
    258_400,
    0,
    "Codex CLI: model_auto_compact_token_limit, at most 90 % of the raw window (the 258,400 a "
    "rollout records is 95 % of 272,000)",
    agent=FORMAT,
)


class Codex(Agent):
    """Codex CLI: its rollouts, the window each records, its limit, and its own count at
    every check a rollout records."""

    format = FORMAT
    name = "Codex"
    homes = ("CODEX_HOME",)
    signs_as = ("codex",)
    o200k_models = ("codex",)  # codex-mini, OpenAI's model for it
    folder_option = "codex-dir"
    folder_help = "Codex's sessions folder (default $CODEX_HOME/sessions, else ~/.codex/sessions)"
    journal: ClassVar[Journal] = transcript_format
    places: ClassVar[Places | None] = own_places
    presets = (PRESET,)
    # codex-rs `protocol/src/protocol.rs`: the baseline its context indicator assumes
    overhead_tokens = 12_000
    strategies = (STRATEGY,)
    tour = {
        STRATEGY.name: Tour(
            {"auto_compact_token_limit": 3_500},
            999,
            "Codex: the initial context, recent user messages and a summary.",
        )
    }
    compaction_mark = b'"compacted"'
    settings_keys = {"auto_compact_token_limit": "model_auto_compact_token_limit"}
    settings_layers = {
        "user": "$CODEX_HOME/config.toml, else ~/.codex/config.toml "
        "(in the default profile's table where that sets it)"
    }

    def point(self, window: Window, config: ConfigView) -> Point:
        """The limit the settings give, else the user's own config.toml's, else 90 % of
        the raw window; under `body_after_prefix`, counted from the first request of the
        session's last window (`rules.codex_scoped`)."""
        limit, scope = self._limit(window, config)
        if scope is None:
            return limit
        codex = config.agent_settings
        prefill = codex.prefill if isinstance(codex, rules.CodexSettings) else None
        return rules.codex_scoped(limit, prefill, window, scope)

    def _limit(self, window: Window, config: ConfigView) -> tuple[Point, str | None]:
        """Its limit, and where `body_after_prefix` was set (None: the limit is on the
        whole count)."""
        options = config.options(FORMAT)  # config.toml's settings folded in (`with_own_settings`)
        codex = config.agent_settings if isinstance(config.agent_settings, rules.CodexSettings) else None
        scope = options.limit_scope
        given: tuple[int | None, str, int | None] = (None, "set", None)  # the limit, who set it, raw window
        if codex is not None and options.auto_compact_token_limit in (None, codex.auto_compact_token_limit):
            given = (codex.auto_compact_token_limit, codex.where(rules.LIMIT_KEY), codex.context_window)
        elif options.auto_compact_token_limit is not None:
            given = (options.auto_compact_token_limit, config.source or "the settings", None)
        limit = rules.codex_scope_limit(scope, window, *given)
        if scope != rules.BODY_AFTER_PREFIX:
            return limit, None
        own = codex is not None and codex.scope == rules.BODY_AFTER_PREFIX
        return limit, codex.where(
            rules.SCOPE_KEY
        ) if own and codex is not None else config.source or "the settings"

    def with_own_settings(self, options: Any, own: Any) -> Any:
        """config.toml's limit and its scope, where the inspector's options set none."""
        if not isinstance(own, rules.CodexSettings):
            return options
        if own.scope is not None and options.limit_scope == rules.TOTAL:
            options = dataclasses.replace(options, limit_scope=own.scope)
        if own.auto_compact_token_limit is None or options.auto_compact_token_limit is not None:
            return options
        return dataclasses.replace(options, auto_compact_token_limit=own.auto_compact_token_limit)

    def window(self, config: ConfigView, session: Session) -> SessionWindow | None:
        """The model_context_window the rollout records, with the user's Codex config.toml
        and the first request of the session's last window."""
        recorded = session.metadata.get("context_window")
        if not (isinstance(recorded, int) and recorded > 0):
            return None
        prefill = rules.codex_prefills(session.messages)[-1]
        own = rules.codex_settings() or rules.CodexSettings(None, None, None)
        said = [SESSION_WINDOW, *(f"your settings {r}" for r in own.refused)]
        if own.context_window is not None and rules.codex_effective_window(own.context_window) != recorded:
            # the rollout says what was in force; the file read now is for the sessions to come
            said.append(
                f"your {rules.WINDOW_KEY} of {own.context_window:,} ({own.where(rules.WINDOW_KEY)}) is not "
                "what it ran with: it applies to the next session"
            )
            own = dataclasses.replace(own, context_window=None)
        return SessionWindow(
            PRESET.name, Window(recorded, 0), "; ".join(said), dataclasses.replace(own, prefill=prefill)
        )

    def checks(
        self, session: Session, config: ConfigView, at: Point, point_in: Callable[[int], Point | None]
    ) -> tuple[Count, ...]:
        """Its count at every check the rollout records, term by term; a check before a
        switch of model against that model's own limit."""
        if not session.checks:
            return ()
        rate = rules.codex_reasoning_rate(session.messages, config.options(FORMAT).reasoning_per_100)
        recorded_window = session.metadata.get("context_window")

        def limit_in(window: int) -> Point | None:
            return None if window == recorded_window else point_in(window)

        limit, scope = self._limit(config.window, config)
        prefills = rules.codex_prefills(session.messages) if scope is not None else []

        def scoped(check: Check) -> Point:  # each check counts from its own window's first request
            return rules.codex_scoped(limit, prefills[check.index], config.window, scope or "")

        return tuple(
            rules.codex_counts(
                session.messages,
                session.checks,
                at,
                rate,
                limit_in,
                session.compactions,
                session.metadata.get("version"),
                scoped if scope is not None else None,
            )
        )

    def settings_file(self, layer: str | None = None) -> Path:
        return config_toml.user_file()

    def setting(self, text: str, key: str) -> str | None:
        return config_toml.current(text, key)

    def with_setting(self, text: str, key: str, value: int) -> str:
        return config_toml.written(text, key, value)

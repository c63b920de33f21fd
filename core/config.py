"""The settings a session is read under (`Config`): window, tokenizer, how pressure is
measured, every strategy's options and the preset, with the catalogue they choose from
and what the session's own record says of its agent's point; what was in force, read by
every surface, is its `account` (`core.own.account`). `compaction.yaml` is read and
written in `core.config_file`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import field
from functools import cached_property
from typing import Any, Literal

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.contract.rules import Rules
from compaction_inspector.core.measuring.context_model import DEFAULT_OVERHEAD_TOKENS
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import (
    AUTO,
    FLAT_MEDIA_TOKENS,
    TOKENIZER_CHOICES,
    model_tokenizer,
)
from compaction_inspector.core.model import MAX_COUNT, Session, immutable
from compaction_inspector.core.own import account as accounts
from compaction_inspector.core.own.account import Account
from compaction_inspector.core.own.evidence import Bounds, bounds
from compaction_inspector.core.replaying.summarizer import Command
from compaction_inspector.core.strategies.declaration import to_config
from compaction_inspector.core.text import shown as _shown

PRESSURES = ("context", "messages")
Chooser = Literal["session", "file", "command line", "key", "sample"]


@immutable()
class WindowSource:
    """Who set the window (`chooser`: the session's agent, a settings file, the command
    line, a tuning key, the bundled sample), and the words that say so (`said`)."""

    chooser: Chooser
    said: str

    def __str__(self) -> str:
        return self.said


COMMAND_LINE = WindowSource("command line", "command line")
KEY = WindowSource("key", "w/W")
SAMPLE_WINDOW = WindowSource("sample", "the sample's demo window")


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key and what is allowed."""


USUAL = ""  # the preset a window nobody chose is measured against (`Catalogue.usual_preset`)


@immutable()
class Scope:
    """The sessions a saved window and preset were tuned for: an agent's (a format), and
    one model of it when `model` is set."""

    agent: str
    model: str | None = None

    def holds(self, session: Session) -> bool:
        return session.format == self.agent and self.model in (None, session.metadata.get("model"))

    def describe(self) -> str:
        return f"{self.agent} sessions" + (f" of {self.model}" if self.model else "")

    def to_dict(self) -> dict[str, str | None]:
        return {"agent": self.agent, "model": self.model}


@immutable()
class Config:
    # the agents, formats, presets and strategies there are, as the front end made them
    catalogue: Catalogue = field(compare=False, repr=False)
    window: Window = field(default_factory=Window)
    tokenizer: str = AUTO  # `auto`: the session's model's (core.measuring.tokens.model_tokenizer)
    media_tokens: int = FLAT_MEDIA_TOKENS
    preset: str | None = USUAL
    # each strategy's options, by its name (those not given: its defaults)
    strategies: Mapping[str, Any] = field(default_factory=dict)
    keys: Mapping[str, str] = field(default_factory=dict)
    source: str | None = None  # the file it was read from
    # "context": what the agent sent (docs/pressure.md); "messages": the transcript's messages only
    pressure: str = "context"
    # the system prompt and tools assumed of a transcript that reports no usage (None: its
    # agent's own figure, `overhead`)
    overhead_tokens: int | None = None
    # who set the window (None: the default); only `with_window` sets it, with the window
    window_source: WindowSource | None = None
    # the user's own settings of the session's agent, read for its session (Codex's
    # config.toml; never saved here)
    agent_settings: Any = None
    # the sessions a chosen window and preset apply to (None: every session)
    window_for: Scope | None = None
    # the user's own summarizer command (never run unless named here)
    summarizer: Command | None = None
    # where the status line turns yellow and red, in % of the agent's point
    status_colours: tuple[int, int] = (85, 95)
    # what `auto` came to for the session (`for_session`): saved as `auto`, as it was chosen
    resolved_tokenizer: str | None = field(default=None, compare=False)
    # the settings before the app's tuning keys moved these: what the agent really ran with
    untuned: Config | None = field(default=None, compare=False, repr=False)
    # what the session's own record says of its agent's point (`for_session`)
    bounds: Bounds | None = None

    def __post_init__(self) -> None:
        if self.preset == USUAL:
            object.__setattr__(self, "preset", self.catalogue.usual_preset)
        given = self.strategies
        if given.keys() != self.catalogue.strategies.keys():
            every = {
                n: given[n] if n in given else s.default_options()
                for n, s in self.catalogue.strategies.items()
            }
            object.__setattr__(self, "strategies", every)

    def overhead(self, agent: Rules | None) -> int:
        """The system prompt and tools assumed of a session of `agent` (None: of no agent's
        format) that reports no usage: the user's figure, else the agent's, else the default."""
        if self.overhead_tokens is not None:
            return self.overhead_tokens
        own = agent.overhead_tokens if agent is not None else None
        return own if own is not None else DEFAULT_OVERHEAD_TOKENS

    def for_session(self, session: Session) -> Config:
        """The window the session's agent had (`_window_for`), and, with the `auto`
        tokenizer, its model's tokenizer."""
        config = self
        if self.window_for is not None and not self.window_for.holds(session):
            default = Config(self.catalogue)  # tuned for other sessions: this one's agent sets its own
            window = default.window
            config = dataclasses.replace(
                self.with_window(None, window.context_window, window.reserved_output), preset=default.preset
            )
        config = config._window_for(session)
        agent = self.catalogue.by_format.get(session.format)
        if agent is not None and (config.window_source is None or config.window_from_session):
            config = dataclasses.replace(config, bounds=bounds(session, agent.counts_recorded))
        if config.tokenizer == AUTO:
            named = tuple(p for agent in self.catalogue.agents for p in agent.o200k_models)
            resolved = model_tokenizer(session.metadata.get("model"), named)
            config = dataclasses.replace(config, tokenizer=resolved, resolved_tokenizer=resolved)
        return config

    def _window_for(self, session: Session) -> Config:
        """The window the session's agent had, unless a window was chosen (docs/agents.md):
        each agent says what its sessions record (`core.agents`)."""
        if self.window_source is not None:
            return self
        for agent in self.catalogue.agents:
            found = agent.window(self, session)
            if found is not None:
                given = WindowSource("session", found.source)
                config = self.with_window(given, found.window.context_window, found.window.reserved_output)
                return dataclasses.replace(config, preset=found.preset, agent_settings=found.agent_settings)
        return self

    def reserve_for(self, size: int) -> int:
        """The output reserve of a window of `size` set without one: the reserve in force,
        at most the preset's own share of its window (Claude Code's 20,000 of 200,000), so
        it follows a small window as the reserve of a model with a small output would."""
        preset = self.catalogue.presets.get(self.preset or "")
        base = Window(preset.context_window, preset.reserved_output) if preset else Window()
        return min(self.window.reserved_output, size * base.reserved_output // base.context_window)

    @property
    def window_from_session(self) -> bool:
        """The session brought the window (its recorded size, its version's reserve)."""
        return self.window_source is not None and self.window_source.chooser == "session"

    @property
    def window_chosen(self) -> bool:
        """The window is the user's choice (not the default, nor one a session or the
        sample brought): only such a window is saved."""
        chooser = self.window_source.chooser if self.window_source is not None else None
        return chooser in ("file", "command line", "key")

    @property
    def window_note(self) -> str:
        """Where the window comes from, for the status line and analyze."""
        return f"set by {self.window_source}" if self.window_source else "the default"

    @cached_property
    def account(self) -> Account:
        """What was in force for the session, and where today's settings differ
        (`core.own.account`): every surface's window, point and reserve."""
        return accounts.of(self, self.window_note, self._recorded)

    @cached_property
    def _recorded(self) -> accounts.Recorded:
        """The point the session's record puts in force (`accounts.recorded`), apart: the
        options of the agent's replay follow it, and its rule asks for them."""
        return accounts.recorded(self)

    @property
    def window_recorded(self) -> bool:
        """The window is the session's own, or the default: what its record speaks of."""
        return self.window_source is None or self.window_from_session

    @property
    def agent(self) -> str | None:
        """The agent whose own compaction the preset replays (None: no preset, or a tool
        with no agent rule)."""
        preset = self.catalogue.presets.get(self.preset or "")
        return preset.agent if preset else None

    def options(self, strategy: str) -> Any:
        """The options object of `strategy` (a name in the catalogue); an
        agent's own strategy's with what the user's own settings of that agent set where
        these leave it unset (`Agent.with_own_settings`), so its point and its replay agree."""
        name = self.catalogue.strategy(strategy).name
        agent = self.catalogue.by_format.get(name)
        options = self.given(name)
        found = self._recorded[0] if agent is not None and name == self.agent else None
        if agent is not None and found is not None and found.tokens is not None:
            return agent.at_point(options, found.tokens)
        return options

    def given(self, strategy: str) -> Any:
        """`options` as set (here, or in the agent's own settings), without the point the
        session's record puts in force: what a what-if starts from and writes back."""
        name = self.catalogue.strategy(strategy).name
        agent = self.catalogue.by_format.get(name)
        if agent is None or self.agent_settings is None:
            return self.strategies[name]
        return agent.with_own_settings(self.strategies[name], self.agent_settings)

    def with_options(self, strategy: str, options: Any) -> Config:
        """Raises OptionError where the strategy's source refuses `options`."""
        declared = self.catalogue.strategy(strategy)
        return dataclasses.replace(
            self, strategies={**self.strategies, declared.name: declared.checked(options)}
        )

    def overridden(
        self,
        *,
        preset: str | None = None,
        tokenizer: str | None = None,
        context_window: int | None = None,
        reserved_output: int | None = None,
        pressure: str | None = None,
        overhead_tokens: int | None = None,
        chooser: WindowSource = COMMAND_LINE,
    ) -> Config:
        """This config with what a command line (or a settings file: `chooser`) gives on
        top (a preset first, so explicit sizes win). Raises ConfigError or ValueError
        naming what is wrong."""
        config = self.with_preset(preset, chooser) if preset else self
        if pressure is not None:
            if pressure not in PRESSURES:
                raise ConfigError(f"pressure must be one of {', '.join(PRESSURES)}, not {pressure!r}")
            config = dataclasses.replace(config, pressure=pressure)
        if overhead_tokens is not None:
            config = dataclasses.replace(
                config, overhead_tokens=whole_number(overhead_tokens, "overhead_tokens")
            )
        if context_window is not None or reserved_output is not None:
            config = config.with_window(chooser, context_window, reserved_output)
        if tokenizer is not None:
            if tokenizer not in TOKENIZER_CHOICES:
                raise ConfigError(
                    f"tokenizer must be one of {', '.join(TOKENIZER_CHOICES)}, not {tokenizer!r}"
                )
            config = dataclasses.replace(config, tokenizer=tokenizer)
        return config

    def with_preset(self, name: str, source: WindowSource | None = None) -> Config:
        """This config with preset `name`'s window; `source` says who chose it."""
        presets = self.catalogue.presets
        if name not in presets:
            raise ConfigError(f"preset must be one of {', '.join(presets)}, not {name!r}")
        p = presets[name]
        return dataclasses.replace(self.with_window(source, p.context_window, p.reserved_output), preset=name)

    def with_window(
        self,
        source: WindowSource | None,
        context_window: int | None = None,
        reserved_output: int | None = None,
    ) -> Config:
        """The one way the window is set: its size, its output reserve, who set it
        (`source`; None: the default). A size given
        without a reserve takes `reserve_for` its size, the share of the window its preset
        reserves, except from a tuning key: w/W move the window on purpose and keep the
        output the model may write, which a window tuned by hand does not change. A reserve
        given alone keeps the size."""
        size = context_window if context_window is not None else self.window.context_window
        if reserved_output is None:
            keeps = context_window is None or (source is not None and source.chooser == "key")
            reserved_output = self.window.reserved_output if keeps else self.reserve_for(size)
        return dataclasses.replace(self, window=Window(size, reserved_output), window_source=source)

    def scoped_to(self, session: Session) -> Config:
        """This config with a chosen window and preset kept for sessions like `session`
        (its agent and model), as a save writes it."""
        if not self.window_chosen:
            return self
        model = session.metadata.get("model")
        return dataclasses.replace(
            self, window_for=Scope(session.format, model if isinstance(model, str) else None)
        )

    def to_dict(self, window: bool = False) -> dict[str, Any]:
        """Every setting as compaction.yaml holds it; the window only when the user chose
        it, or when `window` asks for it whoever set it (with the sessions it applies to)."""
        size: dict[str, Any] = {
            "preset": self.preset,
            "context_window": self.window.context_window,
            "reserved_output": self.window.reserved_output,
        }
        if self.window_for is not None:
            size["window_for"] = self.window_for.to_dict()
        return {
            **(size if window or self.window_chosen else {}),
            "tokenizer": AUTO if self.tokenizer == self.resolved_tokenizer else self.tokenizer,
            "media_tokens": self.media_tokens,
            "pressure": self.pressure,
            "overhead_tokens": self.overhead_tokens,
            **{
                s.config_key: to_config(self.strategies[name])
                for name, s in self.catalogue.strategies.items()
            },
            "keys": dict(self.keys),
            **({"summarizer": self.summarizer.to_dict()} if self.summarizer is not None else {}),
            "statusline": {"yellow_at": self.status_colours[0], "red_at": self.status_colours[1]},
        }


def whole_number(value: Any, key: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise ConfigError(f"{key} must be an integer >= {minimum} and <= 2**53, not {_shown(value)}")
    return value


__all__ = ["Config", "ConfigError"]

"""The catalogue: everything the registered agents bring, made once by a front end (the
command line, the app, the status line) from the registry (`core.agents.registry`) and
passed down through the configuration, so no module below a front end asks a global which
agents, formats, presets or strategies exist."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.rules import Preset
from compaction_inspector.core.formats.reading import Formats
from compaction_inspector.core.model import immutable
from compaction_inspector.core.strategies import OURS, THEIRS, OptionError, Strategy

# tools with no agent here, measured at a share of their window
OTHER_TOOLS = (
    Preset("inspect-ai", 200_000, 0, "Inspect AI: compaction threshold 0.9 of the window", fraction=0.9),
)


def _by_format(agents: Sequence[Agent]) -> dict[str, Agent]:
    found: dict[str, Agent] = {}
    for agent in agents:
        if agent.format in found:
            raise ValueError(f"an agent writing {agent.format!r} is registered already")
        found[agent.format] = agent
    return found


def _strategies(agents: Sequence[Agent]) -> dict[str, Strategy[Any]]:
    """Ours, then each agent's, then the other tools' variants; names never shared. An
    agent owns its strategies' names: a tool's variant of the same name gives way to the
    agent that now has a package of its own."""
    own = [s for agent in agents for s in agent.strategies]
    taken = {getattr(s, "name", None) for s in own} | {agent.format for agent in agents}
    every = [*OURS, *own, *(s for s in THEIRS if s.name not in taken)]
    found = {s.name: s for s in every if isinstance(s, Strategy)}
    if len(found) < len(every):
        raise TypeError(
            "each strategy must be a Strategy (core.strategies.declaration) with a name of its own"
        )
    return found


def _presets(agents: Sequence[Agent]) -> dict[str, Preset]:
    """Each agent's presets, then the other tools' an agent does not own."""
    own = {p.name: p for agent in agents for p in agent.presets}
    return own | {p.name: p for p in OTHER_TOOLS if p.name not in own}


@immutable()
class Catalogue:
    """The agents, in the order lists show them, and what is made of them: the agents by
    the format each writes, the formats a file is read as, every strategy by its name and
    every preset by its name. Its mappings are never changed once made."""

    agents: tuple[Agent, ...]
    by_format: Mapping[str, Agent] = field(init=False, repr=False)
    formats: Formats = field(init=False, repr=False)
    strategies: Mapping[str, Strategy[Any]] = field(init=False, repr=False)
    presets: Mapping[str, Preset] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        made = {
            "by_format": _by_format(self.agents),
            "formats": Formats.of(self.agents),
            "strategies": _strategies(self.agents),
            "presets": _presets(self.agents),
        }
        for name, value in made.items():
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[type[Catalogue], tuple[tuple[Agent, ...]]]:
        # sent to a worker process as its agents, and made again there: what is made of
        # them holds modules (the formats), which do not pickle
        return (Catalogue, (self.agents,))

    @property
    def usual_preset(self) -> str:
        """What a window nobody chose is measured against: the first agent's usual preset,
        else the first tool's."""
        return next(iter(self.presets))

    @property
    def replayed(self) -> tuple[str, ...]:
        """The strategies a replay suits (not PTL retry, which runs only when refused)."""
        return tuple(n for n, s in self.strategies.items() if s.timeline)

    def strategy(self, name: str) -> Strategy[Any]:
        """The strategy called `name`, or an OptionError listing those that exist."""
        if name not in self.strategies:
            raise OptionError(f"unknown strategy {name!r}; choose one of {', '.join(self.strategies)}")
        return self.strategies[name]

    def banded(self, shown: str) -> str:
        """The strategy whose bands the gauge draws and the tuning keys move: the one shown
        when it declares bands, else the first that does."""
        if self.strategies[shown].bands is not None:
            return shown
        return next(name for name, s in self.strategies.items() if s.bands is not None)

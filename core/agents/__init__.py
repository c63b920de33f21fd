"""The agents whose sessions the inspector knows (docs/agents.md), each a package of its
own (`core.agents.<agent>`) registered once, in `core.agents.registry`.

Generic modules ask for the agents here, when they need them (`registered`, `AGENTS` by
the format each writes), and never import an agent's package: the agents' packages stand
above the generic layers they use, and the registry is read at run time, not at import."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from compaction_inspector.core.agents.base import SESSION_PREFIX, Agent, Found, Preset

__all__ = ["AGENTS", "SESSION_PREFIX", "Agent", "Derived", "Found", "Preset", "by_format", "registered"]

T = TypeVar("T")


def registered() -> tuple[Agent, ...]:
    """Every agent, in the order lists show them."""
    registry = importlib.import_module("compaction_inspector.core.agents.registry")
    agents: tuple[Agent, ...] = registry.AGENTS
    return agents


def by_format(agents: tuple[Agent, ...]) -> dict[str, Agent]:
    """The agents by the format each writes; two writing one format are refused."""
    found: dict[str, Agent] = {}
    for agent in agents:
        if agent.format in found:
            raise ValueError(f"an agent writing {agent.format!r} is registered already")
        found[agent.format] = agent
    return found


class Derived(Mapping[str, T]):
    """A mapping made from the registered agents when first asked (the strategies, the
    presets, the agents by format), made again only when the registry is another."""

    def __init__(self, make: Callable[[tuple[Agent, ...]], dict[str, T]]) -> None:
        self._make = make
        self._seen: tuple[Agent, ...] | None = None
        self._found: dict[str, T] = {}

    def _all(self) -> dict[str, T]:
        agents = registered()
        if agents is not self._seen:
            self._found, self._seen = self._make(agents), agents
        return self._found

    def __getitem__(self, key: str) -> T:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


AGENTS: Mapping[str, Agent] = Derived(by_format)

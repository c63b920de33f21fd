"""The agents whose sessions the inspector knows, each in a module of its own
(docs/agents.md), kept in a registry by the format each writes: where it keeps its
sessions and how to find them, the window a session of it had, and where it compacts.
A new agent is a module with its `Agent`, its format (`core.formats`) and the strategy
that replays its compaction, named like its format, registered here (ARCHITECTURE.md)."""

from __future__ import annotations

from compaction_inspector.core.agents import claude_code, codex
from compaction_inspector.core.agents.base import SESSION_PREFIX, Agent, Found, Preset

__all__ = ["AGENTS", "SESSION_PREFIX", "Agent", "Found", "Preset", "register"]

AGENTS: dict[str, Agent] = {}  # by the format each writes, in the order lists show them


def register(agent: Agent) -> Agent:
    """Add an agent; its format must be new."""
    if agent.format in AGENTS:
        raise ValueError(f"an agent writing {agent.format!r} is registered already")
    AGENTS[agent.format] = agent
    return agent


for _agent in (claude_code.AGENT, codex.AGENT):
    register(_agent)

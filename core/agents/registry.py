"""The one registration of the agents: a package each, in the order lists show them.
Adding an agent is its package and one line here (ARCHITECTURE.md, "Adding an agent");
nothing else imports an agent's package."""

from __future__ import annotations

from compaction_inspector.core.agents.base import Agent
from compaction_inspector.core.agents.claude_code import ClaudeCode
from compaction_inspector.core.agents.codex import Codex
from compaction_inspector.core.agents.opencode import Opencode

AGENTS: tuple[Agent, ...] = (ClaudeCode(), Codex(), Opencode())

"""The one registration of the agents: a package each, in the order lists show them.

Adding an agent is its package and one line here (ARCHITECTURE.md, "Adding an agent").
Only the front ends (the command line, the app, the status line) import this module; they
make the catalogue once and pass it down, so nothing below them imports an agent."""

from __future__ import annotations

from compaction_inspector.core.agents.claude_code.agent import ClaudeCode
from compaction_inspector.core.agents.cline.agent import Cline
from compaction_inspector.core.agents.codex.agent import Codex
from compaction_inspector.core.agents.gemini_cli.agent import GeminiCli
from compaction_inspector.core.agents.opencode.agent import Opencode
from compaction_inspector.core.agents.roo_code.agent import RooCode
from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.contract.agent import Agent

AGENTS: tuple[Agent, ...] = (ClaudeCode(), Codex(), Opencode(), GeminiCli(), RooCode(), Cline())
CATALOGUE = Catalogue(AGENTS)

"""Gemini CLI: its agent is `agent.GeminiCli`, registered once in `core.agents.registry`. Nothing is
imported here, so a part of the package (a status line) loads without the rest."""

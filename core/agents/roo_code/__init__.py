"""Roo Code: its agent is `agent.RooCode`, registered once in `core.agents.registry`. Nothing is
imported here, so a part of the package (a status line) loads without the rest."""

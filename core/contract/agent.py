"""What an agent is to the inspector: its files, the rules of its compaction and the
user's own settings of it, each a part of its own (`files`, `rules`, `own_settings`)."""

from __future__ import annotations

from compaction_inspector.core.contract.files import Files
from compaction_inspector.core.contract.own_settings import OwnSettings
from compaction_inspector.core.contract.rules import Rules


class Agent(Files, Rules, OwnSettings):
    """One agent, as a class of its own in its package (`core.agents.<agent>`): the format it
    writes (the registry's key, and the name of the strategy that replays its own
    compaction), where it keeps its sessions and how to find them there, and where it
    compacts in a window. A subclass sets the class attributes and writes `home`, `find`
    and `point`; every other hook has a default that says its transcripts record nothing
    more, so an agent writes only what it has."""

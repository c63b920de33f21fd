"""Roo Code's own condense (docs/agents.md#roo-code), a variant of the summarize family:
when the context reaches its `autoCondenseContextPercent` of the window, or passes 90 % of
the window less its reserved output, everything so far becomes one summary."""

from __future__ import annotations

from compaction_inspector.core.agents.roo_code.transcript import FORMAT
from compaction_inspector.core.strategies import summarize
from compaction_inspector.core.strategies.summarize import SummarizeOptions

STRATEGY = summarize.FAMILY.variant(
    FORMAT,
    "Roo Code",
    "Roo Code: condense everything at 100 % of the window, or past 90 % less its output",
    "Roo Code 3.52 src/core/context-management/index.ts: autoCondenseContextPercent 100, or the "
    "context over 0.9 x window - max tokens; src/core/condense/index.ts: the summary alone is sent "
    "after it (its fresh start). A failed condense falls back to truncation, not modelled",
    lambda: SummarizeOptions(trigger_percent=100, trigger_percent_less_output=90),
    aliases={"trigger_percent": "--roo-condense-percent"},  # its autoCondenseContextPercent
)

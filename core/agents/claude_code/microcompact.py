"""Claude Code's time-based microcompact, as a variant of the clear family
(docs/strategies.md#microcompact): its defaults, and where its numbers come from."""

from __future__ import annotations

from compaction_inspector.core.strategies import clear
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.variants import CLEARABLE_TOOLS

MICROCOMPACT = clear.FAMILY.variant(
    "microcompact",
    "Microcompact",
    "clear old tool results, keep the most recent ones",
    "Claude Code time-based microcompact: keep the 5 most recent results of "
    "clearable tools, each older one replaced by “[Old tool result content cleared]”; it waits "
    "for an idle gap (60 minutes) that is off here until set",
    lambda: ClearOptions(keep_tool_uses=5, tools=CLEARABLE_TOOLS),
)

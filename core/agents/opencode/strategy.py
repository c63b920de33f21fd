"""opencode's own compaction (docs/agents.md#opencode), a variant of the summarize family:
when a response's tokens reach the input the model takes less opencode's reserve, the
head becomes one summary and the newest turns are kept; and its prune, a variant of the
clear family, opt-in (`compaction.prune`)."""

from __future__ import annotations

from compaction_inspector.core.agents.opencode.overflow import OUTPUT_TOKEN_MAX
from compaction_inspector.core.strategies import clear, summarize
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.summarize import SummarizeOptions

NAME = "opencode"

STRATEGY = summarize.FAMILY.variant(
    NAME,
    "opencode",
    "opencode's overflow compaction: at the window less the output reserve, keep 25 % (2,000-15,000)",
    "opencode packages/opencode/src/session/overflow.ts, compaction.ts: overflow at the "
    "context less min(max output, 32,000), or at an input limit less reserved (min(20,000, "
    "max output)); on a window not opencode's, 32,000 for a model whose max output reaches "
    "it; preserve_recent_tokens 25 % of the usable window clamped to 2,000-15,000; tool "
    "outputs cut to 2,000 characters for the summary",
    lambda: SummarizeOptions(
        trigger_percent_less_output=100,
        trigger_reserve=OUTPUT_TOKEN_MAX,
        keep_percent=25,
        keep_min=2_000,
        keep_max=15_000,
        tool_output_chars=2_000,
    ),
)

PRUNE = clear.FAMILY.variant(
    "opencode-prune",
    "opencode prune",
    "opencode's prune: protect the newest 40,000 tokens of tool output, clear 20,000 or more",
    "opencode packages/opencode/src/session/compaction.ts prune (opt-in): skips the last 2 user "
    "turns, protects skill results and the newest 40,000 tokens of tool output (PRUNE_PROTECT), "
    "clears only if more than 20,000 tokens are freed (PRUNE_MINIMUM)",
    lambda: ClearOptions(
        keep_tokens=40_000, keep_turns=2, clear_at_least=20_000, exclude_tools=frozenset({"skill"})
    ),
)

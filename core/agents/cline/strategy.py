"""Cline's own compaction (docs/agents.md#cline), two variants of the summarize family, each
named for the Cline it is: `cline`, the current one (its SDK), and `cline-3`, the
auto-condense of Cline up to 3.85, whose task folders are read here."""

from __future__ import annotations

from compaction_inspector.core.agents.cline.transcript import FORMAT
from compaction_inspector.core.strategies import summarize
from compaction_inspector.core.strategies.summarize import SummarizeOptions

LEGACY = f"{FORMAT}-3"
MARGIN = 40_000  # what Cline 3 leaves free of a 200,000-token window (its usual margin)

STRATEGY = summarize.FAMILY.variant(
    FORMAT,
    "Cline",
    "Cline: at 0.9 of its input budget (0.9 of the window), keep the newest 20,000 tokens",
    "Cline 4.1 sdk/packages/core/src/extensions/context/compaction-shared.ts: 0.9 x the input "
    "budget, itself 0.9 x the window (81 %); keeps the newest 20,000 tokens; summary at most "
    "4,096 tokens; tool results cut to 2,000 characters for it (its target ratio 0.7 is not modelled)",
    lambda: SummarizeOptions(
        trigger_percent=81, keep_tokens=20_000, summary_tokens=4_096, tool_output_chars=2_000
    ),
)
LEGACY_STRATEGY = summarize.FAMILY.variant(
    LEGACY,
    "Cline 3",
    "Cline 3: past the window less its margin, summarize all but the first exchange",
    "Cline 3.85 src/core/context/context-management/context-window-utils.ts: compacts when the "
    "last request's tokens reach the window less 27,000 (64k), 30,000 (128k), 40,000 (200k), else "
    "less min(40,000, 20 %); its summarize_task keeps the first user message and reply "
    "(ContextManager.getNextTruncationRange, keep none). Its truncation without auto-condense is "
    "not modelled",
    lambda: SummarizeOptions(trigger_percent_less_output=100, trigger_reserve=MARGIN, keep_first=2),
)

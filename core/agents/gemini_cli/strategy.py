"""Gemini CLI's own compression (docs/agents.md#gemini-cli), a variant of the summarize
family: when the last prompt reaches half the model's token limit, the history but its
newest 30 % becomes one summary."""

from __future__ import annotations

from compaction_inspector.core.agents.gemini_cli.transcript import FORMAT
from compaction_inspector.core.strategies import summarize
from compaction_inspector.core.strategies.summarize import SummarizeOptions

STRATEGY = summarize.FAMILY.variant(
    FORMAT,
    "Gemini CLI",
    "Gemini CLI: at half the window, keep the newest 30 % of the history",
    "Gemini CLI 0.56 packages/core/src/context/chatCompressionService.ts: compresses at 0.5 x "
    "the token limit, keeps the newest 30 % (its cut of old tool responses to 30 lines is not modelled)",
    lambda: SummarizeOptions(trigger_percent=50, keep_history_percent=30),
)

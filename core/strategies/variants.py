"""Other agents' and APIs' compaction, each a variant of one family with its documented
defaults (docs/strategies.md names each number's source file).

A variant is its family's rule (`summarize`, `clear`) with the settings the agent ships;
everything else (flags, `compaction.yaml` keys, the app's form) comes from the family.
"""

from __future__ import annotations

from typing import Any

from compaction_inspector.core.strategies import clear, summarize
from compaction_inspector.core.strategies.clear import ClearOptions as C
from compaction_inspector.core.strategies.declaration import Strategy
from compaction_inspector.core.strategies.summarize import SummarizeOptions as S

# the results Claude Code's microcompact clears (file reads, shells, search, web fetch,
# edits), and the like tools of Codex and other agents
CLEARABLE_TOOLS = frozenset(
    {
        "Read", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Edit", "MultiEdit", "Write",
        "NotebookEdit", "BashOutput",
        "shell", "local_shell", "exec_command", "apply_patch", "read_file", "write_file",
        "edit_file", "grep", "glob", "list_dir", "web_fetch", "web_search", "bash",
    }
)  # fmt: skip

ANTHROPIC_MIN_TRIGGER = 50_000  # compact_20260112 refuses a trigger under this

# the other agents' and APIs' clearing
CLEARING: tuple[Strategy[Any], ...] = (
    clear.FAMILY.variant(
        "anthropic-context-editing",
        "Anthropic context editing",
        "Anthropic's clear_tool_uses edit: past 100,000 input tokens keep the newest 3 tool uses",
        "Anthropic API beta context-management-2025-06-27, clear_tool_uses_20250919: trigger 100,000 "
        "input tokens, keep 3 tool uses, no clear_at_least, no excluded tools; applied server-side "
        "to each request, the client keeps the full history (the placeholder's text is not documented)",
        lambda: C(trigger_tokens=100_000, keep_tool_uses=3, placeholder="[cleared]", persist=False),
        caveat="clear_tool_inputs (default false) is not modelled",
    ),
    clear.FAMILY.variant(
        "langchain-clear-tool-uses",
        "LangChain ClearToolUsesEdit",
        "LangChain's ClearToolUsesEdit: past 100,000 tokens keep the newest 3 tool results",
        "langchain ContextEditingMiddleware ClearToolUsesEdit: trigger 100,000, clear_at_least 0, "
        "keep 3, exclude_tools (), placeholder “[cleared]”; it edits the model request",
        lambda: C(trigger_tokens=100_000, keep_tool_uses=3, placeholder="[cleared]", persist=False),
    ),
    clear.FAMILY.variant(
        "openhands",
        "OpenHands masking",
        "OpenHands ObservationMaskingCondenser: mask observations outside the newest 100 events",
        "OpenHands ObservationMaskingCondenser: attention_window 100 events (messages here); "
        "observations older than the window are masked in the view sent, the events are kept",
        lambda: C(keep_messages=100, placeholder="<MASKED>", persist=False),
    ),
)

SUMMARIZING: tuple[Strategy[Any], ...] = (
    summarize.FAMILY.variant(
        "anthropic-compaction",
        "Anthropic compaction",
        "Anthropic's server-side compaction: at 150,000 input tokens all becomes one summary",
        "Anthropic API beta compact-2026-01-12, edit compact_20260112: trigger 150,000 input tokens "
        "(at least 50,000); no keep, so nothing but the summary survives",
        lambda: S(trigger_tokens=150_000),
        limits=lambda o: (
            f"the API's trigger is at least {ANTHROPIC_MIN_TRIGGER:,} input tokens, not {o.trigger_tokens:,}"
            if o.trigger_tokens is not None and o.trigger_tokens < ANTHROPIC_MIN_TRIGGER
            else None
        ),
    ),
    summarize.FAMILY.variant(
        "openai-compaction",
        "OpenAI compaction",
        "OpenAI Responses compaction: the person's messages, then one compaction item",
        "OpenAI Responses context_management compaction and POST /responses/compact: the user "
        "messages followed by one compaction item. compact_threshold has no default; 90 % of the "
        "window is used, the limit OpenAI's own CLI agent sets (model_auto_compact_token_limit)",
        lambda: S(trigger_percent=90, keep_user="all"),
    ),
    summarize.FAMILY.variant(
        "langchain-summarization",
        "LangChain summarization",
        "LangChain SummarizationMiddleware: keep the newest 20 messages, summarize the rest",
        "langchain SummarizationMiddleware: keep ('messages', 20), trim_tokens_to_summarize 4,000; "
        "trigger defaults to None (never), so the documented example's ('tokens', 4000) is used",
        lambda: S(trigger_tokens=4_000, keep_messages=20, summarize_tokens=4_000),
        caveat="its default trigger never fires; its example's 4,000 is used",
    ),
    summarize.FAMILY.variant(
        "goose",
        "Goose",
        "Goose: at 80 % of the window, summarize all but the latest user message",
        "Goose crates/goose/src/context_mgmt/mod.rs: GOOSE_AUTO_COMPACT_THRESHOLD 0.8; summarizes "
        "everything but the latest user text message",
        lambda: S(trigger_percent=80, keep_user="last"),
    ),
    summarize.FAMILY.variant(
        "aider",
        "Aider",
        "Aider: summarize the chat past max input / 16 (1,024-8,192), keep a tail under half of it",
        "Aider 0.86 aider/history.py: summarizes when the history exceeds max input / 16 clamped to "
        "1,024-8,192 tokens; keeps a tail under half that limit",
        lambda: S(
            trigger_percent=6.25,
            trigger_min=1_024,
            trigger_max=8_192,
            keep_percent=3.125,
            keep_min=512,
            keep_max=4_096,
        ),
    ),
    summarize.FAMILY.variant(
        "letta",
        "Letta",
        "Letta: at 90 % of the window, evict all but the newest 30 % of messages",
        "Letta 0.16 letta/constants.py: summarizes at 0.9 x the window, keeps the newest 30 % of "
        "messages; the summary capped at 50,000 characters",
        lambda: S(
            trigger_percent=90, keep_message_percent=30, summary_tokens=50_000 // summarize.CHARS_PER_TOKEN
        ),
    ),
    summarize.FAMILY.variant(
        "openhands-summarizing",
        "OpenHands summarizing",
        "OpenHands LLMSummarizingCondenser: past 100 events keep the first and the newest 48",
        "OpenHands LLMSummarizingCondenser (V0 defaults): max_size 100 events, keep_first 1; keeps "
        "max_size // 2 - keep_first - 1 = 48 newest events and summarizes the middle",
        lambda: S(trigger_messages=100, keep_first=1, keep_messages=48),
    ),
)

"""Where Claude Code compacts on its own (docs/agents.md): 13,000 tokens under its
effective window, the context window less the output it reserves, which is the model's
whole max output (32,000) up to 2.1.20 and min(max output, 20,000) from 2.1.21.
`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` can only lower that point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction_inspector.core.agents.claude_code import settings
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.own.autocompact import Count, Point, version

CLAUDE_CODE_BUFFER = 13_000  # AUTOCOMPACT_BUFFER_TOKENS: the point sits this far under the effective window
CLAUDE_CODE_MAX_OUTPUT = 32_000  # reserved whole up to 2.1.20
CLAUDE_CODE_RESERVE_CAP = 20_000  # the reserve's cap from 2.1.21
CLAUDE_CODE_CAPPED_FROM = (2, 1, 21)
CLAUDE_CODE_WINDOW = 200_000
CLAUDE_CODE_1M_WINDOW = 1_000_000


def claude_code_reserve(agent_version: Any) -> tuple[int, str]:
    """The output Claude Code reserves at this version, and why."""
    v = version(agent_version)
    if v is not None and v < CLAUDE_CODE_CAPPED_FROM:
        return (
            CLAUDE_CODE_MAX_OUTPUT,
            f"Claude Code {agent_version} reserves its whole max output (up to 2.1.20)",
        )
    shown = f"Claude Code {agent_version}" if v is not None else "Claude Code"
    return CLAUDE_CODE_RESERVE_CAP, f"{shown} reserves min(max output, 20,000) (from 2.1.21)"


CLAUDE_CODE_1M_MODELS = (
    # (model name prefix, from version, why): the changelog's 1M windows (docs/agents.md)
    ("claude-opus-4-7", (2, 1, 117), "Claude Code 2.1.117 computes Opus 4.7 against its 1M window"),
    ("claude-sonnet-5", (0,), "Sonnet 5 has a native 1M window"),
    ("claude-opus-5", (2, 1, 260), "Claude Code 2.1.260 compacts 1M Opus shortly before 1M"),
    ("claude-fable-5", (2, 1, 260), "Claude Code 2.1.260 compacts 1M Fable shortly before 1M"),
)


def claude_code_1m(model: Any, agent_version: Any) -> str | None:
    """Why this model at this version has a 1M window, or None when the changelog gives
    it none (a reported prompt past 200,000 still says so)."""
    if not isinstance(model, str):
        return None
    if model.endswith("[1m]"):
        return f"the model {model} has a 1M window"
    v = version(agent_version)
    for prefix, since, why in CLAUDE_CODE_1M_MODELS:
        if model.startswith(prefix) and (v is None or v >= since):
            return why
    return None


def claude_code_point(window: Window, at: int | None = None, pct_override: int | None = None) -> Point:
    """Claude Code's auto-compact point in `window` (its reserve already taken off):
    `at` when the user set one, else 13,000 under the effective window, lowered to
    `pct_override` % of the effective window when that is lower."""
    if at is not None:
        return Point(at, f"auto-compact at {at:,} (set)")
    point = window.usable - CLAUDE_CODE_BUFFER
    rule = (
        f"{CLAUDE_CODE_BUFFER:,} under the effective window of {window.usable:,} "
        f"({window.context_window:,} less {window.reserved_output:,} reserved for output)"
    )
    if pct_override is not None:
        lowered = window.usable * pct_override // 100
        if lowered < point:
            point, rule = lowered, f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE {pct_override} % of {window.usable:,}"
    return Point(point if point > 0 else None, rule)


def claude_code_count(pre_tokens: int, reported: int | None, point: Point) -> Count:
    """What Claude Code counted before it compacted (`preTokens`, its own count): the
    prompt last reported and what was added since, where a response reported one."""
    if reported is None or reported > pre_tokens:
        return Count("Claude Code", (("its own count", pre_tokens),), (), point)
    return Count("Claude Code", (("reported", reported), ("added since", pre_tokens - reported)), (), point)


# from this version its count walks back over the lines one response was split into
# (parallel tool calls), so what follows the first of them is estimated (2.1.88's source)
CLAUDE_CODE_WALKS_BACK = (2, 1, 88)


def claude_code_estimates(
    messages: Sequence[Message], rough: Sequence[int], agent_version: Any
) -> dict[int, int]:
    """What Claude Code counts against its point before the request `messages[:end]`, by
    `end` (`tokenCountWithEstimation`, services/compact/autoCompact.ts): the last response's
    reported usage (input, cache writes and reads, and output) plus a rough estimate
    (`rough`, each message's characters / 4) of the messages after it; from 2.1.88 after
    the first line of that response. None before a first response in its window (a
    compaction starts one): it estimates the whole history then, which is not read here."""
    walks_back = (version(agent_version) or (0,)) >= CLAUDE_CODE_WALKS_BACK
    out: dict[int, int] = {}
    base: int | None = None  # the last response's usage
    since = 0  # rough tokens after it
    first: dict[str, int] = {}  # each response's first line, for the walk back
    line_rough: list[int] = []  # rough tokens of each message since the window began
    for end, (m, n) in enumerate(zip(messages, rough, strict=True), start=1):
        if m.is_compact_boundary:
            base, since, first, line_rough = None, 0, {}, []
            continue
        line_rough.append(n)
        if m.role == "assistant" and m.usage is not None and m.usage.prompt_tokens:
            k = first.setdefault(m.id or f"#{end}", len(line_rough) - 1)
            base = m.usage.prompt_tokens + m.usage.output_tokens
            since = sum(line_rough[k + 1 :]) if walks_back else 0
        else:
            since += n
        if base is not None:
            out[end] = base + since
    return out


CLAUDE_CODE_IDLE_FROM = (2, 1, 299)  # announced then; from 2.1.286 only behind a server flag
CLAUDE_CODE_IDLE_TOKENS = 200_000  # the context an idle compaction waits for, unless set
CLAUDE_CODE_IDLE_MINUTES = 54  # idle this long (0.9 of the prompt cache's hour), it compacts


@immutable()
class Idle:
    """Whether Claude Code compacts a session left idle, at what context, and why."""

    tokens: int | None  # None: it does not
    why: str


def claude_code_idle(agent_version: Any, seen: bool, own: settings.ClaudeSettings | None) -> Idle:
    """Idle compaction: a context of 200,000 (`CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS`, at
    least 100,000) idle 54 minutes is compacted before the prompt cache expires. On from
    2.1.299 (changelog), or where the session shows one (`seen`: the server's flag was on
    for it from 2.1.286); `idleCompaction: false` turns it off."""
    if own is not None and own.idle_off is not None:
        return Idle(None, f"{own.idle_off.told(settings.IDLE)} turns idle compaction off")
    v = version(agent_version)
    if not seen and (v is None or v < CLAUDE_CODE_IDLE_FROM):
        return Idle(None, "idle compaction is on from Claude Code 2.1.299")
    since = "the session compacted while idle" if seen else f"Claude Code {agent_version} compacts while idle"
    if own is not None and own.idle_tokens is not None:
        return Idle(own.idle_tokens.value, f"{since}, at {own.idle_tokens.told(settings.IDLE_TOKENS)}")
    return Idle(CLAUDE_CODE_IDLE_TOKENS, f"{since}, at {CLAUDE_CODE_IDLE_TOKENS:,}")

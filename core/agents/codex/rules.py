"""Where Codex compacts on its own (docs/agents.md): at `model_auto_compact_token_limit`
when one is configured, never above 90 % of the model's raw window (the window a rollout
records is already 95 % of the raw one), and its own count term by term."""

from __future__ import annotations

import math
import os
import tomllib
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compaction_inspector.core.files import read_text
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import MAX_COUNT, Check, Compaction, Message, immutable
from compaction_inspector.core.own.autocompact import Count, Point, version

CODEX_EFFECTIVE_SHARE = 0.95  # effective_context_window_percent: the window a rollout records
CODEX_LIMIT_SHARE = 0.9  # of the raw window: the highest limit Codex uses
# Encrypted reasoning per 100 reported reasoning tokens where a rollout lacks the encrypted
# content: public rollouts that hold it fit 110-130 (docs/agents.md); the middle of that.
CODEX_REASONING_PER_100 = 120
CODEX_REASONING_SPREAD = (110, 130)  # what public rollouts fit (docs/agents.md)
# From 0.144.1 a turn's start resets "the server's usage includes reasoning" before its check
# (openai/codex#32483), so reasoning the server already counted is counted again
CODEX_COUNTED_TWICE_FROM = (0, 144, 1)


def codex_effective_window(raw: int) -> int:
    """The window a rollout records for a model's raw window (`model_context_window`)."""
    return raw * round(CODEX_EFFECTIVE_SHARE * 100) // 100


def codex_raw_window(recorded: int) -> int:
    """The model's raw window from the effective one a rollout records."""
    return round(recorded / CODEX_EFFECTIVE_SHARE)


def codex_limit(
    window: Window, configured: int | None = None, source: str = "set", raw: int | None = None
) -> Point:
    """Codex's auto-compact limit in `window` (the effective window a rollout records):
    the configured limit, never above 90 % of the raw window (`raw` when the user's
    config gives it, else the effective window / 0.95)."""
    given = raw is not None
    raw = raw if raw is not None else codex_raw_window(window.context_window)
    cap = int(raw * CODEX_LIMIT_SHARE)
    ceiling = f"90 % of the raw window {raw:,}" + (
        f" ({source})" if given else f" ({window.context_window:,} / 0.95)"
    )
    if configured is None:
        return Point(cap, ceiling)
    if configured > cap:
        return Point(cap, f"{ceiling}: model_auto_compact_token_limit {configured:,} ({source}) is above it")
    return Point(configured, f"model_auto_compact_token_limit {configured:,} ({source})")


# model_auto_compact_token_limit_scope (0.154 on): "total" compares the whole count with the
# limit; "body_after_prefix" what the window added since its first request's input, with the
# whole window as a hard cap (core/src/session/context_window.rs)
TOTAL, BODY_AFTER_PREFIX = "total", "body_after_prefix"
SCOPE_KEY = "model_auto_compact_token_limit_scope"
LIMIT_KEY, WINDOW_KEY = "model_auto_compact_token_limit", "model_context_window"
CODEX_SCOPES = (TOTAL, BODY_AFTER_PREFIX)


def codex_scope_limit(
    scope: str,
    window: Window,
    configured: int | None = None,
    source: str = "set",
    raw: int | None = None,
) -> Point:
    """The limit under `scope`: on the whole count, `codex_limit`; on the body
    (`body_after_prefix`), a configured limit as it is, not held under 90 % of the raw
    window (the window caps the whole count instead), else that 90 %."""
    if scope == BODY_AFTER_PREFIX and configured is not None:
        return Point(configured, f"model_auto_compact_token_limit {configured:,} ({source})")
    return codex_limit(window, configured, source, raw)


def codex_scoped(body: Point, prefill: int | None, window: Window, where: str = "set") -> Point:
    """Where the whole count compacts under `body_after_prefix`: the window's first
    request's input (`prefill`) and the body's limit, at most the whole window the rollout
    records; only that window where nothing was answered in it yet."""
    cap = window.context_window
    scope = f"model_auto_compact_token_limit_scope body_after_prefix ({where})"
    if prefill is None or body.tokens is None:
        return Point(cap, f"the whole window {cap:,} ({scope}: no response in this window yet)")
    at = min(prefill + body.tokens, cap)
    rule = f"{body.tokens:,} past the window's first request of {prefill:,} ({body.rule}; {scope})"
    return Point(at, rule + (f", held to the whole window {cap:,}" if at == cap else ""))


def codex_prefills(messages: Sequence[Message]) -> list[int | None]:
    """[i]: the input of the first response in the window the request messages[:i] is in
    (since the last compaction), as the rollout reports it; None before one."""
    out: list[int | None] = [None]
    current: int | None = None
    for m in messages:
        if m.is_compact_boundary:
            current = None
        elif current is None and m.usage is not None:
            current = m.usage.prompt_tokens
        out.append(current)
    return out


@immutable()
class CodexSettings:
    """What the user's Codex `config.toml` says of compaction, and where each value was
    read: the top level, or the profile it names as its default (`profile`), whose keys
    win (`in_profile`)."""

    path: Path | None  # None: no config.toml, only what the session says
    auto_compact_token_limit: int | None
    context_window: int | None
    profile: str | None = None  # the profile config.toml names as its default, where it has one
    scope: str | None = None  # model_auto_compact_token_limit_scope
    in_profile: frozenset[str] = frozenset()  # the keys that profile set (the rest: the top level)
    # the input of the first response in the session's last window (`codex_prefills`),
    # which a body_after_prefix limit counts from; filled in for the session
    prefill: int | None = None
    refused: tuple[str, ...] = ()  # the file or each value that could not be used, and why

    def where(self, key: str) -> str:
        """Where `key`'s value was read: the file, and the profile where that set it."""
        if self.path is None:
            return "no config.toml"
        return f"{self.path} [profiles.{self.profile}]" if key in self.in_profile else str(self.path)


def codex_settings(environ: dict[str, str] | None = None) -> CodexSettings | None:
    """`$CODEX_HOME/config.toml`, else `~/.codex/config.toml`; None where there is no
    such file (Codex's own defaults apply). A file that cannot be read or is not TOML,
    and each value Codex would not take, is named in `refused` and left out."""
    env = os.environ if environ is None else environ
    home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path.home() / ".codex"
    path = home / "config.toml"
    refused: list[str] = []
    try:
        data = tomllib.loads(read_text(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return CodexSettings(path, None, None, refused=(f"{path} not read: {exc.strerror or exc}",))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        return CodexSettings(path, None, None, refused=(f"{path} not used: not TOML ({exc})",))

    def number(table: object, key: str, where: str) -> int | None:
        value = table.get(key) if isinstance(table, dict) else None
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT:
            return value
        refused.append(f"{path}: {where}{key} of {str(value)[:40]!r} not used: not a whole number of tokens")
        return None

    def scope(table: object, where: str) -> str | None:
        value = table.get(SCOPE_KEY) if isinstance(table, dict) else None
        if value is None or value in CODEX_SCOPES:
            return value if isinstance(value, str) else None
        taken = ", ".join(CODEX_SCOPES)
        refused.append(f"{path}: {where}{SCOPE_KEY} of {str(value)[:40]!r} not used: not one of {taken}")
        return None

    keys = (LIMIT_KEY, WINDOW_KEY)
    name = data.get("profile")
    profiles = data.get("profiles")
    chosen = profiles.get(name) if isinstance(name, str) and isinstance(profiles, dict) else None
    inside = f"[profiles.{name}] " if chosen is not None else ""
    own = [number(chosen, k, inside) for k in keys]
    top = [number(data, k, "") for k in keys]
    limit, window = (mine if mine is not None else theirs for mine, theirs in zip(own, top, strict=True))
    mine = scope(chosen, inside)
    in_profile = frozenset(k for k, v in zip((*keys, SCOPE_KEY), (*own, mine), strict=True) if v is not None)
    profile = name if chosen is not None else None
    return CodexSettings(
        path, limit, window, profile, mine or scope(data, ""), in_profile, refused=tuple(refused)
    )


@immutable()
class ReasoningRate:
    """What stands for a reasoning item whose encrypted content the rollout lacks:
    `per_100` encrypted tokens per 100 reasoning tokens its response reported, and where
    that figure comes from."""

    per_100: int
    source: str
    # where it is neither set nor fitted: the range public rollouts fit, per 100
    spread: tuple[int, int] | None = None


def codex_reasoning_rate(messages: Sequence[Message], set_to: int | None = None) -> ReasoningRate:
    """The setting when given; else fitted on the rollout's own reasoning items that hold
    both their encrypted content and their response's reported tokens; else the middle
    of what public rollouts fit."""
    if set_to is not None:
        return ReasoningRate(set_to, f"{set_to} per 100 reasoning tokens (set)")
    fitted = _fitted(messages)
    encrypted, reported, responses = sum(e for e, _ in fitted), sum(n for _, n in fitted), len(fitted)
    if reported:
        per_100 = max(1, round(100 * encrypted / reported))
        return ReasoningRate(per_100, f"{per_100} per 100 reasoning tokens, fitted on {responses} responses")
    low, high = CODEX_REASONING_SPREAD
    return ReasoningRate(
        CODEX_REASONING_PER_100,
        f"{CODEX_REASONING_PER_100} per 100 reasoning tokens (public rollouts fit {low}-{high})",
        CODEX_REASONING_SPREAD,
    )


def _fitted(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """(encrypted, reported) of each response that holds both for all its reasoning items."""
    held: dict[str | None, list[int | None]] = {}  # each response's encrypted items
    said: dict[str | None, int] = {}  # ... and the reasoning tokens it reported
    for m in messages:
        if m.reasoning is not None:
            held.setdefault(m.id, []).append(m.reasoning.encrypted)
            said[m.id] = said.get(m.id, 0) + m.reasoning.reported
    return [
        (sum(e for e in items if e is not None), said[k])
        for k, items in held.items()
        if said[k] and None not in items
    ]


def codex_reasoning_bound(messages: Sequence[Message], set_to: int | None = None) -> list[int]:
    """[i]: the most Codex's third term can be for any request made of messages[:i]'s
    messages (a history a replay rebuilt from some of them): every reasoning item among
    them, at the highest rate `codex_reasoning_rate` could fit on any of them (a rate fitted
    on several responses is their average, at most the largest)."""
    ratios = [math.ceil(100 * encrypted / reported) for encrypted, reported in _fitted(messages)]
    per_100 = set_to if set_to is not None else max([CODEX_REASONING_PER_100, *ratios])
    bound, total = [0], 0
    for m in messages:
        if m.reasoning is not None:
            held = m.reasoning.encrypted
            total += held if held is not None else math.ceil(m.reasoning.reported * per_100 / 100)
        bound.append(total)
    return bound


def codex_reasoning(messages: Sequence[Message], rate: ReasoningRate) -> tuple[list[int], list[int]]:
    """Codex's third term for every request `messages[:i]`: the encrypted reasoning
    before its last user message since the last compaction, as ([i] read from the
    encrypted content's length, [i] estimated from reported reasoning tokens)."""
    read, estimated = [0], [0]
    before = [0, 0]  # before the last user message
    since = [0, 0]  # after it
    for m in messages:
        if m.is_compact_boundary:
            before, since = [0, 0], [0, 0]
        elif m.is_human:
            before = [before[0] + since[0], before[1] + since[1]]
            since = [0, 0]
        elif m.reasoning is not None:
            if m.reasoning.encrypted is not None:
                since[0] += m.reasoning.encrypted
            else:
                since[1] += m.reasoning.reported * rate.per_100
        read.append(before[0])
        estimated.append(-(-before[1] // 100))
    return read, estimated


def codex_counts(
    messages: Sequence[Message],
    checks: Sequence[Check],
    point: Point,
    rate: ReasoningRate,
    point_in: Callable[[int], Point | None] | None = None,
    compactions: Sequence[Compaction] = (),
    agent_version: Any = None,
    point_for: Callable[[Check], Point] | None = None,
) -> list[Count]:
    """Codex's count at each check the rollout records, term by term (docs/agents.md),
    against `point`, or `point_in(window)` for a check's own window (a model switch's,
    and the checks before it). Where the reasoning rate is the documented guess, the
    rollout's own earlier automatic `compactions` bound it for the checks after them
    (`codex_bounded_rates`). From 0.144.1 a check the reasoning term took over the
    limit says it was counted twice (`counted_twice`). `point_for` gives a check's own
    point where it moves from window to window (`codex_scoped`)."""
    read, estimated = codex_reasoning(messages, rate)
    # the term at 100 per 100, which a bounded rate scales: read only where a bound can apply
    bounded = bool(compactions) and rate.spread is not None
    raw = codex_reasoning(messages, ReasoningRate(100, ""))[1] if bounded else []
    rates = (
        codex_bounded_rates(messages, checks, point, rate, compactions, read, raw, point_for)
        if bounded
        else [rate] * len(checks)
    )
    out = []
    for c, at_rate in zip(checks, rates, strict=True):
        at = point_in(c.window) if point_in is not None and c.window is not None else None
        guess = estimated[c.index] if at_rate is rate else -(-raw[c.index] * at_rate.per_100 // 100)
        parts = [("reported", c.reported), ("new items", c.new_items)]
        guessed: tuple[str, ...] = ()
        if guess:
            parts.append(("reasoning", read[c.index] + guess))
            guessed = ("reasoning",)
        elif read[c.index]:
            parts.append(("reasoning", read[c.index]))
        note = at_rate.source if guessed else ""
        switch = c.when == "model switch"  # Codex compacts there only over the new limit
        spread = None
        if guessed and at_rate.spread is not None:  # the estimate scales with the rate
            fixed = sum(t for name, t in parts if name != "reasoning") + read[c.index]
            spread = (
                fixed + round(guess * at_rate.spread[0] / at_rate.per_100),
                fixed + round(guess * at_rate.spread[1] / at_rate.per_100),
            )
        base = point_for(c) if point_for is not None else point
        count = Count("Codex", tuple(parts), guessed, at or base, c.when, c.index, note, switch, spread)
        out.append(counted_twice(count, agent_version))
    return out


def counted_twice(count: Count, agent_version: Any) -> Count:
    """`count`, saying so where Codex at `agent_version` (0.144.1 on) compacts only
    because its reasoning term adds what the server's usage already holds: at a turn's
    start it resets the flag that says so (openai/codex#32483); mid-turn it keeps the
    flag the server left unset, which a 0.148 rollout in openai/codex#39767 shows at 62
    of its 76 compactions."""
    v = version(agent_version)
    reasoning = dict(count.parts).get("reasoning", 0)
    point = count.point.tokens
    if v is None or v < CODEX_COUNTED_TWICE_FROM or not reasoning or point is None or not count.fires:
        return count
    single = count.total - reasoning
    if single >= point:
        return count
    why = (
        "its turn's start resets the flag that says the server counted it (openai/codex#32483)"
        if count.when == "pre-turn"
        else "the server's usage does not say it holds it (openai/codex#39767)"
    )
    return replace(
        count,
        decided=f"the reasoning decided it: Codex {agent_version} adds it on top of the server's usage, "
        f"which already holds it, as {why}; counted once, {single:,} < {point:,}",
    )


def codex_bounded_rates(
    messages: Sequence[Message],
    checks: Sequence[Check],
    point: Point,
    rate: ReasoningRate,
    compactions: Sequence[Compaction],
    read: Sequence[int],
    raw: Sequence[int],
    point_for: Callable[[Check], Point] | None = None,
) -> list[ReasoningRate]:
    """The rate each check counts reasoning at. Where `rate` is the documented guess (it
    has a range), each earlier automatic compaction of the rollout bounds it: Codex
    compacted at its last check before it, so its count had reached the limit there,
    and not at the check before, so it was under it then. The guess and its range are
    moved into those bounds for the checks after that compaction, and say so; bounds
    that contradict each other are not used. `read` and `raw` are `codex_reasoning`'s
    terms, the second at 100 per 100."""

    def limit_at(check: Check) -> int | None:
        return (point_for(check) if point_for is not None else point).tokens

    if rate.spread is None or point.tokens is None or not compactions:
        return [rate] * len(checks)
    lows: list[tuple[int, float, int]] = []  # (compaction index, least rate, its line)
    highs: list[tuple[int, float]] = []  # (compaction index, rate it stays under)
    ends = [k.index for k in checks]
    segment_start = -1
    for c in compactions:
        j = bisect_right(ends, c.index) - 1
        fired = checks[j] if j >= 0 and checks[j].index > segment_start else None
        limit = limit_at(fired) if fired is not None else None
        usable = fired is not None and fired.when != "model switch" and raw[fired.index]
        if c.trigger == "auto" and fired is not None and limit is not None and usable:
            lows.append(
                (
                    c.index,
                    100 * (limit - fired.reported - fired.new_items - read[fired.index]) / raw[fired.index],
                    messages[c.index].line or 0,
                )
            )
            before = checks[j - 1] if j > 0 and checks[j - 1].index > segment_start else None
            limit = limit_at(before) if before is not None and before.when != "model switch" else None
            if before is not None and limit is not None and raw[before.index]:
                highs.append(
                    (
                        c.index,
                        100
                        * (limit - before.reported - before.new_items - read[before.index])
                        / raw[before.index],
                    )
                )
        segment_start = c.index
    out = []
    for k in checks:
        least = [(r, line) for at, r, line in lows if at < k.index]
        most = [r for at, r in highs if at < k.index]
        low = math.ceil(max(r for r, _ in least)) if least else None
        high = math.ceil(min(most)) - 1 if most else None  # the rate stays under it
        if low is None or (high is not None and low > high):
            out.append(rate)
            continue
        top = high if high is not None else max(low, rate.spread[1])
        spread = (max(rate.spread[0], low), min(rate.spread[1], top))
        if spread[0] > spread[1]:  # the documented range does not hold here: the bounds do
            spread = (low, top)
        per_100 = min(max(rate.per_100, spread[0]), spread[1])
        if (per_100, spread) == (rate.per_100, rate.spread):
            out.append(rate)
            continue
        lines = ", ".join(f"{line:,}" for _, line in least)
        out.append(
            ReasoningRate(
                per_100,
                f"{per_100} per 100 reasoning tokens ({spread[0]}-{spread[1]}: what its compaction at line "
                f"{lines} leaves possible)",
                spread,
            )
        )
    return out

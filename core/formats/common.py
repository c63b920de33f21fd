"""What the format loaders share: reading JSON lines with diagnostics, and turning
Anthropic-style content (a string or a list of blocks) into our blocks."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from compaction_inspector.core.model import (
    MAX_COUNT,
    Block,
    Compaction,
    Diagnostic,
    Message,
    Usage,
    canonical_json,
)

LOADER_VERSION = "5"  # bump when a loader changes which messages it produces


class LoadError(Exception):
    """The file cannot be read as a transcript; the message says why."""


# orjson's own bounds, kept by the lenient decoder too: no integer past 64 bits, no NaN
MAX_DIGITS = 20
MAX_DEPTH = 256  # deeper than any transcript nests, shallow enough for every recursive reader
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits")
    return int(digits)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_LENIENT = json.JSONDecoder(strict=False, parse_int=_int, parse_constant=_constant)


def loads(text: str) -> Any:
    """orjson for speed; for what it refuses, the standard decoder, lenient about raw
    control characters in strings (a NUL a tool printed), so such a line is kept. Either
    way the value holds no lone surrogate (replaced by U+FFFD: it could not be written
    as UTF-8), no integer past 64 bits, no NaN, and nests at most MAX_DEPTH deep; a value
    that breaks a bound raises ValueError."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = _LENIENT.decode(text)
        if _SURROGATE_ESCAPE.search(text):
            value = without_surrogates(value)
    # a value can nest only as deep as it has brackets: most lines need no walk
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def without_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its text replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def _depth(value: Any) -> int:
    """How deep `value` nests, walked without recursion; stops past MAX_DEPTH."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                break
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def count(value: Any) -> int | None:
    """`value` as a count from a file: a whole number from 0 to MAX_COUNT, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


@dataclass
class Records:
    """JSON values read from a JSONL file, with what could not be read."""

    items: Iterable[tuple[int, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def stream_jsonl(lines: Iterable[bytes | str], records: Records, first: int = 1) -> Iterator[tuple[int, Any]]:
    """Parse lines as they are read, so only one raw line is held at a time; what
    cannot be read becomes a diagnostic in `records`. `first`: the first line's number
    (a file read on from the middle)."""
    for number, raw in enumerate(lines, start=first):
        if not raw.strip():
            continue
        if isinstance(raw, str):
            line = raw
        elif number == first and raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark
            line = raw[3:].decode("utf-8", errors="replace")
        else:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw.decode("utf-8", errors="replace")
                records.diagnostics.append(Diagnostic(number, "invalid UTF-8 replaced with U+FFFD"))
        try:
            yield number, loads(line)
        except (ValueError, RecursionError) as exc:
            records.diagnostics.append(Diagnostic(number, f"skipped: not valid JSON ({_short(exc)})"))


def read_jsonl(text: str, first: int = 1) -> Records:
    """Every line of an in-memory JSONL text, parsed; `first` is its first line's number."""
    records = Records()
    records.items = list(stream_jsonl(text.splitlines(), records, first))
    return records


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


class Skipped:
    """Counts lines that are not conversation, reported once per kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, kind: str) -> None:
        self.counts[kind] += 1

    def diagnostics(self) -> list[Diagnostic]:
        return [
            Diagnostic(None, f"skipped {n} {kind} line{'s' if n != 1 else ''} (not conversation)")
            for kind, n in sorted(self.counts.items())
        ]


class SyntheticIds:
    """Fresh ids for formats whose assistant messages carry none."""

    def __init__(self, prefix: str = "synthetic") -> None:
        self.prefix = prefix
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"{self.prefix}-{self.n}"


def as_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(value)


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def tool_arguments(raw: Any) -> Any:
    """A tool call's arguments: JSON text parsed when it parses, else kept as it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw if raw is not None else {}


def result_text(content: Any) -> str:
    """A tool result's content as text: a string, or a list of text (and image) blocks."""
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict):
                if item.get("type") == "text":
                    parts.append(as_str(item.get("text")))
                elif item.get("type") in ("image", "document"):
                    parts.append(f"[{item.get('type')}]")
                else:
                    parts.append(as_str(item))
            else:
                parts.append(as_str(item))
        return "\n".join(parts)
    return as_str(content)


def parse_block(raw: Any) -> Block:
    """One Anthropic-style content block; anything unknown is kept as its JSON text."""
    if isinstance(raw, str):
        return Block("text", text=raw)
    if not isinstance(raw, dict):
        return Block("text", text=as_str(raw))
    kind = raw.get("type")
    if kind == "text":
        return Block("text", text=as_str(raw.get("text")))
    if kind == "thinking":
        return Block("thinking", text=as_str(raw.get("thinking")))
    if kind == "redacted_thinking":
        return Block("thinking", text="")
    if kind in ("tool_use", "server_tool_use"):
        return Block.tool_use(as_str(raw.get("id")), as_str(raw.get("name")), raw.get("input", {}))
    if kind == "tool_result":
        return Block.tool_result(
            as_str(raw.get("tool_use_id")),
            result_text(raw.get("content")),
            is_error=raw.get("is_error") is True,
        )
    if kind in ("image", "document"):
        return Block(kind)
    return Block("text", text=as_str(raw))


def parse_content(content: Any) -> tuple[Block, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (Block("text", text=content),) if content else ()
    if isinstance(content, list):
        return tuple(parse_block(item) for item in content)
    return (Block("text", text=as_str(content)),)


def parse_usage(raw: Any) -> Usage | None:
    """Anthropic's usage object, or OpenAI chat's (`prompt_tokens`, `completion_tokens`)."""
    if not isinstance(raw, dict):
        return None

    def number(key: str) -> int:
        return count(raw.get(key)) or 0

    if "prompt_tokens" in raw and "input_tokens" not in raw:
        return Usage(input_tokens=number("prompt_tokens"), output_tokens=number("completion_tokens"))
    written = raw.get("cache_creation")
    return Usage(
        input_tokens=number("input_tokens"),
        cache_creation_input_tokens=number("cache_creation_input_tokens"),
        cache_read_input_tokens=number("cache_read_input_tokens"),
        output_tokens=number("output_tokens"),
        cache_write_1h_tokens=count(written.get("ephemeral_1h_input_tokens")) or 0
        if isinstance(written, dict)
        else 0,
    )


def input_holds_cache(reports: Iterable[tuple[int, int]]) -> bool:
    """Whether an agent's reported input holds what its cache read and wrote, or only the
    rest (each report: its input, its cache's reads and writes): a session where a request
    reports less input than its cache shows the second, and is read so throughout."""
    return not any(given < cached for given, cached in reports)


def iter_dicts(records: Records) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records that are JSON objects; anything else is reported and skipped."""
    for number, value in records.items:
        if isinstance(value, dict):
            yield number, value
        else:
            records.diagnostics.append(Diagnostic(number, "skipped: not a JSON object"))


def name_compactions(messages: list[Message], compactions: Sequence[Compaction]) -> None:
    """Each compaction's marker says what it did, as the transcript measured it: "auto
    compaction · 156,699 before → 66,549 after, measured" (the context the agent
    recorded before it, the prompt the first response after it reported); a
    microcompaction: "microcompact · 29 tool results cleared · 147,416 before → 112,374
    after, measured" (the prompts reported either side: its own figures are estimates)."""
    # where prompts were reported and compactions made, found once: each marker looks up
    # its neighbours by bisection (a scan from each would be quadratic in the file)
    reported = [i for i, m in enumerate(messages) if m.usage is not None and m.usage.prompt_tokens]
    boundaries = [i for i, m in enumerate(messages) if m.is_compact_boundary]

    def prompt(i: int) -> int:
        usage = messages[i].usage
        return usage.prompt_tokens if usage is not None else 0

    for c in compactions:
        after = c.post_tokens
        k = bisect_right(reported, c.index)
        answered = reported[k] if k < len(reported) else None
        if answered is not None:
            after = prompt(answered)
        b = bisect_right(boundaries, c.index)
        full_between = b < len(boundaries) and (answered is None or boundaries[b] <= answered)
        told = f"{after:,} after, measured" if after is not None else "after: not measured"
        if c.kind == "microcompact":
            k = bisect_left(reported, c.index)
            before = f"{prompt(reported[k - 1]):,} before" if k else "before: not measured"
            if full_between:
                told = "a compaction followed before the next request"
            cleared = f"{len(c.cleared):,} tool result{'s' if len(c.cleared) != 1 else ''} cleared"
            text = f"microcompact · {cleared} · {before} → {told}"
        else:
            before = f"{c.pre_tokens:,} before" if c.pre_tokens is not None else "before: not recorded"
            text = f"{c.trigger or 'unknown'} compaction · {before} → {told}"
        messages[c.index] = replace(messages[c.index], blocks=(Block("text", text=text),))


def model_of(m: Message, metadata: Mapping[str, Any]) -> str | None:
    """The model that answered: the response's own, else the session's."""
    return answered_by(m.usage, metadata)


def answered_by(usage: Usage | None, metadata: Mapping[str, Any]) -> str | None:
    """The model a response's usage names, else the session's (`metadata`)."""
    named = usage.model if usage is not None and usage.model else metadata.get("model")
    return named if isinstance(named, str) else None

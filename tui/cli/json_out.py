"""JSON on stdout, as every `--json` prints it: written as it is made, and inert on a
terminal."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from itertools import islice
from typing import Any

import orjson

# JSON escapes C0 controls itself; these it would leave raw: C1 controls (U+009B is a CSI
# to some terminals), bidi overrides, and lone surrogates (which UTF-8 cannot carry)
JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ud800-\udfff]")


JSON_BATCH = 1 << 20  # characters of encoded JSON escaped and written together


JSON_SPLIT_DEPTH = 2  # containers this shallow are written member by member


JSON_ARRAY_BATCH = 256  # members of a deeper array encoded together


def print_json(value: Any) -> None:
    """`value` as JSON on stdout, laid out as `json.dumps(indent=2)` lays it out, every
    character a terminal could obey written as its `\\uXXXX` escape: the same JSON to a
    parser, inert on a screen."""
    # written as it is encoded, never whole: a large session's JSON is tens of megabytes;
    # an escape never spans pieces, as a piece always ends outside a string
    batch: list[str] = []
    size = 0
    for piece in _json_pieces(value):
        batch.append(piece)
        size += len(piece)
        if size >= JSON_BATCH:
            sys.stdout.write(_inert("".join(batch)))
            batch.clear()
            size = 0
    sys.stdout.write(_inert("".join(batch)) + "\n")


def _inert(text: str) -> str:
    """`text` with every character of `JSON_UNSAFE` written as its escape. All of them but
    DEL are past ASCII, and a string knows it is ASCII without a scan: most output is."""
    if text.isascii() and "\x7f" not in text:
        return text
    return JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _json_pieces(value: Any, depth: int = 0) -> Iterator[str]:
    """The JSON of `value` in pieces: iterators as arrays, member by member as they are
    made; the shallow containers and those holding an iterator member by member; each
    other member encoded whole, in C (orjson), and indented to its place."""
    split = isinstance(value, Iterator) or (
        isinstance(value, dict | list)
        and bool(value)
        and (depth < JSON_SPLIT_DEPTH or _holds_iterator(value))
    )
    if not split:
        yield _encoded(value).replace("\n", "\n" + "  " * depth)  # a JSON string holds no newline
        return
    if not isinstance(value, dict):
        yield from _array_pieces(iter(value), depth)
        return
    pad = "\n" + "  " * (depth + 1)
    for k, (key, member) in enumerate(value.items()):  # a dict split holds members
        # a key as json writes it: non-string keys become strings
        name = json.dumps({key: 0}, ensure_ascii=False)[1:-4] + ": "
        yield ("," if k else "{") + pad + name
        yield from _json_pieces(member, depth + 1)
    yield "\n" + "  " * depth + "}"


def _array_pieces(members: Iterator[Any], depth: int) -> Iterator[str]:
    """An array at `depth`, member by member; where its members are deep enough to be
    encoded whole, `JSON_ARRAY_BATCH` of them at a time in one call of orjson, which lays
    out a list's members as they would be one by one (not where one holds an iterator)."""
    pad = "\n" + "  " * (depth + 1)
    end = "\n" + "  " * depth + "]"
    whole_members = depth + 1 >= JSON_SPLIT_DEPTH
    empty = True
    while batch := list(islice(members, JSON_ARRAY_BATCH)):
        held = not whole_members or any(isinstance(m, Iterator) for m in batch)
        whole = None if held else _orjson(batch)
        if whole is not None:  # "[", each member after its pad, "," between them, then `end`
            yield ("[" if empty else ",") + whole.replace("\n", "\n" + "  " * depth)[1 : -len(end)]
            empty = False
            continue
        for member in batch:
            yield ("[" if empty else ",") + pad
            empty = False
            yield from _json_pieces(member, depth + 1)
    yield "[]" if empty else end


def _holds_iterator(value: dict[Any, Any] | list[Any]) -> bool:
    return any(isinstance(v, Iterator) for v in (value.values() if isinstance(value, dict) else value))


def _encoded(value: Any) -> str:
    found = _orjson(value)
    return found if found is not None else json.dumps(_listed(value), ensure_ascii=False, indent=2)


def _orjson(value: Any) -> str | None:
    """`value` as orjson writes it, indented by two; None where it cannot: an iterator
    inside, an integer past 64 bits."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return None


def _listed(value: Any) -> Any:
    """`value` with every iterator in it made a list (untouched when orjson failed before
    reaching one: it reads none)."""
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    if isinstance(value, list | Iterator):
        return [_listed(v) for v in value]
    return value

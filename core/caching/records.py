"""A record kept in the cache as JSON and read back as the same (`compare`'s rows): its
dataclasses by name, of the classes the reader allows, with their fields; a Decimal, a
datetime and a tuple tagged, so each comes back as it was. Anything else in what is read
(a class not allowed, a field not its own, a value of no such shape) is refused with
`ValueError`: what comes back is what was kept, or nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

_CLASS, _DECIMAL, _TIME, _TUPLE = "@", "$decimal", "$time", "$tuple"
_TAGS = frozenset({_CLASS, _DECIMAL, _TIME, _TUPLE})


def encoded(value: Any) -> Any:
    """`value` as JSON holds it."""
    kind: type = type(value)
    names = _fields(kind)
    if names is not None:
        return {_CLASS: kind.__name__, **{name: encoded(getattr(value, name)) for name in names}}
    if isinstance(value, Decimal):
        return {_DECIMAL: str(value)}
    if isinstance(value, datetime):
        return {_TIME: value.isoformat()}
    if isinstance(value, tuple):
        return {_TUPLE: [encoded(v) for v in value]}
    if isinstance(value, list):
        return [encoded(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) and k not in _TAGS for k in value):
            raise ValueError("a mapping kept must have text keys, none a tag of this format")
        return {k: encoded(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise ValueError(f"a {type(value).__name__} cannot be kept")


def decoded(raw: Any, allowed: Mapping[str, type]) -> Any:
    """What `encoded` made of a value, made again; only `allowed`'s classes are made."""
    if isinstance(raw, list):
        return [decoded(v, allowed) for v in raw]
    if not isinstance(raw, dict):
        return raw
    if _CLASS in raw:
        kind = allowed.get(raw[_CLASS])
        if kind is None:
            raise ValueError(f"{raw[_CLASS]!r} is not a record kept here")
        names = _fields(kind) or ()
        given = {k: v for k, v in raw.items() if k != _CLASS}
        if not given.keys() <= set(names):
            raise ValueError(f"{raw[_CLASS]} has no field {sorted(given.keys() - names)[0]!r}")
        return kind(**{k: decoded(v, allowed) for k, v in given.items()})
    if raw.keys() == {_DECIMAL}:
        return Decimal(raw[_DECIMAL])
    if raw.keys() == {_TIME}:
        return datetime.fromisoformat(raw[_TIME])
    if raw.keys() == {_TUPLE}:
        return tuple(decoded(v, allowed) for v in raw[_TUPLE])
    return {k: decoded(v, allowed) for k, v in raw.items()}


@cache
def _fields(kind: type) -> tuple[str, ...] | None:
    """The fields a dataclass is made with, in order (None: not a dataclass): asked once a
    class, where a row keeps thousands of records of a few."""
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind) if f.init)

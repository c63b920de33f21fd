"""Caches keyed by a session's messages (messages hash by identity): each holds the
messages it was asked about alive, so a process that reads many sessions one after
another (a sweep's worker) lets them all go between sessions with `forget`."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])
_CLEARS: list[Callable[[], None]] = []


def per_session(maxsize: int | None) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)` (None: unbounded), emptied by `forget`."""

    def wrap(function: F) -> F:
        cached = lru_cache(maxsize=maxsize)(function)
        _CLEARS.append(cached.cache_clear)
        return cast(F, cached)

    return wrap


def on_forget(clear: Callable[[], None]) -> None:
    """Have `forget` call `clear` too (a table that must be emptied whole, not by entry)."""
    _CLEARS.append(clear)


def forget() -> None:
    """Empty every per-session cache: the messages they held can go."""
    for clear in _CLEARS:
        clear()

"""Caches keyed by a session's messages (messages hash by identity): each holds the
messages it was asked about alive, so a process that reads many sessions one after
another (a sweep's worker) lets them all go between sessions with `forget`."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])
_CLEARS: list[Callable[[], None]] = []


def per_session(maxsize: int | None, held: Callable[[Any], bool] | None = None) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)` (None: unbounded), emptied by `forget`. With `held`,
    only the calls whose first argument it accepts are kept; the others are made each
    time (what a replay wrote is asked of once, and kept it would live as long as the
    cache: a replay's thousands of summaries)."""

    def wrap(function: F) -> F:
        cached = lru_cache(maxsize=maxsize)(function)
        _CLEARS.append(cached.cache_clear)
        if held is None:
            return cast(F, cached)

        @wraps(function)
        def choosing(first: Any, *rest: Any) -> Any:
            return cached(first, *rest) if held(first) else function(first, *rest)

        choosing.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return cast(F, choosing)

    return wrap


def on_forget(clear: Callable[[], None]) -> None:
    """Have `forget` call `clear` too (a table that must be emptied whole, not by entry)."""
    _CLEARS.append(clear)


def forget() -> None:
    """Empty every per-session cache: the messages they held can go."""
    for clear in _CLEARS:
        clear()

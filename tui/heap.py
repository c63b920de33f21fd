"""The process's garbage-collection policy: set by the app and the command line, never
by the library.

A session is up to millions of objects (messages, blocks, counts, a strategy's edits)
that form no reference cycles and are freed by reference counting. With the default
thresholds the cyclic collector runs every 700 allocations while they are made, and
each full collection walks all of them, which stalls a keypress for 100 ms or more.
So young objects are collected every million allocations, and what is alive after
loading and counting, and after each result, is frozen: full collections skip it.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 1_000_000


def configure() -> None:
    """Once, as the program starts."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def settle() -> None:
    """After loading and counting, and after a result: exempt what is alive now from
    full collections (it is still freed by reference counting when dropped)."""
    gc.freeze()


def tidy() -> None:
    """While the user reads: collect what stepping left behind (the part not yet frozen
    is small), then settle."""
    gc.collect()
    settle()

"""Keeping the cyclic garbage collector off work that makes many objects and no cycles.

Loading a session, running a strategy over it and replaying it each allocate tens of
thousands to millions of objects (messages, blocks, edits, points). The collector would
run every few hundred allocations and, each time enough survive, walk every tracked
object in the process, the token counter's caches included: on a 100k-message session
that was up to two fifths of a strategy's time. These objects form no reference
cycles, so reference counting frees them all the same.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside; with `freeze`, what is alive afterwards (a loaded
    session) moves to the permanent generation, which later full collections skip
    (it is still freed by reference counting when dropped)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()

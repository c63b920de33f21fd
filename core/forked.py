"""Work spread over forked processes that share what this process made before it: a
command-line `compare` replays its strategies on both cores of a machine from the one
session it read, counted and fitted, each process sending back its rows.

Forked, not spawned: a spawned process would read, count and fit the session again,
which costs more than a `compare`'s replays of it. Where the platform does not fork
safely (Windows has no fork; macOS's system libraries are not safe across one), or one
job is asked for, the work is done here in turn. The app never forks: its threads run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from compaction_inspector.core.measuring.tokens import release_threads

T = TypeVar("T")
R = TypeVar("R")

# the work and its items while a pool runs: its forked processes find them here, so
# neither the work's closure nor what it holds is ever pickled
_WORK: list[tuple[Callable[[Any], Any], Sequence[Any]]] = []


def can_fork() -> bool:
    from multiprocessing import get_all_start_methods  # with the pool: not at every start

    return "fork" in get_all_start_methods() and sys.platform != "darwin"


def spread(work: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[tuple[int, R]]:
    """Each item's index and `work(item)`, as each is done: in up to `jobs` forked
    processes, else here in turn. Breaking off the iteration cancels what has not begun."""
    if jobs <= 1 or len(items) <= 1 or not can_fork():
        for i, item in enumerate(items):
            yield i, work(item)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    release_threads()
    _WORK.append((work, items))
    try:
        pool = ProcessPoolExecutor(
            min(jobs, len(items)), mp_context=get_context("fork"), initializer=_bound, initargs=(os.getpid(),)
        )
        finished = False
        try:
            futures = {pool.submit(_one, i): i for i in range(len(items))}
            for done in as_completed(futures):
                yield futures[done], done.result()
            finished = True
        finally:
            if not finished:  # broken off, interrupted or failed: no worker runs on
                for process in list(getattr(pool, "_processes", {}).values()):
                    process.kill()
            pool.shutdown(wait=finished, cancel_futures=True)
    finally:
        _WORK.clear()


PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal sent when the parent ends


def _bound(parent: int) -> None:
    """A worker ends with the process that forked it, however that one ends (killed
    too): Linux sends it SIGKILL then; elsewhere it looks for its parent each second."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # ended before this worker was told to follow it
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _one(i: int) -> Any:
    work, items = _WORK[-1]
    return work(items[i])

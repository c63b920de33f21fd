"""A sweep's sessions on Ray (the optional `[ray]` extra), for more sessions than one
machine holds: the same task the process pool runs (`core.sweeping.sweep.sweep_session`), one
session a task, mapped over a cluster's workers. The sessions' paths must be readable
where the workers run (a shared file system on a cluster)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")
LOCAL = "local"  # start a Ray of our own on this machine


class ClusterError(Exception):
    """Ray is not installed, or the cluster cannot be reached."""


def mapped(work: Callable[[str], T], paths: list[str], jobs: int, address: str) -> Iterator[T]:
    """`work(path)` for each path, in order, run on Ray: a cluster at `address`, or a
    local one of `jobs` workers started here (and stopped after). At most twice as many
    tasks as the cluster has cores are in flight, so memory stays flat in the sessions."""
    try:
        import ray
    except ImportError:
        raise ClusterError("--ray needs Ray: pip install 'compaction-inspector[ray]'") from None
    started = not ray.is_initialized()
    if started:
        try:
            if address == LOCAL:
                os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a Ray of our own needs no token
                ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(f"Ray at {address}: {exc}") from exc
    flight: deque[Any] = deque()
    try:
        task: Any = ray.remote(_run)
        shared = ray.put(work)  # sent to the object store once, not with every task
        room = max(2, 2 * int(ray.cluster_resources().get("CPU", jobs)))  # type: ignore[no-untyped-call]
        waiting = iter(paths)
        flight.extend(task.remote(shared, path) for path in islice(waiting, room))
        while flight:
            result = ray.get(flight.popleft())
            next_path = next(waiting, None)
            if next_path is not None:
                flight.append(task.remote(shared, next_path))
            yield result
    finally:
        for ref in flight:
            ray.cancel(ref)
        if started:
            ray.shutdown()


def _run(work: Callable[[str], T], path: str) -> T:
    return work(path)

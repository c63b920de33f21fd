"""Work under way in a screen, by kind (counting, a strategy's run, a replay): a new run
of a kind supersedes the one before, so only the latest's answer is shown; the screen
is settled when no run is under way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Runs:
    def __init__(self, on_settled: Callable[[], None]) -> None:
        self._pending: dict[str, int] = {}  # by kind: the run that counts
        self._count = 0
        self._on_settled = on_settled
        self.settled = asyncio.Event()  # set while nothing is under way (what tests await)

    def start(self, kind: str) -> int:
        """A run of `kind` begins: only its answer counts, not an older run's."""
        self._count += 1
        self._pending[kind] = self._count
        self.settled.clear()
        return self._count

    def latest(self, kind: str, run: int) -> bool:
        """`run` is the run of `kind` under way (an older one's answer is dropped)."""
        return self._pending.get(kind) == run

    def done(self, kind: str, run: int) -> bool:
        """`run` is the latest of its kind: it is done now, and the screen settles when
        nothing else is under way. False for a superseded run."""
        if not self.latest(kind, run):
            return False
        del self._pending[kind]
        if not self._pending:
            self.settled.set()
            self._on_settled()
        return True

    @property
    def busy(self) -> bool:
        """Some counting, strategy run or replay is still under way."""
        return bool(self._pending)

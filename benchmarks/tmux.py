"""The app in a real terminal, for the benchmarks that time it there (`keys`, `tuning`,
`startup`): a tmux session (160x45 unless asked), its pane read, keys sent, and waits on what the app
writes to it.

A wait does not poll: tmux copies what the app writes to its terminal into a pipe
(`pipe-pane`) and the wait sleeps in `select` until bytes come, so the benchmark takes no
core from the app (on 2 cores a poller reading the pane back to back kept one busy). A
change is timed to the first byte the app writes after the key; a screen settled, to the
last byte before a quiet spell."""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

SESSION = "ci-keys"


def _tmux(*args: str) -> None:
    subprocess.run(["tmux", *args], check=True, capture_output=True)


@contextlib.contextmanager
def running(command: str, size: tuple[int, int] = (160, 45)) -> Iterator[Terminal]:
    """`command` in a tmux session of its own, `size` columns by rows (an earlier one
    ended first), ended after."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    folder = Path(tempfile.mkdtemp())
    fifo = folder / "pane"
    os.mkfifo(fifo)
    # read and write ends both held here, so the pipe never reads as ended
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        _tmux("new", "-d", "-s", SESSION, "-x", str(size[0]), "-y", str(size[1]), command)
        _tmux("pipe-pane", "-t", SESSION, "-o", f"cat > {shlex.quote(str(fifo))}")
        yield Terminal(fd)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
        os.close(fd)


class Terminal:
    """The running session: its pane, keys sent to it, and waits on its output."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def pane(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True
        ).stdout

    def send(self, *keys: str) -> None:
        _tmux("send-keys", "-t", SESSION, *keys)

    def _output(self, timeout: float) -> bool:
        """Whether the app wrote within `timeout` seconds (what it wrote is drained)."""
        if not select.select([self.fd], [], [], max(0.0, timeout))[0]:
            return False
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fd, 1 << 16):
                pass
        return True

    def pressed(self, *keys: str, within: float = 5.0) -> float:
        """Seconds from sending `keys` to the app's first output after them."""
        self._output(0)
        start = time.perf_counter()
        self.send(*keys)
        self._output(within)
        return time.perf_counter() - start

    def settled(self, quiet: float, within: float = 60.0, *keys: str) -> float:
        """Seconds from sending `keys` (none: from now) to the app's last output before
        `quiet` seconds without any, `within` at most."""
        self._output(0)
        start = time.perf_counter()
        if keys:
            self.send(*keys)
        last = start
        while time.perf_counter() - start < within and self._output(quiet):
            last = time.perf_counter()
        return last - start

    def holds(self, sign: str, within: float = 60.0) -> None:
        """Until the pane holds `sign` (it is read again each time the app writes); a
        TimeoutError after `within` seconds."""
        start = time.perf_counter()
        while sign not in self.pane():
            left = within - (time.perf_counter() - start)
            if left <= 0:
                raise TimeoutError(f"{sign!r} never showed")
            self._output(min(left, 0.05))  # also on a timeout: it may have drawn before the pipe was set

"""Workers forked for `compare --jobs` and `sessions --jobs` end with the process that
forked them: killed, interrupted, or when the iteration is broken off."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compaction_inspector.core.forked import can_fork

pytestmark = pytest.mark.skipif(not can_fork(), reason="this platform does not fork")

SCRIPT = """
import os, sys, time
from pathlib import Path
from compaction_inspector.core.forked import spread

def work(n):
    Path(sys.argv[1], str(os.getpid())).write_text("")
    time.sleep(600)
    return n

for _ in spread(work, [1, 2], 2):
    pass
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by init) counts as ended
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ")[-1].startswith("Z"))


def _workers(folder: Path, count: int) -> list[int]:
    for _ in range(600):
        found = [int(p.name) for p in folder.iterdir()]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError("the workers never started")


def _gone(pids: list[int]) -> bool:
    for _ in range(300):  # a liveness check, not a measure of time
        if not any(map(_alive, pids)):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_workers_end_when_their_parent_is_killed(tmp_path: Path, how: signal.Signals) -> None:
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path)])
    try:
        workers = _workers(tmp_path, 2)
        parent.send_signal(how)
        parent.wait(timeout=60)
        assert _gone(workers), f"workers {workers} still run after the parent's {how.name}"
    finally:
        parent.kill()
        for pid in (int(p.name) for p in tmp_path.iterdir()):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)

"""Where a session stands against its agent's point is one answer on every surface:
`compactions` ends with the line `analyze` gives, and `watch --once` (the status line's
figures) says the same tokens and requests left."""

from __future__ import annotations

import json
import re

import pytest

from compaction_inspector.sample_sessions import path
from tests.test_cli import run


@pytest.mark.parametrize(
    "name", ["claude_code_compacted.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"]
)
def test_compactions_analyze_and_watch_say_the_same_next_check(name: str) -> None:
    file = str(path(name))
    left = json.loads(run("analyze", file, "--json").stdout)["compacts_in"]
    said = (
        f"compacts in ~{left['tokens_left']:,} tokens (about {left['requests_left']:,} requests at this pace)"
    )
    now = " ".join(run("compactions", file).stdout.split()).split("now: ")[-1]
    assert now.startswith(f"its point {left['point']:,}; ") and now.endswith(said)
    assert said in " ".join(run("analyze", file).stdout.split())
    watched = run("watch", "--once", file).stdout
    tokens = left["tokens_left"]
    shown = f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k"
    assert re.search(rf"compacts in ~{re.escape(shown)} \(about {left['requests_left']:,} requests", watched)

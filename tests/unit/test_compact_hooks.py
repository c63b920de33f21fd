"""A SessionStart hook that runs on a compaction sends its output to the model after it
(Claude Code's hooks reference: source `compact`). The transcript records that it ran (a
`hook_progress` line); where no line records what it sent, the context after the
compaction may be more than any part the transcript holds: the range has no most, and
says why. The bundled compacted sample, with such lines added as Claude Code writes them."""

from __future__ import annotations

import json
from pathlib import Path

from compaction_inspector.sample_sessions import path
from tests.helpers import load
from tests.test_cli import run

HOOK = "entire hooks claude-code session-start"


def with_lines_after_the_boundary(tmp_path: Path, *extra: dict[str, object]) -> Path:
    lines = path("claude_code_compacted.jsonl").read_text().splitlines()
    at = next(n for n, x in enumerate(lines) if '"compact_boundary"' in x) + 1
    made = tmp_path / "hooked.jsonl"
    made.write_text("\n".join([*lines[:at], *(json.dumps(e) for e in extra), *lines[at:]]) + "\n")
    return made


def progress(name: str) -> dict[str, object]:
    data = {"type": "hook_progress", "hookEvent": "SessionStart", "hookName": name, "command": HOOK}
    return {"type": "progress", "data": data, "isSidechain": False}


def test_a_hook_that_ran_on_it_and_sent_what_no_line_records_opens_the_range_upward(tmp_path: Path) -> None:
    file = with_lines_after_the_boundary(tmp_path, progress("SessionStart:compact"))
    (compaction,) = [c for c in load(file).compactions if c.kind == "compact"]
    assert compaction.unrecorded == (f"the SessionStart hook {HOOK!r} ran on it",)
    (found,) = [
        c for c in json.loads(run("compactions", "--json", str(file)).stdout) if c["kind"] == "compact"
    ]
    low, high = found["predicted_range"]
    assert high is None and low == found["predicted_after"]
    text = " ".join(run("compactions", str(file)).stdout.split())
    assert f"({low:,} or more" in text and f"0 or more: the SessionStart hook {HOOK!r} ran on it" in text


def test_a_startup_hook_or_one_whose_output_is_recorded_leaves_the_range_as_it_was(tmp_path: Path) -> None:
    recorded = {
        "type": "attachment",
        "attachment": {"type": "hook_success", "hookEvent": "SessionStart", "content": "branch main"},
        "isSidechain": False,
    }
    for extra in ([progress("SessionStart:startup")], [progress("SessionStart:compact"), recorded]):
        file = with_lines_after_the_boundary(tmp_path, *extra)
        assert all(c.unrecorded == () for c in load(file).compactions)
        (found,) = [
            c for c in json.loads(run("compactions", "--json", str(file)).stdout) if c["kind"] == "compact"
        ]
        assert found["predicted_range"] is None or found["predicted_range"][1] is not None

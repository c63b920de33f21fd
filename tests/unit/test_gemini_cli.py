"""Gemini CLI's chat recordings read as Gemini CLI reads them. No public, licensed
recording with a compression was found, so the files here are built from its types
(`packages/core/src/services/chatRecordingTypes.ts`) and written as its
`chatRecordingService.ts` writes them: a metadata line; each message record written again
whole when its tool calls, results or tokens change; `$rewindTo`; `$set` updates, whose
`messages` replace the history after a compression (`chatCompressionService.ts`: the
summary in a `<state_snapshot>`, Gemini's acknowledgement, the newest 30 % kept)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.gemini_cli.agent import PRESET, TOKEN_LIMIT
from compaction_inspector.core.agents.gemini_cli.settings import KEY
from compaction_inspector.core.agents.gemini_cli.transcript import Read
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from tests.helpers import load
from tests.test_cli import run

SESSION_ID = "4f2a9c1e-77aa-4d0e-9c1b-000000000001"
META = {
    "sessionId": SESSION_ID,
    "projectHash": "ab12",
    "startTime": "2026-10-02T10:00:00Z",
}


def user(id: str, text: str) -> dict[str, Any]:
    return {"id": id, "timestamp": "2026-10-02T10:00:01Z", "type": "user", "content": [{"text": text}]}


def gemini(id: str, text: str, prompt: int | None = None, **more: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": id,
        "timestamp": "2026-10-02T10:00:02Z",
        "type": "gemini",
        "content": text,
        "model": "gemini-2.5-pro",
        **more,
    }
    if prompt is not None:
        record["tokens"] = {"input": prompt, "output": 40, "cached": prompt // 2, "thoughts": 10, "tool": 0,
                            "total": prompt + 50}  # fmt: skip
    return record


def call(result: str | None = None) -> dict[str, Any]:
    done = {
        "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": result}}}]
    }
    return {"id": "c1", "name": "read_file", "args": {"path": "a.py"}, "status": "success",
            "timestamp": "2026-10-02T10:00:03Z", **(done if result is not None else {})}  # fmt: skip


def written(folder: Path, name: str, *records: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def recording(folder: Path) -> Path:
    """A session that compresses once: what Gemini CLI wrote, line by line."""
    summary = "<state_snapshot>\n<overall_goal>fix a.py</overall_goal>\n</state_snapshot>"
    return written(
        folder,
        "session-2026-10-02T10-00-4f2a9c1e.jsonl",
        META,
        user("u1", "read a.py"),
        gemini("g1", "", toolCalls=[call()]),  # the call, before its result
        gemini("g1", "", 300_000, toolCalls=[call("print(1)")]),  # written again whole
        {"id": "i1", "timestamp": "2026-10-02T10:00:04Z", "type": "info", "content": "Switched model"},
        user("u2", "now the tests"),
        gemini("g2", "done", 540_000),
        user("u3", "undo that"),
        {"$rewindTo": "u3"},  # the user took u3 back
        {"$set": {"summary": "Fix a.py"}},
        user("u4", "and the docs"),
        {
            "$set": {
                "messages": [
                    user("s1", summary),
                    gemini("s2", "Got it. Thanks for the additional context!"),
                    user("u4", "and the docs"),
                ],
                "lastUpdated": "2026-10-02T10:05:00Z",
            }
        },
        gemini("g3", "docs written", 120_000),
    )


def test_a_recording_is_folded_as_gemini_cli_folds_it_and_its_compression_read(tmp_path: Path) -> None:
    session = load(recording(tmp_path))
    shown = [(m.role, m.text) for m in session.messages]
    assert shown == [
        ("user", "read a.py"),
        ("assistant", 'read_file {"path":"a.py"}'),  # its tool call, as the record last written holds it
        ("user", "print(1)"),  # the call's result, as the next request carries it
        ("user", "now the tests"),
        ("assistant", "done"),
        ("user", "and the docs"),
        ("system", "unknown compaction · 540,000 before → 120,000 after, measured"),
        ("user", "<state_snapshot>\n<overall_goal>fix a.py</overall_goal>\n</state_snapshot>"),
        ("assistant", "Got it. Thanks for the additional context!"),
        ("user", "and the docs"),
        ("assistant", "docs written"),
    ]
    (compaction,) = session.compactions
    assert (compaction.index, compaction.trigger, compaction.pre_tokens) == (6, None, 540_000)
    assert compaction.details == Read("recorded") and session.messages[7].is_compact_summary
    reply = session.messages[1]
    assert [b.name for b in reply.blocks if b.type == "tool_use"] == ["read_file"] and reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.cache_read_input_tokens, reply.usage.output_tokens) == (
        300_000,
        150_000,
        50,  # its thoughts are billed as output
    )
    assert session.metadata["title"] == "Fix a.py" and session.metadata["model"] == "gemini-2.5-pro"
    assert [d.message for d in session.diagnostics] == ["skipped 1 info line (not conversation)"]


def test_its_point_is_half_its_token_limit_and_a_recorded_compression_is_checked_against_it(
    tmp_path: Path,
) -> None:
    """Gemini CLI compresses when the last prompt reaches 0.5 x 1,048,576: a prompt one
    under does not fire, the point itself does."""
    session = load(recording(tmp_path))
    config = Config(CATALOGUE).for_session(session)
    assert config.window == Window(TOKEN_LIMIT, 65_536) and config.preset == PRESET.name
    assert config.account.tokens == 524_288
    fires = CATALOGUE.strategies["gemini-cli"].fires
    assert fires is not None
    context = Inspection.of(session, config).context
    options = config.options("gemini-cli")
    assert not fires(options, 524_287, 10, context, 1) and fires(options, 524_288, 10, context, 1)
    (found,) = json.loads(run("compactions", "--json", str(recording(tmp_path))).stdout)
    assert found["pre_tokens"] == 540_000 and found["measured_after"] == 120_000
    assert found["found"] == "recorded"
    text = " ".join(run("compactions", str(recording(tmp_path))).stdout.split())
    assert (
        "why: Gemini CLI counted 540,000 ≥ 524,288 (50 % of the 1,048,576-token window: 524,288): "
        "540,000 its last prompt" in text
    )


def test_a_recording_with_no_record_of_its_compression_has_it_inferred_and_said(tmp_path: Path) -> None:
    """The older one-object `session-*.json` keeps the messages the user saw, not the
    history Gemini CLI compressed: a prompt that falls under half the one before marks
    a compression before that turn, said to be an inference."""
    legacy = {
        **META,
        "lastUpdated": "2026-10-02T10:05:00Z",
        "messages": [
            user("u1", "go"),
            gemini("g1", "a", 530_000),
            user("u2", "more"),
            gemini("g2", "b", 160_000),
            user("u3", "again"),
            gemini("g3", "c", 170_000),
        ],
    }
    path = tmp_path / "session-2026-10-02T10-00-4f2a9c1e.json"
    path.write_text(json.dumps(legacy, indent=2))
    session = load(path)
    (compaction,) = session.compactions
    assert (compaction.index, compaction.pre_tokens, compaction.details) == (2, 530_000, Read("inferred"))
    assert session.messages[2].text == "unknown compaction · 530,000 before → 160,000 after, measured"
    assert [m.text for m in session.messages[3:5]] == ["more", "b"]
    assert Read("inferred").said() == [
        "inferred: its prompt fell under 50% of the one before (no record of it)"
    ]


def test_its_sessions_are_found_with_their_subagents_and_a_resumed_json_once(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    chats = home / "tmp" / "ab12" / "chats"
    main = recording(chats)
    written(chats, "session-2026-10-01T09-00-0badcafe.json", META)
    written(chats, "session-2026-10-01T09-00-0badcafe.jsonl", META)  # resumed: moved to .jsonl
    sub = written(chats / SESSION_ID, "7c0ffee0.jsonl", {**META, "kind": "subagent"})
    agent = CATALOGUE.by_format["gemini-cli"]
    found = agent.find(home)
    assert [(f.path.name, f.subagents, f.subagent_of) for f in found] == [
        ("session-2026-10-01T09-00-0badcafe.jsonl", (), None),
        (main.name, (sub,), None),
        (sub.name, (), SESSION_ID),
    ]
    assert agent.home() == Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini"
    listed = json.loads(run("sessions", "--json", "--gemini-dir", str(home)).stdout)
    rows = {(Path(r["path"]).name, r["subagent_of"], r["title"], r["messages"]) for r in listed}
    assert rows == {
        ("session-2026-10-01T09-00-0badcafe.jsonl", None, "(no prompt)", 0),
        (main.name, None, "Fix a.py", 11),
        (sub.name, SESSION_ID, "(no prompt)", 0),
    }
    assert {r["agent"] for r in listed} == {"gemini-cli"}


def test_every_command_opens_a_recording(tmp_path: Path) -> None:
    path = str(recording(tmp_path))
    for command in (["analyze", "--json"], ["compare", "--json"], ["simulate", "--json"], ["report"]):
        ran = run(*command, path, *(["-o", str(tmp_path / "r.html")] if command == ["report"] else []))
        assert ran.returncode == 0, (command, ran.stderr)
    analysis = json.loads(run("analyze", "--json", path).stdout)
    cost = analysis["cost"]
    assert analysis["format"] == "gemini-cli" and (cost["responses"], cost["unpriced"]) == (3, {})
    assert cost["recorded_usd"] == "1.239500"  # each response at gemini-2.5-pro's rate for its prompt's tier


SETTINGS = '{{\n  "model": {{\n    "compressionThreshold": {}\n  }},\n  "ui": {{"theme": "dark"}}\n}}\n'


def test_the_users_threshold_moves_its_point_and_apply_writes_it_back_in_its_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`model.compressionThreshold` (a share of the token limit) in the user's settings, the
    workspace's winning: the point follows it and says so; `apply` writes a percent there
    as the share Gemini CLI takes, every other byte kept, the old file kept beside."""
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    settings = tmp_path / "home" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        '{\n  "model": {\n    "compressionThreshold": 0.2\n  },\n  "ui": {"theme": "dark"}\n}\n'
    )
    quiet = written(tmp_path / "s", "session-2026-10-02T10-00-4f2a9c1e.jsonl", META, user("u1", "go"),
                    gemini("g1", "ok", 1_000))  # fmt: skip
    config = Config(CATALOGUE).for_session(load(quiet))
    assert config.account.tokens == 209_715  # 20 % of 1,048,576
    assert config.account.point is not None
    assert (
        config.account.point.rule
        == f"your {KEY} of 0.2 ({settings}): 20 % of the 1,048,576-token window: 209,715"
    )
    settings.write_text('{"model": {"compressionThreshold": 2}}')
    refused = Config(CATALOGUE).for_session(load(quiet))
    assert refused.account.tokens == 524_288
    assert (
        f"your settings {settings}: {KEY} of '2' not used: not a share above 0, at most 1"
        in refused.window_note
    )
    settings.write_text(
        '{\n  "model": {\n    "compressionThreshold": 0.2\n  },\n  "ui": {"theme": "dark"}\n}\n'
    )
    said = run("apply", "gemini-cli", "trigger_percent=30", "--write", "--force").stdout
    assert f"wrote {KEY} = 0.3 to {settings}" in said
    assert (
        settings.read_text()
        == '{\n  "model": {\n    "compressionThreshold": 0.3\n  },\n  "ui": {"theme": "dark"}\n}\n'
    )
    assert "0.2" in settings.with_name("settings.json.bak").read_text()

"""Cline's task folders read as Cline up to 3.85 keeps them. No public, licensed task
folder with a compaction was found, so the folders here are built from its types
(`src/shared/ExtensionMessage.ts` `ClineMessage` and `ClineApiReqInfo`,
`src/shared/messages/content.ts` `ClineStorageMessage`) and laid out as its
`message-state.ts` writes them: every panel row records the history's last index and the
range left out then; the range grows from index 2 by a summary (`summarize_task`,
`ContextManager.getNextTruncationRange` keeping none) or a truncation (half)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.cline.agent import PRESET, margin
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.pressure import Window
from tests.helpers import load
from tests.test_cli import run

ENV = "<environment_details>\n# Current Working Directory (/home/u/proj) Files\na.py\n</environment_details>"
MODEL = {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def reply(text: str, *calls: str) -> dict[str, Any]:
    uses = [{"type": "tool_use", "id": f"c{n}", "name": name, "input": {"context": "a.py fixed"}}
            for n, name in enumerate(calls)]  # fmt: skip
    return {"role": "assistant", "content": [{"type": "text", "text": text}, *uses]}


def request(index: int, reads: int, deleted: list[int] | None = None) -> dict[str, Any]:
    said = {
        "request": "…",
        "tokensIn": 10,
        "tokensOut": 50,
        "cacheWrites": 1_000,
        "cacheReads": reads,
        "cost": 0.01,
    }
    row = {"ts": 1_000 + index, "type": "say", "say": "api_req_started", "text": json.dumps(said),
           "conversationHistoryIndex": index, "modelInfo": MODEL}  # fmt: skip
    return {**row, "conversationHistoryDeletedRange": deleted} if deleted else row


def task(folder: Path, history: list[dict[str, Any]], panel: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    (folder / "ui_messages.json").write_text(json.dumps(panel))
    return folder


def summarized(folder: Path, tool: str = "summarize_task", after: list[int] | None = None) -> Path:
    """A request at 161,060 tokens, so the next asks the model to summarize; its call, the
    result that continues the task, and two requests after."""
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>fix a.py</task>"},
                                     {"type": "text", "text": ENV}]},
        reply("ok"), user("more"), reply("sure"), user("again"), reply("fine"),
        user("summarize now"), reply("summary", tool),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c0", "content": "continue"}]},
        reply("continuing"), user("next"), reply("done"),
    ]  # fmt: skip
    panel = [
        {"ts": 999, "type": "say", "say": "task", "text": "fix a.py", "conversationHistoryIndex": -1},
        request(-1, 0), request(1, 50_000), request(3, 160_000), request(5, 161_500),
        {"ts": 2_000, "type": "say", "say": "tool", "text": "{}", "conversationHistoryIndex": 7,
         "conversationHistoryDeletedRange": [2, 6]},
        request(8, 2_000, [2, 6]), request(10, 5_000, after or [2, 6]),
    ]  # fmt: skip
    return task(folder, history, panel)


def test_a_summary_is_read_where_its_range_grows_and_its_request_is_its_call(tmp_path: Path) -> None:
    session = load(summarized(tmp_path / "1700000000000"))
    assert session.format == "cline"
    shown = [(m.line, m.text.split()[0], bool(m.replaces), m.usage.prompt_tokens if m.usage else None)
             for m in session.messages]  # fmt: skip
    assert shown == [
        (1, "<task>fix", False, None),
        (2, "ok", False, 1_010),
        (3, "more", False, None),
        (4, "sure", False, 51_010),
        (5, "again", False, None),
        (6, "fine", False, 161_010),
        (7, "summarize", False, None),
        (8, "auto", False, None),
        (1, "<task>fix", True, None),  # the first exchange, sent again
        (2, "ok", True, None),
        (8, "summary", False, None),  # its request was the compaction's own
        (9, "continue", False, None),
        (10, "continuing", False, 3_010),
        (11, "next", False, None),
        (12, "done", False, 6_010),
    ]
    (compaction,) = session.compactions
    assert (compaction.trigger, compaction.pre_tokens) == ("auto", 161_060)
    assert compaction.call is not None and compaction.call.prompt_tokens == 162_510
    assert compaction.details is not None and compaction.details.to_dict() == {
        "event": "condense", "deleted_range": [2, 6], "messages_hidden": 5
    }  # fmt: skip
    assert session.metadata == {
        "session_id": "1700000000000",
        "model": "claude-sonnet-4-5",
        "layout": "task folder",
        "cwd": "/home/u/proj",  # its environment details name it
        "title": "fix a.py",
        "recorded_usd": 0.06,  # what its panel recorded: six requests at $0.01
    }


def test_a_truncation_sends_again_the_first_exchange_and_what_it_kept(tmp_path: Path) -> None:
    history = [
        user("u0"),
        reply("a1"),
        user("u2"),
        reply("a3"),
        user("u4"),
        reply("a5"),
        user("u6"),
        reply("a7"),
    ]
    panel = [request(-1, 0), request(1, 10_000), request(3, 159_000), request(5, 161_000, [2, 3])]
    session = load(task(tmp_path / "t", history, panel))
    assert [(m.line, m.text, bool(m.replaces)) for m in session.messages[6:]] == [
        (7, "auto compaction · 160,060 before → 162,010 after, measured", False),
        (1, "u0", True),
        (2, "a1", True),
        (5, "u4", True),
        (6, "a5", True),
        (7, "u6", False),
        (8, "a7", False),
    ]
    (compaction,) = session.compactions
    assert compaction.details is not None and compaction.details.said() == [
        "truncated: 2 more messages left out after the first pair, none summarized"
    ]


@pytest.mark.parametrize(("window", "kept"), [(64_000, 27_000), (128_000, 30_000), (200_000, 40_000),
                                              (1_000_000, 40_000), (100_000, 20_000)])  # fmt: skip
def test_its_margin_is_its_tables_else_at_most_40000_and_a_fifth(window: int, kept: int) -> None:
    assert margin(window) == kept


def test_its_point_is_cline_3s_for_a_task_folder_and_the_current_rule_stays_a_what_if(tmp_path: Path) -> None:
    session = load(summarized(tmp_path / "1700000000000"))
    config = Config(CATALOGUE).for_session(session)
    assert config.window == Window(200_000, 40_000) and config.preset == PRESET.name
    assert config.account.tokens == 160_000
    assert config.options("cline").keep_first == 2 and config.options("cline").trigger_reserve == 40_000
    assert CATALOGUE.strategies["cline"].default_options().trigger_percent == 81  # today's Cline
    text = " ".join(run("compactions", str(tmp_path / "1700000000000")).stdout.split())
    assert "why: Cline counted 161,060 ≥ 160,000" in text and "its last request's tokens" in text


def test_its_tasks_are_found_and_every_command_reads_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VSCODE_PORTABLE", str(tmp_path / "portable"))  # its own VS Code
    root = (
        Path(os.environ["VSCODE_PORTABLE"])
        / "user-data"
        / "User"
        / "globalStorage"
        / "saoudrizwan.claude-dev"
    )
    agent = CATALOGUE.by_format["cline"]
    assert agent.home() == root
    folder = summarized(root / "tasks" / "1700000000000")
    (root / "tasks" / "1700000000001").mkdir()  # no history: not a task
    assert [f.path.parent.name for f in agent.find(root)] == ["1700000000000"]
    listed = json.loads(run("sessions", "--json", "--cline-dir", str(root)).stdout)
    assert [r["title"] for r in listed] == ["fix a.py"]
    for command in (
        ["analyze"],
        ["compactions"],
        ["simulate", "--strategy", "cline-3"],
        ["compare"],
        ["watch", "--once"],
    ):
        assert run(*command, str(folder)).returncode == 0


def sdk_session(folder: Path) -> Path:
    """The current Cline's session: its manifest, its messages with each reply's metrics,
    and the state of its compaction, which stands for the first six."""

    def said(text: str, given: int, reads: int, writes: int) -> dict[str, Any]:
        metrics = {
            "inputTokens": given,
            "outputTokens": 40,
            "cacheReadTokens": reads,
            "cacheWriteTokens": writes,
        }
        return {**reply(text), "id": f"a-{text}", "metrics": metrics,
                "modelInfo": {"id": "claude-sonnet-4-5", "provider": "anthropic"}}  # fmt: skip

    messages = [
        user("fix a.py"), said("reading", 50_000, 0, 49_000),
        user("more"), said("sure", 120_000, 118_000, 1_000),
        user("again"), said("fine", 163_000, 161_000, 1_000),
        user("next step"), said("done", 30_000, 0, 29_000),
    ]  # fmt: skip
    folder.mkdir(parents=True)
    (folder / f"{folder.name}.messages.json").write_text(
        json.dumps({"version": 1, "agent": "lead", "sessionId": folder.name, "messages": messages}, indent=2)
    )
    state = {
        "version": 1,
        "source_message_count": 6,
        "messages": [user("Summary: a.py fixed"), *messages[4:6]],
    }
    (folder / f"{folder.name}.compaction.json").write_text(json.dumps(state))
    manifest = {"version": 1, "session_id": folder.name, "model": "claude-sonnet-4-5",
                "provider": "anthropic", "cwd": "/home/u/p", "prompt": "fix a.py",
                "started_at": "2026-11-01T00:00:00Z"}  # fmt: skip
    (folder / f"{folder.name}.json").write_text(json.dumps(manifest))
    (folder / "researcher.messages.json").write_text(json.dumps({"version": 1, "messages": [user("look")]}))
    return folder / f"{folder.name}.messages.json"


def test_the_current_clines_session_is_read_with_its_last_compaction_and_its_own_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its messages.json keeps every message; its compaction state, the last one: a
    boundary after the messages it stands for, then what it sends in their place."""
    path = sdk_session(tmp_path / "sessions" / "s1")
    session = load(path)
    shown = [(m.line, m.text, m.is_compact_summary, bool(m.replaces)) for m in session.messages[5:]]
    assert shown == [
        (6, "fine", False, False),
        (7, "unknown compaction · before: not recorded → 30,000 after, measured", False, False),
        (7, "Summary: a.py fixed", True, False),
        (5, "again", False, True),  # kept as it was: a copy
        (6, "fine", False, True),
        (7, "next step", False, False),
        (8, "done", False, False),
    ]
    usage = session.messages[3].usage
    assert usage is not None and (usage.input_tokens, usage.cache_read_input_tokens) == (1_000, 118_000)
    assert session.metadata["layout"] == "sdk" and session.metadata["cwd"] == "/home/u/p"
    config = Config(CATALOGUE).for_session(session)
    assert config.window == Window(200_000, 20_000) and config.account.tokens == 162_000  # 0.9 x 0.9
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "sessions"))
    found = CATALOGUE.by_format["cline"].find(CATALOGUE.by_format["cline"].home())
    assert [(f.path.name, f.subagent_of) for f in found] == [
        ("s1.messages.json", None),
        ("researcher.messages.json", "s1"),
    ]


def test_a_condense_the_user_asked_for_is_a_manual_summary(tmp_path: Path) -> None:
    """`/smol` has the model call `condense`, which leaves out the range as a summary does."""
    (compaction,) = load(summarized(tmp_path / "t", "condense")).compactions
    assert compaction.trigger == "manual" and compaction.details is not None
    assert compaction.details.said() == [
        "summarized: the model's condense call stands for the 5 messages it hides"
    ]


def test_the_summarys_own_exchange_left_out_a_request_later_ends_that_summary(tmp_path: Path) -> None:
    """Once the task goes on from a summary, Cline 3 leaves out the model's call and its
    result too (`currentlySummarizing`: the range's end moves by two): one compaction."""
    session = load(summarized(tmp_path / "t", after=[2, 8]))
    assert len(session.compactions) == 1 and sum(m.is_compact_boundary for m in session.messages) == 1


def test_a_task_folder_that_contradicts_cline_3s_rule_is_explained_by_its_record_not_todays_cline(
    tmp_path: Path,
) -> None:
    """A request sent after 161,010 without compacting says Cline 3's 160,000 was not its
    point (its window was larger than the table's, say). The current Cline's rule is no
    setting of this session to fall back on: its own compaction's count is the point."""
    history = [
        user("<task>go</task>"), reply("ok"), user("more"), reply("sure"), user("again"), reply("fine"),
        user("summarize now"), reply("summary", "summarize_task"),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c0", "content": "continue"}]},
        reply("continuing"),
    ]  # fmt: skip
    panel = [
        request(-1, 0), request(1, 160_000), request(3, 162_000), request(5, 163_000),
        {"ts": 2_000, "type": "say", "say": "tool", "text": "{}", "conversationHistoryIndex": 7,
         "conversationHistoryDeletedRange": [2, 6]},
        request(8, 2_000, [2, 6]),
    ]  # fmt: skip
    point = Config(CATALOGUE).for_session(load(task(tmp_path / "t", history, panel))).account.point
    assert point is not None and point.tokens == 163_060
    assert point.rule.startswith(
        "the session's own record: it sent a request after 161,010 without compacting"
    )
    assert "set now" not in point.rule

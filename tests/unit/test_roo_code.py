"""Roo Code's task folders read as Roo Code keeps them. No public, licensed task folder
with a condense was found, so the folders here are built from its types
(`src/core/task-persistence/apiMessages.ts` `ApiMessage`, `packages/types/src/message.ts`
`ClineMessage` with `contextCondense` and `contextTruncation`, `history.ts` `HistoryItem`)
and laid out as `src/core/condense/index.ts` and `context-management/index.ts` leave them:
every message kept, a condense's summary appended after the messages it tags, a truncation's
marker before the messages it keeps."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.agents.roo_code.agent import PRESET
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.task_folder import Event
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from tests.helpers import load
from tests.test_cli import run

ENV = (
    "<environment_details>\n# Current Mode\n<slug>code</slug>\n<name>Code</name>\n"
    "<model>claude-sonnet-4-5</model>\n</environment_details>"
)


def user(ts: int, text: str, **more: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}, {"type": "text", "text": ENV}]
    return {"role": "user", "content": content, "ts": ts, **more}


def reply(ts: int, text: str, **more: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "ts": ts, **more}


def request(ts: int, tokens_in: int, writes: int, reads: int) -> dict[str, Any]:
    said = {"apiProtocol": "anthropic", "tokensIn": tokens_in, "tokensOut": 100, "cacheWrites": writes,
            "cacheReads": reads, "cost": 0.1}  # fmt: skip
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(said)}


def task(folder: Path, history: list[dict[str, Any]], panel: list[dict[str, Any]], **item: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    (folder / "ui_messages.json").write_text(json.dumps(panel))
    if item:
        (folder / "history_item.json").write_text(
            json.dumps({"id": folder.name, "number": 1, "ts": 1, **item})
        )
    return folder


def condensed(folder: Path) -> Path:
    """Two requests, a condense at 173,500, a request after it; the task's own item."""
    history = [
        {**m, "condenseParent": "c1"}
        for m in [
            user(1000, "<task>fix a.py</task>"),
            reply(1100, "reading"),
            user(1200, "go on"),
            reply(1300, "done"),
        ]
    ]
    history += [
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Conversation Summary\nfixed a.py"}],
            "ts": 1301,
            "isSummary": True,
            "condenseId": "c1",
        },
        user(1400, "now the tests"),
        reply(1500, "tests written"),
    ]
    panel = [
        request(1050, 150_000, 2_000, 147_000),  # tokensIn holds the whole input, its cache included
        request(1250, 172_000, 1_000, 170_000),
        {
            "ts": 1300,
            "type": "say",
            "say": "condense_context",
            "contextCondense": {
                "cost": 0.05,
                "prevContextTokens": 173_500,
                "newContextTokens": 9_000,
                "summary": "fixed a.py",
                "condenseId": "c1",
            },
        },
        request(1350, 9_500, 9_000, 0),
    ]
    return task(folder, history, panel, task="fix a.py", workspace="/home/u/proj")


def test_a_condense_is_read_with_its_own_figures_and_each_reply_its_requests_tokens(tmp_path: Path) -> None:
    session = load(condensed(tmp_path / "tasks" / "t1"))
    assert session.format == "roo-code"
    shown = [(m.line, m.role, m.text.split("\n")[0]) for m in session.messages]
    assert shown == [
        (1, "user", "<task>fix a.py</task>"),
        (2, "assistant", "reading"),
        (3, "user", "go on"),
        (4, "assistant", "done"),
        (5, "system", "unknown compaction · 173,500 before → 9,500 after, measured"),
        (5, "user", "## Conversation Summary"),
        (6, "user", "now the tests"),
        (7, "assistant", "tests written"),
    ]
    (compaction,) = session.compactions
    assert (compaction.index, compaction.trigger, compaction.pre_tokens, compaction.post_tokens) == (
        4,
        None,
        173_500,
        9_000,
    )
    assert isinstance(compaction.details, Event) and compaction.details.to_dict() == {
        "event": "condense",
        "cost": 0.05,
        "last_request_tokens": 172_100,  # what it counted from: the request before, in and out
    }
    usages = [m.usage for m in session.messages if m.usage is not None]
    assert [(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in usages] == [
        (1_000, 2_000, 147_000),
        (1_000, 1_000, 170_000),
        (500, 9_000, 0),
    ]
    assert session.metadata == {
        "session_id": "t1", "model": "claude-sonnet-4-5", "cwd": "/home/u/proj", "title": "fix a.py",
        "recorded_usd": 0.35,  # what its panel recorded: three requests at $0.10, its condense $0.05
    }  # fmt: skip


def test_input_before_its_cache_is_read_where_the_session_shows_it_and_a_truncation_keeps_the_first(
    tmp_path: Path,
) -> None:
    """Before 2025-10-31 Roo Code wrote only the uncached input as `tokensIn` over
    Anthropic's protocol: a request reporting less input than its cache shows it. A
    truncation hides messages after the first, and sends that first one again."""
    history = [
        user(1000, "<task>go</task>"),
        {**reply(1100, "one"), "truncationParent": "x"},
        {**user(1200, "two"), "truncationParent": "x"},
        {
            "role": "user",
            "content": "[Sliding window truncation: 2 messages hidden to reduce context]",
            "ts": 1299,
            "isTruncationMarker": True,
            "truncationId": "x",
        },
        reply(1300, "three"),
    ]
    panel = [
        request(1050, 10, 2_000, 150_000),
        {"ts": 1250, "type": "say", "say": "sliding_window_truncation", "contextTruncation": {
            "truncationId": "x", "messagesRemoved": 2, "prevContextTokens": 185_000,
            "newContextTokens": 40_000}},
        request(1260, 12, 0, 39_000),
    ]  # fmt: skip
    session = load(task(tmp_path / "t2", history, panel))
    assert [(m.line, m.text.split("\n")[0], bool(m.replaces)) for m in session.messages] == [
        (1, "<task>go</task>", False),
        (2, "one", False),
        (3, "two", False),
        (4, "auto compaction · 185,000 before → 39,012 after, measured", False),
        (1, "<task>go</task>", True),  # sent again
        (4, "[Sliding window truncation: 2 messages hidden to reduce context]", False),
        (5, "three", False),
    ]
    usage = session.messages[1].usage
    assert usage is not None and (usage.input_tokens, usage.prompt_tokens) == (10, 152_010)
    (compaction,) = session.compactions
    assert compaction.details is not None and compaction.details.to_dict() == {
        "event": "truncation", "messages_removed": 2, "last_request_tokens": 152_110
    }  # fmt: skip


def test_its_point_is_the_first_of_its_two_rules_and_a_condense_is_checked_against_it(tmp_path: Path) -> None:
    """100 % of 200,000, or past 90 % of it less 8,192 for a Claude model's reply: 171,808."""
    session = load(condensed(tmp_path / "t1"))
    config = Config(CATALOGUE).for_session(session)
    assert config.window == Window(200_000, 8_192) and config.preset == PRESET.name
    assert config.account.tokens == 171_808
    fires = CATALOGUE.strategies["roo-code"].fires
    assert fires is not None
    context = Inspection.of(session, config).context
    options = config.options("roo-code")
    assert not fires(options, 171_807, 10, context, 1) and fires(options, 171_808, 10, context, 1)
    text = " ".join(run("compactions", str(tmp_path / "t1")).stdout.split())
    assert (
        "why: Roo Code counted 173,500 ≥ 171,808 (90 % of the 200,000-token window less 8,192 for output: "
        "171,808): 172,100 its last request's tokens in and out + 1,400 its estimate of the next message"
    ) in text


def test_its_tasks_are_found_with_their_subtasks_and_every_command_reads_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VSCODE_PORTABLE", str(tmp_path / "portable"))  # its own VS Code
    root = (
        Path(os.environ["VSCODE_PORTABLE"])
        / "user-data"
        / "User"
        / "globalStorage"
        / "rooveterinaryinc.roo-cline"
    )
    agent = CATALOGUE.by_format["roo-code"]
    assert agent.home() == root
    main = condensed(root / "tasks" / "a-main")
    sub = task(root / "tasks" / "b-sub", [user(1, "sub"), reply(2, "ok")], [request(1, 10, 0, 0)],
               task="sub", parentTaskId="a-main", workspace="/home/u/proj")  # fmt: skip
    found = agent.find(root)
    assert [
        (f.path.parent.name, [s.parent.name for s in f.subagents], f.subagent_of, f.project) for f in found
    ] == [
        ("a-main", ["b-sub"], None, "/home/u/proj"),
        ("b-sub", [], "a-main", "/home/u/proj"),
    ]
    listed = json.loads(run("sessions", "--json", "--roo-dir", str(root)).stdout)
    assert {(r["title"], r["subagent_of"]) for r in listed} == {("fix a.py", None), ("sub", "a-main")}
    file = str(main / "api_conversation_history.json")
    assert json.loads(run("analyze", "--json", file).stdout)["format"] == "roo-code"
    for command in (
        ["compactions"],
        ["simulate", "--strategy", "roo-code"],
        ["compare"],
        ["watch", "--once"],
    ):
        assert run(*command, str(main)).returncode == 0
    assert sub.exists()


def vscode_state(storage: Path, state: dict[str, Any]) -> Path:
    """VS Code's global state beside the extensions' folders, Roo Code's under its id."""
    file = storage / "state.vscdb"
    with sqlite3.connect(file) as db:
        db.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.execute("INSERT INTO ItemTable VALUES (?, ?)", ("RooVeterinaryInc.roo-cline", json.dumps(state)))
    return file


WORK = {
    "autoCondenseContextPercent": 60,
    "currentApiConfigName": "work",
    "profileThresholds": {"p1": 50},
    "listApiConfigMeta": [{"name": "work", "id": "p1"}],
}


@pytest.mark.parametrize(
    ("state", "now", "said"),
    [
        ({"autoCondenseContextPercent": 60}, 120_000, "your autoCondenseContextPercent of 60"),
        (WORK, 100_000, "your profileThresholds of work of 50"),
    ],
)
def test_its_threshold_is_read_from_vs_codes_state_and_the_session_says_whether_it_ran_with_it(
    state: dict[str, Any], now: int, said: str, tmp_path: Path
) -> None:
    """Its global threshold, else the current profile's own, read read-only from VS Code's
    state for a task of that storage (nothing is made beside it). This session sent a
    request at 150,000 without condensing, so it did not run with a point under that: the
    point stays its default, and today's figure is named as what comes next."""
    storage = tmp_path / "globalStorage"
    folder = condensed(storage / "rooveterinaryinc.roo-cline" / "tasks" / "t1")
    file = vscode_state(storage, state)
    before = sorted(p.name for p in storage.iterdir())
    config = Config(CATALOGUE).for_session(load(folder))
    assert (
        config.account.point is not None
        and config.account.point.tokens == 171_808
        and config.account.set_now == now
    )
    assert (
        "as the session ran (it sent a request after 150,000 without compacting (line 4))"
        in config.account.point.rule
    )
    assert f"set now: {now:,} ({said} ({file}): " in config.account.point.rule
    assert sorted(p.name for p in storage.iterdir()) == before


def test_condensing_turned_off_leaves_its_truncations_rule_and_a_threshold_it_would_not_take_is_left(
    tmp_path: Path,
) -> None:
    storage = tmp_path / "globalStorage"
    folder = condensed(storage / "rooveterinaryinc.roo-cline" / "tasks" / "t1")
    file = vscode_state(storage, {"autoCondenseContext": False})
    point = Config(CATALOGUE).for_session(load(folder)).account.point
    assert point is not None and point.tokens == 171_808
    assert point.rule == (
        f"your autoCondenseContext of false ({file}): it truncates instead at 90 % of the "
        "200,000-token window less 8,192 for output: 171,808"
    )
    vscode_state(storage, {"autoCondenseContextPercent": 2})  # under its minimum of 5: not taken
    point = Config(CATALOGUE).for_session(load(folder)).account.point
    assert (
        point is not None and point.rule == "90 % of the 200,000-token window less 8,192 for output: 171,808"
    )


def test_its_exported_settings_file_is_read_where_vs_codes_state_says_nothing_and_apply_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file VS Code's `roo-cline.autoImportSettingsPath` names (Roo Code imports it at
    start) is read where its state holds nothing, and is where `apply` writes the
    threshold: a diff first, then written with the file as it was kept; without one named,
    apply says where the settings are instead."""
    monkeypatch.setenv("VSCODE_PORTABLE", str(tmp_path / "portable"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user = tmp_path / "portable" / "user-data" / "User"
    refused = run("apply", "roo-code", "trigger_percent=60", "--write")
    assert refused.returncode == 2 and "Roo Code's settings file is not here" in refused.stderr
    assert "roo-cline.autoImportSettingsPath" in refused.stderr
    exported = tmp_path / "home" / "roo-code-settings.json"
    exported.parent.mkdir(parents=True)
    exported.write_text('{\n  "providerProfiles": {"currentApiConfigName": "default", "apiConfigs": {}},\n'
                        '  "globalSettings": {\n    "autoCondenseContextPercent": 80\n  }\n}\n')  # fmt: skip
    user.mkdir(parents=True)
    named = '"roo-cline.autoImportSettingsPath": "~/roo-code-settings.json"'
    vscode = f"{{\n  // Roo Code imports this at start\n  {named}\n}}\n"
    (user / "settings.json").write_text(vscode)
    folder = condensed(user / "globalStorage" / "rooveterinaryinc.roo-cline" / "tasks" / "t1")
    point = Config(CATALOGUE).for_session(load(folder)).account.point
    assert point is not None and point.tokens == 160_000
    assert point.rule.startswith(f"your autoCondenseContextPercent of 80 ({exported}): 80 % of the")
    shown = run("apply", "roo-code", "trigger_percent=60")
    assert '-    "autoCondenseContextPercent": 80' in shown.stdout and "(not written" in shown.stdout
    wrote = run("apply", "roo-code", "trigger_percent=60", "--write", "--force")
    assert wrote.returncode == 0 and "wrote globalSettings.autoCondenseContextPercent = 60" in wrote.stdout
    assert '"autoCondenseContextPercent": 60' in exported.read_text()
    assert list(exported.parent.glob("roo-code-settings.json.*bak*")), "the file as it was is kept"


def test_its_condense_percent_is_a_what_if_by_its_own_name(tmp_path: Path) -> None:
    """`--roo-condense-percent` sets the roo-code replay's threshold, as the family's flag
    does, and is refused for another strategy."""
    folder = str(condensed(tmp_path / "t1"))
    own = json.loads(
        run("simulate", "--json", "--strategy", "roo-code", "--roo-condense-percent", "60", folder).stdout
    )
    family = json.loads(
        run(
            "simulate", "--json", "--strategy", "roo-code", "--summarize-trigger-percent", "60", folder
        ).stdout
    )
    plain = json.loads(run("simulate", "--json", "--strategy", "roo-code", folder).stdout)
    assert own == family != plain
    refused = run("simulate", "--strategy", "cline", "--roo-condense-percent", "60", folder)
    assert (
        refused.returncode == 2
        and "--roo-condense-percent is an option of roo-code, not of cline" in refused.stderr
    )

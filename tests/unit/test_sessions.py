"""Finding the user's sessions and keeping their rows between runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from compaction_inspector.core.agents.claude_code.agent import FORMAT as CLAUDE_CODE
from compaction_inspector.core.agents.codex.agent import FORMAT as CODEX
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.model import Block, Message, Session
from compaction_inspector.core.session_index import Index
from compaction_inspector.core.sessions import FOLDER, find, rows, subagent_files
from compaction_inspector.sample_sessions import path
from tests.helpers import load


def home(tmp_path: Path) -> Path:
    project = tmp_path / "projects" / "-nowhere"
    (project / "s1" / "subagents").mkdir(parents=True)
    (project / "s1.jsonl").write_bytes(path("claude_code_compacted.jsonl").read_bytes())
    (project / "s1" / "subagents" / "agent-x.jsonl").write_text("{}\n")
    (tmp_path / "projects" / "loop").symlink_to(tmp_path / "projects")  # a link is never followed
    return tmp_path / "projects"


def test_rows_are_kept_by_size_and_time_and_a_corrupt_index_is_rescanned(tmp_path: Path) -> None:
    found = find(CATALOGUE, [(CLAUDE_CODE, home(tmp_path))])
    assert [(f.path.name, [a.name for a in f.subagents]) for f in found] == [
        ("s1.jsonl", ["agent-x.jsonl"]),
        ("agent-x.jsonl", []),  # a row of its own, named by its session
    ]
    found = found[:1]
    index = tmp_path / "index.json"
    [row] = rows(CATALOGUE, found, index=Index(index))
    assert (row.title, row.compactions, row.subagents, row.problem) == (
        "Make test_expiry deterministic with a fake clock", 1, 1, None,
    )  # fmt: skip
    kept = json.loads(index.read_text())
    assert list(kept["rows"]) == [str(found[0].path)]
    index.write_text("{not json")  # corrupt: ignored, the file scanned again, the index rewritten
    assert rows(CATALOGUE, found, index=Index(index)) == [row]
    assert json.loads(index.read_text()) == kept
    before = index.stat()
    assert rows(CATALOGUE, found, index=Index(index)) == [
        row
    ]  # nothing changed: the index is not written again
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_sub_agent_file_a_task_result_names() -> None:
    session = load(path("claude_code_compacted.jsonl"))
    assert subagent_files(CATALOGUE, session, session.messages) == []  # it names none


def test_only_a_task_calls_result_names_a_sub_agent(tmp_path: Path) -> None:
    """Source code a tool read ("agentId: string") names nothing; the result of a Task
    call names its agent on a line of its own."""
    messages = (
        Message("assistant", (Block.tool_use("r1", "Read", {"file_path": "types.ts"}),)),
        Message("user", (Block.tool_result("r1", "interface Run {\nagentId: string\n}"),)),
        Message("assistant", (Block.tool_use("t1", "Task", {"prompt": "look"}),)),
        Message("user", (Block.tool_result("t1", "Done.\nagentId: a2271d1 (for resuming)"),)),
    )
    session = Session(messages, CLAUDE_CODE, str(tmp_path / "s.jsonl"))
    assert subagent_files(CATALOGUE, session, messages) == [
        tmp_path / "s" / "subagents" / "agent-a2271d1.jsonl"
    ]
    assert subagent_files(CATALOGUE, session, messages[:2]) == []
    # the call may sit outside the messages looked at: the session's calls say which results count
    assert subagent_files(CATALOGUE, session, messages[3:], frozenset({"t1"})) == subagent_files(
        CATALOGUE, session, messages
    )


def test_a_damaged_index_entry_is_scanned_again(tmp_path: Path) -> None:
    """Whatever the index holds, each file gets its true row and the index is rewritten."""
    found = find(CATALOGUE, [(CLAUDE_CODE, home(tmp_path))])[:1]
    index = tmp_path / "index.json"
    [row] = rows(CATALOGUE, found, index=Index(index))
    kept = json.loads(index.read_text())
    entry = kept["rows"][str(found[0].path)]
    damaged = [
        {**kept, "rows": [1, 2]},
        {**kept, "rows": {str(found[0].path): {"key": entry["key"]}}},  # no "row"
        {**kept, "rows": {str(found[0].path): {**entry, "row": {**entry["row"], "messages": "many"}}}},
        {**kept, "rows": {str(found[0].path): {**entry, "row": {**entry["row"], "extra": 1}}}},
        {**kept, "rows": {str(found[0].path): {**entry, "row": {**entry["row"], "bytes": 10**400}}}},
        [kept],
    ]
    for value in damaged:
        index.write_text(json.dumps(value))
        assert rows(CATALOGUE, found, index=Index(index)) == [row]
        assert json.loads(index.read_text()) == kept
    index.write_text("[" * 100_000 + "]" * 100_000)  # deeper than any parser recurses
    assert rows(CATALOGUE, found, index=Index(index)) == [row]


def test_a_file_that_cannot_be_read_is_a_row_that_says_why(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    os.mkfifo(project / "fifo.jsonl")  # listed by the Codex walk and a folder, never opened to wait
    (project / "deep.jsonl").write_text('{"type": "user", "message": ' + "[" * 5000 + "]" * 5000 + "}\n")
    listed = rows(
        CATALOGUE, find(CATALOGUE, [(FOLDER, tmp_path / "projects")]), index=Index(tmp_path / "index.json")
    )
    problems = {Path(r.path).name: r.problem for r in listed}
    assert problems["fifo.jsonl"] is not None and problems["fifo.jsonl"].endswith(
        "a FIFO, not a file to read"
    )
    assert problems["deep.jsonl"] is not None


def test_codex_and_proxy_log_rows_take_the_times_and_folder_they_record(tmp_path: Path) -> None:
    """A rollout copied today keeps its own times and its cwd, not the file's time and
    the date folder; a proxy log's span is its requests' times."""
    day = tmp_path / "sessions" / "2026" / "06" / "18"
    day.mkdir(parents=True)
    (day / "rollout-x.jsonl").write_bytes(path("codex_rollout.jsonl").read_bytes())
    [row] = rows(
        CATALOGUE, find(CATALOGUE, [(CODEX, tmp_path / "sessions")]), index=Index(tmp_path / "index.json")
    )
    assert (row.project, row.started, row.last_activity) == (
        "/home/dev/webapp", "2026-11-20T16:40:06.000Z", "2026-11-20T16:41:18.000Z",
    )  # fmt: skip
    body = json.loads(path("anthropic_request.json").read_text())
    log = tmp_path / "logs" / "proxy.jsonl"
    log.parent.mkdir()
    log.write_text(
        "".join(
            json.dumps({"request": {"timestamp": t, "body": body}}) + "\n"
            for t in (1781514968.751, 1781515286.74)
        )
    )
    [row] = rows(
        CATALOGUE, find(CATALOGUE, [(FOLDER, tmp_path / "logs")]), index=Index(tmp_path / "index2.json")
    )
    assert (row.started, row.last_activity) == ("2026-06-15T09:16:08.751Z", "2026-06-15T09:21:26.740Z")


def test_the_index_knows_its_rows_without_looking_at_the_files(tmp_path: Path) -> None:
    found = find(CATALOGUE, [(CLAUDE_CODE, home(tmp_path))])
    index = tmp_path / "index.json"
    assert Index(index).known(found) == []  # nothing kept yet
    listed = rows(CATALOGUE, found, index=Index(index))
    for f in found:
        f.path.unlink()  # known() never opens or stats a file
    assert Index(index).known(found) == listed
    assert sorted(Path(r.path).name for r in listed) == ["agent-x.jsonl", "s1.jsonl"]


def test_a_claude_code_row_names_the_folder_it_ran_in_and_a_sub_agent_its_session(tmp_path: Path) -> None:
    """The folder the session records, not the encoded folder name (which cannot be read
    back when the path is not on this machine); a sub-agent says whose it is."""
    found = find(CATALOGUE, [(CLAUDE_CODE, home(tmp_path))])
    session, agent = rows(CATALOGUE, found, index=Index(tmp_path / "index.json"))
    assert (session.project, session.subagent_of) == ("/home/dev/flaky", None)
    assert (agent.project, agent.subagent_of) == ("-nowhere", "s1")  # it records no folder of its own


def test_a_project_is_named_by_its_last_two_folders_or_its_last_within_a_width() -> None:
    from compaction_inspector.core.session_index import short_project

    assert short_project("/home/dev/entireio/cli") == "entireio/cli"
    assert [
        short_project(p, 14) for p in ("/h/EntityProcess/agentv", "/a/alex/ent-109-type-consolidation")
    ] == [
        "agentv",
        "ent-109-type-…",
    ]


def test_a_session_begun_with_clear_is_titled_by_the_prompt_after_it(tmp_path: Path) -> None:
    from compaction_inspector.core.contract.files import Found
    from compaction_inspector.core.sessions import scan

    clear = "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
    clear += "<command-args></command-args>"
    stdout = "<local-command-stdout></local-command-stdout>"  # what /clear printed: nothing
    lines = [
        {"type": "user", "uuid": "c", "message": {"role": "user", "content": clear}},
        {"type": "user", "uuid": "o", "message": {"role": "user", "content": stdout}},
        {"type": "user", "uuid": "p", "message": {"role": "user", "content": "Fix the flaky upload test"}},
    ]
    session = tmp_path / "s.jsonl"
    session.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert scan(CATALOGUE, Found(session, CLAUDE_CODE, "-nowhere")).title == "Fix the flaky upload test"
    session.write_text(json.dumps(lines[0]) + "\n")  # nothing asked yet: the command it ran
    assert scan(CATALOGUE, Found(session, CLAUDE_CODE, "-nowhere")).title == "/clear"


def test_the_files_not_seen_before_are_read_in_forked_processes_to_the_same_rows(tmp_path: Path) -> None:
    """`sessions --jobs`: the files whose rows are not kept are read in processes forked
    from this one; the rows, their order and what the index keeps are those read here,
    and each is heard of as it is made."""
    from compaction_inspector.core.forked import can_fork

    folder = tmp_path / "folder"
    folder.mkdir()
    names = [
        "claude_code_session.jsonl",
        "claude_code_compacted.jsonl",
        "codex_rollout.jsonl",
        "agent_only_session.jsonl",
    ]
    for name in names:
        (folder / name).write_bytes(path(name).read_bytes())
    found = find(CATALOGUE, [(FOLDER, folder)])
    here = rows(CATALOGUE, found, index=Index(tmp_path / "here.json"))
    heard: list[tuple[int, int]] = []
    rows(CATALOGUE, found[:1], index=Index(tmp_path / "forked.json"))  # one kept before: the rest forked
    forked = rows(
        CATALOGUE,
        found,
        lambda n, of, _: heard.append((n, of)),
        jobs=2,
        index=Index(tmp_path / "forked.json"),
    )
    assert can_fork() and forked == here and len(here) == len(names)
    assert heard == [(n, len(names)) for n in range(1, len(names) + 1)]
    kept = json.loads((tmp_path / "forked.json").read_text())["rows"]
    assert kept == json.loads((tmp_path / "here.json").read_text())["rows"]

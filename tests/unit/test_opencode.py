"""opencode's database read as opencode writes it. The databases here are built from
opencode's schema (tables `session`, `message`, `part`, each row's JSON in `data`, as
packages/opencode's migrations make them), with rows shaped as opencode 1.15 writes
them; the compactions are built from its compaction.ts (a user message with a
`compaction` part, then an assistant message with `summary: true`), since the real
database the team has holds none."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.sessions import subagent, transcripts_under
from compaction_inspector.core.strategies.summarize import trigger
from tests.helpers import load
from tests.hostile import COMMANDS, run_cli

SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""
T0 = 1_779_000_000_000
MODEL = {"modelID": "claude-sonnet-4-5", "providerID": "anthropic"}


def tokens(prompt: int, output: int, read: int = 0) -> dict[str, Any]:
    return {
        "total": prompt + output,
        "input": prompt - read,
        "output": output,
        "reasoning": 0,
        "cache": {"read": read, "write": 0},
    }


class Db:
    """A database written as opencode writes one, row by row."""

    def __init__(self, path: Path, wal: bool = False) -> None:
        self.path, self.n = path, 0
        self.db = sqlite3.connect(path)
        if wal:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA wal_autocheckpoint=0")
        self.db.executescript(SCHEMA)

    def id(self, kind: str) -> str:
        self.n += 1
        return f"{kind}_{self.n:06d}"

    def session(self, title: str, parent: str | None = None) -> str:
        sid = self.id("ses")
        self.db.execute(
            "INSERT INTO session VALUES (?, 'p', ?, 'slug', '/work/app', ?, '1.15.4', ?, ?)",
            (sid, parent, title, T0 + self.n, T0 + self.n),
        )
        return sid

    def message(self, sid: str, info: dict[str, Any], parts: list[dict[str, Any]]) -> str:
        mid = self.id("msg")
        self.db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, T0, T0, json.dumps(info)))
        for part in parts:
            self.db.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (self.id("prt"), mid, sid, T0, T0, json.dumps(part)),
            )
        self.db.execute("UPDATE session SET time_updated = ? WHERE id = ?", (T0 + self.n, sid))
        return mid

    def user(self, sid: str, text: str, **extra: Any) -> str:
        parts = [{"type": "text", "text": text}] if text else []
        return self.message(sid, {"role": "user", "time": {"created": T0}, **extra}, parts)

    def step(
        self, sid: str, parent: str, prompt: int, tools: int = 1, cost: float = 0.01, **info: Any
    ) -> str:
        used = tokens(prompt, 40, read=prompt // 2)
        parts: list[dict[str, Any]] = [{"type": "step-start"}, {"type": "text", "text": "working " * 20}]
        for k in range(tools):
            parts.append(
                {
                    "type": "tool",
                    "tool": "read",
                    "callID": f"call_{self.n}_{k}",
                    "state": {
                        "status": "completed",
                        "input": {"filePath": f"f{k}.py"},
                        "output": "x = 1\n" * 200,
                    },
                }
            )
        parts.append({"type": "step-finish", "tokens": used, "cost": cost})
        return self.message(
            sid,
            {"role": "assistant", "parentID": parent, "cost": cost, "tokens": used, **MODEL, **info},
            parts,
        )

    def close(self) -> None:
        self.db.commit()
        self.db.close()


def built(tmp_path: Path, compacted: bool = False) -> tuple[Path, str, str]:
    """A data folder with a database: a main session (with a compaction when `compacted`)
    and a sub-agent session under it."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    db = Db(folder / "opencode.db")
    main = db.session("Fix the parser")
    for n in range(6):
        asked = db.user(main, f"step {n}: fix the parser's handling of case {n}")
        db.step(main, asked, 20_000 + 20_000 * n)
        if compacted and n == 3:
            ask = db.message(
                main,
                {"role": "user", "time": {"created": T0}},
                [{"type": "compaction", "auto": True, "overflow": True}],
            )
            db.message(
                main,
                {"role": "assistant", "parentID": ask, "summary": True, "mode": "compaction",
                 "agent": "compaction", "cost": 0.02, "tokens": tokens(110_000, 900), **MODEL,
                 "finish": "stop"},
                [{"type": "text", "text": "We fixed cases 0 to 3 of the parser."}],
            )  # fmt: skip
    sub = db.session("Explore the tests (@explore subagent)", parent=main)
    db.step(sub, db.user(sub, "find the parser's tests"), 9_000, tools=2)
    db.close()
    return folder / "opencode.db", main, sub


def test_each_step_is_a_response_with_its_tokens_and_tool_results_after_it(tmp_path: Path) -> None:
    file, main, sub = built(tmp_path)
    session = load(f"{file}#{main}")
    assert session.format == "opencode" and session.path == f"{file}#{main}"
    answered = [m for m in session.messages if m.usage is not None]
    assert [m.usage.prompt_tokens for m in answered if m.usage] == [20_000 + 20_000 * n for n in range(6)]
    assert answered[0].usage is not None and answered[0].usage.cache_read_input_tokens == 10_000
    assert answered[0].usage.output_tokens == 40 and answered[0].usage.model == "claude-sonnet-4-5"
    roles = [m.role for m in session.messages[:3]]
    assert roles == ["user", "assistant", "user"] and session.messages[2].is_tool_result
    assert session.metadata["recorded_usd"] == pytest.approx(0.06)
    assert session.metadata["subagent_sessions"] == [f"{file}#{sub}"]


def test_the_newest_main_session_opens_where_none_is_named_and_a_wrong_name_is_said(tmp_path: Path) -> None:
    file, main, _ = built(tmp_path)
    assert load(file).metadata["session_id"] == main
    with pytest.raises(LoadError, match="holds no session 'ses_nope'"):
        load(f"{file}#ses_nope")


def test_a_compaction_is_its_part_and_its_summary_with_the_count_before_it_and_its_own_call(
    tmp_path: Path,
) -> None:
    file, main, _ = built(tmp_path, compacted=True)
    session = load(f"{file}#{main}")
    (compaction,) = session.compactions
    assert compaction.trigger == "auto" and compaction.pre_tokens == 80_000 + 40
    assert compaction.call is not None and compaction.call.prompt_tokens == 110_000
    boundary = session.messages[compaction.index]
    assert boundary.is_compact_boundary and session.messages[compaction.index + 1].is_compact_summary
    inspection = Inspection.of(session, Config(CATALOGUE).for_session(session))
    (own,) = inspection.own_compactions()
    assert own.count is not None and own.count.agent == "opencode" and own.count.total == 80_040


def test_the_database_and_its_folder_are_left_as_they_were(tmp_path: Path) -> None:
    """Read with its write-ahead log (what only the log holds is read), nothing written
    and nothing made beside it."""
    folder = tmp_path / "opencode"
    folder.mkdir()
    db = Db(folder / "opencode.db", wal=True)
    main = db.session("in the log only")
    db.step(main, db.user(main, "hello"), 1_000)
    db.db.commit()  # committed to the log, not folded into the database: opencode still running
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "opencode.db-wal" in before
    session = load(folder / "opencode.db")
    assert session.metadata["title"] == "in the log only" and len(session.messages) == 3
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    db.db.close()


def test_sessions_lists_each_session_with_its_sub_agents_and_their_tokens(tmp_path: Path) -> None:
    file, main, sub = built(tmp_path)
    out = run_cli(["sessions", "--json", "--opencode-dir", str(file.parent)])
    rows = {r["path"]: r for r in json.loads(out.out) if r["agent"] == "opencode"}
    assert set(rows) == {f"{file}#{main}", f"{file}#{sub}"}
    assert rows[f"{file}#{sub}"]["subagent_of"] == main and rows[f"{file}#{main}"]["subagents"] == 1
    own = sum(20_000 + 20_000 * n for n in range(6)) // 2
    assert rows[f"{file}#{main}"]["tokens"] == {
        "claude-sonnet-4-5": {
            "uncached_input": own + 4_500,
            "cache_read": own + 4_500,
            "cache_write_5m": 0,
            "cache_write_1h": 0,
            "output": 7 * 40,
        }
    }
    assert rows[f"{file}#{main}"]["title"] == "Fix the parser"


def test_its_point_is_its_strategys_trigger_in_the_window_its_model_takes(tmp_path: Path) -> None:
    file, main, _ = built(tmp_path)
    session = load(f"{file}#{main}")
    config = Config(CATALOGUE).for_session(session)
    assert config.agent == "opencode" and config.window == Window(200_000, 32_000)
    point = CATALOGUE.by_format["opencode"].point(config.window, config)
    assert config.account.tokens == point.tokens == 168_000
    assert point.rule == ("its context 200,000 less its output allowance 32,000 (min(output limit, 32,000))")


def test_the_models_catalogue_in_opencodes_cache_gives_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file, main, _ = built(tmp_path)
    cache = tmp_path / "cache"
    (cache / "opencode").mkdir(parents=True)
    catalogue = {
        "anthropic": {"models": {"claude-sonnet-4-5": {"limit": {"context": 262_144, "output": 65_536}}}}
    }
    (cache / "opencode" / "models.json").write_text(json.dumps(catalogue))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    config = Config(CATALOGUE).for_session(load(f"{file}#{main}"))
    assert config.window == Window(262_144, 32_000) and config.account.tokens == 230_144
    assert "models.dev's limits for claude-sonnet-4-5" in str(config.window_source)


@pytest.mark.parametrize(
    ("limit", "point", "rule"),
    [
        # no input limit: the context less min(output, 32,000), nothing else
        (
            {"context": 200_000, "output": 32_000},
            168_000,
            "its context 200,000 less its output allowance 32,000",
        ),
        (
            {"context": 128_000, "output": 16_384},
            111_616,
            "its context 128,000 less its output allowance 16,384",
        ),
        # an input limit: that limit less min(20,000, the output allowance)
        (
            {"context": 400_000, "input": 272_000, "output": 128_000},
            252_000,
            "its input limit 272,000 less 20,000",
        ),
        (
            {"context": 400_000, "input": 272_000, "output": 8_192},
            263_808,
            "its input limit 272,000 less 8,192",
        ),
    ],
)
def test_its_overflow_rule_has_two_branches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: dict[str, int], point: int, rule: str
) -> None:
    """packages/opencode/src/session/overflow.ts (1.15 and later): `usable` is the input
    limit less `reserved` where the model has one, else the context less its output
    allowance; a response whose tokens reach it overflows (a replay fires at it, not below)."""
    file, main, _ = built(tmp_path)
    (tmp_path / "cache" / "opencode").mkdir(parents=True)
    catalogue = {"anthropic": {"models": {"claude-sonnet-4-5": {"limit": limit}}}}
    (tmp_path / "cache" / "opencode" / "models.json").write_text(json.dumps(catalogue))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = Config(CATALOGUE).for_session(load(f"{file}#{main}"))
    assert config.account.tokens == config.window.usable == point
    assert config.account.point is not None and config.account.point.rule.startswith(rule)
    options = config.options("opencode")
    assert trigger(options, config.window)[0] == point


def test_every_command_takes_a_session_of_the_database(tmp_path: Path) -> None:
    file, main, _ = built(tmp_path, compacted=True)
    name = f"{file}#{main}"
    for command in COMMANDS:
        target = str(file.parent) if command[0] == "sweep" else name  # a sweep takes folders
        outcome = run_cli([command[0], target, *command[1:]])
        assert outcome.crash is None and outcome.code == 0, (command, outcome.err)
    analysed = json.loads(run_cli(["analyze", name, "--json"]).out)
    assert analysed["format"] == "opencode" and analysed["cost"]["agent_recorded_usd"] == "0.080000"


def test_a_folder_or_the_database_named_gives_every_session_it_holds(tmp_path: Path) -> None:
    file, main, sub = built(tmp_path)
    (file.parent / "notes.jsonl").write_text("")
    names = [f"{file}#{main}", f"{file}#{sub}"]
    assert [str(p) for p in transcripts_under(CATALOGUE, [str(file)])] == names
    in_folder = [str(p) for p in transcripts_under(CATALOGUE, [str(file.parent)])]
    assert in_folder == [str(file.parent / "notes.jsonl"), *names]


def test_a_task_calls_result_opens_the_sub_agent_session_it_names(tmp_path: Path) -> None:
    file, main, sub = built(tmp_path)
    db = sqlite3.connect(file)
    call = {
        "type": "tool",
        "tool": "task",
        "callID": "call_task",
        "state": {
            "status": "completed",
            "input": {"prompt": "find the tests"},
            "output": f"task_id: {sub} (for resuming)",
        },
    }
    ask = db.execute("SELECT id FROM message WHERE session_id = ? ORDER BY id LIMIT 1", (main,)).fetchone()[0]
    db.execute("INSERT INTO part VALUES ('prt_zz', ?, ?, 0, 0, ?)", (ask + "x", main, json.dumps(call)))
    db.execute(
        "INSERT INTO message VALUES (?, ?, 0, 0, ?)",
        (
            ask + "x",
            main,
            json.dumps({"role": "assistant", "parentID": ask, "tokens": tokens(1_000, 10), **MODEL}),
        ),
    )
    db.commit()
    db.close()
    session = load(f"{file}#{main}")
    near = [m for m in session.messages if any(b.tool_use_id == "call_task" for b in m.blocks)]
    assert subagent(CATALOGUE, session, near) == Path(f"{file}#{sub}")


def test_its_own_compaction_settings_move_its_point_and_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """opencode's `compaction` settings (built here from its documented keys, a comment
    and a trailing comma as its JSONC allows): the global reserve, then the project's
    `auto: false` on top of it."""
    file, main, _ = built(tmp_path)
    home = tmp_path / "config"
    (home / "opencode").mkdir(parents=True)
    jsonc = '{\n  // mine\n  "compaction": {"reserved": 30000,},\n}\n'
    (home / "opencode" / "opencode.jsonc").write_text(jsonc)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    session = load(f"{file}#{main}")
    project = tmp_path / "project"
    project.mkdir()
    session = dataclasses.replace(session, metadata={**session.metadata, "cwd": str(project)})
    config = Config(CATALOGUE).for_session(session)
    # no input limit: `reserved` is not used (overflow.ts), and the point says so
    assert config.account.tokens == 168_000
    assert config.account.point is not None and "compaction.reserved of 30,000" in config.account.point.rule
    assert "applies only to a model with an input limit" in config.account.point.rule
    catalogue = {
        "anthropic": {
            "models": {
                "claude-sonnet-4-5": {"limit": {"context": 400_000, "input": 272_000, "output": 128_000}}
            }
        }
    }
    (tmp_path / "cache" / "opencode").mkdir(parents=True)
    (tmp_path / "cache" / "opencode" / "models.json").write_text(json.dumps(catalogue))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = Config(CATALOGUE).for_session(session)
    assert config.account.tokens == 272_000 - 30_000
    assert config.options("opencode").trigger_reserve == 30_000
    assert (
        config.account.point is not None and "your compaction.reserved of 30,000" in config.account.point.rule
    )
    (project / "opencode.json").write_text(json.dumps({"compaction": {"auto": False}}))
    config = Config(CATALOGUE).for_session(session)
    assert config.account.tokens is None
    assert config.account.point is not None and config.account.point.rule.startswith(
        "your compaction.auto of false"
    )


def test_a_database_that_cannot_be_read_is_one_row_saying_why(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    folder.mkdir()
    (folder / "opencode.db").write_bytes(b"SQLite format 3\x00not a database")
    out = run_cli(["sessions", "--json", "--opencode-dir", str(folder)])
    assert out.crash is None and out.code == 0, out.err
    (row,) = [r for r in json.loads(out.out) if r["agent"] == "opencode"]
    assert row["problem"].endswith("file is not a database") and row["messages"] == 0
    refused = run_cli(["analyze", str(folder / "opencode.db")])
    assert refused.code == 2 and "file is not a database" in refused.err


def test_a_session_followed_is_read_again_when_opencode_writes_to_its_database(tmp_path: Path) -> None:
    from compaction_inspector.tui.session.follow import Follower

    file, main, _ = built(tmp_path)
    name = f"{file}#{main}"
    follower = Follower(CATALOGUE.formats, name, load(name))
    assert follower.poll() is None  # nothing written since
    db = Db.__new__(Db)
    db.path, db.n, db.db = file, 10_000, sqlite3.connect(file)
    db.step(main, db.user(main, "one more step"), 140_000)
    db.close()
    polled = follower.poll()
    assert polled is not None and not polled[1]  # read again, not said to be replaced
    answered = [m for m in polled[0].messages if m.usage is not None]
    assert answered[-1].usage is not None and answered[-1].usage.prompt_tokens == 140_000


def exported(file: Path, session: str) -> dict[str, Any]:
    """The session as `opencode export` writes it: its info, then each message's info and parts."""
    db = sqlite3.connect(file)
    row = db.execute("SELECT id, parent_id, directory, title, version, time_created, time_updated "
                     "FROM session WHERE id = ?", (session,)).fetchone()  # fmt: skip
    info = {"id": row[0], "directory": row[2], "title": row[3], "version": row[4],
            "time": {"created": row[5], "updated": row[6]}}  # fmt: skip
    messages = [
        {
            "info": {**json.loads(data), "id": mid},
            "parts": [
                json.loads(p)
                for (p,) in db.execute("SELECT data FROM part WHERE message_id = ? ORDER BY id", (mid,))
            ],
        }
        for mid, data in db.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (session,)
        )
    ]
    db.close()
    return {"info": info, "messages": messages}


def test_an_opencode_export_reads_as_the_session_it_was_exported_from(tmp_path: Path) -> None:
    file, main, _ = built(tmp_path, compacted=True)
    target = tmp_path / "session.json"
    target.write_text(json.dumps(exported(file, main), indent=2))
    from_db, from_export = load(f"{file}#{main}"), load(target)
    assert from_export.format == "opencode" and from_export.metadata["title"] == "Fix the parser"
    assert [m.usage for m in from_export.messages] == [m.usage for m in from_db.messages]
    assert [m.text for m in from_export.messages] == [m.text for m in from_db.messages]
    assert from_export.compactions == from_db.compactions
    analysed = json.loads(run_cli(["analyze", str(target), "--json"]).out)
    from_the_db = json.loads(run_cli(["analyze", f"{file}#{main}", "--json"]).out)
    assert analysed["format"] == "opencode" and analysed["requests"] == from_the_db["requests"] == 6


def test_a_row_stored_as_a_blob_is_skipped_and_counted_and_the_list_stands(tmp_path: Path) -> None:
    """A part's `data` stored as a BLOB (or a number) is not opencode's JSON text: that row is
    skipped and said, its session and every other one still open and list."""
    file, main, sub = built(tmp_path)
    db = sqlite3.connect(file)
    (message,) = db.execute(
        "SELECT id FROM message WHERE session_id = ? ORDER BY id LIMIT 1", (main,)
    ).fetchone()
    db.execute("INSERT INTO part VALUES ('prt_blob', ?, ?, 0, 0, ?)", (message, main, b'{"type": "text"}'))
    db.execute("INSERT INTO part VALUES ('prt_number', ?, ?, 0, 0, 7)", (message, main))
    db.commit()
    db.close()
    listed = run_cli(["sessions", "--json", "--opencode-dir", str(file.parent)])
    assert listed.crash is None and listed.code == 0, listed.err
    rows = [r for r in json.loads(listed.out) if r["agent"] == "opencode"]
    assert {r["path"] for r in rows} == {f"{file}#{main}", f"{file}#{sub}"}
    session = load(f"{file}#{main}")
    said = [d.message for d in session.diagnostics]
    assert f"a part of message {message} is a BLOB of 16 bytes, not JSON text: skipped" in said
    assert f"a part of message {message} is not JSON: skipped" in said  # TEXT affinity: "7"
    analysed = run_cli(["analyze", f"{file}#{main}"])
    assert analysed.crash is None and analysed.code == 0, analysed.err


def test_the_session_table_is_read_once_however_many_sessions_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading each session of a database reads the session table once while the file
    stays as it is (100,000 sessions listed read it once, not once each)."""
    from compaction_inspector.core.agents.opencode import database

    file, main, sub = built(tmp_path)
    reads: list[str] = []
    real = database._read

    def counted(path: Path, query: Any) -> Any:
        reads.append(query.__qualname__)
        return real(path, query)

    monkeypatch.setattr(database, "_read", counted)
    for _ in range(3):
        for name in (main, sub):
            load(f"{file}#{name}")
    assert sum("_catalogue" in r for r in reads) <= 1


def test_an_opencode_db_of_random_bytes_is_said_not_to_be_an_sqlite_database(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    folder.mkdir()
    (folder / "opencode.db").write_bytes(bytes(range(256)) * 16)
    out = run_cli(["sessions", "--opencode-dir", str(folder), "--claude-dir", str(tmp_path / "no")])
    assert out.crash is None and out.code == 0, out.err
    listed = run_cli(["sessions", "--json", "--opencode-dir", str(folder)])
    (row,) = [r for r in json.loads(listed.out) if r["agent"] == "opencode"]
    assert row["problem"] == "opencode.db is not an SQLite database (its first bytes are not SQLite's header)"
    table = " ".join(out.out.split())
    assert "opencode.db is not an SQ" in table and "│ — │ — │ — │ 0 │" in table
    refused = run_cli(["compactions", str(folder / "opencode.db")])
    assert refused.code == 2 and "opencode.db is not an SQLite database" in refused.err


def test_an_absurd_recorded_cost_is_shown_as_recorded_never_a_traceback(tmp_path: Path) -> None:
    """A response's `cost` of 1e30 (a hostile row): `compare` and `analyze` show it whole."""
    file, main, _ = built(tmp_path)
    db = sqlite3.connect(file)
    rows = db.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (main,)).fetchall()
    mid, data = next((i, json.loads(d)) for i, d in rows if json.loads(d).get("role") == "assistant")
    db.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps({**data, "cost": 1e30}), mid))
    db.commit()
    db.close()
    for command in (["compare", "--json"], ["compare"], ["analyze", "--json"], ["analyze"]):
        out = run_cli([command[0], f"{file}#{main}", *command[1:]])
        assert out.crash is None and out.code == 0, (command, out.crash)
    analysed = json.loads(run_cli(["analyze", f"{file}#{main}", "--json"]).out)
    assert analysed["cost"]["agent_recorded_usd"] == "1" + "0" * 30 + ".000000"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"compaction": {"reserved": "abc"}}', "compaction.reserved of 'abc' not used: not a whole number"),
        ('{"compaction": {"reserved": -5}}', "compaction.reserved of '-5' not used"),
        ('{"compaction": {"reserved": 1e309}}', "not used: not JSON"),  # orjson refuses what is past a double
        ('{"compaction": {"auto": "false"}}', "compaction.auto of 'false' not used: not true or false"),
        ('{"compaction": 5}', "compaction not used: not an object"),
        ('{"compaction": {', "not used: not JSON"),
        (None, "not read:"),
    ],
)
def test_settings_opencode_would_not_take_are_named_with_their_file(
    content: str | None, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value of the wrong kind, a malformed file, a folder where the file should be:
    left out, and the window's line says what and why."""
    file, main, _ = built(tmp_path)
    home = tmp_path / "config" / "opencode"
    home.mkdir(parents=True)
    if content is None:
        (home / "opencode.json").mkdir()
    else:
        (home / "opencode.json").write_text(content)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = Config(CATALOGUE).for_session(load(f"{file}#{main}"))
    assert config.account.tokens == 168_000  # its rule, as with no settings
    assert f"your settings {home / 'opencode.json'}" in str(config.window_source), config.window_source
    assert said in str(config.window_source)

"""The command line as a shell user runs it, real files: in this process (`main(argv)`,
its output captured as a terminal takes it), and as a real process where only one shows
what a user sees (the console script's exit codes)."""

import hashlib
import itertools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction_inspector.sample_sessions import names, path
from tests.hostile import run_cli

SAMPLES = names()


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str) -> Ran:
    """`compaction-inspector args` in this process; nothing may escape `main`."""
    outcome = run_cli(list(args))
    assert outcome.crash is None, outcome.crash
    return Ran(outcome.code, outcome.out, outcome.err)


def test_the_console_script_exits_with_each_documented_code(tmp_path: Path) -> None:
    """0 success, 2 unreadable input, 3 nothing safe left to compact, as a shell sees them."""
    script = Path(sys.executable).with_name("compaction-inspector")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "compaction_inspector.tui.cli"]
    ok = subprocess.run([*command, "analyze", str(path()), "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["message_count"] > 0
    missing = subprocess.run(
        [*command, "analyze", str(tmp_path / "nope.jsonl")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and missing.stderr.startswith("compaction-inspector: ")
    stuck = subprocess.run(
        [*command, "compact", str(path()), "--strategy", "ptl-retry", "--context-window", "100"],
        capture_output=True,
        text=True,
    )
    assert stuck.returncode == 3, stuck.stderr


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", SAMPLES)
def test_analyze_json_on_every_sample(name: str) -> None:
    before = digest(path(name))
    proc = run("analyze", str(path(name)), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for key in (
        "format",
        "message_count",
        "tokenizer",
        "tokens",
        "context_window",
        "pressure",
        "messages",
        "api_rounds",
        "volleys",
        "pairing_problems",
        "diagnostics",
    ):
        assert key in out
    assert out["message_count"] == len(out["messages"])
    assert out["tokens"] == sum(m["tokens"] for m in out["messages"])
    openai = name in ("codex_rollout.jsonl", "openai_chat.json")  # their models' own tokenizer, shipped
    assert out["tokenizer"] == ("o200k_base" if openai else "cl100k_base")
    assert {m["kind"] for m in out["messages"]} <= {
        "message",
        "tool_result",
        "summary",
        "marker",
        "meta",
        "attachment",
    }
    context = out["context"]
    assert out["pressure"] == context["pressure"] and context["source"] in ("measured", "estimated")
    for spans in (out["api_rounds"], out["volleys"]):
        assert spans[0]["start"] == 0 and spans[-1]["end"] == out["message_count"]
        assert all(x["end"] == y["start"] for x, y in itertools.pairwise(spans))
    assert digest(path(name)) == before


def test_analyze_json_exact_values_for_the_claude_code_sample() -> None:
    out = json.loads(
        run(
            "analyze",
            str(path()),
            "--json",
            "--tokenizer",
            "chars4",
            "--context-window",
            "100000",
            "--reserved-output",
            "20000",
        ).stdout
    )
    assert out["format"] == "claude-code"
    assert (out["message_count"], out["human_turns"], out["sidechain_count"]) == (65, 4, 4)
    assert out["tokenizer"] == "chars4"
    assert out["context_window"] == 100000 and out["usable_window"] == 80000
    assert [(v["start"], v["end"]) for v in out["volleys"]] == [
        (0, 1),
        (1, 15),
        (15, 32),
        (32, 54),
        (54, 65),
    ]
    assert len(out["api_rounds"]) == 24
    assert out["messages"][29] == {
        "index": 29,
        "role": "system",
        "kind": "marker",
        "id": None,
        "tokens": out["messages"][29]["tokens"],
        "line": 31,
    }
    assert out["context_tokens"] == sum(m["tokens"] for m in out["messages"][30:])
    # the context sent next: the last response's report, its output, what came after it
    assert out["context"] == {
        "tokens": 4009,
        "pressure": 0.050112,
        "source": "measured",
        "breakdown": {"overhead": 1787, "messages": 2222, "attachments": 0, "unrecorded": 0},
        "overhead_tokens": 1787,
        "overhead_source": "first response",
        "scale": 1.284235,
        "scale_pairs": 21,
        "responses": 23,
        "next_response_error": 0.006616,
        "preamble": [],
    }
    assert out["pressure"] == out["context"]["pressure"] == round(4009 / 80000, 6)
    assert out["api_rounds"][0] == {
        "start": 0, "end": 2, "tokens": 63, "reported_prompt_tokens": None, "estimated_prompt_tokens": 1787,
    }  # fmt: skip
    assert out["api_rounds"][-1] == {
        "start": 64, "end": 65, "tokens": 72, "reported_prompt_tokens": 3930, "estimated_prompt_tokens": 3956,
    }  # fmt: skip
    assert out["compactions"] == [
        {
            "index": 29,
            "kind": "compact",
            "trigger": "manual",
            "pre_tokens": 4479,
            "post_tokens": None,
            "agent_count": None,
        }
    ]
    assert out["reported_usage"]["responses"] == 23
    # its 23 responses priced part by part (claude-sonnet-4-5 at genai-prices' rates), and
    # its one compaction's own call estimated apart: 4,479 tokens in, read from the cache,
    # its summary's 222 out; the recorded cost is what its responses reported
    assert out["cost"]["responses"] == 23 and out["cost"]["unpriced"] == {}
    parts = out["cost"]["parts_usd"]
    assert parts["own_compaction_calls_(estimated)"] == "0.004674"  # 4,479 x $0.30/M + 222 x $15/M
    assert (out["cost"]["recorded_usd"], out["cost"]["estimated_compaction_calls_usd"]) == (
        "0.089547",
        "0.004674",
    )
    # the total holds its sub-agents too
    assert (out["cost"]["main_chain_usd"], out["cost"]["total_usd"]) == ("0.094221", "0.099772")
    assert out["cost"]["source"].startswith("genai-prices")


def test_pressure_messages_keeps_the_messages_only_view() -> None:
    out = json.loads(
        run(
            "analyze", str(path()), "--json", "--tokenizer", "chars4", "--context-window", "100000",
            "--reserved-output", "20000", "--pressure", "messages",
        ).stdout
    )  # fmt: skip
    assert out["pressure"] == round(out["context_tokens"] / 80000, 6) == out["context"]["pressure"]
    assert (out["context"]["source"], out["context"]["scale"], out["context"]["overhead_tokens"]) == (
        "messages",
        1.0,
        0,
    )


def test_analyze_says_what_the_compactions_cost_within_the_whole() -> None:
    """The sample's one compaction: its summarize request (4,479 in from the cache, 222
    out, estimated at claude-sonnet-4-5's $0.30 and $15 a million) and the 460 tokens the
    request after it wrote."""
    out = json.loads(run("analyze", str(path()), "--json").stdout)
    assert {k: v for k, v in out["compactions_cost"].items() if k != "each"} == {
        "compactions": 1,
        "usd": "0.006396",
        "of_usd": "0.094221",
        "calls_usd": "0.004674",
        "calls_estimated": True,
        "sent_again_usd": "0.001722",
    }
    assert out["compactions_cost"]["each"][0]["sent_again_tokens"] == 460
    shown = " ".join(run("analyze", str(path())).stdout.split())
    assert (
        "1 compaction cost $0.01 of $0.09: summarize requests $0.00 (estimated) · sent again after them $0.00"
        in shown
    )


def test_analyze_human_output_shows_the_summary() -> None:
    proc = run("analyze", str(path("agent_only_session.jsonl")))
    assert proc.returncode == 0
    # the first prompt is a round of its own: 21 rounds, 20 of them requests
    assert "63 (1 human turn, 21 rounds, 20 requests, 1 volley, 0 sidechain" in " ".join(proc.stdout.split())
    assert "pressure" in proc.stdout


def test_unreadable_input_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nworld\n")
    proc = run("analyze", str(bad), "--json")
    assert proc.returncode == 2
    assert "not a transcript in any known format" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = run("analyze", str(empty))
    assert proc.returncode == 2 and "the file is empty" in proc.stderr


def test_bad_window_is_a_usage_error() -> None:
    proc = run("analyze", str(path()), "--context-window", "1000", "--reserved-output", "5000")
    assert proc.returncode == 2 and "reserved_output must be from 0 to 999" in proc.stderr


def test_markup_in_messages_is_printed_literally(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(
        json.dumps(
            [
                {"role": "user", "content": "[bold red]x[/] \x1b[2J done"},
                {"role": "assistant", "content": "ok"},
            ]
        )
    )
    proc = run("analyze", str(f))
    assert proc.returncode == 0
    assert "[bold red]x[/]" in proc.stdout
    assert "\x1b[2J" not in proc.stdout and "␛[2J" in proc.stdout


def test_compact_json_shape_and_indexes() -> None:
    proc = run(
        "compact",
        str(path()),
        "--strategy",
        "hysteresis",
        "--json",
        "--tokenizer",
        "chars4",
        "--context-window",
        "5000",
        "--reserved-output",
        "1000",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"strategy", "context_start", "messages", "stats", "steps"}
    assert out["context_start"] == 30  # the request: after the transcript's own compaction
    assert out["strategy"] == "hysteresis" and out["stats"]["volleys_summarized"] >= 1
    summaries = [m for m in out["messages"] if m["kind"] == "summary" and m["index"] is None]
    assert summaries and summaries[0]["text"].startswith("[memory:context v1 | session=7f3c2a91")
    kept = [m for m in out["messages"] if m["index"] is not None]
    assert [m["index"] for m in kept] == sorted(m["index"] for m in kept)
    assert set(out["messages"][0]) == {"index", "role", "kind", "id", "tokens", "line", "text"}
    step = out["steps"][0]
    assert {"title", "explanation", "diff", "pressure_before", "pressure_after"} <= set(step)
    # positions in the request, as runs [start, end): its prelude and all after volley 1 stay
    assert step["diff"]["kept"] == [[0, 2], [24, 35]]
    assert step["diff"]["summarized"] == [{"before": i, "after": 2} for i in range(2, 24)]
    assert step["diff"]["dropped"] == step["diff"]["inserted"] == []


def test_compact_trim_with_flags() -> None:
    proc = run(
        "compact",
        str(path("plain_session.yaml")),
        "--strategy",
        "trim",
        "--json",
        "--keep-recent-turns",
        "1",
        "--trigger-turns",
        "1",
        "--turn",
        "3",
    )
    out = json.loads(proc.stdout)
    assert [m["index"] for m in out["messages"]] == [0, 4, 5]
    assert out["stats"]["reason"] == "turn_pressure"


def test_compact_ptl_with_nothing_safe_exits_3() -> None:
    proc = run(
        "compact",
        str(path("agent_only_session.jsonl")),
        "--strategy",
        "ptl-retry",
        "--limit",
        "100",
        "--json",
    )
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["messages"] is None
    assert "Conversation too long. Press esc twice" in proc.stderr


def test_compact_ptl_with_a_user_error_text() -> None:
    proc = run(
        "compact",
        str(path("agent_only_session.jsonl")),
        "--strategy",
        "ptl-retry",
        "--error",
        "prompt is too long: 205000 tokens > 200000 maximum",
        "--json",
    )
    out = json.loads(proc.stdout)
    assert out["stats"]["truncations"] == 1 and out["messages"][0]["index"] is None
    assert "a gap of 5,000 tokens" in out["steps"][0]["explanation"]


def test_compact_write_is_a_new_loadable_file_and_refuses_the_input(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(path().read_bytes())
    before = digest(src)
    out = tmp_path / "compacted.jsonl"
    proc = run(
        "compact", str(src), "--strategy", "microcompact", "--clear-keep-tool-uses", "2", "--write", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(run("analyze", str(out), "--json").stdout)
    assert again["format"] == "claude-code" and again["pairing_problems"] == []
    proc = run("compact", str(src), "--strategy", "microcompact", "--write", str(src))
    assert proc.returncode == 2 and "refusing to overwrite the input file" in proc.stderr
    assert proc.stdout == ""  # refused before any step is shown
    assert digest(src) == before
    written = digest(out)  # an existing file is kept unless --force says otherwise
    proc = run("compact", str(src), "--strategy", "trim", "--write", str(out))
    assert proc.returncode == 2
    assert f"{out} exists: choose another name (--write), or pass --force" in proc.stderr
    assert proc.stdout == ""
    assert digest(out) == written
    proc = run("compact", str(src), "--strategy", "trim", "--write", str(out), "--force")
    assert proc.returncode == 0 and digest(out) != written


def test_a_written_compaction_reads_back_as_the_context_it_reports(tmp_path: Path) -> None:
    """Hysteresis keeps the head of the context and summarizes a volley after it: the
    mark goes where that context starts, so every message it kept is read back as the
    context (the mark once went at the first change, and what came before it was read as
    compacted away)."""
    small = ("--context-window", "5000", "--reserved-output", "500")
    out = tmp_path / "compacted.jsonl"
    proc = run("compact", str(path()), *small, "--strategy", "hysteresis", "--json", "--write", str(out))
    reported = json.loads(proc.stdout)
    again = json.loads(run("analyze", str(out), *small, "--json").stdout)
    mark = again["compactions"][-1]
    assert mark["index"] == reported["context_start"]  # where the context it compacted starts
    assert (
        (mark["pre_tokens"], mark["post_tokens"])
        == (4_009, 2_989)
        == (
            reported["stats"]["tokens_before"],
            reported["stats"]["tokens_after"],
        )
    )
    assert again["message_count"] == reported["context_start"] + 1 + len(reported["messages"])
    assert abs(again["context"]["tokens"] - 2_989) <= 30  # an estimate of what was kept, whole


@pytest.mark.parametrize(
    ("sample", "compaction", "figures"),
    [
        ("claude_code_session.jsonl", ("trim", "--trigger-turns", "1"), "estimated_tokens_"),
        (
            "codex_rollout.jsonl",
            ("microcompact", "--clear-keep-tool-uses", "1"),
            "tokens_",
        ),  # written as plain JSON
    ],
)
def test_a_written_file_keeps_its_usage_and_marks_where_it_was_compacted(
    sample: str, compaction: tuple[str, ...], figures: str, tmp_path: Path
) -> None:
    src = str(path(sample))
    original = json.loads(run("analyze", src, "--json").stdout)["context"]
    # a step that changes nothing: every usage record kept, the same measured figure
    same = tmp_path / "same"
    proc = run("compact", src, "--strategy", "trim", "--trigger-turns", "999", "--write", str(same))
    assert proc.returncode == 0, proc.stderr
    again = json.loads(run("analyze", str(same), "--json").stdout)
    assert (again["context"]["source"], again["context"]["tokens"]) == ("measured", original["tokens"])
    # a trim: the usage before the first changed message stays; the mark carries its figures
    trimmed = tmp_path / "trimmed"
    proc = run("compact", src, "--strategy", *compaction, "--json", "--write", str(trimmed))
    stats = json.loads(proc.stdout)["stats"]
    out = json.loads(run("analyze", str(trimmed), "--json").stdout)
    mark = out["compactions"][-1]
    assert (mark["trigger"], mark["pre_tokens"], mark["post_tokens"]) == (
        "manual",
        stats[figures + "before"],
        stats[figures + "after"],
    )
    # the figure after it is an estimate: from the last response before the first change
    # it made (the usage kept), or from none where it changed the first message it kept
    assert out["reported_usage"]["responses"] > 0
    shown = " ".join(run("analyze", str(trimmed)).stdout.split())
    assert out["context"]["source"] == "estimated" or "estimated since" in shown


def test_simulate_json_and_compare() -> None:
    proc = run(
        "simulate",
        str(path("agent_only_session.jsonl")),
        "--strategy",
        "microcompact",
        "--compare",
        "none",
        "--json",
        "--context-window",
        "30000",
        "--reserved-output",
        "4000",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    first, second = out["simulations"]
    assert first["policy"] == "microcompact" and second["policy"] == "as it ran"
    assert first["totals"]["rounds"] == second["totals"]["rounds"] == 21
    assert first["totals"]["peak_pressure"] < second["totals"]["peak_pressure"]
    assert {"compactions", "peak_pressure", "tokens_removed", "rounds_exceeding_window"} <= set(
        first["totals"]
    )


def test_bad_options_are_usage_errors() -> None:
    proc = run("compact", str(path()), "--strategy", "hysteresis", "--thresholds", "90,80,95")
    assert proc.returncode == 2 and "must satisfy 0 < target < lowest" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_human_compact_output_shows_before_and_after() -> None:
    proc = run(
        "compact",
        str(path()),
        "--strategy",
        "hysteresis",
        "--context-window",
        "5000",
        "--reserved-output",
        "1000",
    )
    assert proc.returncode == 0
    assert "step 1: Summarize volley 1" in proc.stdout and "pressure" in proc.stdout


def test_checkpoint_and_detect(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    before = digest(path())
    proc = run("checkpoint", str(path()), "--memory-dir", str(memory))
    assert proc.returncode == 0 and "appended '## Checkpoint [" in proc.stdout
    assert run("checkpoint", str(path()), "--memory-dir", str(memory), "--detect").returncode == 0
    half = tmp_path / "half.jsonl"
    half.write_text("".join(path().read_text().splitlines(keepends=True)[:36]))
    proc = run("checkpoint", str(half), "--memory-dir", str(memory), "--detect")
    assert proc.returncode == 4
    assert (
        proc.stdout.startswith("truncation likely") and "Recovered context: we were working on" in proc.stdout
    )
    assert digest(path()) == before


def test_simulate_shows_checkpoints() -> None:
    proc = run(
        "simulate",
        str(path("agent_only_session.jsonl")),
        "--checkpoints",
        "--checkpoint-every",
        "5",
        "--json",
        "--context-window",
        "30000",
        "--reserved-output",
        "4000",
    )
    out = json.loads(proc.stdout)
    reasons = {c["index"]: c["reason"] for c in out["checkpoints"]}
    assert reasons[16] == "5 exchanges" and "pressure threshold crossed" in reasons.values()


def test_no_command_ever_writes_the_opened_file(tmp_path: Path) -> None:
    src = tmp_path / "session.jsonl"
    src.write_bytes(path().read_bytes())
    before = (digest(src), src.stat().st_mtime_ns)
    commands = [
        ["analyze", str(src)],
        ["analyze", str(src), "--json"],
        *[
            ["compact", str(src), "--strategy", s, "--json"]
            for s in ("trim", "ptl-retry", "hysteresis", "microcompact")
        ],
        ["compact", str(src), "--strategy", "hysteresis", "--write", str(tmp_path / "out.jsonl")],
        ["simulate", str(src), "--compare", "none", "--checkpoints"],
        ["checkpoint", str(src), "--memory-dir", str(tmp_path / "memory")],
        ["checkpoint", str(src), "--memory-dir", str(tmp_path / "memory"), "--detect"],
    ]
    for command in commands:
        proc = run(*command)
        assert proc.returncode in (0, 3), (command, proc.stderr)
    assert (digest(src), src.stat().st_mtime_ns) == before
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_escape_sequences_and_bidi_are_harmless_in_cli_output(tmp_path: Path) -> None:
    hostile = (
        "\x1b[2J\x1b[H cleared? \x1b]52;c;ZXZpbA==\x07 "  # clear screen, clipboard write
        "\x1b]8;;https://x.test\x07link\x1b]8;;\x07 \u202eevil\u202c \r over"  # hyperlink, bidi, CR
    )
    f = tmp_path / "t.json"
    f.write_text(
        json.dumps([{"role": "user", "content": hostile}, {"role": "assistant", "content": "[red]ok[/red]"}])
    )
    for command in (
        ["analyze", str(f)],
        [
            "compact",
            str(f),
            "--strategy",
            "trim",
            "--trigger-turns",
            "1",
            "--turn",
            "5",
            "--keep-recent-turns",
            "1",
        ],
    ):
        proc = run(*command)
        assert proc.returncode == 0
        for bad in ("\x1b", "\x07", "\u202e", "\r"):
            assert bad not in proc.stdout
    assert "␛[2J␛[H cleared?" in run("analyze", str(f)).stdout


def test_a_small_window_gets_a_reserve_that_fits_it() -> None:
    out = json.loads(run("analyze", str(path()), "--json", "--context-window", "16000").stdout)
    assert (out["context_window"], out["reserved_output"], out["usable_window"]) == (16000, 1600, 14400)
    assert out["window_source"] == "set by command line"


def test_compactions_lists_the_transcripts_own_and_none_is_an_empty_list() -> None:
    out = json.loads(run("compactions", str(path("claude_code_compacted.jsonl")), "--json").stdout)
    assert [
        (c["line"], c["trigger"], c["pre_tokens"], c["measured_before"], c["measured_after"]) for c in out
    ] == [(16, "auto", 16194, 16165, 15555)]
    assert set(out[0]["retention"]) == {"paths", "commands", "identifiers", "numbers", "urls"}
    none = run("compactions", str(path("plain_session.yaml")), "--json")
    assert none.returncode == 0 and json.loads(none.stdout) == []
    human = run("compactions", str(path("claude_code_compacted.jsonl")))
    assert "line 16 · auto · recorded before 16,194 · measured 16,165 → 15,555" in human.stdout


def test_sessions_lists_a_home_of_claude_code_and_codex_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-nowhere-flaky"
    (project / "5b1e9c3d" / "subagents").mkdir(parents=True)
    (project / "5b1e9c3d.jsonl").write_bytes(path("claude_code_compacted.jsonl").read_bytes())
    (project / "5b1e9c3d" / "subagents" / "agent-a1.jsonl").write_bytes(
        path("agent_only_session.jsonl").read_bytes()
    )
    (project / "notes.jsonl").write_text("not a transcript\n")
    day = home / ".codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    (day / "rollout-1.jsonl").write_bytes(path("codex_rollout.jsonl").read_bytes())
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    first = run("sessions", "--json")
    assert first.returncode == 0, first.stderr
    rows = {Path(r["path"]).name: r for r in json.loads(first.stdout)}
    assert set(rows) == {"5b1e9c3d.jsonl", "agent-a1.jsonl", "notes.jsonl", "rollout-1.jsonl"}
    assert (rows["agent-a1.jsonl"]["project"], rows["agent-a1.jsonl"]["subagent_of"]) == (
        "/home/dev/ledger",
        "5b1e9c3d",
    )
    compacted = rows["5b1e9c3d.jsonl"]
    assert (compacted["agent"], compacted["project"], compacted["compactions"], compacted["subagents"]) == (
        "claude-code", "/home/dev/flaky", 1, 1,
    )  # fmt: skip
    assert compacted["title"] == "Make test_expiry deterministic with a fake clock"  # its summary line
    assert compacted["peak_pressure"] == round(16165 / 180_000, 4)  # of Claude Code's usable window
    assert (compacted["messages"], compacted["peak_context_tokens"], compacted["problem"]) == (
        25,
        16165,
        None,
    )
    rollout = rows["rollout-1.jsonl"]
    assert (rollout["agent"], rollout["project"]) == ("codex", "/home/dev/webapp")  # its cwd, not its folder
    assert rows["notes.jsonl"]["problem"].startswith("not a transcript")
    assert (tmp_path / "cache" / "sessions.json").is_file()
    again = run("sessions", "--json")
    assert json.loads(again.stdout) == json.loads(first.stdout)  # the same rows, from the index


def test_compact_numbers_messages_as_the_app_does_after_the_transcripts_own_compaction() -> None:
    """The request starts after the transcript's own compaction (#30): a step's messages
    are named by their place in the transcript, as the app names them, not in the request."""
    proc = run(
        "compact",
        str(path()),
        "--strategy",
        "hysteresis",
        "--context-window",
        "5000",
        "--reserved-output",
        "500",
    )
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())  # as wrapped at the terminal's width
    assert "the request the agent sends next: #30–#64, after the transcript's own last compaction" in words
    assert "≈ summarized #32–#53 into:" in proc.stdout


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


def _streamed(value: Any, data: st.DataObject) -> Any:
    """`value` with some of its lists given as iterators, as the commands give them."""
    if isinstance(value, dict):
        return {k: _streamed(v, data) for k, v in value.items()}
    if isinstance(value, list):
        members = [_streamed(v, data) for v in value]
        return iter(members) if data.draw(st.booleans()) else members
    return value


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the output is read each time
@given(json_values, st.data())
def test_json_output_is_what_json_dumps_writes_iterators_as_arrays(
    capsys: pytest.CaptureFixture[str], value: Any, data: st.DataObject
) -> None:
    """Written member by member through orjson, the JSON is json.dumps(indent=2)'s, byte
    for byte (integers past 64 bits included), and an iterator reads as the list it yields;
    characters a terminal obeys are escaped."""
    from compaction_inspector.tui.cli.json_out import JSON_UNSAFE, print_json

    capsys.readouterr()
    print_json(_streamed(value, data))
    expected = JSON_UNSAFE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, indent=2)
    )
    assert capsys.readouterr().out == expected + "\n"


def test_a_long_streamed_array_is_written_as_json_dumps_writes_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Its members are encoded many at a time; one holding an iterator, or an integer past
    64 bits, is written alone, in its place."""
    from compaction_inspector.tui.cli.json_out import JSON_ARRAY_BATCH, print_json

    members: list[Any] = [
        {"round": n, "sent": [n, {"k": "v"}], "e": {}} for n in range(2 * JSON_ARRAY_BATCH + 7)
    ]
    members[300] = {"points": iter([1, 2]), "a": []}
    members[400] = {"big": 2**70}
    members[401] = []
    value = {"points": iter(members), "shallow": [1, {"deep": [2]}]}
    print_json(value)
    members[300] = {"points": [1, 2], "a": []}
    expected = json.dumps({"points": members, "shallow": [1, {"deep": [2]}]}, indent=2)
    assert capsys.readouterr().out == expected + "\n"


def test_json_output_keeps_floats_and_escapes_controls(capsys: pytest.CaptureFixture[str]) -> None:
    from compaction_inspector.tui.cli.json_out import print_json

    value = {"a": [0.1, 1e-05, 2.5e16, -0.0], "t": "\x1b]52;c;x\x07 \x9b \u202e", 5: None}
    print_json(value)
    out = capsys.readouterr().out
    assert json.loads(out) == {"a": [0.1, 1e-05, 2.5e16, -0.0], "t": value["t"], "5": None}
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out
    print_json({"ascii": "a\x7fb", "plain": "ab"})  # DEL is ASCII: an ASCII text is looked through for it
    assert capsys.readouterr().out == '{\n  "ascii": "a\\u007fb",\n  "plain": "ab"\n}\n'


def test_serve_on_a_busy_or_impossible_port_says_why_in_one_line_and_exits_2() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run("serve", "--port", str(port))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        proc.stderr.strip()
        == f"compaction-inspector: cannot serve on 127.0.0.1:{port}: Address already in use"
    )
    proc = run("serve", "--port", "99999")
    assert (
        proc.returncode == 2
        and "'99999' is not a port (1 to 65535)" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_sessions_piped_is_a_line_a_session_and_its_json_a_list_of_whole_titles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / ".claude" / "projects" / ("-" + "very-long-folder-name-" * 6 + "x")
    project.mkdir(parents=True)
    # without its title line, the session is named by its first prompt
    text = "".join(line for line in path("claude_code_session.jsonl").open() if '"summary"' not in line)
    long_prompt = "Explain " + "why the parser drops the last field of a record " * 3
    (project / "s.jsonl").write_text(text.replace("The config parser", long_prompt, 1))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    listed = run("sessions")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 1 + 2 + 1  # the header, the table's head and rule, one row: nothing wrapped
    assert str(project.parent) in lines[0]  # the places looked in, whole on one line
    rows = json.loads(run("sessions", "--json").stdout)
    assert isinstance(rows, list) and "…" not in rows[0]["title"] and len(rows[0]["title"]) > 80
    assert "print a JSON list" in run("sessions", "--help").stdout


def _agents_home(home: Path) -> None:
    """A home holding a Claude Code session with a sub-agent and a Codex rollout."""
    project = home / ".claude" / "projects" / "-nowhere-flaky"
    (project / "5b1e9c3d" / "subagents").mkdir(parents=True)
    (project / "5b1e9c3d.jsonl").write_bytes(path("claude_code_compacted.jsonl").read_bytes())
    agent = project / "5b1e9c3d" / "subagents" / "agent-a1.jsonl"
    agent.write_bytes(path("agent_only_session.jsonl").read_bytes())
    day = home / ".codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    (day / "rollout-1.jsonl").write_bytes(path("codex_rollout.jsonl").read_bytes())


def _listed_alone(*args: str, whole: bool = False) -> tuple[str, list[str]]:
    """`compaction-inspector sessions args` in a process of its own: what it printed, and
    the product's modules it imported (`whole`: made with the agents, as a first list is)."""
    code = (
        "import io, json, sys\n"
        "from contextlib import redirect_stdout\n"
        "from compaction_inspector.tui.cli import main\n"
        "out = io.StringIO()\n"
        "with redirect_stdout(out):\n"
        + (
            "    from compaction_inspector.core.agents.registry import CATALOGUE\n"
            f"    assert main(['sessions', *{list(args)!r}], CATALOGUE) == 0\n"
            if whole
            else f"    assert main(['sessions', *{list(args)!r}]) == 0\n"
        )
        + "made = sorted(m for m in sys.modules if m.startswith('compaction_inspector'))\n"
        "print(json.dumps([out.getvalue(), made]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    shown, modules = json.loads(done.stdout)
    return shown, modules


def test_a_list_the_index_holds_whole_is_printed_without_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a list is made, the same list again, every session as it was, is printed from
    the index: the same JSON and table, with no agent, strategy or setting imported."""
    home = tmp_path / "home"
    _agents_home(home)
    for name, value in (("HOME", str(home)), ("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))):
        monkeypatch.setenv(name, value)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    claude, nowhere = str(home / ".claude" / "projects"), str(tmp_path / "none")
    for asked in (
        ["--json", "--jobs", "1"],
        [],
        ["--json", "--claude-dir", claude, f"--codex-dir={nowhere}"],
    ):
        made, _ = _listed_alone(*asked, whole=True)  # the first list: made with the agents, and kept
        shown, modules = _listed_alone(*asked)
        assert shown == made and made.strip()
        assert not {
            "compaction_inspector.core.agents.registry",
            "compaction_inspector.core.strategies",
            "compaction_inspector.core.config",
            "compaction_inspector.tui.cli.commandline",
        } & set(modules)
        agents = [m.split(".")[-1] for m in modules if m.startswith("compaction_inspector.core.agents.")]
        assert "places" in agents and not {"agent", "strategy", "rules"} & set(agents)
    # a session new since: the whole command lists it, and it is kept for the next list
    (home / ".codex" / "sessions" / "2026" / "11" / "20" / "rollout-2.jsonl").write_bytes(
        path("codex_rollout.jsonl").read_bytes()
    )
    shown, modules = _listed_alone("--json")
    assert len(json.loads(shown)) == 4 and "compaction_inspector.tui.cli.commandline" in modules
    assert "compaction_inspector.tui.cli.commandline" not in _listed_alone("--json")[1]
    # another program made the list (one that may register other agents): made again
    index = tmp_path / "cache" / "sessions.json"
    kept = json.loads(index.read_text())
    index.write_text(json.dumps({**kept, "made": [0, 0]}))
    assert "compaction_inspector.tui.cli.commandline" in _listed_alone("--json")[1]
    assert json.loads(index.read_text())["made"] == kept["made"]
    # a place that is not one (an index edited by hand): the whole command lists the sessions
    from compaction_inspector.core.session_index import made_by

    wrong = [(p[0], "compaction_inspector.core.agents.registry", *p[2:]) for p in kept["places"]]
    index.write_text(json.dumps({**kept, "places": wrong, "made": made_by(wrong)}))
    assert len(json.loads(_listed_alone("--json")[0])) == 4


@pytest.mark.parametrize(
    ("argv", "read"),
    [
        (["--json"], (True, {})),
        ([], (False, {})),
        (["--claude-dir", "/x", "--jobs=3", "--claude-dir=/y"], (False, {"claude-dir": "/y"})),
        (["--claude-dir", ""], (False, {"claude-dir": ""})),
        (["--help"], None),  # the whole command's parser says it
        (["--claude"], None),  # an abbreviation
        (["--claude-dir"], None),  # its folder missing
        (["--claude-dir", "--json"], None),
        (["--jobs", "0"], None),
        (["--jobs", "two"], None),
        (["--sample"], None),
        (["file.jsonl"], None),
    ],
)
def test_the_kept_list_reads_only_what_it_can_answer(argv: list[str], read: object) -> None:
    from compaction_inspector.tui.cli.kept_sessions import _asked

    assert _asked(argv, {"claude-dir", "codex-dir"}) == read


def test_the_top_level_help_says_what_no_file_opens_and_names_the_apps_own_flags() -> None:
    text = " ".join(run("--help").stdout.split())
    mine = "Claude Code, Codex, opencode, Gemini CLI, Roo Code and Cline"
    assert f"without FILE, the list of your own {mine} sessions" in text
    assert all(flag in text for flag in ("--sample", "--demo", "--follow"))
    assert "Claude Code session file" not in " ".join(run("open", "--help").stdout.split())


def test_a_flag_is_taken_only_as_spelled() -> None:
    """A prefix of another flag is refused, never read as it: `--keep-recent` once meant
    trim's `--keep-recent-turns` and was refused as an option of trim."""
    proc = run("compact", str(path()), "--strategy", "microcompact", "--keep-recent", "2")
    assert proc.returncode == 2 and "unrecognized arguments: --keep-recent 2" in proc.stderr


def test_a_flag_that_turns_a_setting_off_says_so() -> None:
    """`--no-keep-initial-user` drops the first message: its help says it turns off what
    the setting does, not the setting's own words as if the flag did them."""
    helped = run("simulate", "--help").stdout
    assert re.search(r"--no-keep-initial-user\s+turn off: keep the first message", helped)
    assert re.search(r"--no-clear-persist\s+turn off: the history keeps the edit", helped)
    assert "--clear-at-least" in helped and "--clear-clear-at-least" not in helped


@pytest.mark.parametrize("sample", ["claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_a_written_file_keeps_the_model_version_and_window_it_was_read_with(
    sample: str, tmp_path: Path
) -> None:
    """Reopened, a file `compact --write` made is priced, counted and windowed as its
    source was: the model and the agent's version go with the kept lines."""
    src = str(path(sample))
    original = json.loads(run("analyze", src, "--json").stdout)
    out = tmp_path / "written"
    assert (
        run(
            "compact", src, "--strategy", "microcompact", "--clear-keep-tool-uses", "1", "--write", str(out)
        ).returncode
        == 0
    )
    again = json.loads(run("analyze", str(out), "--json").stdout)
    for key in ("tokenizer", "context_window", "reserved_output", "usable_window", "auto_compact"):
        assert again[key] == original[key], key
    for key in ("model", "version"):
        assert again["metadata"].get(key) == original["metadata"].get(key), key
    assert again["cost"]["responses"] > 0 and again["cost"]["total_usd"] is not None


def test_a_slice_that_starts_at_a_compaction_is_not_said_to_fire_there(tmp_path: Path) -> None:
    """The request the agent compacted is not in a file that starts at its boundary:
    `compactions` and `simulate` agree that the preset's firing there cannot be replayed
    (one said it fired at the same request, the other counted none)."""
    meta = {"trigger": "auto", "preTokens": 170_000}
    summary = {"role": "user", "content": "This session is being continued. Summary: fixed the parser."}
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "compact_boundary", "uuid": "b", "content": "Conversation compacted",
         "version": "2.1.63", "compactMetadata": meta},
        {"type": "user", "uuid": "s", "isCompactSummary": True, "message": summary},
    ]  # fmt: skip
    for n in range(3):
        usage = {"input_tokens": 10, "cache_read_input_tokens": 40_000 + n, "output_tokens": 5}
        reply = {"id": f"m{n}", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage,
                 "content": [{"type": "text", "text": "ok"}]}  # fmt: skip
        lines.append({"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": f"step {n}"}})
        lines.append({"type": "assistant", "uuid": f"a{n}", "message": reply})
    src = tmp_path / "slice.jsonl"
    src.write_text("\n".join(json.dumps(line) for line in lines))
    (own,) = json.loads(run("compactions", str(src), "--json").stdout)
    assert own["policy_round_offset"] is None
    assert "the file starts at it" in run("compactions", str(src)).stdout
    replay = json.loads(run("simulate", str(src), "--strategy", "claude-code", "--json").stdout)
    assert replay["simulations"][0]["totals"]["at_agent_compactions"] == 0


def test_compare_and_simulate_offer_only_what_a_replay_suits() -> None:
    """PTL retry runs only when a request is refused: `compare --strategies` refuses it
    (it once added a row the docs say it leaves out), `simulate --help` lists none of its
    flags, and the no-compaction row is named `none`, as the command line names it."""
    refused = run("compare", str(path()), "--strategies", "ptl-retry,trim")
    assert refused.returncode == 2 and "ptl-retry: runs only when a request is refused" in refused.stderr
    assert "--limit" not in run("simulate", "--help").stdout
    rows = json.loads(run("compare", str(path()), "--strategies", "trim", "--json").stdout)["rows"]
    assert sorted(r["strategy"] for r in rows) == ["none", "trim"]


def test_compactions_say_what_the_newest_versions_record(tmp_path: Path) -> None:
    from tests.unit.test_formats import newest_lines

    session = tmp_path / "newest.jsonl"
    session.write_text("\n".join(newest_lines()) + "\n")
    shown = " ".join(run("compactions", str(session)).stdout.split())
    assert (
        "the agent recorded: took 41.2 s · kept the recent messages as they were (session memory), "
        "sent after its summary · kept 2 deferred tools loaded before it · 139,000 tokens dropped "
        "by its compactions so far" in shown
    )
    assert "idle: no rule to compare" in shown
    (first, _) = json.loads(run("compactions", str(session), "--json").stdout)
    assert first["duration_ms"] == 41_250 and first["preserved_segment"] == ["u3", "a3"]
    assert [p["name"] for p in first["predicted_parts"]][1:] == [
        "its summary",
        "recent messages it kept",
        "sent since",
    ]


def test_compactions_say_what_the_prediction_after_each_is_made_of() -> None:
    """Its parts, each with where it comes from, sum to the prediction: the fixed part (the
    session's first response), the summary and the attachments the transcript records, and
    the prompt sent since."""
    (own,) = json.loads(run("compactions", str(path("claude_code_compacted.jsonl")), "--json").stdout)
    assert [(p["name"], p["tokens"], p["source"]) for p in own["predicted_parts"]] == [
        (
            "fixed part: system prompt, tools and what else every request carries",
            15_204,
            "the session's first response",
        ),
        ("its summary", 111, "read from the transcript"),
        ("put back as recorded", 207, "its attachment lines"),
        ("sent since", 12, "read from the transcript"),
    ]
    assert sum(p["tokens"] for p in own["predicted_parts"]) == own["predicted_after"] == 15_534
    shown = " ".join(run("compactions", str(path("claude_code_compacted.jsonl"))).stdout.split())
    assert (
        "predicted after: 15,204 fixed part: system prompt, tools and what else every request carries"
        in shown
    )


def _cc(uuid: str, kind: str, version: str = "2.1.49", **fields: object) -> str:
    """A Claude Code transcript line."""
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s", "version": version, **fields})


def _cc_reply(uuid: str, prompt: int, *content: Any, version: str = "2.1.49") -> str:
    """A response that reported `prompt` tokens; its content `content`, else "ok"."""
    usage = {"input_tokens": 3, "cache_read_input_tokens": prompt - 3, "output_tokens": 9}
    body: dict[str, Any] = {
        "id": f"m-{uuid}",
        "role": "assistant",
        "model": "claude-opus-4-6",
        "usage": usage,
    }
    body["content"] = list(content) or [{"type": "text", "text": "ok"}]
    return _cc(uuid, "assistant", version, message=body)


def _cc_compaction(n: int, version: str = "2.1.49", trigger: str = "auto") -> list[str]:
    """A compaction's boundary (automatic unless said) and its summary of about 3,000 words."""
    meta = {"trigger": trigger, "preTokens": 168_000}
    summary = {"role": "user", "content": f"summary {n} " + "word " * 3_000}
    return [
        _cc(f"b{n}", "system", version, subtype="compact_boundary", compactMetadata=meta),
        _cc(f"s{n}", "user", version, isCompactSummary=True, message=summary),
    ]


def test_a_later_compaction_is_predicted_from_what_was_measured_after_an_earlier_one(tmp_path: Path) -> None:
    """The fixed part and whatever the transcript does not show are measured after the
    first compaction (its next request's prompt less what the transcript holds after it)
    and reused for the second, which says so: with summaries alike, 30,000 again."""

    lines = [_cc("u0", "user", message={"role": "user", "content": "go"}), _cc_reply("a0", 160_000)]
    lines += [
        *_cc_compaction(1),
        _cc_reply("a1", 30_000),
        _cc("u2", "user", message={"role": "user", "content": "more"}),
    ]
    lines += [_cc_reply("a2", 165_000), *_cc_compaction(2), _cc_reply("a3", 31_000)]
    session = tmp_path / "two.jsonl"
    session.write_text("\n".join(lines) + "\n")
    first, second = json.loads(run("compactions", str(session), "--json").stdout)
    assert not first["predicted_calibrated"] and second["predicted_calibrated"]
    assert second["predicted_parts"][0] == {
        "name": "fixed part and what the transcript does not show",
        "tokens": 30_000 - first["predicted_parts"][1]["tokens"],
        "source": "measured after the compaction at line 3 of this session",
        "range": None,
    }
    assert second["predicted_after"] == 30_000 and second["measured_after"] == 31_000


def test_analyze_says_how_far_the_agent_is_from_compacting_on_its_own() -> None:
    """Claude Code's count is the context it sends next (15,755 here) against its point,
    which its own compaction put at the 16,194 it counted then (its rule says 167,000);
    its last requests grew by 90 tokens each on average."""
    out = json.loads(run("analyze", str(path("claude_code_compacted.jsonl")), "--json").stdout)
    assert out["compacts_in"] == {
        "count": out["context"]["tokens"],
        "point": 16_194,
        "tokens_left": 16_194 - out["context"]["tokens"],
        "pace_per_request": 90,
        "requests_left": 5,
    }
    shown = " ".join(run("analyze", str(path("claude_code_compacted.jsonl"))).stdout.split())
    assert "compacts in ~439 tokens (about 5 requests at this pace)" in shown
    assert "the session's own record: it sent a request after 15,893 without compacting (line 15)" in shown


def test_which_files_go_back_is_a_range_where_a_file_only_read_may_have_changed_later(tmp_path: Path) -> None:
    """Five files edited, then one only read: whether that one changed on disk after the
    first edit is not in the transcript, so the files put back are a range whose low end
    is the point (the edited files go back), and so is the context after the compaction."""

    def tool(k: int, name: str, path: str, answer: str, result: Any) -> list[str]:
        use = {"type": "tool_use", "id": f"t{k}", "name": name, "input": {"file_path": path}}
        back = {"type": "tool_result", "tool_use_id": f"t{k}", "content": answer}
        return [
            _cc_reply(f"a{k}", 20_000 + k, use),
            _cc(f"r{k}", "user", message={"role": "user", "content": [back]}, toolUseResult=result),
        ]

    lines = [_cc("u0", "user", message={"role": "user", "content": "go"}), _cc_reply("a0", 20_000)]
    for k in range(1, 6):
        edited = {"filePath": f"/e{k}.py", "originalFile": "e" * 400, "oldString": "e", "newString": "f"}
        lines += tool(k, "Edit", f"/e{k}.py", "updated", edited)
    read = {
        "type": "text",
        "file": {"filePath": "/late.py", "content": "l" * 8_000, "numLines": 1, "totalLines": 1},
    }
    lines += tool(6, "Read", "/late.py", "     1→" + "l" * 8_000, read)
    meta = {"trigger": "auto", "preTokens": 168_000}
    lines += [
        _cc("b", "system", subtype="compact_boundary", compactMetadata=meta),
        _cc("s", "user", isCompactSummary=True, message={"role": "user", "content": "summary " * 100}),
        _cc_reply("after", 9_000),
    ]
    session = tmp_path / "edits.jsonl"
    session.write_text("\n".join(lines) + "\n")
    (own,) = json.loads(run("compactions", str(session), "--json").stdout)
    put_back = own["predicted_parts"][-1]
    assert put_back["name"] == "put back: files, plan, skills"
    low, high = put_back["range"]
    assert low == put_back["tokens"] < high
    # the fixed part, from the first response, may or may not hold the skill listing again:
    # 2.1.49 writes no attachment line of it, so it is a range of 2 % of the window either way
    fixed = own["predicted_parts"][0]
    assert fixed["range"] == [fixed["tokens"] - 4_000, fixed["tokens"] + 4_000]
    assert fixed["unknown"] == (
        "the skill listing its first request holds (at most 4,000) may not be sent again, or twice"
    )
    assert own["predicted_range"] == [
        own["predicted_after"] - 4_000,
        own["predicted_after"] + high - low + 4_000,
    ]
    assert (
        put_back["unknown"] == "which files: when the ones it only read last changed is not in the transcript"
    )
    shown = " ".join(run("compactions", str(session)).stdout.split())
    assert f"predicted after {own['predicted_after']:,} ({own['predicted_after'] - 4_000:,}-" in shown


def test_a_file_that_starts_at_its_compaction_cannot_predict_the_context_after_it(tmp_path: Path) -> None:
    """Its only measure of the fixed part is the first response, the one after the
    compaction: predicting from it would give back what measures it."""
    session = tmp_path / "starts-at-it.jsonl"
    session.write_text("\n".join([*_cc_compaction(1), _cc_reply("a1", 72_276)]) + "\n")
    (found,) = json.loads(run("compactions", str(session), "--json").stdout)
    assert (found["measured_after"], found["predicted_after"], found["predicted_parts"]) == (72_276, None, [])
    assert found["calibration"] == (
        "cannot be predicted here: the file starts at it, so the only measure of the fixed part "
        "is the response after it"
    )
    shown = " ".join(run("compactions", str(session)).stdout.split())
    assert "predicted after — (cannot be predicted here: the file starts at it" in shown


def test_a_first_compaction_is_corrected_by_what_the_users_sessions_beside_it_measured(
    tmp_path: Path,
) -> None:
    """Two sessions of the same project (folder) and version that compacted automatically
    measured their next prompts 5,000 and 7,000 over our prediction: each corrected by the
    other would have been 2,000 off against 6,000 plain, so a session that compacts for the
    first time takes the median (6,000) in its fixed part and says so. A manual compaction
    and one of another version do not count for it; where only one session measured, the
    plain model is shown and says why."""

    def session(name: str, folder: Path, after: int, version: str = "2.1.49", trigger: str = "auto") -> Path:
        lines = [
            _cc("u0", "user", version, message={"role": "user", "content": f"go {name}"}),
            _cc_reply("a0", 160_000, version=version),
            *_cc_compaction(1, version, trigger),
            _cc_reply("a1", after, version=version),
        ]
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path

    def own(path: Path) -> dict[str, Any]:
        (found,) = json.loads(run("compactions", str(path), "--json").stdout)
        return cast(dict[str, Any], found)

    alone = own(session("alone", tmp_path / "alone", 0))
    predicted = alone["predicted_after"]  # the same summary, overhead and version: the same prediction
    assert alone["calibration"] is None
    project = tmp_path / "project"
    session("older", project, predicted + 5_000)
    session("other-version", project, predicted + 50_000, version="2.1.45")
    session("manual", project, predicted + 40_000, trigger="manual")
    declined = own(session("mine", project, predicted + 5_000))
    assert not declined["predicted_calibrated"] and declined["predicted_after"] == predicted
    assert declined["calibration"] == (
        "not calibrated: 1 automatic compaction of 2.1.49 in 1 other session of yours, "
        "too few to check a correction on"
    )
    source = declined["predicted_parts"][0]["source"]
    assert source == "the session's first response; " + declined["calibration"]
    session("oldest", project, predicted + 7_000)
    mine = own(project / "mine.jsonl")
    fixed = mine["predicted_parts"][0]
    assert mine["predicted_calibrated"] and mine["predicted_after"] == predicted + 6_000
    assert fixed["name"] == "fixed part and what the transcript does not show"
    assert fixed["tokens"] == alone["predicted_parts"][0]["tokens"] + 6_000
    assert (
        fixed["source"]
        == mine["calibration"]
        == ("calibrated on 2 automatic compactions of 2.1.49 in your sessions")
    )
    assert fixed["range"] == [fixed["tokens"] - 1_000, fixed["tokens"] + 1_000]
    shown = " ".join(run("compactions", str(project / "mine.jsonl")).stdout.split())
    assert "calibrated on 2 automatic compactions of 2.1.49 in your sessions" in shown


def test_a_compaction_after_a_hook_is_calibrated_only_by_those_after_the_same_hook(tmp_path: Path) -> None:
    """A SessionStart hook ran on each compaction of two sessions of the project and no
    line recorded what it sent: their next prompts measured 20,000 and 24,000 over our
    prediction. A third session after the same hook takes the median (22,000) and says
    whence; a session whose compaction ran no hook is not corrected by what the hook sent
    (its one sibling without a hook is too few to check on)."""
    hook = "make context"
    ran = {"type": "hook_progress", "hookEvent": "SessionStart", "hookName": "SessionStart:compact"}

    def session(name: str, after: int, hooked: bool) -> Path:
        boundary, summary = _cc_compaction(1)
        progress = json.dumps({"type": "progress", "data": {**ran, "command": hook}, "isSidechain": False})
        lines = [
            _cc("u0", "user", message={"role": "user", "content": f"go {name}"}),
            _cc_reply("a0", 160_000),
            boundary,
            *([progress] if hooked else []),
            summary,
            _cc_reply("a1", after),
        ]
        path = project / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path

    def own(path: Path) -> dict[str, Any]:
        (found,) = json.loads(run("compactions", str(path), "--json").stdout)
        return cast(dict[str, Any], found)

    project = tmp_path / "project"
    project.mkdir()
    predicted = own(session("alone", 0, hooked=True))["predicted_after"]
    session("alone", 0, hooked=True).unlink()
    session("hooked-1", predicted + 20_000, hooked=True)
    session("hooked-2", predicted + 24_000, hooked=True)
    session("plain", predicted + 500, hooked=False)
    mine = own(session("mine", predicted, hooked=True))
    assert mine["predicted_calibrated"] and mine["predicted_after"] == predicted + 22_000
    assert mine["calibration"] == (
        "calibrated on 2 automatic compactions of 2.1.49 after the same hooks "
        "(their output not in the transcripts) in your sessions"
    )
    assert mine["predicted_range"][1] is None  # what the hook sent this time: no most is invented
    unhooked = own(session("unhooked", predicted, hooked=False))
    assert not unhooked["predicted_calibrated"]
    assert unhooked["calibration"] == (
        "not calibrated: 1 automatic compaction of 2.1.49 in 1 other session of yours, "
        "too few to check a correction on"
    )


def test_what_only_a_first_request_carried_beyond_its_siblings_is_not_put_back(tmp_path: Path) -> None:
    """Two sessions of the project and version started at 41,000; this one at 78,000 (a
    SessionStart hook's output at startup, say). The 37,000 more is not taken as part of
    every request: the prediction leaves it out, and its range reaches back to it."""

    def session(name: str, folder: Path, first: int, after: int) -> Path:
        lines = [
            _cc("u0", "user", message={"role": "user", "content": f"go {name}"}),
            _cc_reply("a0", first),
            *_cc_compaction(1),
            _cc_reply("a1", after),
        ]
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        return folder / f"{name}.jsonl"

    def own(path: Path) -> dict[str, Any]:
        (found,) = json.loads(run("compactions", str(path), "--json").stdout)
        return cast(dict[str, Any], found)

    small, large = own(session("a", tmp_path / "a", 41_000, 0)), own(session("b", tmp_path / "b", 78_000, 0))
    assert large["predicted_after"] - small["predicted_after"] == 37_000
    project = tmp_path / "project"
    for name in ("older", "oldest"):
        session(name, project, 41_000, small["predicted_after"])
    mine = own(session("mine", project, 78_000, 0))
    fixed, alone = mine["predicted_parts"][0], large["predicted_parts"][0]
    assert mine["predicted_after"] == small["predicted_after"]
    assert fixed["tokens"] == alone["tokens"] - 37_000
    assert fixed["range"] == [alone["range"][0] - 37_000, alone["range"][1]]
    said = "the session's first response, less 37,000 its first request carried beyond your other sessions"
    assert fixed["source"].startswith(said + " of 2.1.49 here; not calibrated")
    assert "the 37,000 sent at start may be sent again after it" in fixed["unknown"]


def test_a_session_kept_where_its_agent_keeps_them_is_calibrated_on_the_users_other_projects_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In Claude Code's own folder, its project's sessions come first, then the user's
    other projects of the same version; a file kept elsewhere looks only beside itself."""

    def session(folder: Path, name: str, after: int) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            _cc("u0", "user", message={"role": "user", "content": f"go {name}"}),
            _cc_reply("a0", 160_000),
            *_cc_compaction(1),
            _cc_reply("a1", after),
        ]
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        return folder / f"{name}.jsonl"

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    projects = tmp_path / "claude" / "projects"
    alone = json.loads(run("compactions", str(session(tmp_path / "elsewhere", "alone", 0)), "--json").stdout)
    predicted = alone[0]["predicted_after"]
    session(projects / "-home-me-other", "older", predicted + 5_000)
    session(projects / "-home-me-third", "oldest", predicted + 7_000)
    (mine,) = json.loads(
        run("compactions", str(session(projects / "-home-me-app", "mine", 0)), "--json").stdout
    )
    assert (
        mine["predicted_parts"][0]["source"]
        == "calibrated on 2 automatic compactions of 2.1.49 in your sessions"
    )
    assert mine["predicted_after"] == predicted + 6_000 and mine["predicted_parts"][0]["range"] == [
        alone[0]["predicted_parts"][0]["tokens"] + 5_000,
        alone[0]["predicted_parts"][0]["tokens"] + 7_000,
    ]
    # the same file outside the agent's folder has no other project to go by
    (moved,) = json.loads(run("compactions", str(session(tmp_path / "copy", "mine", 0)), "--json").stdout)
    assert not moved["predicted_calibrated"]


def test_a_keys_entry_no_action_has_is_refused_where_the_app_opens(tmp_path: Path) -> None:
    config = tmp_path / "compaction.yaml"
    config.write_text("keys:\n  step_nxt: x\n")
    proc = run("open", str(path()), "--config", str(config))
    assert proc.returncode == 2
    listed = f"{config}: keys: no action 'step_nxt'; the actions are: apply_setting, browser.filter,"
    assert listed in proc.stderr
    assert "step_next" in proc.stderr

"""Claude Code's status line: the figures from a transcript that grows between calls, read
only where it grew; the fallback line on any failure; the setting it needs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from genai_prices import Usage as Priced
from genai_prices import calc_price
from hypothesis import strategies as st

from compaction_inspector.core.agents.claude_code import statusline
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.tokens import FLAT_MEDIA_TOKENS
from compaction_inspector.core.statusline import SettingsRefused, installed_command
from compaction_inspector.core.statusline import line as status_text
from compaction_inspector.sample_sessions import path as sample
from tests.helpers import load
from tests.hostile import run_cli

OPUS = "claude-opus-4-6"


def line(uuid: str, kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s", "version": "2.1.74", **fields})


def reply(n: int, prompt: int, output: int = 40) -> list[str]:
    """A response written as Claude Code streams it: two lines, the second with its whole output."""
    usage = {"input_tokens": 3, "cache_read_input_tokens": prompt - 3, "output_tokens": 1}
    body = {"id": f"msg_{n}", "role": "assistant", "model": OPUS, "content": [{"type": "text", "text": "ok"}]}
    whole = {**usage, "output_tokens": output}
    return [
        line(f"a{n}", "assistant", message={**body, "usage": usage}),
        line(f"b{n}", "assistant", message={**body, "usage": whole}),
    ]


def prompt(n: int, text: str) -> str:
    return line(f"u{n}", "user", message={"role": "user", "content": text})


def price(prompt_tokens: int, output: int) -> Decimal:
    usage = Priced(input_tokens=prompt_tokens, cache_read_tokens=prompt_tokens - 3, output_tokens=output)
    return calc_price(usage, OPUS, provider_id="anthropic").total_price


def test_the_figures_follow_the_transcript_as_it_grows_reading_only_what_was_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript, index = tmp_path / "s.jsonl", tmp_path / "cache" / "statusline.json"
    lines = [prompt(0, "go")] + [x for n in range(5) for x in reply(n, 100_000 + 10_000 * n)]
    transcript.write_text("\n".join(lines) + "\n")
    first = statusline.read(transcript, index)
    assert first.whole and first.last_prompt == 140_000 and first.prompts[-2:] == [130_000, 140_000]
    shown = statusline.figures(first, Config(CATALOGUE), {})
    # Claude Code's count: the last prompt, its output and what was written since
    assert (shown.count, shown.point, shown.compactions) == (140_040, 167_000, 0)
    assert shown.left is not None and (shown.left.left, shown.left.pace, shown.left.requests) == (
        26_960,
        10_000,
        3,
    )
    # five responses, each priced once at its whole output
    assert shown.cost == sum(price(100_000 + 10_000 * n, 40) for n in range(5))
    assert status_text(shown) == (
        "ctx 140k of 167k · compacts in ~27k (about 3 requests at this pace) · no compaction yet · "
        f"${shown.cost:,.2f}"
    )
    # it grows: a prompt of 4,000 characters, a compaction, a line still being written
    boundary = {"trigger": "auto", "preTokens": 168_000}
    added = [
        prompt(9, "x" * 4_000),
        line("c", "system", subtype="compact_boundary", compactMetadata=boundary),
    ]
    with transcript.open("a") as f:
        f.write("\n".join(added) + "\n" + reply(9, 30_000)[0][:50])
    read: list[bytes] = []
    advance = statusline.advance

    def reading(tail: statusline.Tail, lines: list[bytes]) -> None:
        read.extend(lines)
        advance(tail, lines)

    monkeypatch.setattr(statusline, "advance", reading)
    grown = statusline.read(transcript, index)
    assert [json.loads(x)["uuid"] for x in read] == ["u9", "c"]  # only what was added
    assert grown.offset == transcript.stat().st_size - 50  # the half-written line waits
    after = statusline.figures(grown, Config(CATALOGUE), {})
    assert (after.count, after.compactions, after.left) == (None, 1, None)
    assert "just compacted · 1 compaction" in status_text(after)
    # read again from nothing, the same figures: the kept entry loses nothing
    index.unlink()
    again = statusline.read(transcript, index)
    assert statusline.figures(again, Config(CATALOGUE), {}) == after


def test_a_long_transcript_is_read_from_its_tail_then_whole_at_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first call reads the tail and a bounded part of what comes before it, and says
    its compactions and cost are at least what it shows; the next call reads the rest
    (kept in the index till then): the figures are the whole file's, the same as one
    read of all of it."""
    transcript = tmp_path / "long.jsonl"
    boundary = line(
        "c", "system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 168_000}
    )
    lines = [
        prompt(0, "go"),
        *reply(0, 160_000),
        boundary,
        *(x for n in range(1, 20) for x in reply(n, 30_000 + n)),
    ]
    transcript.write_text("\n".join(lines) + "\n")
    whole = statusline.figures(statusline.read(transcript, None), Config(CATALOGUE), {})
    monkeypatch.setattr(statusline, "TAIL_BYTES", 2_000)
    monkeypatch.setattr(statusline, "HEAD_BYTES", 3_000)
    index = tmp_path / "index.json"
    tail = statusline.read(transcript, index)
    first = statusline.figures(tail, Config(CATALOGUE), {})
    assert not tail.whole and tail.last_prompt == 30_019 and first.cost is not None and whole.cost is not None
    assert first.cost < whole.cost and " · ≥$" in status_text(first)
    calls = 1
    while not tail.whole:
        tail, calls = statusline.read(transcript, index), calls + 1
    assert calls == 2 and statusline.figures(tail, Config(CATALOGUE), {}) == whole
    assert "1 compaction · $" in status_text(whole)


def test_the_command_prints_a_line_and_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 150_000)]) + "\n")
    given = {
        "session_id": "s",
        "transcript_path": str(transcript),
        "model": {"id": OPUS},
        "version": "2.1.74",
    }
    for stdin, expected in (
        (json.dumps(given), "ctx 150k of 167k · compacts in ~17k · no compaction yet · $"),
        (json.dumps({"session_id": "s"}), "compaction-inspector: no transcript_path on stdin"),
        ("not json", "compaction-inspector: Expecting value"),
        (json.dumps({**given, "transcript_path": str(tmp_path / "gone.jsonl")}), "compaction-inspector: "),
    ):
        monkeypatch.setattr("sys.stdin", _Stdin(stdin))
        outcome = run_cli(["statusline"])
        assert outcome.code == 0 and outcome.out.startswith(expected), (stdin, outcome.out)
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps(given)))
    coloured = run_cli(["statusline", "--color", "--format", "{ctx}/{point} {model}"]).out
    assert coloured == "\x1b[33m150k/167k claude-opus-4-6\x1b[0m\n"  # 90 % of its point: yellow


def test_a_transcript_it_does_not_read_and_a_template_with_no_such_field_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    rollout = {"transcript_path": str(sample("codex_rollout.jsonl"))}
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 150_000)]) + "\n")
    for given, argv, expected in (
        (rollout, [], "compaction-inspector: not a Claude Code transcript: codex_rollout.jsonl\n"),
        (
            {"transcript_path": str(transcript)},
            ["--format", "{bogus} {ctx}"],
            "compaction-inspector: --format: no field {bogus}; "
            "fields: ctx, point, left, requests, compactions, cost, model\n",
        ),
        (
            {"transcript_path": str(transcript)},
            ["--format", "{ctx"],
            "compaction-inspector: --format: expected '}' before end of string\n",
        ),
    ):
        monkeypatch.setattr("sys.stdin", _Stdin(json.dumps(given)))
        outcome = run_cli(["statusline", *argv])
        assert (outcome.code, outcome.out) == (0, expected)


class _Stdin:
    def __init__(self, text: str) -> None:
        self.text = text

    def read(self) -> str:
        return self.text


def test_the_setting_is_added_once_with_a_backup_and_never_over_another(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    assert statusline.install(settings) is None  # no file yet: made
    # the full path of the installed command: Claude Code runs it without the venv active
    command = json.loads(settings.read_text())["statusLine"]["command"]
    assert command == f"{Path(sys.executable).parent / 'compaction-inspector'} statusline"
    assert subprocess.run([*shlex.split(command), "--help"], capture_output=True, env={}).returncode == 0
    settings.write_text(json.dumps({"theme": "dark", "statusLine": {"type": "command", "command": "mine"}}))
    with pytest.raises(SettingsRefused, match="has a statusLine already"):
        statusline.install(settings)
    assert json.loads(settings.read_text())["statusLine"]["command"] == "mine"  # left as it was
    backup = statusline.install(settings, force=True)
    assert backup is not None and json.loads(backup.read_text())["statusLine"]["command"] == "mine"
    assert json.loads(settings.read_text()) == {"theme": "dark", **statusline.snippet()}
    settings.write_text("[1, 2]")
    with pytest.raises(SettingsRefused, match="not hold a JSON object"):
        statusline.install(settings, force=True)


def test_without_its_console_script_the_interpreter_runs_the_commands_module(tmp_path: Path) -> None:
    python = tmp_path / "my env" / "python"
    assert installed_command(str(python)) == (f"'{python}' -m compaction_inspector.tui.cli statusline")


def test_what_a_transcript_says_is_shown_not_obeyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
    transcript = tmp_path / "s.jsonl"
    evil: dict[str, Any] = {"id": "m", "role": "assistant", "model": "\x1b]0;owned\x07x", "content": []}
    evil["usage"] = {"input_tokens": 9_000, "output_tokens": 1}
    transcript.write_text(line("a", "assistant", message=evil) + "\n{broken\n")
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(transcript)})))
    for argv in (["statusline", "--format", "{model}"], ["statusline", "--color", "--format", "{model}"]):
        out = run_cli(argv).out
        assert "\x1b]" not in out and "\x07" not in out and "owned" in out, out


def test_its_colours_are_set_in_compaction_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_inspector.core.config import ConfigError
    from compaction_inspector.core.config_file import from_dict

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 150_000)]) + "\n")
    settings = tmp_path / "compaction.yaml"
    settings.write_text("statusline:\n  yellow_at: 95\n  red_at: 99\n")
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(transcript)})))
    out = run_cli(["statusline", "--color", "--format", "{ctx}", "--config", str(settings)]).out
    assert out == "\x1b[32m150k\x1b[0m\n"  # 90 % of its point: green under 95
    assert from_dict({"statusline": {"yellow_at": 50}}, Config(CATALOGUE)).status_colours == (50, 95)
    with pytest.raises(ConfigError, match="yellow_at \\(96\\) must not be above red_at \\(95\\)"):
        from_dict({"statusline": {"yellow_at": 96}}, Config(CATALOGUE))
    with pytest.raises(ConfigError, match=r"unknown key 'statusline\.blue'"):
        from_dict({"statusline": {"blue": 1}}, Config(CATALOGUE))


def test_a_pasted_image_adds_the_flat_media_figure_not_its_base64(tmp_path: Path) -> None:
    """A screenshot's 400,000 characters of base64 are one image to the model: what it
    adds is the counter's flat media figure, so the line does not say it compacts early."""
    picture = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "A" * 400_000},
    }
    pasted = line(
        "u1", "user", message={"role": "user", "content": [{"type": "text", "text": "see"}, picture]}
    )
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000), pasted]) + "\n")
    tail = statusline.read(transcript, None)
    assert tail.added_tokens == 1 + FLAT_MEDIA_TOKENS
    assert statusline.figures(tail, Config(CATALOGUE), {}).count == 100_040 + 1 + FLAT_MEDIA_TOKENS


HOLDOUT = Path(__file__).resolve().parents[2].parent / "shared" / "holdout"


@pytest.mark.skipif(not HOLDOUT.is_dir(), reason="the real transcripts beside the repository are not here")
def test_on_real_transcripts_the_line_reads_what_compactions_reads_before_each_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each real Claude Code transcript cut just before each of its automatic compactions,
    fed as Claude Code feeds the command: the prompt the line starts from is the one
    `compactions --json` gives for that compaction, and the point it measures against is
    the one the cut transcript's own record allows (a compaction still to come cannot
    bound it), as `analyze` of the cut gives it."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    checked = 0
    for path in sorted(HOLDOUT.glob("real*/cc_*.jsonl")):
        found = json.loads(run_cli(["compactions", "--json", str(path)]).out)
        lines = path.read_bytes().splitlines(keepends=True)
        for c in found:
            if c["trigger"] != "auto" or c["agent_count"] is None or c["measured_before"] is None:
                continue
            cut = tmp_path / f"{path.stem}-{c['line']}.jsonl"
            cut.write_bytes(b"".join(lines[: c["line"] - 1]))
            given = {"session_id": "s", "transcript_path": str(cut), "version": "2.1.0"}
            monkeypatch.setattr("sys.stdin", _Stdin(json.dumps(given)))
            out = run_cli(["statusline", "--format", "{ctx} {point}"]).out
            tail = statusline.read(cut, None)
            shown = statusline.figures(tail, Config(CATALOGUE), given)
            assert tail.last_prompt == c["agent_count"]["parts"]["reported"] == c["measured_before"], path
            assert shown.point == Config(CATALOGUE).for_session(load(cut)).account.tokens, path
            assert out == status_text(shown, "{ctx} {point}") + "\n"
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", ["claude_code_session.jsonl", "claude_code_compacted.jsonl"])
def test_the_line_says_what_analyze_says_of_the_same_transcript(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One rule for both: the count the agent reaches next (the reply's own lines where
    its reported output falls short), the requests left at the recent pace, and the cost
    with the compactions' own calls estimated."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    analysis = json.loads(run_cli(["analyze", "--json", str(sample(name))]).out)
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(sample(name))})))
    line = run_cli(["statusline", "--format", "{requests}|{cost}"]).out.strip()
    main = Decimal(analysis["cost"]["main_chain_usd"])
    assert line == f"{analysis['compacts_in']['requests_left']:,}|${main:,.2f}"


def test_a_file_with_no_newlines_is_scanned_in_bounded_memory(tmp_path: Path) -> None:
    """A sparse transcript (all zero bytes, no newline) once grew the scan's buffer to
    the file's size; the head is read a chunk at a time, its holes passed over, so one
    call reads the file whole."""
    import tracemalloc

    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as f:
        f.truncate(96 << 20)
    tracemalloc.start()
    tail = statusline.read(sparse, None)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert tail.compactions == 0 and tail.whole and tail.offset == 96 << 20
    assert peak < 40 << 20, f"{peak:,} bytes at the peak"


def test_a_file_with_no_line_it_knows_is_read_a_bounded_part_first_then_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight megabytes of one run with no newline: the first call reads HEAD_BYTES of
    what comes before its tail, and says its figures are not whole; the next reads the
    rest, a chunk at a time, passing over the run."""
    monkeypatch.setattr(statusline, "HEAD_BYTES", 1 << 20)
    dense = tmp_path / "dense.jsonl"
    dense.write_bytes(b"x" * (8 << 20))
    index = tmp_path / "index.json"
    tail = statusline.read(dense, index)
    assert not tail.whole and tail.before.offset == 1 << 20
    assert statusline.read(dense, index).whole


def test_the_projects_and_the_local_settings_layers_move_its_point_as_they_move_analyzes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's 80 % (its `.claude/settings.json`) and the local file on top: the
    status line reads the layers where Claude Code does (the workspace it passes), and
    says the point `analyze` says."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    transcript = tmp_path / "session.jsonl"
    records = [
        json.loads(x) for x in sample("claude_code_session.jsonl").read_text().splitlines() if x.strip()
    ]
    transcript.write_text("".join(json.dumps({**r, "cwd": str(project)}) + "\n" for r in records))
    given = {"transcript_path": str(transcript), "workspace": {"project_dir": str(project)}}
    for layer, pct in (("settings.json", "80"), ("settings.local.json", "60")):
        (project / ".claude" / layer).write_text(
            json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": pct}})
        )
        point = json.loads(run_cli(["analyze", "--json", str(transcript)]).out)["compacts_in"]["point"]
        assert point == 168_000 * int(pct) // 100
        monkeypatch.setattr("sys.stdin", _Stdin(json.dumps(given)))
        assert run_cli(["statusline", "--format", "{point}"]).out.strip() == f"{point / 1000:.0f}k"


def test_with_auto_compact_off_the_count_is_still_shown_and_the_point_said_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DISABLE_AUTO_COMPACT: the status line and `watch --once` show the context they
    know and say the agent does not compact on its own, not "ctx ? of ?"."""
    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"env": {"DISABLE_AUTO_COMPACT": "true"}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    file = str(sample("claude_code_session.jsonl"))
    watched = run_cli(["watch", "--once", file]).out.strip()
    assert watched == "ctx 4.0k of no point · auto-compact off · 1 compaction · $0.09"
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": file})))
    assert run_cli(["statusline"]).out.strip() == watched


def test_a_transcript_with_no_response_yet_says_so_beside_the_point_it_knows(tmp_path: Path) -> None:
    """A file of no lines Claude Code wrote yet (a 64 MB sparse one here): the point is
    known, the context is not; the line says which, not "no point known"."""
    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as f:
        f.truncate(64 << 20)
    shown = statusline.figures(statusline.read(sparse, None), Config(CATALOGUE), {})
    assert status_text(shown).startswith("ctx ? of 167k · no response read yet · no compaction yet")


def test_a_session_running_with_other_settings_says_what_they_give_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The override of 70 is set now; the session sent a request at 150,000 without
    compacting and compacted on its own at 167,066: it runs at its default, 167,000, and
    takes 126,000 (70 % of 180,000) only once restarted (Claude Code reads its settings at
    start). The status line and `watch --once` say both."""
    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    boundary = line(
        "c", "system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 167_066}
    )
    transcript = tmp_path / "s.jsonl"
    lines = [prompt(0, "go"), *reply(0, 130_000), *reply(1, 150_000), boundary, *reply(2, 40_000)]
    transcript.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(transcript)})))
    assert run_cli(["statusline", "--format", "{point}"]).out.strip() == "167k (126k after a restart)"
    assert " of 167k (126k after a restart) · " in run_cli(["watch", "--once", str(transcript)]).out


def test_a_compaction_a_tail_reads_before_any_response_is_priced_at_the_model_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first read that starts at a compaction knows no model for its summarize request
    till the part before is read: the figures are then the whole file's, its call priced
    at the model before it, as one read of all of it prices it."""
    transcript = tmp_path / "cut.jsonl"
    boundary = line(
        "c", "system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 168_000}
    )
    summary = line(
        "s", "user", isCompactSummary=True, message={"role": "user", "content": "the summary " * 200}
    )
    after = [boundary, summary, *(x for n in range(1, 6) for x in reply(n, 30_000 + n))]
    lines = [prompt(0, "go"), *reply(0, 160_000), *after]
    transcript.write_text("\n".join(lines) + "\n")
    whole = statusline.figures(statusline.read(transcript, None), Config(CATALOGUE), {})
    monkeypatch.setattr(statusline, "TAIL_BYTES", len("\n".join(after)) + 1)
    tail = statusline.read(transcript, tmp_path / "index.json")
    assert tail.whole and tail.compactions == 1
    assert statusline.figures(tail, Config(CATALOGUE), {}) == whole


_LOADED = (
    "import io, sys\n"
    "sys.stdin = io.StringIO(sys.argv[1])\n"
    "from compaction_inspector.tui.cli import main\n"
    "main(sys.argv[2:])\n"
    "print(' '.join(m for m in sys.modules if m.startswith('compaction_inspector')))\n"
)
# what a call drawn from its kept answer never loads: the settings, the agents, a strategy
_WHOLE_ONLY = (
    "compaction_inspector.core.config",
    "compaction_inspector.core.agents.registry",
    "compaction_inspector.core.strategies",
    "compaction_inspector.tui.cli.commandline",
)


def _caller(tmp_path: Path, transcript: Path) -> Callable[..., tuple[str, set[str]]]:
    """A status line call on `transcript` in a process of its own (`_isolated`): its line,
    and the package's modules it loaded."""
    given = json.dumps({"transcript_path": str(transcript)})
    env = {**_isolated(tmp_path), "PATH": "/usr/bin:/bin"}

    def call(*argv: str) -> tuple[str, set[str]]:
        done = subprocess.run(
            [sys.executable, "-c", _LOADED, given, "statusline", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=True,
        )
        shown, loaded = done.stdout.splitlines()
        return shown, set(loaded.split())

    return call


def test_a_call_asked_as_the_last_one_draws_its_line_without_loading_the_settings(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000)]) + "\n")
    call = _caller(tmp_path, transcript)
    first, whole = call()
    assert first.startswith("ctx 100k of 167k · compacts in ~67k")
    assert set(_WHOLE_ONLY) <= whole
    with transcript.open("a") as f:  # it grew: read on, the kept answer still holds
        f.write("\n".join([prompt(1, "more"), *reply(1, 110_000)]) + "\n")
    second, kept = call()
    assert second.startswith("ctx 110k of 167k · compacts in ~57k") and not kept & set(_WHOLE_ONLY)
    # asked another way, the command works it out whole, then keeps that answer
    other, loaded = call("--format", "{point}")
    assert other == "167k" and set(_WHOLE_ONLY) <= loaded
    again, loaded = call("--format", "{point}")
    assert again == "167k" and not loaded & set(_WHOLE_ONLY)
    # a settings file named on the command line is not stamped: every call reads it
    named = tmp_path / "mine.yaml"
    named.write_text("statusline:\n  yellow_at: 50\n")
    for _ in range(2):
        assert set(_WHOLE_ONLY) <= call("--config", str(named))[1]


def test_a_session_past_its_point_is_drawn_from_its_kept_answer_as_it_grows(tmp_path: Path) -> None:
    """Past its point, a session's counts grow at every call: the kept answer holds for any
    count where the point does not move with it."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 180_000)]) + "\n")
    call = _caller(tmp_path, transcript)
    first, whole = call()
    assert first.startswith("ctx 180k of 167k · compacts at the next request") and set(_WHOLE_ONLY) <= whole
    with transcript.open("a") as f:
        f.write("\n".join([prompt(1, "more"), *reply(1, 185_000)]) + "\n")
    second, kept = call()
    assert second.startswith("ctx 185k of 167k · compacts at the next request") and not kept & set(
        _WHOLE_ONLY
    )


_COUNT = st.integers(0, 1_200_000)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    st.sampled_from([OPUS, "claude-sonnet-4-5", "claude-3-5-haiku-20241022", None]),
    st.sampled_from(["2.0.76", "2.1.74", None]),
    st.tuples(_COUNT, _COUNT),
    st.lists(st.integers(0, 1_000_000), max_size=2),
    st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_a_kept_answer_holds_at_every_count_its_ceiling_lets_through(
    model: str | None,
    version: str | None,
    counts: tuple[int, int],
    compacted: list[int],
    at: tuple[float, float],
) -> None:
    """Any counts between those an answer was worked out at and its probed ceiling give the
    same point, worked out again."""
    config = Config(CATALOGUE)
    facts = (version, model, None, *compacted)
    said = statusline._point(config, facts, counts)
    ceiling = statusline._ceiling(config, facts, counts, said)
    between = tuple(low + round((high - low) * f) for low, high, f in zip(counts, ceiling, at, strict=True))
    assert statusline._point(config, facts, between) == said


def test_an_index_nested_past_reading_is_begun_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _called_on_one_reply(tmp_path, monkeypatch)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "statusline.json").write_text("[" * 100_000 + "]" * 100_000)
    for _ in range(2):  # the whole command, then the door, over the index made again
        assert run_cli(["statusline"]).out.startswith("ctx 100k of 167k")


class _NoStdin:
    def read(self) -> str:
        raise AssertionError("stdin read")


def test_the_setting_is_printed_without_reading_stdin_whatever_answers_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _called_on_one_reply(tmp_path, monkeypatch)
    for argv in (["statusline"], ["statusline", "--setup"]):  # answers kept for both command lines
        assert run_cli(argv).code == 0
    monkeypatch.setattr("sys.stdin", _NoStdin())  # a terminal: nothing comes
    out = run_cli(["statusline", "--setup"])
    assert out.code == 0 and json.loads(out.out)["statusLine"]["type"] == "command"


def _called_on_one_reply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call's surroundings of its own (`_isolated`), and on stdin a transcript of one
    prompt and one response of 100,000 tokens."""
    for name, value in _isolated(tmp_path).items():
        monkeypatch.setenv(name, value)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("\n".join([prompt(0, "go"), *reply(0, 100_000)]) + "\n")
    monkeypatch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(transcript)})))


def _isolated(tmp_path: Path) -> dict[str, str]:
    """The environment of a call with its own cache, Claude Code folder and config folder."""
    return {
        "COMPACTION_INSPECTOR_CACHE_DIR": str(tmp_path / "cache"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path),
    }


_GROWN = [
    prompt(0, "go"),
    *(x for n in range(6) for x in reply(n, 150_000 + 3_000 * n)),
    line(
        "c", "system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 168_000}
    ),
    line("s", "user", isCompactSummary=True, message={"role": "user", "content": "the summary " * 100}),
    *(x for n in range(6, 12) for x in reply(n, 30_000 + 3_000 * n)),
]


@hypothesis.given(
    cuts=st.lists(st.integers(1, len(_GROWN) - 1), min_size=1, max_size=5, unique=True).map(sorted),
    changed=st.integers(0, 5),
)
def test_a_kept_answer_draws_the_line_the_whole_command_draws(cuts: list[int], changed: int) -> None:
    """Call after call as the transcript grows past a compaction, and as the user's
    settings change between two calls, the line drawn from the kept answer is the line
    the whole command draws with nothing kept."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        root = Path(folder)
        for name, value in _isolated(root).items():
            patch.setenv(name, value)
        patch.chdir(root)
        transcript = root / "s.jsonl"
        patch.setattr("sys.stdin", _Stdin(json.dumps({"transcript_path": str(transcript)})))
        written = 0
        for call, cut in enumerate([*cuts, len(_GROWN)]):
            with transcript.open("a") as f:
                f.write("".join(x + "\n" for x in _GROWN[written:cut]))
            written = cut
            if call == changed:
                (root / "claude").mkdir(exist_ok=True)
                settings = {"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}}
                (root / "claude" / "settings.json").write_text(json.dumps(settings))
            drawn = run_cli(["statusline"]).out
            patch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
            assert drawn == run_cli(["statusline"]).out
            patch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(root / "cache"))


def test_a_settings_file_written_while_a_call_reads_it_is_read_again_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files an answer is kept under are stamped before they are read: one written
    just after the call read it does not leave the call's answer standing for it."""
    from compaction_inspector.tui.cli.common import config_of as reading

    reads = "compaction_inspector.tui.cli.commands.statusline.config_of"
    _called_on_one_reply(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)

    def edited_after_reading(*args: Any, **kwargs: Any) -> Any:
        read = reading(*args, **kwargs)
        (tmp_path / "compaction.yaml").write_text("preset: claude-code\ncontext_window: 150000\n")
        return read

    monkeypatch.setattr(reads, edited_after_reading)
    first = run_cli(["statusline"]).out
    monkeypatch.setattr(reads, reading)
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
    now = run_cli(["statusline"]).out
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    assert first != now and run_cli(["statusline"]).out == now

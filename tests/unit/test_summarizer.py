"""The user's own summarizer (core/replaying/summarizer.py): a local script reads the span as JSON
and prints the summary; run only when configured, once per span, its failures said."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compaction_inspector.core.agents.claude_code.strategy import ClaudeCodeOptions
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config, ConfigError
from compaction_inspector.core.config_file import from_dict
from compaction_inspector.core.replaying.summarizer import Command, SummarizerError
from compaction_inspector.core.strategies import Context, run
from tests.test_cli import run as cli
from tests.unit.test_agent_strategies import CONTEXT, session

SCRIPT = """
import json, sys
span = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write("called\\n")
kinds = sorted({m["kind"] for m in span["messages"]})
print(f"{len(span['messages'])} messages ({', '.join(kinds)}) within {span['cap_chars']} characters")
"""


def command(tmp_path: Path, body: str = SCRIPT) -> tuple[Command, Path]:
    script, log = tmp_path / "summarize.py", tmp_path / "calls.log"
    script.write_text(body)
    return Command(f"{sys.executable} {script} {log}", timeout_seconds=30), log


def test_the_summary_is_what_the_command_prints_and_a_span_is_asked_once(tmp_path: Path) -> None:
    mine, log = command(tmp_path)
    context = Context(CONTEXT.counter, CONTEXT.window, "s", summarizer=mine)
    options = ClaudeCodeOptions(auto_compact_tokens=3000, summary_chars=600)
    first = run(CATALOGUE.strategies["claude-code"], session(), options, context)
    again = run(CATALOGUE.strategies["claude-code"], session()[:], options, context)
    assert first.messages is not None and again.messages is not None
    summary = next(m for m in first.messages if m.is_compact_summary)
    assert summary.text == "28 messages (message, meta, tool_result) within 600 characters"
    assert log.read_text() == "called\n"  # the same span again: kept, not asked again


def test_without_one_configured_nothing_is_run(tmp_path: Path) -> None:
    local = run(
        CATALOGUE.strategies["claude-code"], session(), ClaudeCodeOptions(auto_compact_tokens=3000), CONTEXT
    )
    assert local.messages is not None
    assert next(m for m in local.messages if m.is_compact_summary).text.startswith("[memory:")


@pytest.mark.parametrize(
    ("body", "timeout", "error"),
    [
        ("import sys; print('boom', file=sys.stderr); sys.exit(3)", 30, "exited with 3: boom"),
        ("import time; time.sleep(5)", 0.5, "did not answer within 0.5 seconds"),
        ("print('   ')", 30, "printed no summary"),
    ],
)
def test_a_failing_summarizer_says_how(tmp_path: Path, body: str, timeout: float, error: str) -> None:
    mine, _ = command(tmp_path, body)
    failing = Command(mine.command, timeout)
    with pytest.raises(SummarizerError, match=error):
        failing(session(), 100, None)
    with pytest.raises(SummarizerError, match="'no-such-summarizer' was not found"):
        Command("no-such-summarizer --fast")(session(), 100, None)


def test_the_config_names_it_and_refuses_what_is_not_one() -> None:
    config = from_dict(
        {"summarizer": {"command": "python3 mine.py", "timeout_seconds": 5}}, Config(CATALOGUE)
    )
    assert config.summarizer == Command("python3 mine.py", 5.0)
    assert config.to_dict()["summarizer"] == {"command": "python3 mine.py", "timeout_seconds": 5.0}
    assert (
        from_dict({}, Config(CATALOGUE)).summarizer is None
        and "summarizer" not in from_dict({}, Config(CATALOGUE)).to_dict()
    )
    with pytest.raises(ConfigError, match=r"summarizer\.command must be a command line"):
        from_dict({"summarizer": {"timeout_seconds": 5}}, Config(CATALOGUE))
    with pytest.raises(ConfigError, match=r"summarizer\.timeout_seconds must be"):
        from_dict({"summarizer": {"command": "x", "timeout_seconds": 0}}, Config(CATALOGUE))
    with pytest.raises(ConfigError, match=r"unknown key 'summarizer\.model'"):
        from_dict({"summarizer": {"command": "x", "model": "y"}}, Config(CATALOGUE))


def test_the_command_line_uses_it_and_reports_its_failure(tmp_path: Path) -> None:
    from compaction_inspector.sample_sessions import path

    mine, _ = command(tmp_path)
    config = tmp_path / "compaction.yaml"
    config.write_text(f"summarizer: {{command: '{mine.command}'}}\n")
    ok = cli("compact", str(path()), "--strategy", "claude-code", "--auto-compact-tokens", "1000",
             "--config", str(config), "--json")  # fmt: skip
    assert ok.returncode == 0 and "messages (" in ok.stdout and "within 11000 characters" in ok.stdout
    config.write_text(f"summarizer: {{command: '{sys.executable} -c \"import sys; sys.exit(4)\"'}}\n")
    failed = cli("compact", str(path()), "--strategy", "claude-code", "--auto-compact-tokens", "1000",
                 "--config", str(config))  # fmt: skip
    assert failed.returncode == 2 and "exited with 4" in failed.stderr

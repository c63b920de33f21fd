"""Titles and topics are the person's words, not the agent's wrappers (docs/formats.md)."""

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Session
from compaction_inspector.core.replaying.checkpoint import build
from compaction_inspector.core.strategies import Context, run
from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
from compaction_inspector.core.topic import asks, own_words, title
from tests.helpers import a, u

SELECTED = (
    "<ide_selection>The user selected the lines 508 to 510 from /src/cli.py:\nparser.add_argument()\n\n"
    "This may or may not be related to the current task.</ide_selection>"
    "How can I make this possible to install as a library with `uv`?"
)


def test_wrappers_are_taken_out_and_a_bare_command_reads_as_the_command() -> None:
    assert own_words(SELECTED) == "How can I make this possible to install as a library with `uv`?"
    assert own_words("<ide_opened_file>The user opened a.py</ide_opened_file>\nfix the bug") == "fix the bug"
    assert (
        own_words("<system-reminder>be brief</system-reminder> and <b>bold</b> stays")
        == "and <b>bold</b> stays"
    )
    command = (
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n"
        "<command-args>12</command-args>"
    )
    assert own_words(command) == "/review 12"
    assert (
        own_words("<local-command-stdout></local-command-stdout>")
        == "<local-command-stdout></local-command-stdout>"
    )
    assert title(SELECTED, 20) == "How can I make this…"


def test_a_volley_summary_and_a_checkpoint_are_named_by_the_persons_words() -> None:
    messages = [u(SELECTED), a("x" * 4000, id="r1"), u("next, the README"), a("done", id="r2")]
    result = run(
        CATALOGUE.strategies["hysteresis"], messages, HysteresisOptions(), Context(window=Window(1200, 1))
    )
    assert result.steps[0].title == "Summarize volley 0: “How can I make this possible to install…”"
    checkpoint = build(Session(tuple(messages), "test"), at=1)
    assert (
        checkpoint.topic
        == checkpoint.goal
        == "How can I make this possible to install as a library with `uv`?"
    )


def test_a_shell_command_typed_with_a_bang_reads_as_the_person_typed_it() -> None:
    """Claude Code writes `! git switch main` as `<bash-input>` and its output as
    `<bash-stdout>`/`<bash-stderr>`: the title is the command, the output no one's words."""
    assert title("<bash-input>git switch main</bash-input>", 60) == "$ git switch main"
    output = "<bash-stdout>Switched to branch 'main'</bash-stdout><bash-stderr></bash-stderr>"
    assert not asks(output) and own_words(output) == output
    assert asks("<bash-input>ls</bash-input>")

"""What a summary kept of the span it replaced (docs/agents.md), on hand-made spans."""

import re

from hypothesis import example, given
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.context_model import fit
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.own.compactions import real_compactions
from compaction_inspector.core.replaying.retention import (
    _NUMBER,
    _PATH,
    Facts,
    Share,
    _facts_of,
    carried,
    facts,
    met,
    paths,
    retention,
)
from compaction_inspector.core.text import clauses
from compaction_inspector.sample_sessions import path
from tests.helpers import a, load, u


def test_facts_of_a_span_by_kind() -> None:
    span = [
        u("The parser in `tinyparse/core.py` fails on https://example.com/docs?a=1, see issue 4312."),
        Message(
            "assistant",
            (Block.tool_use("t1", "Bash", {"command": "pytest -q tests/test_parser.py\necho done"}),),
        ),
        a("I changed `parse_line` in config.ini; def split_once(text): ... 12 tests, 3.14 s", id="r1"),
    ]
    assert facts(span) == {
        "paths": {"tinyparse/core.py", "tests/test_parser.py", "config.ini"},
        "commands": {"pytest -q tests/test_parser.py"},
        "identifiers": {"parse_line", "split_once"},
        "numbers": {"4312", "3.14"},
        "urls": {"https://example.com/docs?a=1"},
    }
    kept = retention(span, [u("Summary: fixed `parse_line` in tinyparse/core.py (issue 4312).")])
    assert kept.to_dict() == {
        "paths": 0.3333,
        "commands": 0.0,
        "identifiers": 0.5,
        "numbers": 0.5,
        "urls": 0.0,
    }
    assert retention(span, []).line().startswith("paths 0% (0/3) · commands 0% (0/1)")


def test_what_a_request_still_holds_of_the_messages_it_no_longer_sends() -> None:
    first = u("Read `core/parse.py` and run 4312 checks.")
    second = a("Edited core/parse.py; see https://example.com/x")
    third = u("Now `split_once` in tests/test_split.py")
    summary = u("Summary: edited core/parse.py, 4312 checks.")
    # first and second are gone: a path both name, a number, a URL; the summary names two
    known = Facts([first, second, third])
    assert carried([first, second, third], [summary, third], known) == Share(2, 3)
    assert carried([first, second, third], [first, second, third], known) == Share(0, 0)
    # a fact a kept message holds is kept though no summary names it
    again = u("the file core/parse.py again")
    assert carried([first, again], [again], known) == Share(1, 2)


def test_the_compacted_samples_compaction_measured_predicted_and_scored() -> None:
    s = load(path("claude_code_compacted.jsonl"))
    counter = make_counter("chars4")
    [c] = real_compactions(s, fit(s, counter), counter, Config(CATALOGUE).for_session(s))
    d = c.to_dict()
    assert (d["line"], d["trigger"], d["pre_tokens"], d["post_tokens"]) == (16, "auto", 16194, 343)
    assert (d["measured_before"], d["measured_after"]) == (16165, 15555)
    # the model of the context after it, from the summary and attachments the transcript holds
    assert d["predicted_after"] == 15629 and d["reread_tokens"] == 0
    # its own record puts the point at the 16,194 it counted (its rule says 167,000)
    assert d["policy_round_offset"] == 0
    assert d["retention"] == {
        "paths": 0.25,
        "commands": 0.0,
        "identifiers": 0.8333,
        "numbers": 0.5,
        "urls": None,
    }
    assert d["our_retention"] == {
        "paths": 0.75,
        "commands": 0.0,
        "identifiers": 0.1667,
        "numbers": 0.0,
        "urls": None,
    }


@given(st.text(alphabet=st.sampled_from(list("ab_1~./- \n\t,;:'\"é(py)md")), max_size=80))
def test_paths_searched_run_by_run_are_those_found_in_the_whole_text(text: str) -> None:
    """The search for paths looks only at runs of the characters a path holds that have
    a '/' or a '.': exactly what the whole text's search finds, in the same order."""
    assert paths(text) == _PATH.findall(text)


def test_paths_in_prose_code_and_shell_lines() -> None:
    text = "Edited ./src/app.py and ~/notes/todo.md; see README.md. Ran `ls /var/log/`… 1.5 ok."
    assert paths(text) == _PATH.findall(text) == ["./src/app.py", "~/notes/todo.md", "README.md", "/var/log"]


@given(st.text(alphabet=st.sampled_from(list("a_19.,- \n")), max_size=60))
def test_numbers_are_found_where_no_word_or_point_comes_before_them(text: str) -> None:
    """The number search, its look behind after the first digit: as with it before."""
    assert _NUMBER.findall(text) == re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?!\w|\.\d)", text)


_FACTY = ["; ", ";", " ", "\n", "def ", "class", "Foo", "`id`", "`", "src/a.py", "/", ".", "1,234", "12",
          "9.5", "http://x.io/p", "https://y.dev;", "https://", "'", "é", "-", "_"]  # fmt: skip


def _read_by(units: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Each kind's facts of `units` read one by one, in turn, as a summary is read."""
    found = [f for f in map(_facts_of, units) if f is not None]
    return {
        "urls": tuple(x for f in found for x in f.urls),
        "paths": tuple(x for f in found for x in f.paths),
        "identifiers": (*(x for f in found for x in f.ticked), *(x for f in found for x in f.defined)),
        "numbers": tuple(x for f in found for x in f.numbers),
    }


@example(["def ", "Foo", "; ", "`id`", "; ", "class", " ", "Bar"])  # a kind found by two patterns
@example(["def ", "http://x.io/p", "; ", "def "])  # a URL's search ends at the space, not its ';'
@example(["https://", "; ", "Foo"])  # ... and a URL's match may be the semicolon a clause keeps
@given(st.lists(st.sampled_from(_FACTY), max_size=400))
def test_a_long_text_a_strategy_wrote_holds_the_facts_of_its_clauses(parts: list[str]) -> None:
    """A summary's facts are read part by part between its "; " (each part's once a
    replay): no pattern's match holds a space after a semicolon, or is changed by one,
    so they are those of the clauses its count is the sum of, in the same order and
    number (and the whole text's, but where a URL's match ends in the semicolon)."""
    text = "word; " * 100 + "".join(parts)  # long enough to be read by parts
    held = met(u(text, is_synthetic=True))
    assert {k: v for k, v in held.items() if k != "commands"} == _read_by(clauses(text))
    if "http" not in text:
        assert held == met(u(text))  # each kind's in the order met


_WORDS = ["src/a.py", "src/a.py.bak", "`fn`", "def go", "1,234", "12345", "http://x.io/p", "é", "\ud800",
          "🙂", " ", "\n", "; ", "a"]  # fmt: skip


@given(
    st.lists(st.lists(st.sampled_from(_WORDS), max_size=12).map("".join), min_size=1, max_size=10),
    st.data(),
)
def test_a_finder_keeps_what_retention_keeps(texts: list[str], data: st.DataObject) -> None:
    """The facts found in one pass over the source: for any run made of its messages
    (some replaced, some new written), the shares `retention` gives searching the text."""
    from compaction_inspector.core.replaying.retention import Finder

    source = [u(t) if k % 2 else a(t) for k, t in enumerate(texts)]
    gone = data.draw(st.lists(st.sampled_from(source), unique=True))
    written = [
        u(t) for t in data.draw(st.lists(st.sampled_from([*_WORDS, "kept: src/a.py 12345"]), max_size=3))
    ]
    after = [*(m for m in source if m not in gone), *written]
    assert Finder(source).retention(gone, after) == retention(gone, after)

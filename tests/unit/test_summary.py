"""Our local summary lists the span's own facts word for word after its bullets, each
kind in turn, within its cap, where at least 200 characters are left for them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.replaying import summary
from compaction_inspector.core.replaying.retention import retention
from compaction_inspector.core.replaying.summary import _chosen, summarize, summary_text
from tests.helpers import a, call, result, u


def span() -> list:  # type: ignore[type-arg]
    msgs = [u("fix the parser in `parse_header`")]
    for k in range(6):
        msgs += [call(f"b{k}", "Bash", input={"command": f"pytest tests/test_{k}.py -x"})]
        msgs += [result(f"b{k}", text=f"src/mod_{k}/core.py:12 failed with code 40{k}1")]
        msgs += [a(f"`helper_{k}` in src/mod_{k}/core.py needs a guard", id=f"r{k}")]
    return msgs


def test_a_span_summary_lists_its_paths_commands_and_identifiers_in_turn() -> None:
    text = summary_text(span(), 800, "s")
    assert len(text) <= 800
    assert "\n- paths: " in text and "\n- commands: pytest tests/test_" in text
    assert "\n- identifiers: " in text and "helper_0" in text
    # each kind in turn: none crowds the others out, so each keeps some of its own
    kept = retention(span(), [summarize(span(), 800, "s")])
    assert kept.paths.kept and kept.commands.kept and kept.identifiers.kept and kept.numbers.kept


def test_a_summary_summarized_alone_is_written_once_for_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy firing again before anything new joins its summary summarizes that
    summary alone: another message of the same text comes to what the first did, written
    once for each cap, and to what writing it afresh gives."""
    from compaction_inspector.core.caching.memo import forget
    from compaction_inspector.core.model import text_message

    made = summary_text(span(), 800, "s")
    first, again = (
        text_message("user", made, is_compact_summary=True, replaces=(u(f"span {k}"),)) for k in range(2)
    )
    written: list[int] = []
    write = summary._summary_text

    def counted(*args):  # type: ignore[no-untyped-def]
        written.append(args[1])
        return write(*args)

    monkeypatch.setattr(summary, "_summary_text", counted)
    forget()
    alone = summary_text([first], 800, "s")
    assert summary_text([again], 800, "s") == alone and written == [800]
    assert summary_text([again], 600, "s") == write((again,), 600, "s", None) and written == [800, 600]
    forget()
    assert alone == write((again,), 800, "s", None)


def test_a_summary_a_replay_wrote_is_read_but_never_held() -> None:
    """The next summary reads it, once: the tables of what spans hold keep the session's
    own messages only, so a replay's thousands of summaries go when it ends."""
    from compaction_inspector.core.caching.memo import forget
    from compaction_inspector.core.model import text_message
    from compaction_inspector.core.replaying import retention as facts

    tables = (summary._facts, summary._message_facts, facts._find_met)

    def sizes() -> list[int]:
        return [getattr(t, "cache_info")().currsize for t in tables]  # noqa: B009

    forget()
    own = span()
    made = summary_text(own, 800, "s")
    held = sizes()
    assert held[:2] == [1, len(own)]
    written = text_message("user", made, is_compact_summary=True, replaces=(u("old"),))
    after = [written, *own[:2]]
    assert summary_text(after, 800, "s") == summary._summary_text(tuple(after), 800, "s", None)
    assert sizes() == held


def test_facts_follow_the_bullets_only_where_200_characters_are_left() -> None:
    text = summary_text(span(), 300, "s")
    assert len(text) <= 300 and "\n- paths: " not in text and "\n- actions: Bash ×6" in text


@given(
    st.dictionaries(
        st.sampled_from(["paths", "commands", "identifiers", "numbers", "urls"]),
        st.lists(st.text(alphabet="ab/.1", min_size=1, max_size=30), max_size=40),
    ),
    st.integers(0, 400),
)
def test_the_turns_that_all_fit_are_taken_at_once_as_walking_them_would(
    found: dict[str, list[str]], room: int
) -> None:
    taken = _chosen(found, room)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(summary, "_whole_rounds", lambda found, room: (0, 0))  # every turn walked
        assert taken == _chosen(found, room)

import sys
import threading
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.caching.memo import forget
from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.replaying import retention
from compaction_inspector.core.replaying.retention import KINDS, met
from compaction_inspector.core.selection import Selection, keep, kept
from compaction_inspector.core.text import clauses
from tests.helpers import u


def test_a_selection_is_its_head_then_its_lists() -> None:
    selection = Selection(
        "[memory]\nfix the parser", (("paths", ("a.py", "b.py", "c.py", "d.py")), ("urls", ("http://x.io",)))
    )
    assert selection.text == "[memory]\nfix the parser\n- paths: a.py; b.py; c.py; d.py\n- urls: http://x.io"
    assert list(selection.middle) == ["b.py", "c.py"]
    assert selection.edges == "[memory]\nfix the parser\n- paths: a.py; d.py\n- urls: http://x.io"
    assert sorted(clauses(selection.text)) == sorted(
        [*clauses(selection.edges), *(c for i in selection.middle for c in clauses(f" {i};"))]
    )
    assert kept(selection.text) is None and kept(keep(selection)) is selection


_BITS = ["src/a.py", "a.py.bak", "; ", ";", " ", "1,234", "12", "http://x.io/p", "https://", "`id`", "def go",
         "class", "v2/3000/x", "é", "\n", "-", "~/n.md", "Foo"]  # fmt: skip
_ITEM = st.lists(st.sampled_from(_BITS), min_size=1, max_size=6).map("".join)
_LISTS = st.lists(
    st.tuples(st.sampled_from(KINDS), st.lists(_ITEM, min_size=1, max_size=30).map(tuple)), max_size=5
).map(tuple)
_HEAD = st.lists(st.sampled_from(_BITS), max_size=40).map(lambda bits: "word; " * 100 + "".join(bits))


@given(_HEAD, _LISTS)
def test_a_selection_holds_the_facts_of_its_text(
    head: str, lists: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """Read by its head and items (the items' tables filled, then read from them), a
    selection's facts are those its text is read for, in the same order and number."""
    selection = Selection(head, lists)
    forget()
    by_text = met(u(selection.text, is_synthetic=True))
    forget()
    text = keep(selection)
    assert met(u(text, is_synthetic=True)) == by_text
    assert met(u(text, is_synthetic=True)) == by_text


@given(_HEAD, _LISTS, _LISTS)
def test_a_selection_read_after_others_holds_the_facts_of_its_text(
    head: str, before: tuple[tuple[str, tuple[str, ...]], ...], lists: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """What reading one selection leaves in the items' tables (its items, under their
    kinds) never changes what the next is read for, whichever kinds it lists them under."""
    selection = Selection(head, lists)
    forget()
    by_text = met(u(selection.text, is_synthetic=True))
    forget()
    shuffled = tuple((kind, items) for (kind, _), (_, items) in zip(reversed(lists), lists, strict=True))
    for earlier in (Selection(head, before), Selection(head, shuffled)):
        met(u(keep(earlier), is_synthetic=True))
    assert met(u(keep(selection), is_synthetic=True)) == by_text


def _made_up(text: str) -> int:
    """A count no sum of other cuts gives by chance."""
    return len(text) * 7 + text.count(";") * 3 + (ord(text[0]) % 5 if text else 0)


@given(_HEAD, _LISTS)
def test_a_selection_counts_the_sum_of_its_texts_clauses(
    head: str, lists: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """Counted by its edges and middle items (each item's count then known), a
    selection counts what its text's clauses do."""
    counter = TokenCounter("made up", lambda: lambda texts: [_made_up(t) for t in texts])
    text = keep(Selection(head, lists))
    expected = sum(map(_made_up, clauses(text)))
    assert counter.count_all([u(text, is_synthetic=True)]) == [expected]
    assert counter.count_all([u(text, is_synthetic=True)]) == [expected]


def test_selections_read_in_two_threads_while_their_tables_are_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app replays in one thread while it runs the panel's strategy in another; each
    reads summaries, and either may let the shared tables go past their bound (here 8
    items) while the other is reading: every read still holds its text's facts."""
    monkeypatch.setattr(retention, "_UNITS_KEPT", 8)
    # a path that holds a number too: each list is read item by item, through the tables
    paths = [(*(f"src/module_{k}/part_{i}.py" for i in range(30)), "v2/3000/x", "a.py") for k in range(40)]
    selections = [Selection("head", (("paths", items), ("identifiers", ("`id`", "go")))) for items in paths]
    forget()
    expected = [met(u(s.text, is_synthetic=True)) for s in selections]

    def read() -> None:
        for s, want in zip(selections, expected, strict=True):
            assert met(u(keep(s), is_synthetic=True)) == want

    assert _failures_in_two_threads(read) == []


def test_selections_counted_in_two_threads_while_the_counters_tables_are_let_go() -> None:
    """One counter, as the app's replay and panel share it, counting summaries in two
    threads while its tables of texts and items are let go past their bound (here 8):
    every count is its text's clauses' sum."""
    counter = TokenCounter("made up", lambda: lambda texts: [_made_up(t) for t in texts])
    counter.short_kept, counter.derived_kept = 8, 8
    paths = [tuple(f"src/module_{k}/part_{i}.py" for i in range(30)) for k in range(40)]
    texts = [keep(Selection(f"head {k}", (("paths", items),))) for k, items in enumerate(paths)]
    expected = [sum(map(_made_up, clauses(t))) for t in texts]

    def count() -> None:
        assert counter.count_all([u(t, is_synthetic=True) for t in texts]) == expected

    assert _failures_in_two_threads(count) == []


def _failures_in_two_threads(work: Callable[[], None], times: int = 5) -> list[BaseException]:
    """What `work`, done `times` over in each of two threads taking turns as often as they
    can, raised (a thread's failure is the test's)."""
    failed: list[BaseException] = []

    def each() -> None:
        try:
            for _ in range(times):
                work()
        except BaseException as exc:
            failed.append(exc)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=each) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switching)
    return failed

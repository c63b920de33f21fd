"""Listings: what the transcript pane shows for a session and for a step's diff."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.model import Block, Message
from compaction_inspector.core.reporting.diff import diff
from compaction_inspector.tui.session.entries import PAIR_REACH, Listing, diff_listing, plain_listing
from tests.helpers import a, call, result, u
from tests.test_properties import transcripts


def count(m: Message) -> int:
    return len(m.text)


def summary(*sources: Message) -> Message:
    return Message("user", (Block("text", text="[memory:x]\nshort"),), replaces=sources)


def shown(listing: Listing) -> list[tuple[str, str]]:
    return [(e.message.text, e.fate) for e in listing]


def test_plain_listing_bands_counts_and_origins() -> None:
    msgs = [u("hi"), a("one", id="A"), a("two", id="A"), a("three", id="B"), u("again"), a("four", id="C")]
    listing = plain_listing(msgs, count)
    assert [(e.index, e.origin, e.tokens) for e in listing] == [
        (i, i, len(m.text)) for i, m in enumerate(msgs)
    ]
    assert [e.volley_band for e in listing] == [
        "volley 0 · “hi” · 4 msgs · 13 tok",
        None,
        None,
        None,
        "volley 1 · “again” · 2 msgs · 9 tok",
        None,
    ]
    assert [e.round_band for e in listing] == [
        "round 0 · 1 msgs · 2 tok",
        "round 1 · 2 msgs · 6 tok",
        None,
        "round 2 · 2 msgs · 10 tok",
        None,
        "round 3 · 1 msgs · 4 tok",
    ]
    assert listing.position(msgs[3]) == 3 and listing.position(u("elsewhere")) is None


def test_sub_agent_messages_merge_in_by_line() -> None:
    texts = [u("hi"), a("x"), u("go"), a("y")]
    msgs = [dataclasses.replace(m, line=n) for m, n in zip(texts, [1, 2, 5, 6], strict=True)]
    side = [dataclasses.replace(a("sub 1"), line=3), dataclasses.replace(a("sub 2"), line=4)]
    listing = plain_listing(msgs, count, side)
    assert [e.message.text for e in listing] == ["hi", "x", "sub 1", "sub 2", "go", "y"]
    assert [e.sidechain for e in listing] == [False, False, True, True, False, False]
    assert listing.shown_before(4) == 2 and listing.position_of_shown(2) == 4
    assert listing.bands_at(2) == (None, None) and listing.bands_at(4)[0] is not None


def test_merged_step_puts_a_summary_after_what_it_condenses() -> None:
    before = [u("q1"), a("r1"), u("q2"), a("r2"), u("q3"), a("r3")]
    s = summary(*before[:4])
    after = [s, *before[4:]]
    d = diff(before, after, 0, 0)
    assert shown(diff_listing(before, after, d, count, {})) == [
        ("q1", "summarized"),
        ("r1", "summarized"),
        ("q2", "summarized"),
        ("r2", "summarized"),
        (s.text, "summary"),
        ("q3", "kept"),
        ("r3", "kept"),
    ]


def test_merged_step_lists_dropped_messages_where_they_stood() -> None:
    before = [u("q1"), a("r1"), u("q2"), a("r2"), u("q3"), a("r3")]
    marker = u("[truncated]")
    after = [marker, before[2], before[3], before[5]]
    d = diff(before, after, 0, 0)
    listing = diff_listing(before, after, d, count, {m: i for i, m in enumerate(before)})
    assert shown(listing) == [
        ("[truncated]", "inserted"),
        ("q1", "dropped"),
        ("r1", "dropped"),
        ("q2", "kept"),
        ("r2", "kept"),
        ("q3", "dropped"),
        ("r3", "kept"),
    ]
    assert [e.origin for e in listing] == [None, 0, 1, 2, 3, 4, 5]
    # Bands belong to the list after the step; removed messages open none.
    assert [e.volley_band is not None for e in listing] == [True, False, False, True, False, False, False]
    assert listing.shown_before(5) == 3 and listing.position_of_shown(3) == 6


def test_split_panes_and_edits() -> None:
    before = [u("q"), call("t1"), result("t1", text="long output"), a("done")]
    cleared = Message("user", (Block.tool_result("t1", "[cleared]"),), replaces=(before[2],))
    after = [before[0], before[1], cleared, before[3]]
    d = diff(before, after, 0, 0)
    origins = {m: i for i, m in enumerate(before)}
    assert shown(diff_listing(before, after, d, count, origins)) == [
        ("q", "kept"),
        ("Read {}", "kept"),
        ("long output", "replaced"),
        ("[cleared]", "edited"),
        ("done", "kept"),
    ]
    left = diff_listing(before, after, d, count, origins, "before")
    right = diff_listing(before, after, d, count, origins, "after")
    assert [e.fate for e in left] == ["kept", "kept", "replaced", "kept"]
    assert [e.fate for e in right] == ["kept", "kept", "edited", "kept"]
    assert right[2].origin == 2


def test_tool_partners_near_and_far() -> None:
    filler = [a(f"x{n}") for n in range(PAIR_REACH + 50)]
    msgs = [u("q"), call("near"), result("near"), call("far"), *filler, result("far"), call("lost")]
    listing = plain_listing(msgs, count)
    assert listing.partner(1, "near", result=True) == 2
    assert listing.partner(2, "near", result=False) == 1
    assert listing.partner(3, "far", result=True) == len(msgs) - 2
    assert listing.partner(len(msgs) - 2, "far", result=False) == 3
    assert listing.partner(len(msgs) - 1, "lost", result=True) is None


@given(transcripts(), st.data())
def test_a_merged_step_lists_every_message_once_in_order(before: list[Message], data: st.DataObject) -> None:
    after: list[Message] = []
    for m in before:
        what = data.draw(st.sampled_from(["keep", "keep", "drop", "summarize", "edit", "insert"]))
        if what == "keep":
            after.append(m)
        elif what == "summarize":
            after.append(summary(m))
        elif what == "edit":
            after.append(Message(m.role, m.blocks, id=m.id, replaces=(m,)))
        elif what == "insert":
            after += [u("new"), m]
    d = diff(before, after, 0, 0)
    listing = diff_listing(before, after, d, count, {})
    entries = list(listing)
    new = [e.message for e in entries if e.fate in ("kept", "inserted", "summary", "edited")]
    old = [e.message for e in entries if e.fate in ("kept", "dropped", "summarized", "replaced")]
    assert new == after and old == before
    place = {id(e.message): k for k, e in enumerate(entries)}
    for m in after:
        for source in m.replaces:
            assert place[id(source)] < place[id(m)]
    assert [listing.position(m) for m in after] == [place[id(m)] for m in after]
    assert [listing.position_of_shown(j) for j in range(len(after))] == [place[id(m)] for m in after]


def test_a_message_is_found_again_from_afar_or_by_what_stands_for_it() -> None:
    before = [u(f"q{n}") if n % 2 == 0 else a(f"r{n}") for n in range(3 * PAIR_REACH)]
    origins = {m: i for i, m in enumerate(before)}
    assert plain_listing(before, count, origins=origins).position(before[-5], near=0) == len(before) - 5
    s = summary(*before[:PAIR_REACH])
    after = [s, *before[PAIR_REACH:]]
    d = diff(before, after, 0, 0)
    merged = diff_listing(before, after, d, count, origins)
    far = before[2 * PAIR_REACH + 7]
    assert merged.position(far, near=0) == 2 * PAIR_REACH + 8  # after the summary
    assert merged.position(before[3], near=len(merged) - 1) == 3  # summarized, still listed
    # Stepping back from the summary: the message it condensed first stands for it.
    assert plain_listing(before, count, origins=origins).position(s, near=len(before) - 1) == 0


def test_a_neighbouring_listing_lends_its_grouping() -> None:
    before = [u(f"q{n}") if n % 3 == 0 else a(f"r{n}", id=f"A{n // 2}") for n in range(60)]
    after = [summary(*before[:9]), *before[9:]]
    d = diff(before, after, 0, 0)
    plain = plain_listing(before, count)
    afresh = diff_listing(before, after, d, count, {})
    lent = diff_listing(before, after, d, count, {}, like=[plain])
    assert (lent.round_starts, lent.volley_starts) == (afresh.round_starts, afresh.volley_starts)
    assert [e.round_band for e in lent] == [e.round_band for e in afresh]
    side = diff_listing(before, after, d, count, {}, "before", like=[plain])
    assert side.round_starts is plain.round_starts  # the same list: nothing regrouped

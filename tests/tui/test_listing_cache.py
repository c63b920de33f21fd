"""The listing cache: built once per step and source, ahead of time, never stale."""

from __future__ import annotations

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Session
from compaction_inspector.core.strategies import Context, run
from compaction_inspector.core.strategies.clear import ClearOptions
from compaction_inspector.core.strategies.variants import CLEARABLE_TOOLS
from compaction_inspector.tui.session.listing_cache import Key, ListingCache, Source
from tests.helpers import call, result, u


def source() -> Source:
    msgs = [u("start")]
    for n in range(6):
        msgs += [call(f"t{n}"), result(f"t{n}", text="x" * 400), u(f"next {n}")]
    session = Session(tuple(msgs), "plain")
    counter = make_counter("chars4")
    outcome = run(
        CATALOGUE.strategies["microcompact"],
        session.messages,
        ClearOptions(tools=CLEARABLE_TOOLS, keep_tool_uses=1),
        Context(counter, Window(2000, 100)),
    )
    return Source(session, outcome, counter, {m: i for i, m in enumerate(msgs)})


def test_listings_are_kept_prepared_and_never_stale() -> None:
    src = source()
    assert src.result is not None and src.result.steps
    cache = ListingCache(kept=2)
    transcript = cache.get(src, Key(-1, False, False))
    assert cache.get(src, Key(-1, False, False)) is transcript
    cache.prepare(src, [Key(0, False, False), Key(0, True, False)], cancelled=lambda: False)
    assert Key(0, False, False) in cache and Key(0, True, False) in cache
    assert Key(-1, False, False) not in cache  # only the most recent are kept
    (merged,) = cache.get(src, Key(0, False, False))
    before, after = cache.get(src, Key(0, True, False))
    assert len(merged) == len(before) + sum(e.fate in ("inserted", "summary", "edited") for e in after)
    # Preparing for a source that has moved on (a new result, exact counts) does nothing.
    newer = src._replace(counter=make_counter("chars4"))
    assert cache.get(newer, Key(-1, False, False)) is not transcript
    cache.prepare(src, [Key(0, False, False)], cancelled=lambda: False)
    assert Key(0, False, False) not in cache
    cache.prepare(newer, [Key(0, False, False)], cancelled=lambda: True)
    assert Key(0, False, False) not in cache


def test_a_step_let_go_forgets_its_lists_and_rebuilds_them_alike() -> None:
    src = source()
    assert src.result is not None
    step = src.result.steps[0]
    cache = ListingCache(kept=1)
    (first,) = cache.get(src, Key(0, False, False))
    kept_then = step.diff.kept
    assert "messages" in step.__dict__ and "diff" in step.__dict__
    cache.get(src, Key(-1, False, False))
    assert not {"messages", "before", "diff"} & set(step.__dict__)
    (again,) = cache.get(src, Key(0, False, False))
    assert step.diff.kept == kept_then
    assert [(e.message, e.fate) for e in again] == [(e.message, e.fate) for e in first]

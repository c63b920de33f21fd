"""A screen's work under way: a newer run of a kind supersedes the one before, and the
screen settles once no run is under way."""

from __future__ import annotations

from compaction_inspector.tui.session.runs import Runs


def test_only_the_latest_run_of_a_kind_counts_and_the_last_done_settles() -> None:
    settled: list[bool] = []
    runs = Runs(lambda: settled.append(True))
    old, count = runs.start("replay"), runs.start("count")
    new = runs.start("replay")
    assert runs.busy and not runs.settled.is_set()
    assert not runs.latest("replay", old) and not runs.done("replay", old)  # superseded: dropped
    assert runs.done("replay", new) and not settled  # counting is still under way
    assert runs.done("count", count) and settled == [True] and runs.settled.is_set() and not runs.busy

from compaction_inspector.core.reporting.diff import diff, runs
from tests.helpers import a, u


def test_index_lists_are_written_as_runs() -> None:
    assert runs([]) == []
    assert runs([0, 1, 2, 5, 7, 8]) == [[0, 3], [5, 6], [7, 9]]
    before = [u("a"), a("b"), u("c"), a("d"), u("e")]
    after = [before[0], before[1], before[3], before[4], u("new")]
    assert diff(before, after, 5, 5).to_dict() == {
        "kept": [[0, 2], [3, 5]],
        "dropped": [[2, 3]],
        "summarized": [],
        "edited": [],
        "inserted": [[4, 5]],
        "tokens_before": 5,
        "tokens_after": 5,
        "token_delta": 0,
    }

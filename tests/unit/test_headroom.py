"""How far the agent is from compacting on its own, and how many requests that leaves."""

from compaction_inspector.core.own.headroom import headroom


def test_what_is_left_and_the_requests_it_leaves_at_the_recent_pace() -> None:
    left = headroom(150_000, 167_000, [100_000, 110_000, 120_000, 130_000, 140_000])
    assert (left.left, left.pace, left.requests) == (17_000, 10_000, 2)
    assert left.line() == "compacts in ~17,000 tokens (about 2 requests at this pace)"
    assert left.to_dict() == {
        "count": 150_000,
        "point": 167_000,
        "tokens_left": 17_000,
        "pace_per_request": 10_000,
        "requests_left": 2,
    }


def test_the_pace_is_the_last_ten_requests_and_none_where_there_is_none() -> None:
    # an early burst of 50,000 a request is past the last ten: the pace is 1,000
    prompts = [0, 50_000, 100_000, *range(101_000, 112_000, 1_000)]
    assert headroom(111_000, 167_000, prompts).pace == 1_000
    assert headroom(111_000, 167_000, [90_000, 111_000]).pace is None  # two prompts: too few
    assert headroom(111_000, 167_000, [120_000, 115_000, 111_000]).pace is None  # it shrank
    flat = headroom(111_000, 167_000, [111_000, 111_000, 111_000])
    assert flat.requests is None and flat.line() == "compacts in ~56,000 tokens"


def test_at_or_past_its_point_it_compacts_at_its_next_request() -> None:
    assert headroom(167_000, 167_000, [150_000, 160_000, 167_000]).line() == "compacts at its next request"
    assert headroom(170_000, 167_000, []).left == -3_000

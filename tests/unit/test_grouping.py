from compaction_inspector.core.measuring.grouping import Span, api_rounds, volleys
from tests.helpers import a, call, result, u


def ranges(spans: list[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in spans]


def test_ids_a_b_a_give_three_rounds() -> None:
    msgs = [u(), a(id="A"), a(id="B"), a(id="A")]
    assert ranges(api_rounds(msgs)) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    msgs = [a(id="A"), a(id="B"), a(id="A")]
    assert ranges(api_rounds(msgs)) == [(0, 1), (1, 2), (2, 3)]


def test_streamed_lines_with_one_id_are_one_round() -> None:
    msgs = [u(), a("think", id="A"), a("text", id="A"), call("t1", id="A"), result("t1"), a(id="B")]
    assert ranges(api_rounds(msgs)) == [(0, 1), (1, 5), (5, 6)]


def test_leading_assistant_message_does_not_split() -> None:
    msgs = [a(id="A"), u(), a(id="B"), u()]
    assert ranges(api_rounds(msgs)) == [(0, 2), (2, 4)]


def test_everything_before_the_first_assistant_is_group_zero() -> None:
    msgs = [u("1"), u("2", is_meta=True), a(id="A")]
    assert ranges(api_rounds(msgs)) == [(0, 2), (2, 3)]


def test_tool_results_stay_with_their_call_and_dangling_uses_stay_put() -> None:
    msgs = [u(), call("t1", id="A"), result("t1"), call("t2", id="B"), u("next"), a(id="C")]
    assert ranges(api_rounds(msgs)) == [(0, 1), (1, 3), (3, 5), (5, 6)]


def test_round_tokens_are_summed() -> None:
    msgs = [u(), a(id="A"), result("x"), a(id="B")]
    assert [s.tokens for s in api_rounds(msgs, [1, 10, 100, 1000])] == [1, 110, 1000]


def test_empty_list_has_no_rounds_or_volleys() -> None:
    assert api_rounds([]) == []
    assert volleys([]) == []


def test_volleys_start_at_human_messages_with_a_prelude() -> None:
    msgs = [
        u("meta", is_meta=True),
        u("fix it"),
        call("t1", id="A"),
        result("t1"),
        a(id="B"),
        u("[memory:context v1 | session=x] old work"),
        u("next"),
        a(id="C"),
    ]
    assert ranges(volleys(msgs, [1] * 8)) == [(0, 1), (1, 6), (6, 8)]
    assert [v.tokens for v in volleys(msgs, [1] * 8)] == [1, 5, 2]


def test_no_prelude_when_the_first_message_is_human() -> None:
    assert ranges(volleys([u(), a(id="A"), u(), a(id="B")])) == [(0, 2), (2, 4)]

from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.caching import memo, token_cache
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Message
from compaction_inspector.sample_sessions import path
from tests.helpers import load


@pytest.fixture(autouse=True)
def cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    yield tmp_path
    memo.forget()  # what an inspection left in the per-session caches


def test_counts_come_back_exactly_without_encoding(cache_in: Path) -> None:
    first = make_counter("cl100k_base")
    tokens, side, hit = token_cache.count_session(load(path()), first)
    assert not hit and len(list((cache_in / "tokens").iterdir())) == 1
    again = make_counter("cl100k_base")

    def refuse(texts: list[str]) -> list[int]:
        raise AssertionError("encoded again")

    setattr(again, "_encode_lengths", refuse)  # noqa: B010 (a method replaced for this test)
    session = load(path())
    assert token_cache.load_counts(session, again)
    assert again.count_all(session.messages) == tokens and again.count_all(session.sidechain) == side


def test_a_changed_file_or_encoding_misses(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(path().read_bytes())
    token_cache.count_session(load(src), make_counter("cl100k_base"))
    src.write_bytes(path().read_bytes() + b"\n")  # same messages, different bytes: a new key
    assert not token_cache.load_counts(load(src), make_counter("cl100k_base"))
    assert not token_cache.load_counts(load(src), make_counter("chars4"))  # another encoding: another key


def test_the_estimate_is_kept_as_an_encoding_of_its_own(cache_in: Path) -> None:
    """The chars/4 counts (an agent's own rough count) are kept and read back, beside and
    apart from the encoding's."""
    session = load(path())
    rough, _, hit = token_cache.count_session(session, make_counter("chars4"))
    assert not hit and len(list((cache_in / "tokens").iterdir())) == 1
    primed = make_counter("chars4")
    assert token_cache.load_counts(load(path()), primed)
    assert (
        primed.count_all(session.messages)
        == rough
        == [make_counter("chars4").count(m) for m in session.messages]
    )
    assert not token_cache.load_counts(load(path()), make_counter("cl100k_base"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_corrupt_entries_are_ignored_and_removed(cache_in: Path, damage: str) -> None:
    tokens, _, _ = token_cache.count_session(load(path()), make_counter("cl100k_base"))
    [entry] = list((cache_in / "tokens").iterdir())
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[:-3]
    elif damage == "flip":
        data[-1] ^= 0xFF
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    counter = make_counter("cl100k_base")
    assert not token_cache.load_counts(load(path()), counter)
    assert not entry.exists()
    assert token_cache.count_session(load(path()), counter)[0] == tokens


def test_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, cache_in: Path) -> None:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
    token_cache.count_session(load(path()), make_counter("cl100k_base"))
    assert not (cache_in / "tokens").exists()


def opened(refuse_encoding: bool) -> Inspection:
    """A fresh process's inspection of the sample (a small window: its summarizers
    compact); `refuse_encoding`: its counter fails the test if it encodes anything."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.measuring.pressure import Window

    memo.forget()
    inspection = Inspection.open(path(), Config(CATALOGUE, window=Window(3_000, 500), preset=None))
    if refuse_encoding:

        def refuse(texts: list[str]) -> list[int]:
            raise AssertionError(f"encoded again: {texts[:1]}")

        setattr(inspection.counter, "_encode_lengths", refuse)  # noqa: B010 (a method replaced for this test)
    return inspection


def test_the_texts_a_replay_wrote_are_counted_once_and_a_later_run_never_loads_the_encoding(
    cache_in: Path,
) -> None:
    """A summarizing replay counts the summaries it writes; their counts are kept beside
    the session's, so the same replay in a later run encodes nothing."""

    def replayed(refuse: bool) -> list[tuple[int, int]]:
        inspection = opened(refuse)
        replay = inspection.replay(inspection.policy("aider"))
        return [(p.tokens_before, p.tokens_after) for p in replay.points]

    first = replayed(False)
    [entry] = list((cache_in / "tokens").glob("*.written"))
    assert replayed(True) == first
    entry.write_bytes(entry.read_bytes()[:-2])  # damaged: removed, counted again, kept again
    assert replayed(False) == first and entry.exists()


def test_texts_written_by_two_processes_replaying_one_session_are_both_kept(cache_in: Path) -> None:
    """`compare --jobs`: each process keeps the texts it counted; the entry holds both
    sets, so no later run counts either again."""
    session = load(path())
    said = ["first summary; of a span", "second summary; of another"]
    both = [make_counter("cl100k_base"), make_counter("cl100k_base")]
    for counter in both:  # each read the entry before either wrote
        token_cache.load_written(session, counter)
    counts = []
    for counter, text in zip(both, said, strict=True):
        counts.append(counter.count(u_written(text)))
        token_cache.store_written(session, counter)
    fresh = make_counter("cl100k_base")
    token_cache.load_written(session, fresh)

    def refuse(texts: list[str]) -> list[int]:
        raise AssertionError(f"encoded again: {texts[:1]}")

    setattr(fresh, "_encode_lengths", refuse)  # noqa: B010 (a method replaced for this test)
    assert [fresh.count(u_written(text)) for text in said] == counts


def u_written(text: str) -> Message:
    from compaction_inspector.core.model import text_message

    return text_message("user", text, is_synthetic=True)


def test_the_texts_a_run_on_the_next_request_wrote_are_kept_too(cache_in: Path) -> None:
    """`compare` asks each strategy's run on the request the agent sends next what it
    kept: what that run wrote is kept as a replay's is, so the next `compare` does not
    load the encoding for it."""

    def run(refuse: bool) -> list[int]:
        inspection = opened(refuse)
        made = inspection.run("aider")
        assert made.messages is not None
        return inspection.counter.count_all(made.messages)

    first = run(False)
    assert run(True) == first


def test_a_text_a_replay_made_without_marking_it_is_kept_and_the_sessions_own_are_not(cache_in: Path) -> None:
    """A strategy's message need not say what it replaces (Codex's rebuilt history): any
    text counted after the session's own is kept; the session's own are its counts."""
    from compaction_inspector.core.model import text_message

    session = load(path())
    counter = make_counter("cl100k_base")
    token_cache.count_session(session, counter)
    made = text_message("user", "a history item the replay built again")
    n = counter.count(made)
    token_cache.store_written(session, counter)
    fresh = make_counter("cl100k_base")
    token_cache.load_written(session, fresh)
    assert fresh.written_since() == {} and fresh._short == {made.text: n}

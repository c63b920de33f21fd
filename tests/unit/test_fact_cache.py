"""The facts of a session's messages, kept between runs beside their token counts
(core/caching/fact_cache.py): found the first time a replay asks, never searched again, the same
replay from them; a damaged entry is removed and found again; `analyze` writes none."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.caching import chunks, fact_cache, memo, token_cache
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Message
from compaction_inspector.core.replaying import retention
from compaction_inspector.sample_sessions import path
from tests.helpers import load

CONFIG = Config(CATALOGUE, window=Window(3_000, 500), preset=None)


@pytest.fixture(autouse=True)
def cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    memo.forget()
    yield tmp_path
    memo.forget()


def replayed(strategy: str) -> tuple[Inspection, list[tuple[int, int]]]:
    """A fresh process's replay of the sample under `strategy`: its tokens before and after."""
    memo.forget()
    inspection = Inspection.of(load(path()), CONFIG)
    replay = inspection.replay(inspection.policy(strategy))
    return inspection, [(p.tokens_before, p.tokens_after) for p in replay.points]


def facts_entries(cache_in: Path) -> list[Path]:
    return sorted((cache_in / "tokens").glob("*.facts"))


def test_a_replay_finds_each_messages_facts_once_and_a_later_run_searches_none(
    cache_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, first = replayed("aider")
    [entry] = facts_entries(cache_in)
    searched: list[Message] = []
    find = retention._find_met

    def spy(message: Message) -> retention.Met:
        searched.append(message)
        return find(message)

    monkeypatch.setattr(retention, "_find_met", spy)
    again, second = replayed("aider")
    assert second == first
    own = set(again.session.messages)
    assert searched and not [m for m in searched if m in own]  # only the summaries the replay wrote
    written = entry.stat().st_mtime_ns
    replayed("langchain-summarization")
    assert entry.stat().st_mtime_ns == written  # nothing new found: nothing written


def test_the_kept_facts_are_each_messages_own_in_the_order_met(cache_in: Path) -> None:
    """A replay keeps the facts it found; `compare` finds and keeps every message's."""
    inspection, _ = replayed("aider")
    session = inspection.session
    messages = (*session.messages, *session.sidechain)

    def kept() -> list[retention.Met | None]:
        memo.forget()
        facts = retention.Facts(messages)
        fact_cache.load_facts(session, inspection.counter, facts)
        return [f if f is None or isinstance(f, dict) else f() for f in facts.known(messages)]

    after_replay = kept()
    assert sum(f is not None for f in after_replay) == 48 and len(messages) == 69
    pairs = zip(messages, after_replay, strict=True)
    assert [f for f in after_replay if f] == [retention._find_met(m) for m, f in pairs if f]
    inspection.find_facts()
    every = kept()
    assert every == [retention._find_met(m) for m in messages]
    by_kind = {k: sum(len(f[k]) for f in every if f is not None) for k in retention.KINDS}
    assert by_kind == {"paths": 60, "commands": 7, "identifiers": 18, "numbers": 10, "urls": 0}


def test_analyze_and_a_replay_that_summarizes_nothing_write_no_facts(cache_in: Path) -> None:
    memo.forget()
    inspection = Inspection.of(load(path()), CONFIG)
    inspection.analysis()
    inspection.replay(inspection.policy("trim"))
    assert (cache_in / "tokens").is_dir() and facts_entries(cache_in) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "other messages"])
def test_a_damaged_entry_is_removed_and_its_facts_found_again(cache_in: Path, damage: str) -> None:
    _, first = replayed("aider")
    [entry] = facts_entries(cache_in)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[:-3]
    elif damage == "flip":
        data[-2] ^= 0x01
    elif damage == "empty":
        data = bytearray()
    else:  # a well-formed entry of another number of messages
        data = bytearray(_entry_of(["paths", "commands", "identifiers", "numbers", "urls"]))
    entry.write_bytes(bytes(data))
    assert replayed("aider")[1] == first
    [again] = facts_entries(cache_in)
    session = load(path())
    found: list[retention.Known] = [None] * (len(session.messages) + len(session.sidechain))
    assert chunks.read(again, fact_cache.MAGIC, lambda chunk: fact_cache._taken(chunk, found)) and any(found)


def _entry_of(kinds: Any) -> bytes:
    import hashlib
    import json

    payload = json.dumps({"n": 1, "items": [], "met": [[0, [[] for _ in kinds]]]}).encode()
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return fact_cache.MAGIC + chunks.FRAME.pack(len(payload), digest) + payload


def test_a_write_adds_only_what_the_entry_does_not_hold(cache_in: Path) -> None:
    """What a later replay found is appended: the entry's bytes before stay as they were."""
    session = load(path())
    counter = Inspection.of(session, CONFIG).counter
    messages = session.messages
    memo.forget()
    facts = retention.Facts((*messages, *session.sidechain))
    fact_cache.load_facts(session, counter, facts)
    for m in messages[:10]:
        facts.met(m)
    fact_cache.store_facts(session, counter, facts)
    [entry] = facts_entries(cache_in)
    first = entry.read_bytes()
    fact_cache.store_facts(session, counter, facts)  # nothing new: nothing written
    assert entry.read_bytes() == first
    for m in messages[:20]:
        facts.met(m)
    fact_cache.store_facts(session, counter, facts)
    after = entry.read_bytes()
    assert after.startswith(first) and len(after) > len(first)
    added = after[len(first) :]
    size, _ = chunks.FRAME.unpack_from(added)
    assert [k for k, _ in json.loads(added[chunks.FRAME.size :])["met"]] == list(range(10, 20))
    assert len(added) == chunks.FRAME.size + size


def _taken_into(found: list[retention.Known], chunk: Any) -> bool:
    return fact_cache._taken(chunk, found)


def test_two_sessions_open_at_once_each_keep_only_their_own_facts(cache_in: Path) -> None:
    """The app with a sub-agent on top, or sessions kept from the list: replays of two
    sessions interleaved in one process. What a later process reads from each entry is
    that session's own messages' facts, at their own places."""
    memo.forget()
    first = Inspection.of(load(path("claude_code_compacted.jsonl")), CONFIG)
    second = Inspection.of(load(path()), CONFIG)
    first.replay(first.policy("trim"))
    first.own_compactions()  # facts found for the first, kept by the next run that keeps any
    for strategy in ("aider", "langchain-summarization", "hysteresis"):
        for inspection in (second, first):
            inspection.replay(inspection.policy(strategy))
    memo.forget()
    for inspection in (first, second):
        session = inspection.session
        messages = (*session.messages, *session.sidechain)
        [entry] = [
            e
            for e in facts_entries(cache_in)
            if e == token_cache.entry_path(session, inspection.counter, ".facts")
        ]
        found: list[retention.Known] = [None] * len(messages)
        assert chunks.read(entry, fact_cache.MAGIC, functools.partial(_taken_into, found))
        kept = [(k, f if isinstance(f, dict) else f()) for k, f in enumerate(found) if f is not None]
        assert kept and [f for _, f in kept] == [retention._find_met(messages[k]) for k, _ in kept]

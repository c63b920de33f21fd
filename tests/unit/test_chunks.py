"""A cache entry that grows by chunks (core/caching/chunks.py): read back in order, a damaged
or foreign one removed, one past its bound begun afresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compaction_inspector.core.caching import chunks


def taken(entry: Path, magic: bytes = b"TEST1") -> tuple[bool, list[Any]]:
    got: list[Any] = []

    def take(chunk: Any) -> bool:
        got.append(chunk)
        return True

    return chunks.read(entry, magic, take), got


def test_chunks_come_back_in_the_order_written(tmp_path: Path) -> None:
    entry = tmp_path / "e"
    assert taken(entry) == (False, [])  # none yet
    assert chunks.append(entry, b"TEST1", {"a": 1}) and chunks.append(entry, b"TEST1", [2, "b"])
    assert taken(entry) == (True, [{"a": 1}, [2, "b"]])
    size = entry.stat().st_size
    assert chunks.append(entry, b"TEST1", "past", most=size - 1)  # past its bound: afresh
    assert taken(entry) == (True, ["past"])


def test_a_cut_short_foreign_or_refused_entry_is_removed(tmp_path: Path) -> None:
    entry = tmp_path / "e"
    chunks.append(entry, b"TEST1", {"a": 1})
    chunks.append(entry, b"TEST1", {"b": 2})
    whole = entry.read_bytes()
    entry.write_bytes(whole[:-1])
    assert taken(entry) == (False, [{"a": 1}]) and not entry.exists()  # what was read is the caller's to drop
    entry.write_bytes(whole)
    assert taken(entry, b"OTHER") == (False, []) and not entry.exists()
    entry.write_bytes(whole)
    assert not chunks.read(entry, b"TEST1", lambda chunk: False) and not entry.exists()


def test_an_entry_of_another_format_is_begun_afresh(tmp_path: Path) -> None:
    entry = tmp_path / "e"
    entry.write_bytes(b"OLD01 whatever an earlier version wrote")
    assert chunks.append(entry, b"TEST1", {"a": 1})
    assert taken(entry) == (True, [{"a": 1}])

"""A record kept in the cache as JSON and read back as the same (core/caching/records.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.caching.records import decoded, encoded
from compaction_inspector.core.replaying.retention import Retention, Share


@dataclass(frozen=True)
class Held:
    value: Any
    others: tuple[Any, ...] = ()


ALLOWED: dict[str, type] = {"Held": Held, "Share": Share, "Retention": Retention}

_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(timezones=st.just(UTC)),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text().filter(lambda k: not k.startswith(("@", "$"))), inner, max_size=4),
        st.builds(Held, inner, st.lists(inner, max_size=3).map(tuple)),
    ),
    max_leaves=20,
)


@given(_values)
def test_a_value_comes_back_as_it_was_kept(value: Any) -> None:
    back = decoded(json.loads(json.dumps(encoded(value))), ALLOWED)
    assert back == value and type(back) is type(value)


def test_a_retention_comes_back_whole() -> None:
    kept = Retention(Share(1, 2), Share(0, 0), Share(3, 3), Share(5, 9), Share(0, 1))
    assert decoded(json.loads(json.dumps(encoded(kept))), ALLOWED) == kept


def test_what_was_not_kept_so_is_refused() -> None:
    made = {"@": "Held", "value": Decimal("1.5")}
    with pytest.raises(ValueError, match="'Popen' is not a record kept here"):
        decoded({"@": "Popen", "args": ["rm"]}, ALLOWED)
    with pytest.raises(ValueError, match="Held has no field 'extra'"):
        decoded({**made, "extra": 1}, ALLOWED)
    with pytest.raises(ValueError, match="a tag of this format"):
        encoded({"$decimal": "1"})
    with pytest.raises(ValueError, match="a set cannot be kept"):
        encoded({1, 2})
    assert decoded(encoded(Held(datetime(2026, 1, 1, tzinfo=UTC))), ALLOWED).value.tzinfo is UTC

"""Times a transcript or a user writes, read one way everywhere.

A transcript's timestamps are ISO 8601 text, with or without a zone, or anything at all.
Read here, each is an aware time (one without a zone is taken as UTC, so two can always
be compared), or None when it is not a time or lies where no calendar arithmetic can
follow it (a year 9999 time moved to another zone overflows).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# a day's margin: any time this far inside the calendar can be moved to any zone
_MARGIN = timedelta(days=2)


def parse(value: object) -> datetime | None:
    """`value` as an aware time, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        utc = when.astimezone(UTC)
    except OverflowError:
        return None
    if not datetime.min.replace(tzinfo=UTC) + _MARGIN <= utc <= datetime.max.replace(tzinfo=UTC) - _MARGIN:
        return None
    return when


def written(milliseconds: float) -> str:
    """A time in milliseconds since the epoch as transcripts write it, in UTC with its
    milliseconds ("2026-05-18T10:00:00.123Z")."""
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

"""The price table (`genai-prices`' bundled data, offline): who bills a model, its rates
at a prompt's tier and at a request's time (`in_force`: the last price whose condition
holds). The table is imported only when something it has not answered before is priced:
its answers are kept in the cache directory under its version (`_kept`)."""

from __future__ import annotations

import atexit
import contextlib
import json
from bisect import bisect_left
from collections.abc import Sequence
from datetime import UTC, date, datetime, time
from decimal import Context as DecimalContext
from decimal import Decimal
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from compaction_inspector.core.caching.cache import cache_root
from compaction_inspector.core.caching.memo import per_session
from compaction_inspector.core.files import write_atomic
from compaction_inspector.core.installed import version
from compaction_inspector.core.model import Session, Usage
from compaction_inspector.core.timestamps import parse

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice


# whose prices a session's responses are billed at: its format's provider, and the API URL
# its requests went to where a proxy log keeps it (`billed_by` decides, model by model)
Billing = tuple[str | None, str | None]
PARTS = ("uncached input", "cache read", "cache write 5m", "cache write 1h", "output")


def billing_of(session: Session) -> Billing:
    url = session.metadata.get("api_url")
    return session.provider, url if isinstance(url, str) else None


class Clock:
    """When each request was sent, to price it at what it paid where a price changes by
    date or by hour of day: its line's own time, else the session's last (a proxy log's
    request body has none of its own), else None."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def at(self, index: int) -> datetime | None:
        messages = self._session.messages
        own = _when(messages[index].timestamp) if index < len(messages) else None
        return own if own is not None else self._last

    @cached_property
    def _last(self) -> datetime | None:
        """The session's last time, found once, where a line has none of its own."""
        stamps = (parse(m.timestamp) for m in reversed(self._session.messages) if m.timestamp)
        meta = self._session.metadata
        return next((t for t in stamps if t), None) or parse(meta.get("ended")) or parse(meta.get("started"))


@per_session(maxsize=1 << 16)  # every replay of a session prices its requests at their times
def _when(timestamp: str | None) -> datetime | None:
    return parse(timestamp)


_MILLION = 1_000_000


MICRO = Decimal("0.000001")
_DIGITS = 28
_USD = DecimalContext(prec=_DIGITS)  # made once: a comparison writes thousands of figures


def usd(value: Decimal) -> str:
    """Dollars to the millionth, whole however large (a recorded 1e30 is shown as
    recorded: the context holds every digit); a value that is not a number as it is."""
    if not value.is_finite():
        return str(value)
    digits = value.adjusted() + 8
    context = _USD if digits <= _DIGITS else DecimalContext(prec=digits)
    return str(value.quantize(MICRO, context=context))


def sent_again(rates: dict[str, Decimal], usage: Usage) -> Decimal:
    """What a request paid for the input it did not read from the cache."""
    fresh, _, five, hour, _ = token_parts(usage)
    return rates["uncached input"] * fresh + rates["cache write 5m"] * five + rates["cache write 1h"] * hour


INPUT_PARTS = ("uncached input", "cache write 5m", "cache write 1h")


def token_parts(u: Usage) -> tuple[int, int, int, int, int]:
    written_1h = min(u.cache_write_1h_tokens, u.cache_creation_input_tokens)
    return (
        u.input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens - written_1h,
        written_1h,
        u.output_tokens,
    )


def priced_parts(
    usage: Usage, model: str | None, billing: Billing, at: datetime | None
) -> dict[str, Decimal] | None:
    """One response's usage in USD by part (`PARTS`), at the price in force when its
    request was sent (`at`); None where the table does not know the model."""
    rates = rates_at(model, billing, usage.prompt_tokens, at) if model else None
    if rates is None:
        return None
    return {name: rates[name] * tokens for name, tokens in zip(PARTS, token_parts(usage), strict=True)}


_RATES: dict[tuple[str, str, int, int], dict[str, Decimal]] = {}


_KEPT_CHANGED: list[bool] = []  # a flag the process's exit reads: something new was priced


# When one of a model's prices is in force, as the cache keeps it: always (None), from a
# UTC day on (("from", "2026-08-17")), or daily from one UTC time until another (("daily",
# "06:00:00", "10:00:00"), through midnight where the end is the earlier)
Condition = tuple[str, ...] | None


@cache  # every replay's cost names it; the installed table does not change while we run
def source() -> str:
    """Where the prices come from, to name beside every cost."""
    return f"genai-prices {version('genai-prices', 'genai_prices')}, its bundled table"


@cache
def billed_by(model: str, provider: str | None, url: str | None = None) -> str | None:
    """Whose prices a response of `model` is billed at, as the price table names them:
    the vendor the request's URL names, where a proxy log keeps it; else `provider` (the
    format's) where the table knows the model there; else the provider the table finds the
    model under (a gpt model written in Anthropic's format through a proxy). None: the
    table does not know the model."""
    key = f"{model}\t{provider}\t{url}"
    kept = _kept()["billed"]
    if key in kept:
        return cast("str | None", kept[key])
    from genai_prices import Usage as Priced
    from genai_prices import calc_price

    tried: list[dict[str, str | None]] = [{"provider_api_url": url}] if url else []
    tried += [{"provider_id": provider}] if provider else []
    found = None
    for where in [*tried, {}]:
        try:
            found = str(calc_price(Priced(input_tokens=1), model, **where).provider.id)  # type: ignore[arg-type]
            break
        except LookupError:
            continue
    _keep("billed", key, found)
    return found


@cache
def context_window(model: str) -> int | None:
    """The model's context window as the price table gives it (a router's `vendor/model`
    looked up by its model), None: the table does not know it or gives none."""
    from genai_prices import Usage as Priced
    from genai_prices import calc_price

    for name in dict.fromkeys([model, model.rpartition("/")[2]]):
        try:
            window = calc_price(Priced(input_tokens=1), name).model.context_window
        except LookupError:
            continue
        return window if isinstance(window, int) and window > 0 else None
    return None


def window_of(model: Any, default: int, default_said: str) -> tuple[int, str]:
    """A session's model's window as the price table gives it, else `default`, and in
    words where the figure comes from (`default_said` for the default)."""
    size = context_window(model) if isinstance(model, str) and model else None
    if size is None:
        return default, default_said
    return size, f"{model}'s window {size:,} (the price table's)"


def rates_at(model: str, billing: Billing, prompt: int, at: datetime | None) -> dict[str, Decimal] | None:
    """USD per token of each part for a request of `prompt` input tokens sent at `at`, at
    the prices `billed_by` finds; None when the table does not know the model. Rates hold
    across a tier of the price in force: priced once per price and tier."""
    provider = billed_by(model, *billing)
    if provider is None:
        return None
    schedule = _schedule(model, provider)
    if schedule is None:
        return None
    price = in_force(schedule, at)
    starts = _steps(model, provider, price)
    key = (model, provider, price, bisect_left(starts, prompt))  # the tiers it is past: the starts below it
    found = _RATES.get(key)
    if found is not None:
        return found
    named = "\t".join(map(str, key))
    kept = _kept()["rates"].get(named)
    if kept is not None:
        found = _RATES[key] = {part: Decimal(value) for part, value in kept.items()}
        return found
    from genai_prices import Usage as Priced

    table = _table(model, provider)[price][1]
    size = max(prompt, 1)

    def cost(**usage: int) -> Decimal:
        return table.calc_price(Priced(input_tokens=size, **usage))["total_price"]

    base = cost()
    found = _RATES[key] = {
        "uncached input": base / size,
        "cache read": cost(cache_read_tokens=size) / size,
        "cache write 5m": cost(cache_write_tokens=size) / size,
        "cache write 1h": cost(cache_write_tokens=size, cache_write_1h_tokens=size) / size,
        "output": (cost(output_tokens=_MILLION) - base) / _MILLION,
    }
    _keep("rates", named, {part: str(value) for part, value in found.items()})
    return found


_FORMAT = 2  # of `prices.json`: one of another format is read as empty


@cache
def _kept() -> dict[str, dict[str, Any]]:
    """What the price table answered before, kept in the cache directory under its
    version (a newer table starts afresh): a process that prices what an earlier one did
    never imports the table (0.1 s of every status line call, which Claude Code makes
    after each message)."""
    empty: dict[str, dict[str, Any]] = {"billed": {}, "schedules": {}, "steps": {}, "rates": {}}
    root = cache_root()
    if root is None:
        return empty
    atexit.register(_save, root / "prices.json")
    with contextlib.suppress(OSError, ValueError):
        data = json.loads((root / "prices.json").read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("version") == source() and data.get("format") == _FORMAT:
            return {name: dict(data[name]) if isinstance(data.get(name), dict) else {} for name in empty}
    return empty


def _keep(table: str, key: str, value: Any) -> None:
    _kept()[table][key] = value
    _KEPT_CHANGED.append(True)


def _save(path: Path) -> None:
    if not _KEPT_CHANGED:
        return
    with contextlib.suppress(OSError):  # a cache that cannot be written costs the table next time
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"version": source(), "format": _FORMAT, **_kept()}))


def in_force(schedule: Sequence[Condition], at: datetime | None) -> int:
    """Which of a model's prices a request sent at `at` pays, as the table decides: the
    last whose condition holds, else the first. A request of no known time pays the
    price of today's date outside any daily window (the standard rate, never a peak or
    an off-peak one)."""
    if len(schedule) == 1:  # one price, in force whenever: most models
        return 0
    utc = at.astimezone(UTC) if at is not None else None
    for n in range(len(schedule) - 1, -1, -1):
        condition = schedule[n]
        if condition is None:
            return n
        if condition[0] == "from":
            if (utc or datetime.now(UTC)).date() >= date.fromisoformat(condition[1]):
                return n
        elif utc is not None:
            now, start, end = utc.time(), time.fromisoformat(condition[1]), time.fromisoformat(condition[2])
            if (start <= now < end) if start <= end else (now >= start or now < end):
                return n
    return 0


@cache
def _table(model: str, provider: str) -> list[tuple[Condition, ModelPrice]]:
    """The table's prices of the model at `provider`, each with when it is in force
    (imports the table); LookupError where the table does not know it."""
    from genai_prices import Usage as Priced
    from genai_prices import calc_price
    from genai_prices.types import ModelPrice, StartDateConstraint

    prices = calc_price(Priced(input_tokens=1), model, provider_id=provider).model.prices
    if isinstance(prices, ModelPrice):
        return [(None, prices)]
    out: list[tuple[Condition, ModelPrice]] = []
    for p in prices:
        c = p.constraint
        if c is None:
            out.append((None, p.prices))
        elif isinstance(c, StartDateConstraint):
            out.append((("from", c.start_date.isoformat()), p.prices))
        else:
            out.append((("daily", _utc(c.start_time), _utc(c.end_time)), p.prices))
    return out


def _utc(t: time) -> str:
    """A time of day (a naive one is UTC) as the UTC time it is."""
    day = datetime.combine(date(2000, 1, 1), t).replace(tzinfo=t.tzinfo or UTC)
    return day.astimezone(UTC).time().isoformat()


@cache
def _schedule(model: str, provider: str) -> tuple[Condition, ...] | None:
    """When each of the model's prices is in force, in the table's order; None when the
    table does not know the model."""
    key = f"{model}\t{provider}"
    kept = _kept()["schedules"]
    if key not in kept:
        try:
            _keep("schedules", key, [c for c, _ in _table(model, provider)])
        except LookupError:
            _keep("schedules", key, None)
    found = kept[key]
    return tuple(tuple(c) if c is not None else None for c in found) if found is not None else None


@cache
def _steps(model: str, provider: str, price: int) -> tuple[int, ...]:
    """The prompt sizes past which the model's `price`-th price steps up."""
    key = f"{model}\t{provider}\t{price}"
    kept = _kept()["steps"]
    if key not in kept:
        from genai_prices.types import TieredPrices

        table = _table(model, provider)[price][1]
        tiers = (v for v in vars(table).values() if isinstance(v, TieredPrices))
        _keep("steps", key, sorted({t.start for v in tiers for t in v.tiers}))
    return tuple(kept[key])

"""What a summary kept of the span it replaced (docs/agents.md).

The retention of a summary is, for each kind of fact (file paths, shell commands,
identifiers, numbers, URLs), the share of those in the replaced messages that still
appear in what replaced them. A public measurement of real summaries found decisions
kept about 77 % of the time, file paths 10 %, shell commands 0.2 %, numbers 2 %.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields
from functools import cached_property
from itertools import accumulate, chain, filterfalse
from operator import itemgetter
from typing import Any, NamedTuple

import ahocorasick

from compaction_inspector.core.caching.memo import on_forget, per_session
from compaction_inspector.core.model import Message, immutable
from compaction_inspector.core.selection import Selection, kept
from compaction_inspector.core.text import clauses

SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "bash", "run_shell_command"})
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_PATH = re.compile(
    r"(?<![\w/.-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w|\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|go|rs|java|kt|rb|md|json|jsonl|yaml|yml|toml|txt|sh|c|h|cc|cpp|hpp|css|scss|html|sql|lock|cfg|ini|env|xml|csv|ipynb)\b"
)
# every character a path match can hold: a match lies within one run of them, and needs a
# '/' or a '.' in it, so only such runs are searched (most words have neither)
_PATH_RUN = re.compile(r"(?<![\w./~-])[\w~-]*+[./][\w./~-]*")
_TICKED = re.compile(r"`([A-Za-z_][\w.:-]{1,80})`")
_DEFINED = re.compile(r"\b(?:def|class|function|func|fn|interface|struct|enum)\s+([A-Za-z_]\w*)")
# a sentence's full stop may follow; the look behind comes after the first digit, so the
# search skips from digit to digit
_NUMBER = re.compile(r"\d(?<![\w.]\d)[\d,]*(?:\.\d+)?(?!\w|\.\d)")


@immutable()
class Share:
    """How many of a kind of fact the span held, and how many are still there."""

    kept: int
    total: int

    @property
    def value(self) -> float | None:
        return self.kept / self.total if self.total else None

    def to_dict(self) -> dict[str, Any]:
        value = self.value
        return {
            "kept": self.kept,
            "total": self.total,
            "share": round(value, 4) if value is not None else None,
        }


@immutable()
class Retention:
    paths: Share
    commands: Share
    identifiers: Share
    numbers: Share
    urls: Share

    @property
    def overall(self) -> float | None:
        """The share of every fact the span held that is still there (None: it held none)."""
        shares: list[Share] = [getattr(self, f.name) for f in fields(self)]
        total = sum(s.total for s in shares)
        return sum(s.kept for s in shares) / total if total else None

    def to_dict(self) -> dict[str, float | None]:
        """Each kind's share kept (None where the span held none of it)."""
        return {f.name: _rounded(getattr(self, f.name).value) for f in fields(self)}

    def counts(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name).to_dict() for f in fields(self)}

    def line(self) -> str:
        """One line for a table: each kind's share, or — where the span had none."""
        parts = []
        for f in fields(self):
            share: Share = getattr(self, f.name)
            value = share.value
            shown = "—" if value is None else f"{value:.0%}"
            parts.append(f"{f.name} {shown} ({share.kept}/{share.total})")
        return " · ".join(parts)


def _rounded(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def facts(messages: Iterable[Message], known: Facts | None = None) -> dict[str, set[str]]:
    """The facts a span of messages holds, by kind (`known`: its session's, `Facts`)."""
    each = _each_met(messages, known)
    return {kind: set(chain.from_iterable(map(itemgetter(kind), each))) for kind in KINDS}


def ranked(messages: Iterable[Message], known: Facts | None = None) -> dict[str, list[str]]:
    """The facts a span holds, by kind, the most often met first (ties: the first met)."""
    each = _each_met(messages, known)
    out = {}
    for kind in KINDS:
        seen = Counter(chain.from_iterable(map(itemgetter(kind), each)))  # counted in C, in the order met
        out[kind] = sorted(seen, key=seen.__getitem__, reverse=True)  # stable: ties stay as met
    return out


def _each_met(messages: Iterable[Message], known: Facts | None) -> list[Met]:
    """Each message's facts (`met`), asked in C: a replay's every summary asks them of its span."""
    return list(map(known.met if known is not None else _find_met, messages))


KINDS = tuple(f.name for f in fields(Retention))  # the kinds of fact, in a retention's order


Met = dict[str, tuple[str, ...]]  # one message's facts by kind, each kind's in the order met
# what is known of a session message's facts: found, kept and decoded when first asked
# for (core/caching/fact_cache.py), or not yet (None)
Known = Met | Callable[[], Met] | None


class Facts:
    """One session's facts: each of its own messages' found once (or read from what an
    earlier run kept, core/caching/fact_cache.py), so a warm replay never searches a session
    message's text, and each fact met numbered for `carried`. An object of its session,
    carried by its inspection: two sessions open in one process never share one, so what
    is found for one is never kept as the other's. A message not the session's (a
    summary a replay wrote) has its facts found when asked (memoised for the run)."""

    def __init__(self, messages: Sequence[Message] = ()) -> None:
        self.messages = tuple(messages)  # the session's own: its main messages, then its sidechain
        self.taken = False  # whether what earlier runs kept was taken (`take`)
        self._new: list[Message] = []  # own messages whose facts were found since `found_since`
        self.held: set[int] = set()  # the places whose facts the kept entry holds
        self._numbers: dict[tuple[str, str], int] = {}
        self._items: list[str] = []  # each number's item
        self._numbered: dict[Message, frozenset[int]] = {}
        self._numbering = threading.Lock()  # a number is given once, whichever thread meets it first

    @cached_property
    def _places(self) -> dict[Message, list[int]]:
        """Each own message's places (equal messages share their facts); made when first
        asked, so a run that never asks (`analyze`) never hashes a message for it."""
        places: dict[Message, list[int]] = {}
        for k, m in enumerate(self.messages):
            places.setdefault(m, []).append(k)
        return places

    @cached_property
    def _known(self) -> dict[Message, Known]:
        return dict.fromkeys(self._places)

    def take(self, found: Sequence[Known]) -> None:
        """Take what earlier runs kept: `found`, by place (None: not kept); once."""
        self.taken = True
        for m, f in zip(self.messages, found, strict=True):
            if f is not None and self._known[m] is None:
                self._known[m] = f
        self.held.update(k for k, f in enumerate(found) if f is not None)

    def known(self, messages: Sequence[Message]) -> list[Known]:
        """What is known so far of each of the session's own `messages`' facts."""
        return [self._known.get(m) for m in messages]

    def met(self, message: Message) -> Met:
        """`message`'s facts by kind (`met`): an own message's found once and kept."""
        if message not in self._known:
            return _find_met(message)
        found = self._known[message]
        if found is None:
            found = self._known[message] = _find_met(message)
            self._new.append(message)
        elif not isinstance(found, dict):  # kept: decoded now
            found = self._known[message] = found()
        return found

    def found_since(self) -> list[tuple[int, Met]]:
        """The own messages whose facts were found since last asked: each place of each
        one in the session, with its facts."""
        new, self._new = self._new, []
        return [(k, f) for m in new if isinstance(f := self._known[m], dict) for k in self._places[m]]

    def numbered(self, message: Message) -> frozenset[int]:
        """`message`'s facts as numbers: a set of numbers is made and joined several times
        faster than one of (kind, item) pairs, whose hashes are not kept."""
        done = self._numbered.get(message)
        if done is not None:
            return done
        numbers = self._numbers
        found = []
        for kind, items in self.met(message).items():
            for item in items:
                number = numbers.get((kind, item))
                if number is None:
                    with self._numbering:
                        number = numbers.setdefault((kind, item), len(self._items))
                        if number == len(self._items):
                            self._items.append(item)
                found.append(number)
        done = self._numbered[message] = frozenset(found)
        return done

    def item(self, number: int) -> str:
        """The fact numbered `number` (`numbered`)."""
        return self._items[number]


def met(message: Message, known: Facts | None = None) -> Met:
    """One message's facts by kind, each kind's in the order met, as often as met; found
    once for a session's own message where its `Facts` are given."""
    return known.met(message) if known is not None else _find_met(message)


# a replay's summaries read the same messages at each compaction; each summary it wrote is
# read once, by the next
@per_session(maxsize=1 << 16, held=lambda message: not message.written)
def _find_met(message: Message) -> Met:
    met: dict[str, list[str]] = {kind: [] for kind in KINDS}
    derived = message.written
    for b in message.blocks:
        if b.type == "tool_use":
            command = _command(b.input) if b.name in SHELL_TOOLS else None
            if command:
                met["commands"].append(command)
        text = b.render()
        if not text:
            continue
        # a long text a strategy wrote (a summary listing facts): read clause by clause
        # (no pattern's match holds a space after a semicolon), or where it was written as a
        # selection, by its head's clauses and its items
        if derived and len(text) > _CLAUSED:
            selection = kept(text)
            parts = _units_found(clauses(text)) if selection is None else _selection_found(selection)
        else:
            parts = [_found(text)]
        found = list(filter(None, parts))  # most clauses hold none
        if found:  # each kind's of every part, flattened in C: a summary has hundreds of parts
            urls, paths_, ticked, defined, numbers = zip(*found, strict=True)
            met["urls"] += chain.from_iterable(urls)
            met["paths"] += chain.from_iterable(paths_)
            met["identifiers"] += (*chain.from_iterable(ticked), *chain.from_iterable(defined))
            met["numbers"] += chain.from_iterable(numbers)
    return {kind: tuple(items) for kind, items in met.items()}


_CLAUSED = 512  # shorter texts are read whole: their clauses would rarely be met again


class _Found(NamedTuple):
    """The facts of one text, each kind in the order met (a tuple: many texts' are
    transposed into kinds at once)."""

    urls: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    ticked: tuple[str, ...] = ()
    defined: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()


# each clause of the texts strategies wrote (`core.text.clauses`: a URL's match may end
# in the semicolon a clause keeps), with its facts: a replay's summaries list the same few
# thousand facts hundreds of times each, so a plain table (not an LRU: its upkeep costs
# more than the lookup) answers them. And the items a selection lists that are followed
# by "; " and hold no fact, or only themselves as one kind's (most of a summary's lists)
_UNITS: dict[str, _Found | None] = {}
_FACTLESS: set[str] = set()
_ALONE: dict[str, set[str]] = {"urls": set(), "paths": set(), "numbers": set()}
# the facts of each item a selection lists followed by "; ", by the item: the same item
# objects are listed by summary after summary and keep their hashes, where " item;" is
# a new string to hash at each
_FOLLOWED: dict[str, _Found | None] = {}
_UNITS_KEPT = 1 << 16
_UNSEEN = object()


def _forget_units() -> None:
    _UNITS.clear()
    _FOLLOWED.clear()
    _FACTLESS.clear()
    for alone in _ALONE.values():
        alone.clear()


on_forget(_forget_units)


def _units_found(units: Sequence[str]) -> list[_Found | None]:
    """The facts of each clause (an item holding "; " read by its own clauses): looked
    up in C where every one was met before."""
    table = _UNITS
    try:
        return list(map(table.__getitem__, units))
    except KeyError:
        pass
    if len(table) > _UNITS_KEPT:
        _forget_units()
    found: list[_Found | None] = []
    for unit in units:
        f = table.get(unit, _UNSEEN)
        if f is _UNSEEN:
            f = table[unit] = _read(unit)
        found.append(f)  # type: ignore[arg-type]
    return found


def _read(unit: str) -> _Found | None:
    """The facts of a unit, read by its clauses (an item may hold "; ")."""
    each = [f for f in map(_facts_of, clauses(unit)) if f is not None]
    if len(each) < 2:
        return each[0] if each else None
    return _Found(*(tuple(chain.from_iterable(kind)) for kind in zip(*each, strict=True)))


def _selection_found(selection: Selection) -> list[_Found | None]:
    """The facts of a selection's text, by its head's clauses and then its lists, each
    item but a list's last read with the "; " after it: where those items hold no fact
    they are passed over, where each is its own one fact of the kind listed they are
    taken as they are, else read one by one (and known so after)."""
    found = _units_found(clauses(selection.head))
    for kind, items in selection.lists:
        followed = items[:-1]
        alone = _ALONE.get(kind)
        if _FACTLESS.issuperset(followed):
            pass
        elif alone is not None and alone.issuperset(followed):
            found.append(_Found(**{kind: followed}))
        else:
            found += _followed_found(kind, followed, alone)
        found += _units_found([items[-1]])
    return found


def _followed_found(kind: str, followed: Sequence[str], alone: set[str] | None) -> list[_Found | None]:
    """The facts of each item of a `kind` list followed by "; " (its clauses', as
    `_units_found` reads " item;"), looked up in C by the item; only the items not yet
    known as holding no fact, or as their own one fact of the kind (`alone`), are
    classified again."""
    if len(_FOLLOWED) > _UNITS_KEPT:
        _forget_units()
    # where a kind's items are never taken alone, an item read before (under any kind) is
    # classified already: only the items new to the table are read
    unsure = (
        list(filterfalse(_FOLLOWED.__contains__, set(followed).difference(_FACTLESS)))
        if alone is None
        else set(followed).difference(_FACTLESS, alone)
    )
    for item in unsure:
        f = _item_found(item)
        if f is None:
            _FACTLESS.add(item)
        elif alone is not None and sum(map(len, f)) == 1 and getattr(f, kind) == (item,):
            alone.add(item)
    try:
        return list(map(_FOLLOWED.__getitem__, followed))
    except KeyError:  # let go meanwhile by another thread's replay, past the tables' bound
        return list(map(_item_found, followed))


def _item_found(item: str) -> _Found | None:
    """The facts of `item` followed by "; ", found once and kept."""
    try:
        return _FOLLOWED[item]
    except KeyError:
        found = _FOLLOWED[item] = _read(f" {item};")
        return found


def _facts_of(text: str) -> _Found | None:
    """The facts of one text (None: it holds none)."""
    rest = _URL.sub(" ", text)
    found = _Found(
        tuple(u.rstrip(".,;:") for u in _URL.findall(text)),
        tuple(p for p in paths(rest) if len(p) > 3),
        tuple(_TICKED.findall(rest)),
        tuple(_DEFINED.findall(rest)),
        tuple(n for n in _NUMBER.findall(rest) if sum(c.isdigit() for c in n) >= 3),
    )
    return found if found.urls or found.paths or found.ticked or found.defined or found.numbers else None


_found = per_session(maxsize=1 << 16)(_facts_of)  # a session's own text, met again in replays


def paths(text: str) -> list[str]:
    """`_PATH.findall(text)`, searching only the runs of characters a path is made of."""
    return [found for run in _PATH_RUN.findall(text) for found in _PATH.findall(run)]


def _command(value: Any) -> str | None:
    """A shell call's command line: its first line, as it would be quoted back."""
    raw = value.get("command", value.get("cmd")) if isinstance(value, dict) else None
    if isinstance(raw, list):  # Codex: ["bash", "-lc", "the command"]
        words = raw[2:] if raw[:2] in (["bash", "-lc"], ["sh", "-c"]) else raw
        raw = " ".join(str(x) for x in words if x)
    if not isinstance(raw, str) or not raw.strip():
        return None
    return raw.strip().splitlines()[0].strip()


def retention(replaced: Sequence[Message], after: Sequence[Message], known: Facts | None = None) -> Retention:
    """The share of each kind of fact in `replaced` that still appears in `after`."""
    held = facts(replaced, known)
    text = "\n".join(m.text for m in after)

    def share(kind: str) -> Share:
        items = held[kind]
        return Share(sum(1 for x in items if x in text), len(items))

    return Retention(*(share(f.name) for f in fields(Retention)))


class Finder:
    """`retention` over many requests made from one list of messages (the session's live
    ones, each strategy's run on them): every fact of the list is found in its text in
    one pass (an Aho-Corasick automaton), so a run asks only which messages hold it. A
    fact holds no line break, so it is in a request's text only inside one message."""

    def __init__(self, source: Sequence[Message], known: Facts | None = None) -> None:
        self.source = tuple(source)
        self._members = frozenset(self.source)
        self._known = known

    @cached_property
    def _automaton(self) -> Any:
        """Every fact of the source, to be found in a text in one pass."""
        automaton = ahocorasick.Automaton()
        for found in facts(self.source, self._known).values():
            for item in found:
                if item:
                    automaton.add_word(item, item)
        if len(automaton):
            automaton.make_automaton()
        return automaton

    @cached_property
    def _where(self) -> tuple[dict[str, list[int]], dict[Message, list[str]]]:
        """Each fact of the source, with the messages whose text holds it, in order; and
        the other way, each source message with the facts its text holds: made in one
        pass over the source's text."""
        holders: dict[str, list[int]] = {}
        held_by: dict[Message, list[str]] = {}
        source = self.source
        starts = list(accumulate((len(m.text) + 1 for m in source), initial=0))
        for end, item in self._found_in("\n".join(m.text for m in source)):
            k = bisect_right(starts, end) - 1
            held = holders.setdefault(item, [])
            if not held or held[-1] != k:
                held.append(k)
                held_by.setdefault(source[k], []).append(item)
        return holders, held_by

    def index(self) -> None:
        """Make what every retention asks of the source: before work spread over
        processes, which would each make it."""
        self._holding  # noqa: B018
        self._where  # noqa: B018

    def _found_in(self, text: str) -> Iterator[tuple[int, str]]:
        """Where each fact of the source ends in `text`, and the fact."""
        automaton = self._automaton
        return automaton.iter(text) if len(automaton) else iter(())

    def retention(self, replaced: Sequence[Message], after: Sequence[Message]) -> Retention:
        """`retention(replaced, after)`, for `after` made of source messages and new ones,
        and `replaced` the source messages it no longer holds. A fact is still there when
        a message holding it is not replaced (fewer of its holders are replaced than hold
        it: counted over the replaced messages' facts, not by walking every holder of each
        fact), or the new text names it. Where most of the source is replaced (a summary of
        the head), it is asked the other way, of the messages kept (`_retention_by_kept`)."""
        if 2 * len(replaced) > len(self.source):
            return self._retention_by_kept(set(replaced), after)
        held = facts(replaced, self._known)
        holders, held_by = self._where
        gone = Counter(item for m in set(replaced) for item in held_by.get(m, ()))
        # each new text once: a repair fills a request with thousands of one placeholder
        written = "\n".join(dict.fromkeys(m.text for m in after if m not in self._members))
        named: set[str] | None = None  # the source's facts the new text names, found once asked

        def there(item: str) -> bool:
            nonlocal named
            if not item or len(holders.get(item, ())) > gone[item]:
                return True
            if item not in self._automaton:  # not the source's: searched for alone
                return item in written
            if named is None:  # one pass over the new text, however many facts are asked of it
                named = {found for _, found in self._found_in(written)}
            return item in named

        return Retention(*(Share(sum(map(there, held[kind])), len(held[kind])) for kind in KINDS))

    @cached_property
    def _holding(self) -> dict[str, Counter[str]]:
        """Each kind's facts of the source, with how many of its messages hold each."""
        each = _each_met(self.source, self._known)
        return {kind: Counter(chain.from_iterable(set(m[kind]) for m in each)) for kind in KINDS}

    def _retention_by_kept(self, replaced: set[Message], after: Sequence[Message]) -> Retention:
        """`retention` counted over the source messages kept, not the many replaced: a fact
        the replaced held is one of the source's that not only kept messages hold; it is
        still there when a kept message's text or the new text holds it."""
        kept = [m for m in self.source if m not in replaced]
        each = _each_met(kept, self._known)
        written = "\n".join(dict.fromkeys(m.text for m in after if m not in self._members))
        held_by = self._where[1]
        still = {"", *(found for _, found in self._found_in(written))}
        still.update(chain.from_iterable(held_by.get(m, ()) for m in kept))
        shares = []
        for kind in KINDS:
            total = self._holding[kind]
            in_kept = Counter(chain.from_iterable(set(m[kind]) for m in each))
            only_kept = {item for item, n in in_kept.items() if n == total[item]}
            there = sum(1 for item in still if item in total and item not in only_kept)
            shares.append(Share(there, len(total) - len(only_kept)))
        return Retention(*shares)


def carried(source: Sequence[Message], sent: Sequence[Message], known: Facts) -> Share:
    """Of the facts in the `source` messages a request no longer sends as they were, how
    many it still holds: a message it sends unchanged holds them, or a summary or
    placeholder written in their place names them. Each message's facts are found once
    and numbered in `known` (its session's), so a sweep's many replays ask this cheaply."""
    as_sent = set(sent)
    gone = [m for m in source if m not in as_sent]
    if not gone:
        return Share(0, 0)
    held = frozenset().union(*map(known.numbered, gone))
    unchanged = set(source)
    still = frozenset().union(*(known.numbered(m) for m in sent if m in unchanged))
    written = "\n".join(m.text for m in sent if m not in unchanged)
    return Share(sum(1 for n in held if n in still or known.item(n) in written), len(held))

"""Claude Code's status line (docs/statusline.md, `core.statusline`): the context its last
request sent against its own compaction point, how far that is, the compactions so far and
what the session cost, from a transcript that grows while it runs.

Each call reads only what was appended since the last one: the running figures are kept
in an index in the user cache directory, by transcript path, with the file's inode and
how far it was read. Without an entry (or when the file was replaced or cut), the last
`TAIL_BYTES` of the file are read and `HEAD_BYTES` of what comes before; the figures then
say "at least", and the next call reads the rest of that part (its responses' usage and
its compactions only), after which they are the whole file's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from compaction_inspector.core import config_path
from compaction_inspector.core.agents.claude_code.settings import layers
from compaction_inspector.core.agents.claude_code.transcript import FORMAT, PROVIDER, SYNTHETIC
from compaction_inspector.core.files import (
    Changed,
    held,
    locked,
    open_regular,
    rewrite,
    write_atomic,
)
from compaction_inspector.core.formats.common import as_dict, count, loads, parse_content, parse_usage
from compaction_inspector.core.measuring.held import held_output
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.model import Compaction, Message, Session, Usage
from compaction_inspector.core.own.headroom import PACE_REQUESTS, headroom
from compaction_inspector.core.pricing.rates import Billing, priced_parts
from compaction_inspector.core.statusline import (
    Answer,
    Asked,
    Facts,
    Figures,
    SettingsRefused,
    Stamp,
    entries,
    installed_command,
    stamp,
    text_or_none,
)
from compaction_inspector.core.timestamps import parse

if TYPE_CHECKING:
    from compaction_inspector.core.config import Config

_ESTIMATE = make_counter("chars4")
_BILLING: Billing = (PROVIDER, None)  # its transcripts name no API URL
TAIL_BYTES = 1 << 20  # what a first call reads of a transcript it has no entry for
HEAD_BYTES = 8 << 20  # what the first call reads of the part before that tail (the next reads the rest)
INDEX_VERSION = 11  # the entries' fields, and how they are estimated
# the kinds of line Claude Code writes to a transcript: a file with none of them is another's
_OWN_KINDS = frozenset({"user", "assistant", "system", "summary", "attachment", "progress"})


@dataclass
class Tail:
    """What the status line knows of one transcript, read up to `offset`."""

    inode: int = 0
    offset: int = 0
    whole: bool = True  # read from the file's start (else from its tail, the head read on)
    # the part before the tail: a bounded part read by the call that made the tail, the
    # rest by the next (`_read_head`)
    # where the tail starts (`head_end`), then added to it: a Tail's fields, as kept
    head: dict[str, Any] | None = None
    head_end: int = 0
    first_response: str | None = None  # the tail's first response: the head's last may run into it
    version: str | None = None
    model: str | None = None
    cwd: str | None = None  # the folder the session runs in, as its lines say
    response: str | None = None  # the response being written (its lines repeat its usage)
    usage: dict[str, Any] | None = None  # ... its usage so far, as written
    sent: str | None = None  # ... its first line's time: it is priced at what it paid then
    done_usd: str = "0"  # the responses finished, priced
    unpriced: int = 0  # responses whose model the price table does not know
    last_prompt: int | None = None  # the prompt the last response reported (None: since a compaction)
    last_output: int = 0
    prompts: list[int] = field(default_factory=list)  # since the last compaction, the last few
    compactions: int = 0
    compacted: list[int] = field(default_factory=list)  # what it counted before each automatic one
    calls_usd: str = "0"  # the compaction calls before the last, estimated as `cost.own_calls` does
    call_in: int = 0  # the last compaction's call, until a response prices it: its input
    call_chars: int = 0  # ... the summary's characters written so far
    call_model: str | None = None  # ... at the model before it
    call_sent: str | None = None  # ... at its boundary's time
    # calls settled before the tail read any response: priced at the head's model once joined
    calls_unknown: list[tuple[int, int, str | None]] = field(default_factory=list)
    records: int = 0  # the lines read that are JSON objects
    own: int = 0  # ... and of them, the lines of Claude Code's own kinds
    largest: int = 0  # the largest prompt reported
    sent_on: int = 0  # the largest prompt a request of the same model followed without a compaction between
    added_tokens: int = 0  # written since the last response, estimated: sent with the next request
    reply_tokens: int = 0  # the last response's own content, estimated
    answer: dict[str, Any] | None = None  # what the settings said of the point (`core.statusline.Answer`)

    def to_dict(self) -> dict[str, Any]:
        return {"index_version": INDEX_VERSION, **dataclasses.asdict(self)}

    @property
    def before(self) -> Tail:
        """What the head has read so far (an empty Tail where there is none)."""
        return Tail.of({"index_version": INDEX_VERSION, **(self.head or {})}) or Tail()

    @property
    def compactions_so_far(self) -> int:
        return self.compactions + (self.before.compactions if not self.whole else 0)

    @property
    def compacted_so_far(self) -> list[int]:
        return [*(self.before.compacted if not self.whole else []), *self.compacted]

    @property
    def foreign(self) -> bool:
        """Lines were read and none is of a kind Claude Code writes (a Codex rollout, say)."""
        return self.records > 0 and self.own == 0

    @staticmethod
    def of(raw: Any) -> Tail | None:
        """A kept entry, or None when it is not one this version wrote."""
        if not isinstance(raw, dict) or raw.get("index_version") != INDEX_VERSION:
            return None
        names = {f.name for f in dataclasses.fields(Tail)}
        try:
            return Tail(**{k: v for k, v in raw.items() if k in names})
        except TypeError:
            return None


def advance(tail: Tail, lines: Iterable[bytes], counting: bool = True) -> None:
    """`tail` after the transcript's next complete `lines`, each read as `analyze` reads
    it (a malformed one is skipped); `counting`: what the lines add to the next request
    is estimated (the head before a tail needs only the responses' usage)."""
    for raw in lines:
        try:
            record = loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            _line(tail, record, counting)


def _line(tail: Tail, record: dict[str, Any], counting: bool) -> None:
    tail.records += 1
    if record.get("type") in _OWN_KINDS or "sessionId" in record:
        tail.own += 1
    if isinstance(record.get("version"), str):
        tail.version = record["version"]
    if isinstance(record.get("cwd"), str) and record["cwd"]:
        tail.cwd = record["cwd"]
    kind = record.get("type")
    body = as_dict(record.get("message"))
    if kind == "assistant" and not record.get("isSidechain"):
        usage = parse_usage(body.get("usage"))
        model = body.get("model")
        if usage is None or usage.prompt_tokens == 0 or model == SYNTHETIC:
            return
        before = tail.model
        if isinstance(model, str):
            tail.model = model
        if body.get("id") != tail.response or tail.response is None:
            if tail.prompts and before == tail.model:  # the agent went on past it: its point is above
                tail.sent_on = max(tail.sent_on, tail.prompts[-1])
            _finish(tail)
            _settle_call(tail)
            tail.response = body.get("id") if isinstance(body.get("id"), str) else None
            tail.sent = text_or_none(record.get("timestamp"))
            if tail.first_response is None:
                tail.first_response = tail.response
            tail.prompts = [*tail.prompts, usage.prompt_tokens][-PACE_REQUESTS - 1 :]
            tail.largest = max(tail.largest, usage.prompt_tokens)
            tail.added_tokens = tail.reply_tokens = 0
        # its lines' content: what the reply adds to the next request (the output a line
        # reports is often only as far as it had streamed)
        tail.reply_tokens += _estimate(body.get("content")) if counting else 0
        tail.usage = {**usage.to_dict(), "model": tail.model}
        tail.last_prompt, tail.last_output = usage.prompt_tokens, usage.output_tokens
    elif kind in ("user", "attachment") and not record.get("isSidechain"):
        tail.added_tokens += _estimate(body.get("content", record.get("attachment"))) if counting else 0
        if record.get("isCompactSummary") and tail.call_in:
            tail.call_chars += len(Message("user", parse_content(body.get("content"))).text)
    elif kind == "system" and record.get("subtype") == "compact_boundary":
        meta = as_dict(record.get("compactMetadata"))
        tail.compactions += 1
        pre = count(meta.get("preTokens"))
        if meta.get("trigger") == "auto" and pre is not None:
            tail.compacted.append(pre)
        _settle_call(tail)
        tail.call_in, tail.call_chars, tail.call_model = pre or tail.last_prompt or 0, 0, tail.model
        tail.call_sent = text_or_none(record.get("timestamp"))
        tail.prompts, tail.last_prompt, tail.added_tokens, tail.reply_tokens = [], None, 0, 0


def _estimate(content: Any) -> int:
    """What a line's content adds to the next request, by the app's own labelled estimate
    (text / 4, an image or a document at the flat media figure, never its base64 / 4)."""
    return _ESTIMATE.count(Message("user", parse_content(content)), remember=False)


def _finish(tail: Tail) -> None:
    """Price the response whose lines are done."""
    if tail.usage is None:
        return
    usage = _usage(tail.usage)
    parts = priced_parts(usage, usage.model, _BILLING, parse(tail.sent))
    if parts is None:
        tail.unpriced += 1
    else:
        tail.done_usd = str(Decimal(tail.done_usd) + sum(parts.values(), Decimal(0)))
    tail.usage = None


def _call(tail: Tail) -> Decimal:
    """The last compaction's summarize request, estimated (`OwnCall.estimated`)."""
    return _estimated_call(tail.call_model, tail.call_in, tail.call_chars, tail.call_sent)


def _estimated_call(model: str | None, call_in: int, chars: int, sent: str | None) -> Decimal:
    if not call_in:
        return Decimal(0)
    # imported here: only a call that meets a compaction prices one
    from compaction_inspector.core.pricing.own_calls import OwnCall

    return OwnCall.estimated(model, call_in, chars // 4, parse(sent)).price(_BILLING)


def _settle_call(tail: Tail) -> None:
    """The last compaction's call is priced once its summary is written (where no model
    was read before it yet, once the head before the tail gives it)."""
    if tail.call_in and tail.call_model is None and not tail.whole:
        tail.calls_unknown = [*tail.calls_unknown, (tail.call_in, tail.call_chars, tail.call_sent)]
    tail.calls_usd = str(Decimal(tail.calls_usd) + _call(tail))
    tail.call_in = 0


def _usage(kept: Mapping[str, Any]) -> Usage:
    usage = parse_usage(kept) or Usage()
    model = kept.get("model")
    return dataclasses.replace(usage, model=model if isinstance(model, str) else None)


def cost_usd(tail: Tail) -> Decimal | None:
    """The session so far, the response being written included, with its compactions'
    own calls estimated as `analyze` estimates them (None: nothing priced)."""
    done = Decimal(tail.done_usd) + Decimal(tail.calls_usd) + _call(tail)
    if not tail.whole:  # what the head has read so far: the figure is at least this
        head = tail.before
        done += Decimal(head.done_usd) + Decimal(head.calls_usd)
    if tail.usage is not None:
        usage = _usage(tail.usage)
        parts = priced_parts(usage, usage.model, _BILLING, parse(tail.sent))
        if parts is not None:
            done += sum(parts.values(), Decimal(0))
    return done if done or not tail.unpriced else None


def read(path: Path, index: Path | None) -> Tail:
    """The figures of the transcript at `path`: its kept entry in `index` carried on over
    what was appended since, else read from its tail; the entry kept again."""
    tail = _read_on(path, entries(index).get(str(path.resolve())) if index is not None else None)
    if index is not None:
        keep(path, index, tail)
    return tail


def _read_on(path: Path, kept: Any) -> Tail:
    """The transcript at `path` read on from its `kept` entry, else from its tail."""
    with open_regular(path) as f:
        st = os.fstat(f.fileno())
        tail = Tail.of(kept)
        made = True  # a tail made now reads a bounded part of its head
        if tail is None or tail.inode != st.st_ino or tail.offset > st.st_size:
            tail = _from_tail(None, st.st_ino, f, st.st_size)
        elif st.st_size - tail.offset > 4 * TAIL_BYTES:  # more was added than a call reads: the head reads it
            tail = _from_tail(tail, st.st_ino, f, st.st_size)
        else:
            made = False
        f.seek(tail.offset)
        data = f.read(st.st_size - tail.offset)
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits for the next call
        advance(tail, complete.splitlines())
        tail.offset += len(complete)
        _read_head(tail, f, HEAD_BYTES if made else None)  # the next call reads the rest
    return tail


def _from_tail(was: Tail | None, inode: int, f: BinaryIO, size: int) -> Tail:
    """A tail read from the file's last TAIL_BYTES, from a line's start, and before it a
    head that later calls read on: `was` read on from where it got to (from the start,
    so its figures go on), else `was`'s own head, else a new one; none where the tail is
    the whole file."""
    start = max(0, size - TAIL_BYTES)
    if start == 0:
        return Tail(inode=inode)
    f.seek(start - 1)
    found = f.read(TAIL_BYTES + 1).find(b"\n")  # the line the cut falls in is the head's
    start = start + found if found >= 0 else size
    if was is None:
        head: dict[str, Any] = {}
    elif was.whole:
        head = {k: v for k, v in was.to_dict().items() if k != "index_version"}
    else:
        head = was.head or {}
    return Tail(inode=inode, offset=start, whole=False, head=head, head_end=start)


def _read_head(tail: Tail, f: BinaryIO, budget: int | None) -> None:
    """Read on the head by at most `budget` bytes (None: to its end, a chunk at a time),
    skipping what a sparse file does not hold; once it reaches the tail, add it to the
    tail, whose figures are then whole."""
    if tail.whole:
        return
    head, end = tail.before, tail.head_end
    while head.offset < end and (budget is None or budget > 0):
        try:
            head.offset = min(os.lseek(f.fileno(), head.offset, os.SEEK_DATA), end)
        except OSError:  # nothing but a hole to the end of the file
            head.offset = end
        if head.offset >= end:
            break
        f.seek(head.offset)
        chunk = f.read(min(_CHUNK, end - head.offset, _CHUNK if budget is None else budget))
        budget = None if budget is None else budget - len(chunk)
        last = chunk.rfind(b"\n") + 1
        if last:
            # only its responses and compactions count for the figures a head adds
            lines = (x for x in chunk[:last].splitlines() if b'"assistant"' in x or b"ompact" in x)
            advance(head, lines, counting=False)
            head.offset += last
        elif len(chunk) >= _LONGEST or head.offset + len(chunk) >= end:
            head.offset += len(chunk)  # a run no line of a transcript is: passed over
        else:
            break  # the budget ended inside a line: the next call reads it
    if head.offset < end:
        tail.head = {k: v for k, v in head.to_dict().items() if k != "index_version"}
    else:
        _joined(tail, head)


def _joined(tail: Tail, head: Tail) -> None:
    """`tail` with the head read before it added: its figures are now the whole file's."""
    if head.response != tail.first_response:  # else the tail prices that response
        _finish(head)
    _settle_call(head)
    if tail.call_in and tail.call_model is None:  # its call is still being written: the head's model
        tail.call_model = head.model
    unknown = sum((_estimated_call(head.model, *call) for call in tail.calls_unknown), Decimal(0))
    tail.calls_unknown = []
    tail.done_usd = str(Decimal(tail.done_usd) + Decimal(head.done_usd))
    tail.calls_usd = str(Decimal(tail.calls_usd) + Decimal(head.calls_usd) + unknown)
    tail.unpriced += head.unpriced
    tail.compactions += head.compactions
    tail.compacted = [*head.compacted, *tail.compacted]
    tail.largest = max(tail.largest, head.largest)
    tail.sent_on = max(tail.sent_on, head.sent_on)
    tail.version, tail.model = tail.version or head.version, tail.model or head.model
    tail.cwd = tail.cwd or head.cwd
    tail.records, tail.own = tail.records + head.records, tail.own + head.own
    tail.whole, tail.head, tail.head_end = True, None, 0


_CHUNK = 8 << 20
_LONGEST = 1 << 20  # a run this long with no newline is not a line the head needs (sparse, binary)


def keep(path: Path, index: Path, tail: Tail) -> None:
    """`tail` kept as the transcript's entry."""
    with locked(index):
        found = entries(index)
        found[str(path.resolve())] = tail.to_dict()
        write_atomic(index, json.dumps(found))


def figures(
    tail: Tail, config: Config, given: Mapping[str, Any], kept: tuple[Asked, Stamp] | None = None
) -> Figures:
    """`tail` against the agent's own point for its version and model (`given`: what
    Claude Code passed on stdin, for what the transcript has not said yet); with `kept`,
    how the call asked and its settings files as they were before `config` read them
    (`stamped`), what the settings said is kept with it (`keep`) for the next call asked so."""
    facts, counts = _facts(tail, given)
    said = _point(config, facts, counts)
    if kept is not None:
        asked, files = kept
        ceiling = _ceiling(config, facts, counts, said)
        tail.answer = Answer(__name__, asked, files, facts, counts, ceiling, *said).to_dict()
    return _figures(tail, facts, *said)


_WIDEST = 40  # a session past its point is probed up to 2**40 tokens more, then each power of two less


def _ceiling(
    config: Config, facts: Facts, counts: tuple[int, ...], said: tuple[int | None, int | None, bool]
) -> tuple[int, ...]:
    """The counts the session may reach with its point still `said`, probed: each count up
    to just under the point; for a session past it (or with no point, as where auto-compact
    is off), whose counts grow at every call, that and the most a power of two more that
    leaves the point as it is. None beyond `counts` where no probe does."""
    point = said[0]
    under = tuple(max(n, point - 1) for n in counts) if point is not None else counts
    past = point is None or any(n >= point for n in counts)
    for extra in (*(1 << k for k in range(_WIDEST, -1, -1)), 0) if past else (0,):
        top = tuple(n + extra for n in under)
        if top != counts and _point(config, facts, top) == said:
            return top
    return counts


def stamped(tail: Tail, given: Mapping[str, Any]) -> Stamp:
    """Every file the session's point may be read from, as it is now (`core.statusline.stamp`):
    Claude Code's layers for the session's folder, and where the inspector's own settings
    are looked for."""
    cwd = _facts(tail, given)[0][2]
    return stamp([*layers(cwd if isinstance(cwd, str) else None), *config_path.candidates()])


def answered(
    path: Path, index: Path, entry: Mapping[str, Any], given: Mapping[str, Any], asked: Asked
) -> Figures | None:
    """The figures of the transcript read on from its kept `entry`, where the answer the
    entry keeps holds for the call (`core.statusline.Answer`); the entry then kept in
    `index`. None where it does not."""
    tail = _read_on(path, entry)
    answer = Answer.of(tail.answer)
    facts, counts = _facts(tail, given)
    if answer is None or not answer.holds(asked.argv, asked.folder, stamped(tail, given), facts, counts):
        return None
    keep(path, index, tail)
    return _figures(tail, facts, answer.point, answer.set_now, answer.off)


def _facts(tail: Tail, given: Mapping[str, Any]) -> tuple[Facts, tuple[int, ...]]:
    """What the session says that its point depends on: its version, model and folder and
    what it counted before each automatic compaction; and its counts, the largest prompt a
    request followed without compacting and the largest reported (`given`: what Claude
    Code passed, for what the transcript has not said yet)."""
    version = tail.version or text_or_none(given.get("version"))
    model = tail.model or text_or_none(as_dict(given.get("model")).get("id"))
    # its project's settings layers are read where Claude Code reads them: the project it
    # was started in, as it passes it, else the folder the transcript says it runs in
    workspace = as_dict(given.get("workspace"))
    cwd = text_or_none(workspace.get("project_dir")) or tail.cwd or text_or_none(given.get("cwd"))
    return (version, model, cwd, *tail.compacted_so_far), (tail.sent_on, tail.largest)


def _point(config: Config, facts: Facts, counts: tuple[int, ...]) -> tuple[int | None, int | None, bool]:
    """The point in force for a session of `facts` and `counts`, where today's settings
    put it where that differs, and whether it never compacts on its own."""
    version, model, cwd, *compacted = facts
    reported = [(n, p) for n, p in zip(("sent on", "largest"), counts, strict=True) if p]
    named = model if isinstance(model, str) else None
    session = Session(
        messages=tuple(
            Message("assistant", (), id=n, usage=Usage(input_tokens=p, model=named)) for n, p in reported
        ),
        format=FORMAT,
        metadata={k: v for k, v in (("version", version), ("model", model), ("cwd", cwd)) if v},
        compactions=tuple(Compaction(0, "auto", pre) for pre in compacted if isinstance(pre, int)),
    )
    account = config.for_session(session).account
    said = account.point
    return (
        (said.tokens if said is not None else None),
        account.set_now,
        said is not None and said.tokens is None,
    )


def _figures(tail: Tail, facts: Facts, point: int | None, set_now: int | None, off: bool) -> Figures:
    count_now = None
    if tail.last_prompt is not None:
        reply = round(held_output(tail.last_output, tail.reply_tokens))
        count_now = tail.last_prompt + reply + tail.added_tokens
    left = headroom(count_now, point, tail.prompts) if count_now is not None and point is not None else None
    model = facts[1]
    return Figures(
        count_now,
        point,
        left,
        tail.compactions_so_far,
        cost_usd(tail),
        tail.whole,
        model if isinstance(model, str) else None,
        off,
        set_now,
    )


def snippet(command: str | None = None) -> dict[str, Any]:
    """What Claude Code's `settings.json` takes to run the status line (`installed_command`)."""
    return {"statusLine": {"type": "command", "command": command or installed_command(), "padding": 0}}


def settings_path() -> Path:
    """The user's Claude Code settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/`'s."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"


def install(
    settings: Path, force: bool = False, command: str | None = None, waiting: Callable[[], None] | None = None
) -> Path | None:
    """Add the status line to `settings` (made if missing), keeping the file as it was
    beside it first; the backup's path (None when there was no file). Refuses a file that
    is not a JSON object, and one that has a status line already unless `force`; written
    under the lock `apply` takes, and only over the file as it was read (`files.rewrite`)."""
    for _ in range(3):  # another writer between the read and the write: read it again
        raw = held(settings)
        with contextlib.suppress(Changed):
            return rewrite(settings, raw, _with_status_line(settings, raw, force, command), waiting=waiting)
    raise Changed(0, f"{settings} kept changing while it was read: nothing written")


def _with_status_line(settings: Path, raw: bytes | None, force: bool, command: str | None) -> str:
    existing: dict[str, Any] = {}
    if raw is not None:
        try:
            found = json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise SettingsRefused(f"{settings} is not JSON that can be read: {exc}") from exc
        if not isinstance(found, dict):
            raise SettingsRefused(f"{settings} does not hold a JSON object")
        if "statusLine" in found and not force:
            there = json.dumps(found["statusLine"])
            raise SettingsRefused(f"{settings} has a statusLine already ({there}): --force replaces it")
        existing = found
    return json.dumps({**existing, **snippet(command)}, indent=2, ensure_ascii=False) + "\n"

"""Open a transcript in any supported format, chosen by sniffing its content.

`Formats.load(path)` never writes to the file. A malformed line becomes a diagnostic with its
line number; a file that is no transcript at all raises `LoadError` with the reason.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction_inspector.core.files import open_regular
from compaction_inspector.core.formats import anthropic, openai_chat, plain, task_folder
from compaction_inspector.core.formats.common import (
    LoadError,
    Records,
    as_dict,
    as_list,
    loads,
    parse_usage,
    read_jsonl,
    result_text,
    stream_jsonl,
)
from compaction_inspector.core.formats.kinds import (
    SEPARATOR,
    Body,
    Document,
    Journal,
    Store,
    TaskFolder,
    Writer,
    stored_in,
)
from compaction_inspector.core.model import Diagnostic, Message, Session, Usage, canonical_json, immutable

if TYPE_CHECKING:
    from compaction_inspector.core.contract.files import Files

__all__ = [
    "BODIES",
    "Formats",
    "Journal",
    "LoadError",
    "Writer",
    "check_readable",
]


STORE_HEAD = 100  # bytes a store is told apart by (a database's header)
BODIES: tuple[Body, ...] = (openai_chat, anthropic)  # tried in this order: a file is the first that claims it


YAML_MAX_CHARS = 10_000_000
# a request body: its line, the body, and the usage its logged response reported
Logged = tuple[int | None, dict[str, Any], Usage | None]


HEAD_BYTES = 256 * 1024  # what a preview reads: a screen of rows in any real session


@immutable()
class Formats:
    """The formats a file is read as: the agents' own (`journals`, then `stores`, in the
    registry's order, tried before the APIs' bodies; a task folder by its files' names)
    and those a session is written back in."""

    journals: tuple[Journal, ...]
    stores: tuple[Store, ...]
    own_writers: tuple[Writer, ...]
    tasks: tuple[TaskFolder, ...] = ()
    documents: tuple[Document, ...] = ()

    @classmethod
    def of(cls, agents: Sequence[Files]) -> Formats:
        """What `agents` read and write."""
        return cls(
            tuple(a.journal for a in agents if a.journal is not None),
            tuple(a.store for a in agents if a.store is not None),
            tuple(a.writer for a in agents if a.writer is not None),
            tuple(a.task_folder for a in agents if a.task_folder is not None),
            tuple(a.document for a in agents if a.document is not None),
        )

    @property
    def writers(self) -> tuple[Writer, ...]:
        """The formats a session can be written back in: the agents' that can, then the
        APIs' (the rest is written plain)."""
        return (*self.own_writers, anthropic, openai_chat)

    def load(self, path: str | Path, request: int | None = None) -> Session:
        return self._billed(self._load(path, request))

    def _load(self, path: str | Path, request: int | None = None) -> Session:
        """Read `path` as a transcript. `request` picks a body of a proxy log or a JSONL of
        request bodies, counted from 1 (default the largest: the main conversation's latest
        request, not a side call such as a title).

        The agents' JSONL is parsed as it is read, line by line, so a 100 MB session never
        sits in memory as bytes, text, lines and records all at once. A file an agent keeps
        many sessions in is read by its store: `FILE#SESSION` names one."""
        file, inside = stored_in(path)
        folder = task_folder.folder_of(file) if self.tasks and inside is None else None
        if folder is not None:
            _no_request(request, "task folder")
            task = task_folder.read(folder)
            loaded = self._task_kind(task).load(task, str(folder / task_folder.HISTORY))
            return replace(loaded, content_hash=task.content_hash)
        document = next((d for d in self.documents if d.claims(file)), None) if inside is None else None
        if document is not None:
            _no_request(request, document.FORMAT)
            return document.load(file)
        try:
            with open_regular(file) as f:
                store = self._holding(f.read(STORE_HEAD))
                if store is not None:
                    _no_request(request, store.FORMAT)
                    return store.load(file, inside)
                named = next((s for s in self.stores if file.name in s.NAMES), None)
                if named is not None:
                    raise LoadError(f"{file.name} is {named.NOT_ONE}")
                if inside is not None:
                    raise LoadError(f"{file} holds no sessions to name with {SEPARATOR}{inside}")
                f.seek(0)
                first = f.readline()
                kind = self._streamable(first)
                if kind is None:
                    return self._load_bytes(first + f.read(), str(path), request)
                hasher = hashlib.blake2b(first, digest_size=16)

                def lines() -> Iterator[bytes]:
                    for raw in f:
                        hasher.update(raw)
                        yield raw

                _no_request(request, kind.FORMAT)
                records = Records()
                records.items = stream_jsonl(itertools.chain([first], lines()), records)
                session: Session = kind.load(records, str(path))
                return replace(session, content_hash=hasher.hexdigest())
        except OSError as exc:
            raise _unreadable(path, exc) from exc

    def head(self, path: str | Path, size: int = HEAD_BYTES) -> tuple[Session, int] | None:
        """The first complete lines of a large JSONL transcript (at most `size` bytes) read
        as a session, and the file's size: what a screen can show while the whole is read.
        None when the file is no larger than that, or is not read line by line (a JSON or
        YAML document is read whole). Never raises: the whole read says what is wrong."""
        try:
            with open_regular(path) as f:
                total = os.fstat(f.fileno()).st_size
                if total <= size:
                    return None
                data = f.read(size)
        except OSError:
            return None
        data = data[: data.rfind(b"\n") + 1]
        first = data[: data.find(b"\n") + 1]
        kind = self._streamable(first) if first else None
        if kind is None:
            return None
        records = read_jsonl(data.decode("utf-8", errors="replace"))
        return self._billed(kind.load(records, str(path))), total

    def appended(self, session: Session, text: str, first_line: int) -> Session | None:
        """`session` grown by `text`, complete lines written to its file after those it was
        read from, numbered from `first_line`; None when its format is only read whole."""
        journal = next((j for j in self.journals if session.format == j.FORMAT), None)
        grown = journal.appended(session, read_jsonl(text, first_line)) if journal is not None else None
        return self._billed(grown) if grown is not None else None

    def load_bytes(self, data: bytes, path: str | None = None, request: int | None = None) -> Session:
        return self._billed(self._load_bytes(data, path, request))

    def _load_bytes(self, data: bytes, path: str | None = None, request: int | None = None) -> Session:
        try:
            text = data.decode("utf-8")
            notes: list[Diagnostic] = []
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            line = data[: exc.start].count(b"\n") + 1
            notes = [Diagnostic(line, "invalid UTF-8 replaced with U+FFFD")]
        session = self._load_text(text, path, request)
        if notes:
            session = _with_diagnostics(session, notes)
        return replace(session, content_hash=hashlib.blake2b(data, digest_size=16).hexdigest())

    def load_text(self, text: str, path: str | None = None, request: int | None = None) -> Session:
        return self._billed(self._load_text(text, path, request))

    def _load_text(self, text: str, path: str | None = None, request: int | None = None) -> Session:
        text = text.removeprefix("\ufeff")
        if not text.strip():
            raise LoadError("the file is empty")
        if text.lstrip()[:1] in "{[":
            try:
                whole = loads(text)
            except (ValueError, RecursionError):
                pass
            else:
                return self._from_value(whole, path, request)
        records = read_jsonl(text)
        dicts = [value for _, value in records.items if isinstance(value, dict)]
        if dicts:
            return self._from_records(records, dicts, path, request)
        value = None
        # YAML is for small hand-written lists; its pure-Python parser would crawl through a
        # large file that is not JSON at all.
        if len(text) <= YAML_MAX_CHARS:
            import yaml  # only this last try reads YAML: not imported at every start

            from compaction_inspector.core import yamlfile

            try:
                value = yamlfile.load(text)
            except (yaml.YAMLError, ValueError):
                value = None
        if plain.looks_like(value):
            _no_request(request, plain.FORMAT)
            return plain.session(value, path)
        raise LoadError(f"not a transcript in any known format (tried {self.tried()})")

    def written_whole(self, path: Path) -> bool:
        """`path` is the file an agent writes whole for a session: a task folder's history,
        or a document its agent claims."""
        return path.name == task_folder.HISTORY or any(d.claims(path) for d in self.documents)

    def sessions_among(self, files: list[Path]) -> list[Path]:
        """`files` less those that are part of another of them: a task folder's other files
        beside its history, and what a document is read with."""
        tasks = {f.parent for f in files if f.name == task_folder.HISTORY}
        parts = {c for f in files for d in self.documents if d.claims(f) for c in d.companions(f)}
        return [
            f for f in files if f not in parts and (f.parent not in tasks or f.name == task_folder.HISTORY)
        ]

    def sessions_in(self, path: Path) -> list[Path] | None:
        """Every session a file of many holds, named (`FILE#SESSION`); None where no store
        holds the file."""
        store = self._store_of(path)
        return store.names(path) if store is not None else None

    def stored_stamp(self, path: str | Path) -> tuple[int, ...] | None:
        """For a session inside a file of many (`FILE#SESSION`), what changes when its agent
        writes to that file; None for a file of its own, or one that cannot be read now."""
        file, inside = stored_in(path)
        store = self._store_of(file) if inside is not None else None
        return store.stamp(file) if store is not None else None

    def provider(self, fmt: str) -> str | None:
        """Whose prices a format's responses are billed at (None: a format that says not)."""
        formats: list[Journal | Store | TaskFolder | Document | Body] = [
            *self.journals,
            *self.stores,
            *self.tasks,
            *self.documents,
            *BODIES,
        ]
        return next((f.PROVIDER for f in formats if fmt == f.FORMAT), None)

    def _billed(self, session: Session) -> Session:
        """`session` with the provider its format bills at."""
        provider = self.provider(session.format)
        return session if session.provider == provider else replace(session, provider=provider)

    def tried(self) -> str:
        """Every format a file is tried as, in words, for the error that none fits."""
        described = [j.DESCRIBED for j in self.journals] + [s.DESCRIBED for s in self.stores]
        described += [t.DESCRIBED for t in self.tasks] + [d.DESCRIBED for d in self.documents]
        return ", ".join(
            [
                *described,
                "Anthropic Messages JSON (body, JSONL of bodies or proxy log)",
                "OpenAI chat-completions JSON",
                "plain role/content JSON/YAML",
            ]
        )

    def _holding(self, head: bytes) -> Store | None:
        """The store a file's first bytes say holds it (None: a file of one session)."""
        return next((s for s in self.stores if s.holds(head)), None)

    def _store_of(self, file: Path) -> Store | None:
        try:
            with open_regular(file) as f:
                return self._holding(f.read(STORE_HEAD))
        except OSError:
            return None

    def _task_kind(self, task: task_folder.Task) -> TaskFolder:
        """The agent whose task folder this is: the one whose storage folder its path is
        in, else the first whose own marks its files hold, else the first."""
        parts = {p.lower() for p in task.folder.parts}
        named = next((t for t in self.tasks if t.STORAGE in parts), None)
        return named or next((t for t in self.tasks if t.looks_like(task)), self.tasks[0])

    def _streamable(self, first_line: bytes) -> Journal | None:
        """The journal format recognisable from a file's first line, if any."""
        try:
            value = loads(first_line.decode("utf-8").removeprefix("\ufeff"))
        except (ValueError, RecursionError):
            return None
        return self._agent_format(value)

    def _agent_format(self, value: Any) -> Journal | None:
        """The journal whose line `value` looks like, if any. A file's format is that of its
        first such line, read whole or streamed alike."""
        if isinstance(value, dict):
            return next((j for j in self.journals if j.looks_like(value)), None)
        return None

    def _from_value(self, value: Any, path: str | None, request: int | None) -> Session:
        """A file holding one JSON value (possibly a one-line JSONL file)."""
        if isinstance(value, dict):
            if self._agent_format(value) is not None or "request" in value:
                records = Records(items=[(1, value)])
                return self._from_records(records, [value], path, request)
            if isinstance(value.get("messages"), list):
                return _from_bodies([(None, value, None)], [], path, request)
        if isinstance(value, list) and value:
            if any((isinstance(m, dict) and "tool_calls" in m) or _is_tool_role(m) for m in value):
                return _from_bodies([(None, {"messages": value}, None)], [], path, request)
            if plain.looks_like(value):
                _no_request(request, plain.FORMAT)
                return plain.session(value, path)
        raise LoadError(f"not a transcript in any known format (tried {self.tried()})")

    def _from_records(
        self, records: Records, dicts: list[dict[str, Any]], path: str | None, request: int | None
    ) -> Session:
        agent = next((m for m in map(self._agent_format, dicts[:50]) if m is not None), None)
        if agent is not None:
            _no_request(request, agent.FORMAT)
            session: Session = agent.load(records, path)
            return session
        bodies: list[Logged] = []
        times: list[str] = []
        urls: list[str | None] = []
        for number, value in records.items:
            body = _body(value)
            if body is not None:
                bodies.append((number, body, _response_usage(value)))
                times += [t] if (t := _request_time(value)) else []
                url = as_dict(as_dict(value).get("request")).get("url")
                urls.append(url if isinstance(url, str) and url else None)
        if bodies:
            session = _from_bodies(bodies, records.diagnostics, path, request)
            metadata = dict(session.metadata)
            if times:  # when the log's requests were made: the session's span
                metadata |= {"started": min(times), "ended": max(times)}
            if (url := urls[session.request_index]) is not None:  # whose API it went to: its prices
                metadata["api_url"] = url
            return replace(session, metadata=metadata) if metadata != session.metadata else session
        if all("role" in d for d in dicts[:50]):
            _no_request(request, plain.FORMAT)
            session = plain.session(dicts, path)
            return _with_diagnostics(session, records.diagnostics)
        raise LoadError(f"not a transcript in any known format (tried {self.tried()})")


def check_readable(path: str | Path) -> None:
    """Raise the LoadError `load` would for a file that cannot be opened at all (missing,
    a directory, no permission), without reading it."""
    file = stored_in(path)[0]
    folder = task_folder.folder_of(file)
    try:
        with open_regular(folder / task_folder.HISTORY if folder is not None else file):
            pass
    except OSError as exc:
        raise _unreadable(path, exc) from exc


def _unreadable(path: str | Path, exc: OSError) -> LoadError:
    return LoadError(f"cannot read {path}: {exc.strerror or exc}")


def _no_request(request: int | None, fmt: str) -> None:
    if request is not None:
        raise LoadError(
            f"a request number picks a body of a proxy log or of a JSONL of bodies; this is a {fmt} file"
        )


def _is_tool_role(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") in ("tool", "function")


def _body(value: Any) -> dict[str, Any] | None:
    """The request body of a proxy-log record, or the value itself if it is a body."""
    if not isinstance(value, dict):
        return None
    if "request" in value:
        req = value["request"]
        body = req.get("body") if isinstance(req, dict) else None
        if isinstance(body, str):
            try:
                body = loads(body)
            except ValueError:
                return None
        return body if isinstance(body, dict) and isinstance(body.get("messages"), list) else None
    return value if isinstance(value.get("messages"), list) else None


def _request_time(record: Any) -> str | None:
    """When a proxy log's request was made (its epoch seconds), as ISO 8601 UTC."""
    when = as_dict(as_dict(record).get("request")).get("timestamp")
    if isinstance(when, int | float) and not isinstance(when, bool) and 0 < when < 32_503_680_000:
        return datetime.fromtimestamp(when, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return None


def _response_usage(record: Any) -> Usage | None:
    """What a proxy log's logged response reported: its body's usage, else the last
    streamed event that carries one (Anthropic's message_delta, OpenAI's final chunk)."""
    response = record.get("response") if isinstance(record, dict) else None
    if not isinstance(response, dict):
        return None
    body = response.get("body")
    if isinstance(body, dict) and isinstance(body.get("usage"), dict):
        return parse_usage(body["usage"])
    events = response.get("events")
    for event in reversed(events if isinstance(events, list) else []):
        data = event.get("data") if isinstance(event, dict) else None
        if isinstance(data, dict):
            usage = data.get("usage", as_dict(data.get("message")).get("usage"))
            if isinstance(usage, dict):
                return parse_usage(usage)
    return None


def _preamble(body: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A body's system prompt and tool definitions, as the text a counter reads."""
    parts: list[tuple[str, str]] = []
    system = result_text(body.get("system"))
    if system:
        parts.append(("system prompt", system))
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        parts.append((f"tool definitions ({len(tools)})", canonical_json(tools)))
    return tuple(parts)


def _from_bodies(
    bodies: list[Logged],
    diagnostics: list[Diagnostic],
    path: str | None,
    request: int | None,
) -> Session:
    if request is None:  # the largest; of equals, the latest
        index = max(range(len(bodies)), key=lambda i: (len(as_list(bodies[i][1].get("messages"))), i))
    elif 1 <= request <= len(bodies):
        index = request - 1
    else:
        raise LoadError(
            f"request {request} does not exist: the file holds {len(bodies)} (1 to {len(bodies)})"
        )
    line, body, usage = bodies[index]
    messages: list[Message]
    told = next((b for b in BODIES if b.looks_like(body)), None)
    if told is not None:
        fmt = told.FORMAT
        messages, metadata = told.messages(body, line)
    else:
        fmt = plain.FORMAT
        messages, metadata = plain.messages(body), {}
    return Session(
        messages=tuple(messages),
        format=fmt,
        path=path,
        metadata=metadata,
        diagnostics=tuple(diagnostics),
        request_count=len(bodies),
        request_index=index,
        preamble=_preamble(body),
        request_usage=usage,
    )


def _with_diagnostics(session: Session, notes: list[Diagnostic]) -> Session:
    if not notes:
        return session
    merged = tuple(dict.fromkeys((*notes, *session.diagnostics)))
    return replace(session, diagnostics=merged)

"""Gemini CLI's chat recording (docs/agents.md#gemini-cli), read as Gemini CLI reads it
(`packages/core/src/services/chatRecordingService.ts`, `chatRecordingTypes.ts`).

`session-*.jsonl` is a log, not a list: a metadata line, then records. A message record
(`id`, `type`) is written again whole each time its tool calls, results or tokens change,
and the last one of an id stands, where the first stood. `{"$rewindTo": id}` drops that
message and every one after it. `{"$set": {...}}` updates the metadata, and a `messages`
list in it replaces the history: after a compression, that list opens with the summary
(a `<state_snapshot>`) and Gemini's acknowledgement. The older `session-*.json` is one
object holding the same fields.

A compression the log shows so is read as one (the history before it, its boundary, then
the history it left). Where a recording holds none, a prompt that falls to under half the
one before is read as a compression, said to be an inference. `info`, `error` and
`warning` records are the app's, not the model's, and are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from compaction_inspector.core.formats.common import (
    Records,
    Skipped,
    as_dict,
    as_list,
    iter_dicts,
    name_compactions,
    result_text,
)
from compaction_inspector.core.model import Block, Compaction, Message, Session, Usage, immutable

FORMAT = "gemini-cli"
DESCRIBED = "Gemini CLI chat recording"
PROVIDER = "google"  # whose prices its responses are billed at
KINDS = frozenset({"user", "gemini", "info", "error", "warning"})
SNAPSHOT = "<state_snapshot>"  # what its compression's summary is wrapped in
DROP = 0.5  # a prompt under this share of the one before, where nothing records a compression


def looks_like(record: dict[str, Any]) -> bool:
    if isinstance(record.get("$rewindTo"), str) or isinstance(record.get("$set"), dict):
        return True
    if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
        return True
    return (
        isinstance(record.get("id"), str)
        and record.get("type") in KINDS
        and "content" in record
        and "uuid" not in record
    )


@immutable()
class Read:
    """How a compression was found: the recording replaced its history with a summary,
    or (an inference) its prompt fell."""

    how: Literal["recorded", "inferred"]

    def to_dict(self) -> dict[str, Any]:
        return {"found": self.how}

    def said(self) -> list[str]:
        if self.how == "recorded":
            return ["its recording replaced the history with a <state_snapshot> summary"]
        return [f"inferred: its prompt fell under {DROP:.0%} of the one before (no record of it)"]


_Entry = tuple[int, dict[str, Any]]  # a record, and the line it was last written on


class _Recording:
    """The log folded as Gemini CLI folds it, keeping what a compression replaced."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.history: dict[str, _Entry] = {}
        self.before: list[Message] = []  # the histories compressions replaced, with their boundaries
        self.compactions: list[Compaction] = []
        self.summaries: set[str] = set()  # ids of the compressions' summaries
        self.skipped = Skipped()

    def take(self, number: int, record: dict[str, Any]) -> None:
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str):
            ids = list(self.history)
            for gone in ids[ids.index(rewind) :] if rewind in ids else ids:
                del self.history[gone]
        elif isinstance(record.get("id"), str):
            self.history[record["id"]] = (number, record)
        else:
            patch = as_dict(record["$set"]) if "$set" in record else record
            self.metadata.update({k: v for k, v in patch.items() if k != "messages"})
            if isinstance(patch.get("messages"), list):
                self._replace(number, patch["messages"])

    def _replace(self, number: int, given: list[Any]) -> None:
        new = {m["id"]: (number, m) for m in given if isinstance(m, dict) and isinstance(m.get("id"), str)}
        first = next(iter(new.values()), (number, {}))[1]
        summary = first.get("type") == "user" and SNAPSHOT in _text(first)
        if summary and set(self.history) - set(new):
            self.before += self.messages()
            pre = next((t for t in map(_tokens, reversed(self.history.values())) if t is not None), None)
            self.compactions.append(Compaction(len(self.before), None, pre, details=Read("recorded")))
            self.before.append(_boundary(number))
            self.summaries.add(first["id"])
        self.history = new

    def messages(self) -> list[Message]:
        """The history as messages: a gemini record is its reply, then its tool results."""
        out: list[Message] = []
        for number, record in self.history.values():
            kind = record.get("type")
            if kind == "user":
                out.append(_user(number, record, record["id"] in self.summaries))
            elif kind == "gemini":
                out += _gemini(number, record)
            else:
                self.skipped.add(str(kind))
        return out


def load(records: Records, path: str | None) -> Session:
    recording = _Recording()
    for number, record in iter_dicts(records):
        recording.take(number, record)
    messages = [*recording.before, *recording.messages()]
    compactions = recording.compactions or _inferred(messages)
    name_compactions(messages, compactions)
    meta = recording.metadata
    metadata: dict[str, Any] = {
        key: meta[name] for key, name in (("session_id", "sessionId"), ("title", "summary")) if name in meta
    }
    model = next((m.usage.model for m in reversed(messages) if m.usage and m.usage.model), None)
    metadata |= {"model": model} if model else {}
    directories = as_list(meta.get("directories"))
    metadata |= {"cwd": directories[0]} if directories and isinstance(directories[0], str) else {}
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=(*records.diagnostics, *recording.skipped.diagnostics()),
        compactions=tuple(compactions),
    )


def appended(session: Session, records: Records) -> Session | None:
    """A record may rewrite or drop what came before it: the file is read whole again."""
    return None


def _inferred(messages: list[Message]) -> list[Compaction]:
    """Where nothing records a compression: one before each user turn whose next
    response's prompt fell under DROP of the response's before it (the boundary goes in
    `messages` there)."""
    found: list[Compaction] = []
    last: int | None = None  # the prompt of the response before
    turn = 0  # where the user turn the next response answers begins
    k = 0
    while k < len(messages):
        m = messages[k]
        if m.role == "user" and not m.is_tool_result:
            turn = k
        elif m.usage is not None:
            prompt = m.usage.prompt_tokens
            if last is not None and prompt < DROP * last and turn > 0:
                found.append(Compaction(turn, None, last, details=Read("inferred")))
                messages.insert(turn, _boundary(messages[turn].line))
                k += 1
            last = prompt
        k += 1
    return found


def _boundary(line: int | None) -> Message:
    # named once what follows it is read (`name_compactions`)
    return Message("system", (Block("text", text="compression"),), line=line, is_compact_boundary=True)


def _parts(content: Any) -> Iterator[dict[str, Any]]:
    """A `PartListUnion`: a string, a part, or a list of either, as parts."""
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            yield {"text": part}
        elif isinstance(part, dict):
            yield part


def _text(record: dict[str, Any]) -> str:
    return "".join(p["text"] for p in _parts(record.get("content")) if isinstance(p.get("text"), str))


def _user(number: int, record: dict[str, Any], summary: bool) -> Message:
    blocks: list[Block] = []
    for part in _parts(record.get("content")):
        response = as_dict(part.get("functionResponse"))
        if response:
            call = response.get("id") or response.get("name")
            blocks.append(Block.tool_result(str(call), _response(response.get("response"))))
        elif isinstance(part.get("text"), str):
            blocks.append(Block("text", text=part["text"]))
    return Message(
        "user",
        tuple(blocks) or (Block("text", text=""),),
        id=record["id"],
        line=number,
        timestamp=_str(record.get("timestamp")),
        is_compact_summary=summary,
    )


def _gemini(number: int, record: dict[str, Any]) -> list[Message]:
    """A gemini record as its reply (text and tool calls, with the usage it reported) and
    the results of its tool calls, as the next request carries them."""
    blocks = [
        Block("text", text=p["text"])
        for p in _parts(record.get("content"))
        if isinstance(p.get("text"), str) and p["text"] and not p.get("thought")
    ]
    results: list[Block] = []
    for call in as_list(record.get("toolCalls")):
        c = as_dict(call)
        if not isinstance(c.get("id"), str) or not isinstance(c.get("name"), str):
            continue
        blocks.append(Block.tool_use(c["id"], c["name"], as_dict(c.get("args"))))
        if c.get("result") is not None:
            parts = _parts(c["result"])
            said = [
                _response(as_dict(p.get("functionResponse")).get("response", p.get("text"))) for p in parts
            ]
            results.append(Block.tool_result(c["id"], "\n".join(said), is_error=c.get("status") == "error"))
    reply = Message(
        "assistant",
        tuple(blocks) or (Block("text", text=""),),
        id=record["id"],
        line=number,
        timestamp=_str(record.get("timestamp")),
        usage=_usage(record),
    )
    return [reply, Message("user", tuple(results), line=number)] if results else [reply]


def _response(response: Any) -> str:
    """A function response as text: its `output`, else its `content`, as Gemini CLI reads
    them (`chatCompressionService.ts`), else the whole of it."""
    for key in ("output", "content"):
        if isinstance(response, dict) and isinstance(response.get(key), str):
            return str(response[key])
    return result_text(response)


def _usage(record: dict[str, Any]) -> Usage | None:
    """Its `tokens` as reported: the prompt with what the cache held of it; the thoughts
    are billed as output."""
    tokens = as_dict(record.get("tokens"))
    prompt, cached = _count(tokens.get("input")), _count(tokens.get("cached"))
    if prompt is None:
        return None
    output = (_count(tokens.get("output")) or 0) + (_count(tokens.get("thoughts")) or 0)
    cached = min(cached or 0, prompt)
    model = _str(record.get("model"))
    return Usage(
        input_tokens=prompt - cached, cache_read_input_tokens=cached, output_tokens=output, model=model
    )


def _tokens(entry: _Entry) -> int | None:
    """The prompt a gemini record's response reported (Gemini CLI compares its last one)."""
    usage = _usage(entry[1]) if entry[1].get("type") == "gemini" else None
    return usage.prompt_tokens if usage is not None else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None

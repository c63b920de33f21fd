"""Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`).

One line per content block of a streamed reply: lines sharing `message.id` are one API
response, each line one message here. Sub-agent (`isSidechain`) lines are set aside.
Compact boundaries are kept as markers and `attachment` lines (context Claude Code
injects as system reminders: re-read files, plan files, task lists, hook output, ...) as
meta messages; every other non-conversation line is counted (docs/formats.md).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compaction_inspector.core.formats.anthropic import anthropic_block
from compaction_inspector.core.formats.common import (
    Records,
    Skipped,
    SyntheticIds,
    as_dict,
    as_list,
    as_str,
    count,
    iter_dicts,
    model_of,
    name_compactions,
    parse_content,
    parse_usage,
)
from compaction_inspector.core.model import (
    Block,
    Compaction,
    FileTouch,
    Message,
    Role,
    Session,
    Usage,
    immutable,
)
from compaction_inspector.core.text import counted

FORMAT = "claude-code"
DESCRIBED = "Claude Code JSONL"
PROVIDER = "anthropic"  # whose prices its responses are billed at
SYNTHETIC = "<synthetic>"  # the model of a line it writes itself ("No response requested.")
LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "attachment",
        "queue-operation",
        "file-history-snapshot",
        "permission-mode",
        "last-prompt",
    }
)


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return (
        isinstance(kind, str)
        and kind in LINE_TYPES
        and any(key in record for key in ("uuid", "sessionId", "leafUuid", "parentUuid"))
    )


# Idle compaction (2.1.286 on, announced in 2.1.299) writes an automatic boundary and this note
IDLE_NOTE = "Compacted while idle"


def _says_idle(record: dict[str, Any]) -> bool:
    """The line is idle compaction's note: as its own text, or as a user message's."""
    content = record.get("content")
    if not isinstance(content, str):
        content = as_dict(record.get("message")).get("content")
    if isinstance(content, list):
        content = " ".join(str(as_dict(b).get("text", "")) for b in content)
    return isinstance(content, str) and IDLE_NOTE in content


@immutable()
class Recorded:
    """What its `compactMetadata` says of a compaction beyond its counts."""

    # the recent messages it kept as they were (`preservedSegment`: a session-memory or
    # partial compaction), by their uuids: head, tail
    preserved: tuple[str, str] | None = None
    discovered_tools: tuple[str, ...] = ()  # deferred tools loaded before it, kept after it
    dropped_tokens: int | None = None  # what it counts as dropped by its compactions so far

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"preserved_segment": list(self.preserved)} if self.preserved else {}),
            **({"discovered_tools": list(self.discovered_tools)} if self.discovered_tools else {}),
            **({"cumulative_dropped_tokens": self.dropped_tokens} if self.dropped_tokens is not None else {}),
        }

    def said(self) -> list[str]:
        said = []
        if self.preserved is not None:
            said.append("kept the recent messages as they were (session memory), sent after its summary")
        if self.discovered_tools:
            said.append(f"kept {counted(len(self.discovered_tools), 'deferred tool')} loaded before it")
        if self.dropped_tokens is not None:
            said.append(f"{self.dropped_tokens:,} tokens dropped by its compactions so far")
        return said


def _preserved(c: Compaction) -> tuple[str, str] | None:
    return c.details.preserved if isinstance(c.details, Recorded) else None


def _compaction(record: dict[str, Any], index: int) -> Compaction:
    meta = as_dict(record.get("compactMetadata"))
    segment = as_dict(meta.get("preservedSegment"))
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    # an idle compaction is named by its note, on the boundary or after it (`_says_idle`)
    trigger = "idle" if _says_idle(record) else as_str(meta.get("trigger")) or None
    return Compaction(
        index,
        trigger,
        count(meta.get("preTokens")),
        count(meta.get("postTokens")),
        duration_ms=count(meta.get("durationMs")),
        details=Recorded(
            (head, tail) if isinstance(head, str) and isinstance(tail, str) else None,
            tuple(t for t in as_list(meta.get("preCompactDiscoveredTools")) if isinstance(t, str)),
            count(meta.get("cumulativeDroppedTokens")),
        ),
    )


def _relinked(main: list[Message], compactions: list[Compaction]) -> tuple[list[Message], list[Compaction]]:
    """The messages as Claude Code reads them back: a compaction that kept recent
    messages (`preservedSegment`) is followed by them, after its summary, though the
    file holds them only before it. Each kept message comes back as a copy that stands
    for it (`replaces`), so either place is its own message."""
    if not any(_preserved(c) for c in compactions):
        return main, compactions
    at = {m.uuid: i for i, m in enumerate(main) if m.uuid is not None}
    boundaries = [main[c.index] for c in compactions]
    out = list(main)
    for c in reversed(compactions):  # from the end: an insertion moves only what follows it
        segment = _preserved(c)
        if segment is None or segment[0] not in at or segment[1] not in at:
            continue
        head, tail = at[segment[0]], at[segment[1]]
        if not head <= tail < c.index:
            continue
        after = c.index + 1  # after its summary and what came with it, before the next turn
        while (
            after < len(out)
            and out[after].role == "user"
            and (out[after].is_meta or out[after].is_compact_summary)
        ):
            after += 1
        # no usage: the responses they hold were reported where they first came
        kept = [
            replace(m, replaces=(m,), usage=None) for m in main[head : tail + 1] if not m.is_compact_boundary
        ]
        out[after:after] = kept
    position = {id(m): i for i, m in enumerate(out)}
    return out, [replace(c, index=position[id(b)]) for c, b in zip(compactions, boundaries, strict=True)]


def _microcompaction(record: dict[str, Any], index: int) -> Compaction:
    meta = as_dict(record.get("microcompactMetadata"))
    ids = tuple(i for i in meta.get("compactedToolIds") or () if isinstance(i, str))
    return Compaction(
        index,
        as_str(meta.get("trigger")) or None,
        count(meta.get("preTokens")),
        None,
        kind="microcompact",
        cleared=ids,
        tokens_saved=count(meta.get("tokensSaved")),
    )


def _touch(result: dict[str, Any]) -> FileTouch | None:
    """What a file tool's `toolUseResult` says of its file: the whole text after an
    Edit (its `originalFile` with the edit made) or a Write, or the share a Read showed."""
    path = result.get("filePath")
    original = result.get("originalFile")
    if isinstance(path, str) and isinstance(original, str):
        old, new = result.get("oldString"), result.get("newString")
        if isinstance(old, str) and isinstance(new, str) and old:
            original = (
                original.replace(old, new)
                if result.get("replaceAll") is True
                else original.replace(old, new, 1)
            )
        return FileTouch(path, original)
    if (
        isinstance(path, str)
        and result.get("type") in ("create", "update")
        and isinstance(result.get("content"), str)
    ):
        return FileTouch(path, result["content"])
    file = as_dict(result.get("file"))
    shown, total = count(file.get("numLines")), count(file.get("totalLines"))
    if isinstance(file.get("filePath"), str) and shown and total and shown < total:
        return FileTouch(file["filePath"], None, shown / total)
    return None


def load(records: Records, path: str | None) -> Session:
    main: list[Message] = []
    side: list[Message] = []
    skipped = Skipped()
    ids = SyntheticIds()
    metadata: dict[str, Any] = {}
    wanted = [("sessionId", "session_id"), ("cwd", "cwd"), ("version", "version")]
    # A streamed reply repeats its usage on every line: parse it once per response.
    usages: dict[Any, Usage | None] = {}
    compactions: list[Compaction] = []
    touches: dict[str, FileTouch] = {}
    # each uuid once: a line's parentUuid is the same text as an earlier line's uuid, and
    # a streamed reply's lines repeat its id and requestId (100 MB: 15 MB of copies)
    uuids: dict[str, str] = {}
    previous: Message | None = None
    first_parent: str | None = None  # of the first line that names one: a slice's points outside the file
    chained = False
    noted = False  # an automatic compaction's note may still say it was idle
    hooked: int | None = None  # the compaction whose SessionStart hooks may still run
    for number, record in iter_dicts(records):
        kind = record.get("type")
        if kind == "assistant":
            noted, hooked = False, None
        elif noted and _says_idle(record):  # the note after an automatic boundary, before its response
            compactions[-1] = replace(compactions[-1], trigger="idle")
            noted = False
        if hooked is not None:  # a SessionStart hook on it: said unless a line records its output
            hooked = _hooked(compactions, hooked, record)
        if isinstance(record.get("uuid"), str):
            uuids.setdefault(record["uuid"], record["uuid"])
        if not chained and "parentUuid" in record:
            chained = True
            first_parent = _opt_str(record.get("parentUuid"))
        if wanted:  # until each is found
            _take(record, wanted, metadata)
        if kind == "summary":
            if isinstance(record.get("summary"), str):
                metadata["title"] = record["summary"]
            skipped.add("summary")
            continue
        if kind == "system" and record.get("subtype") in ("compact_boundary", "microcompact_boundary"):
            micro = record["subtype"] == "microcompact_boundary"
            compactions.append((_microcompaction if micro else _compaction)(record, len(main)))
            noted = not micro and compactions[-1].trigger == "auto"
            hooked = None if micro else len(compactions) - 1
            main.append(_boundary(record, number, micro))
            continue
        if kind == "attachment":
            attachment = _attachment(record, number)
            if attachment is None:
                skipped.add("unsent attachment")
            else:
                (side if attachment.is_sidechain else main).append(attachment)
            continue
        if kind not in ("user", "assistant"):
            subtype = record.get("subtype")
            skipped.add(f"{kind}/{subtype}" if kind == "system" and subtype else str(kind))
            continue
        body = record.get("message")
        if not isinstance(body, dict):
            skipped.add(f"{kind} (no message)")
            continue
        role: Role = "assistant" if kind == "assistant" else "user"
        model = body.get("model")
        if role == "assistant" and isinstance(model, str) and model != SYNTHETIC:
            metadata["model"] = model
        message = _message(record, body, role, number, previous, ids, uuids, usages)
        (side if message.is_sidechain else main).append(message)
        previous = message
        result = record.get("toolUseResult")
        if role == "user" and isinstance(result, dict) and not message.is_sidechain:
            ids_ = message.tool_result_ids()
            touch = _touch(result) if ids_ else None
            if touch is not None:
                touches[ids_[0]] = touch
    if first_parent is not None and first_parent not in uuids:
        metadata["slice"] = True
    diagnostics = (*records.diagnostics, *skipped.diagnostics())
    return _session(main, side, compactions, usages, Session(messages=(), format=FORMAT, path=path,
                    metadata=metadata, diagnostics=diagnostics, touches=touches))  # fmt: skip


def _take(record: dict[str, Any], wanted: list[tuple[str, str]], metadata: dict[str, Any]) -> None:
    """The session's metadata the line holds (`wanted`: its key, the name kept under),
    each taken from the first line that holds it."""
    for key, name in list(wanted):
        if isinstance(record.get(key), str):
            metadata[name] = record[key]
            wanted.remove((key, name))


def _message(
    record: dict[str, Any],
    body: dict[str, Any],
    role: Role,
    number: int,
    previous: Message | None,
    ids: SyntheticIds,
    uuids: dict[str, str],
    usages: dict[Any, Usage | None],
) -> Message:
    """A user or assistant line as a message. A streamed reply's lines share the id and
    request id of the line before (`previous`), kept once; a parent is the text of the
    uuid it names (`uuids`); its usage is parsed once per response (`usages`)."""
    # a line Claude Code writes itself ("No response requested."): no API response
    synthetic = body.get("model") == SYNTHETIC
    parent, request = _opt_str(record.get("parentUuid")), _opt_str(record.get("requestId"))
    message_id = (_opt_str(body.get("id")) or ids.next()) if role == "assistant" else None
    if previous is not None:
        message_id = previous.id if message_id == previous.id else message_id
        request = previous.request_id if request == previous.request_id else request
    return Message(
        role=role,
        blocks=parse_content(body.get("content")),
        id=message_id,
        line=number,
        uuid=_opt_str(record.get("uuid")),
        parent_uuid=uuids.get(parent, parent) if parent is not None else None,
        request_id=request,
        timestamp=_opt_str(record.get("timestamp")),
        is_meta=record.get("isMeta") is True,
        is_sidechain=record.get("isSidechain") is True,
        is_compact_summary=record.get("isCompactSummary") is True,
        usage=_usage(body, usages) if role == "assistant" and not synthetic else None,
        plan=_opt_str(record.get("planContent")) if role == "user" else None,
    )


def _boundary(record: dict[str, Any], number: int, micro: bool) -> Message:
    """The system message a compaction's boundary line is read as (named once what
    followed it is read: `name_compactions`)."""
    return Message(
        role="system",
        blocks=(Block("text", text="microcompaction" if micro else "compaction"),),
        line=number,
        uuid=_opt_str(record.get("uuid")),
        timestamp=_opt_str(record.get("timestamp")),
        is_compact_boundary=not micro,
        is_microcompact=micro,
    )


def _session(
    main: list[Message],
    side: list[Message],
    compactions: list[Compaction],
    usages: dict[Any, Usage | None],
    read: Session,
) -> Session:
    """The session the lines read make (`read`: all else it holds): a sub-agent's own
    transcript made the main chain, the messages relinked, each compaction named, each
    response's usage on its last line."""
    if side and not any(m.role == "assistant" for m in main):
        # every reply is a sub-agent's: this file is a sub-agent's own transcript
        (main, compactions), side = _as_main(main, side, compactions), []
    main, compactions = _relinked(main, compactions)
    name_compactions(main, compactions)
    _final_usage(main, usages)
    _final_usage(side, usages)
    return replace(read, messages=tuple(main), sidechain=tuple(side), compactions=tuple(compactions))


def _as_main(
    main: list[Message], side: list[Message], compactions: list[Compaction]
) -> tuple[list[Message], list[Compaction]]:
    """A sub-agent's own transcript: all its lines, in the file's order, as the main
    chain, its compactions moved with their boundaries."""
    boundaries = [main[c.index] for c in compactions]
    merged = sorted([*main, *side], key=lambda m: m.line or 0)
    position = {id(m): i for i, m in enumerate(merged)}
    return merged, [replace(c, index=position[id(b)]) for c, b in zip(compactions, boundaries, strict=True)]


def appended(session: Session, records: Records) -> Session:
    """`session` grown by the lines `records` holds, written after those it was read from
    (follow mode): their compactions placed after its messages, and what only the whole
    file can say (whether it starts inside a longer session) left as the session said it."""
    fresh = load(records, session.path)
    offset = len(session.messages)
    added = {k: v for k, v in fresh.metadata.items() if k not in session.metadata and k != "slice"}
    return replace(
        session,
        messages=session.messages + fresh.messages,
        sidechain=session.sidechain + fresh.sidechain,
        metadata={**session.metadata, **added},
        diagnostics=session.diagnostics + fresh.diagnostics,
        compactions=session.compactions
        + tuple(replace(c, index=c.index + offset) for c in fresh.compactions),
        touches={**session.touches, **fresh.touches},
        content_hash=None,  # no longer the bytes of a file read whole: nothing to cache by
    )


# The fields of an attachment that hold what the model is shown, by attachment type;
# other types show every text field they carry.
_ATTACHMENT_TEXT = {
    "file": ("content",),
    "plan_file_reference": ("planContent",),
    "hook_success": ("content",),
    "hook_additional_context": ("content",),
    "queued_command": ("prompt",),
    "deferred_tools_delta": ("addedLines",),
    "agent_listing_delta": ("addedLines",),
    "mcp_instructions_delta": ("addedBlocks",),
}
_ATTACHMENT_SKIP = frozenset(
    {"type", "timestamp", "toolUseID", "hookName", "hookEvent", "durationMs", "exitCode"}
)


# Hook output reaches the model only from these events (other hooks' success is logged)
_HOOKS_SENT = frozenset({"SessionStart", "UserPromptSubmit"})


def _compact_hook(record: dict[str, Any]) -> str | None:
    """A `SessionStart` hook run for a compaction (`hookName` "SessionStart:compact", a
    `hook_progress` line), in words: its output goes to the model after the compaction."""
    data = as_dict(record.get("data"))
    if record.get("type") != "progress" or data.get("type") != "hook_progress":
        return None
    if data.get("hookEvent") != "SessionStart" or not as_str(data.get("hookName")).endswith(":compact"):
        return None
    command = as_str(data.get("command"))
    return f"the SessionStart hook {command!r} ran on it" if command else "a SessionStart hook ran on it"


def _hooked(compactions: list[Compaction], at: int, record: dict[str, Any]) -> int | None:
    """The compaction `at` after `record`: a SessionStart hook that ran on it is said
    (`Compaction.unrecorded`), an attachment line with that hook's output takes it back,
    as the output is then read (None: nothing more to look for)."""
    body = as_dict(record.get("attachment"))
    if record.get("type") == "attachment" and as_str(body.get("hookEvent")) == "SessionStart":
        compactions[at] = replace(compactions[at], unrecorded=())
        return None
    said = _compact_hook(record)
    if said is not None:
        compactions[at] = replace(compactions[at], unrecorded=(*compactions[at].unrecorded, said))
    return at


def _attachment(record: dict[str, Any], number: int) -> Message | None:
    """An `attachment` line as the meta message the model was sent; None for one it
    was not sent (an empty text, another hook's success)."""
    body = as_dict(record.get("attachment"))
    kind = as_str(body.get("type")) or "attachment"
    if kind == "hook_success" and as_str(body.get("hookEvent")) not in _HOOKS_SENT:
        return None
    fields = _ATTACHMENT_TEXT.get(kind) or tuple(k for k in body if k not in _ATTACHMENT_SKIP)
    parts = [text for key in fields if (text := _flatten(body.get(key)))]
    if not parts:
        return None
    return Message(
        role="user",
        blocks=(Block("text", text="\n".join(parts)),),
        line=number,
        uuid=_opt_str(record.get("uuid")),
        parent_uuid=_opt_str(record.get("parentUuid")),
        timestamp=_opt_str(record.get("timestamp")),
        is_meta=True,
        is_sidechain=record.get("isSidechain") is True,
        attachment=kind,
    )


def _flatten(value: Any) -> str:
    """The text inside an attachment field: strings as they are, lists and mappings
    (a read file's `{file: {content}}`, hook output lists) by their text values."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for item in value if (text := _flatten(item)))
    if isinstance(value, dict):
        inner = value.get("file", value)
        if isinstance(inner, dict) and isinstance(inner.get("content"), str):
            return str(inner["content"])
        return "\n".join(text for item in value.values() if (text := _flatten(item)))
    return ""


def _usage(body: dict[str, Any], seen: dict[Any, Usage | None]) -> Usage | None:
    """The usage a line reports, with the model that answered. A streamed reply's lines
    repeat it, the output as far as it had got: parsed again only when that moved."""
    key = body.get("id")
    raw = body.get("usage")
    if isinstance(key, str):
        known = seen.get(key)
        if known is not None and isinstance(raw, dict) and raw.get("output_tokens") == known.output_tokens:
            return known
    usage = parse_usage(raw)
    if usage is not None and isinstance(body.get("model"), str):
        usage = replace(usage, model=body["model"])
    if isinstance(key, str):
        seen[key] = usage
    return usage


def _final_usage(messages: list[Message], seen: dict[Any, Usage | None]) -> None:
    """Each line of a response carries the usage its last line reported: only that one
    holds the whole output."""
    for i, m in enumerate(messages):
        final = seen.get(m.id) if m.id is not None else None
        if m.usage is not None and final is not None and final is not m.usage:
            messages[i] = replace(m, usage=final)


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def write(
    messages: Sequence[Message], metadata: Mapping[str, Any], compactions: Mapping[int, Compaction]
) -> str:
    """The messages as Claude Code writes its lines, each the child of the one before;
    `compactions`: the recorded figures of the compact boundaries, by index."""
    lines = []
    parent: str | None = None
    written: set[str] = set()  # a kept message sent again after a compaction is a line of its own
    for i, m in enumerate(messages):
        line_uuid = m.uuid if m.uuid is not None and m.uuid not in written else str(uuid.uuid4())
        written.add(line_uuid)
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "sessionId": metadata.get("session_id"),
            "uuid": line_uuid,
            "timestamp": m.timestamp,
        }
        for key, name in (("version", "version"), ("cwd", "cwd")):  # its window and project depend on these
            if isinstance(metadata.get(name), str):
                record[key] = metadata[name]
        if m.is_compact_boundary:
            record.update(type="system", subtype="compact_boundary", content=m.text)
            c = compactions.get(i)
            if c is not None:
                record["compactMetadata"] = {"trigger": c.trigger, "preTokens": c.pre_tokens}
                if c.post_tokens is not None:
                    record["compactMetadata"]["postTokens"] = c.post_tokens
        else:
            body: dict[str, Any] = {
                "role": m.role,
                "content": [anthropic_block(b) for b in m.blocks],
            }
            if m.role == "assistant":
                body["id"] = m.id
                model = model_of(m, metadata)
                if model:
                    body["model"] = model
                if m.usage is not None:
                    body["usage"] = m.usage.to_dict()
                if m.request_id is not None:
                    record["requestId"] = m.request_id
            record.update(type="assistant" if m.role == "assistant" else "user", message=body)
            if m.is_meta:
                record["isMeta"] = True
            if m.is_compact_summary:
                record["isCompactSummary"] = True
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        parent = line_uuid
    return "\n".join(lines) + "\n"

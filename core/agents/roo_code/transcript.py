"""Roo Code's task folder (docs/agents.md#roo-code), read as Roo Code 3.52 keeps it
(`src/core/task-persistence/apiMessages.ts`, `packages/types/src/message.ts`,
`src/core/condense/index.ts`, `src/core/context-management/index.ts`).

Its history is never cut: a condense tags every message before it with `condenseParent`
and appends the summary (`isSummary`, `condenseId`), which alone is sent from then on (its
"fresh start"); a sliding-window truncation tags half the visible messages after the first
with `truncationParent` and inserts a marker (`isTruncationMarker`) before those it keeps.
Its panel records each one with its own before and after (`condense_context` with
`contextCondense`, `sliding_window_truncation` with `contextTruncation`), and each
request's tokens and cost (`api_req_started`).

Read here: the history in order, a boundary before each summary and each marker with the
panel's figures; after a truncation's boundary, the first message it keeps as sent. Each
reply carries the tokens of the request started last before it (both are stamped).
"""

from __future__ import annotations

import re
from typing import Any

from compaction_inspector.core.formats import task_folder
from compaction_inspector.core.formats.common import (
    Skipped,
    as_dict,
    count,
    input_holds_cache,
    name_compactions,
)
from compaction_inspector.core.formats.task_folder import (
    Event,
    Request,
    Task,
    again,
    answered,
    boundary,
    count_usd,
    message,
)
from compaction_inspector.core.model import Compaction, Message, Session, Usage

FORMAT = "roo-code"
DESCRIBED = "Roo Code task folder"
PROVIDER = "anthropic"  # its usual provider; a model the table finds elsewhere is billed there
STORAGE = "rooveterinaryinc.roo-cline"  # its folder in VS Code's global storage
CONDENSE, TRUNCATION = "condense_context", "sliding_window_truncation"
MODEL = re.compile(r"<model>([^<\n]+)</model>")  # its environment details name the model in use
WORKSPACE = "history_item.json"  # what its task list holds of the task: its folder, parent


def looks_like(task: Task) -> bool:
    """Its own fields on the history, or its own events on the panel."""
    marks = ("isSummary", "condenseParent", "truncationParent", "isTruncationMarker")
    return any(k in item for item in task.history for k in marks) or any(
        row.get("say") in (CONDENSE, TRUNCATION) for row in task.panel
    )


def load(task: Task, path: str) -> Session:
    requests = task.requests
    replies = answered(task.history, requests, by_ts=True)
    total_in = _tokens_in_total(requests)
    events = _events(task.panel)
    condensed = [float(c) for e in events[CONDENSE] if (c := count_usd(e.get("cost"))) is not None]
    skipped = Skipped()
    messages: list[Message] = []
    compactions: list[Compaction] = []
    live = 0  # where the context sent now starts
    model: str | None = None
    last: int | None = None  # the last request's tokens in and out: what it counts from
    for k, item in enumerate(task.history):
        if item.get("type") == "reasoning":
            skipped.add("reasoning item")  # kept for its provider's next request; no text of its own
            continue
        model = _model(item) or model
        if item.get("isSummary") is True or item.get("isTruncationMarker") is True:
            compactions.append(_compaction(len(messages), item, events, last))
            first = (
                messages[live] if item.get("isTruncationMarker") is True and live < len(messages) else None
            )
            messages.append(boundary(k + 1))
            live = len(messages)
            if first is not None:  # a truncation keeps the first message, sent again after it
                messages.append(again(first))
        reply = replies.get(k)
        usage = _usage(reply, total_in, model) if reply is not None else None
        last = usage.prompt_tokens + usage.output_tokens if usage is not None else last
        messages.append(message(k, item, usage, is_compact_summary=item.get("isSummary") is True))
    name_compactions(messages, compactions)
    extra = task_folder.extra(task.folder, WORKSPACE)
    metadata: dict[str, Any] = {"session_id": task.folder.name, **({"model": model} if model else {})}
    metadata |= task.recorded_usd(*condensed)  # its condenses' own calls, as its panel records them
    for key, name in (("cwd", "workspace"), ("title", "task"), ("parent", "parentTaskId")):
        if isinstance(extra.get(name), str):
            metadata[key] = extra[name]
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=(*task.diagnostics, *skipped.diagnostics()),
        compactions=tuple(compactions),
    )


def _events(panel: tuple[dict[str, Any], ...]) -> dict[str, list[dict[str, Any]]]:
    """The panel's condense and truncation records, each kind in order."""
    found: dict[str, list[dict[str, Any]]] = {CONDENSE: [], TRUNCATION: []}
    for row in panel:
        said = row.get("say")
        held = row.get("contextCondense") if said == CONDENSE else row.get("contextTruncation")
        if isinstance(said, str) and said in found and isinstance(held, dict):
            found[said].append(held)
    return found


def _compaction(
    index: int, item: dict[str, Any], events: dict[str, list[dict[str, Any]]], last: int | None
) -> Compaction:
    """The compaction a summary or a marker is, with the panel's record of it (by its id,
    else the next of its kind), and the last request's tokens in and out it counted from."""
    summary = item.get("isSummary") is True
    kind, key = (CONDENSE, "condenseId") if summary else (TRUNCATION, "truncationId")
    pending = events[kind]
    held = next((e for e in pending if e.get(key) == item.get(key) and e.get(key)), None)
    if held is None and pending and not pending[0].get(key):
        held = pending[0]
    if held is not None:
        pending.remove(held)
    record = held or {}
    pre, post = count(record.get("prevContextTokens")), count(record.get("newContextTokens"))
    if summary:
        cost = count_usd(record.get("cost"))
        words = ["condensed: its summary replaces every message before it (Roo Code's fresh start)"]
        words += [f"its panel recorded the condense's own call cost ${cost:,.2f}"] if cost is not None else []
        fields: tuple[tuple[str, Any], ...] = (("cost", cost),) if cost is not None else ()
        fields += (("last_request_tokens", last),) if last is not None else ()
        return Compaction(index, None, pre, post, details=Event("condense", tuple(words), fields))
    removed = count(record.get("messagesRemoved"))
    words = [
        "sliding-window truncation: "
        + (f"{removed:,} messages hidden" if removed is not None else "messages hidden")
        + " after the first, none summarized"
    ]
    fields = (("messages_removed", removed),) if removed is not None else ()
    fields += (("last_request_tokens", last),) if last is not None else ()
    return Compaction(index, "auto", pre, post, details=Event("truncation", tuple(words), fields))


def _tokens_in_total(requests: list[Request]) -> bool:
    """Whether its `tokensIn` holds the whole input, cache included (Roo Code since its
    change of 2025-10-31, "Fix cost and token tracking between provider styles"), or only
    what the cache did not hold (before, over Anthropic's protocol): the session shows it,
    where a request reports less input than its cache reads and writes."""
    return input_holds_cache(
        (r.tokens_in, r.cache_reads + r.cache_writes)
        for r in requests
        if r.said.get("apiProtocol") == "anthropic"
    )


def _usage(r: Request, total_in: bool, model: str | None) -> Usage:
    cached = r.cache_reads + r.cache_writes
    uncached = max(r.tokens_in - cached, 0) if total_in else r.tokens_in
    return Usage(
        input_tokens=uncached,
        cache_creation_input_tokens=r.cache_writes,
        cache_read_input_tokens=r.cache_reads,
        output_tokens=r.tokens_out,
        model=model,
    )


def _model(item: dict[str, Any]) -> str | None:
    """The model its environment details name in a user message (the last one there)."""
    if item.get("role") != "user":
        return None
    content = item.get("content")
    texts = [content] if isinstance(content, str) else [as_dict(b).get("text") for b in content or []]
    found = [m for t in texts if isinstance(t, str) for m in MODEL.findall(t)]
    return found[-1].strip() if found else None

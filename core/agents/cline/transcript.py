"""Cline's task folder (docs/agents.md#cline), read as Cline up to 3.85 keeps it
(`src/core/task/message-state.ts`, `src/core/context/context-management/ContextManager.ts`,
`src/shared/ExtensionMessage.ts`, `src/shared/messages/content.ts`).

Its history is never cut: what it leaves out of a request is one range of it,
`conversationHistoryDeletedRange` (inclusive, from index 2: the first user message and the
reply to it are always sent). Every row its panel adds records that range as it stood
then, and the index of the history's last message (`conversationHistoryIndex`). A
request's row (`api_req_started`) is added before its context is managed, so a range that
grew shows on the rows after the request that grew it.

Read here: the history in order; where the range grows, a boundary before the message
the first row that shows it recorded last, then what was sent again of the history before
it (the first pair and whatever the range kept), then the rest. The range grows by a
summary (the model called `summarize_task`, its auto-condense, or `condense`, which
`/smol` asks for) or a truncation (half or three quarters of what is left dropped); the
two messages of a summary's own exchange, left out a request later, end that summary. Each
reply carries the tokens of the request recorded last before it; where a reply records
its own `metrics`, those.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from compaction_inspector.core.formats.common import as_dict, as_list, count, name_compactions
from compaction_inspector.core.formats.task_folder import (
    Event,
    Request,
    Task,
    again,
    answered,
    boundary,
    message,
)
from compaction_inspector.core.model import Compaction, Message, Session, Usage

FORMAT = "cline"
DESCRIBED = "Cline task folder"
PROVIDER = "anthropic"  # its usual provider; a model the table finds elsewhere is billed there
STORAGE = "saoudrizwan.claude-dev"  # its folder in VS Code's global storage
# the tools whose call is a summary: its auto-condense's, and the one `/smol` asks the model
# to call (`src/core/task/tools/handlers/SummarizeTaskHandler.ts`, `CondenseHandler.ts`), with
# the trigger each is
SUMMARIES = {"summarize_task": "auto", "condense": "manual"}
KEPT = 2  # the first user message and the reply to it, always sent
LAYOUT = "task folder"  # the session's `layout`: Cline 3 wrote it
CWD = re.compile(r"# Current Working Directory \(([^)\n]+)\) Files")  # its environment details


def looks_like(task: Task) -> bool:
    """Its own fields on the panel's rows or the history's items."""
    return any("conversationHistoryDeletedRange" in r or "modelInfo" in r for r in task.panel) or any(
        "metrics" in item or "modelInfo" in item for item in task.history
    )


Range = tuple[int, int]


def load(task: Task, path: str) -> Session:
    requests = task.requests
    replies = answered(task.history, requests, by_ts=False)
    history = task.history
    grown = _grown(task.panel, history)  # the history index each growth takes effect before, with its range
    messages: list[Message] = []
    own: list[Message] = []  # the history's messages, by their index in it
    compactions: list[Compaction] = []
    last_total: int | None = None  # what the request before counted, as Cline counts it
    model = _model(task)
    for k in range(len(history) + 1):
        if k in grown:
            was, now = grown[k]
            compaction = _compaction(len(messages), history[now[1] + 1 : k + 1], was, now, last_total)
            call = replies.pop(k, None) if k < len(history) and _summary(history[k]) else None
            if call is not None:  # its request was the compaction's own: priced as its call
                compaction = dataclasses.replace(compaction, call=_usage(history[k], call, model))
            compactions.append(compaction)
            messages.append(boundary(k + 1))
            # sent again: the first pair, and what the range kept before this request
            sent = [*range(min(now[0], KEPT)), *range(now[1] + 1, k)]
            messages += [again(own[i]) for i in sent]
        if k == len(history):
            break
        item = history[k]
        reply = replies.get(k)
        usage = _usage(item, reply, model)
        if reply is not None:
            last_total = reply.tokens_in + reply.tokens_out + reply.cache_writes + reply.cache_reads
        own.append(message(k, item, usage))
        messages.append(own[-1])
    name_compactions(messages, compactions)
    metadata: dict[str, Any] = {"session_id": task.folder.name, **({"model": model} if model else {})}
    metadata["layout"] = LAYOUT
    metadata |= task.recorded_usd()
    cwd = _cwd(history)
    metadata |= {"cwd": cwd} if cwd else {}
    first = next((r for r in task.panel if r.get("say") == "task" and isinstance(r.get("text"), str)), None)
    if first is not None:
        metadata["title"] = first["text"][:200]
    return Session(
        messages=tuple(messages),
        format=FORMAT,
        path=path,
        metadata=metadata,
        diagnostics=task.diagnostics,
        compactions=tuple(compactions),
    )


def _range(row: dict[str, Any]) -> Range | None:
    held = as_list(row.get("conversationHistoryDeletedRange"))
    ends = [count(v) for v in held]
    return (ends[0], ends[1]) if len(ends) == 2 and ends[0] is not None and ends[1] is not None else None


def _grown(
    panel: tuple[dict[str, Any], ...], history: tuple[dict[str, Any], ...]
) -> dict[int, tuple[Range | None, Range]]:
    """Where each growth of the range takes effect, by the history's index it goes before,
    with the range before and after: at the request that first sent without what it hides.
    That is the user message the first row showing it recorded last (the request it grew
    for sent that one), or the next after what it hides: a reply kept after it was
    written for the request before, and is sent again after the boundary. A summary's
    boundary goes before the model's call of a summarizing tool: its request was the
    compaction's own, and the call is the first message sent after it."""
    found: dict[int, tuple[Range | None, Range]] = {}
    before: Range | None = None
    for row in panel:
        now, index = _range(row), count(row.get("conversationHistoryIndex"))
        if now is None or index is None or (before is not None and now[1] <= before[1]):
            continue  # the same range (or a rewind's smaller one): nothing more left out
        was, before = before, now
        if was is not None and _finishes(history, was, now):
            continue
        k = max(index, now[1] + 1)
        while k < len(history) and history[k].get("role") == "assistant" and not _summary(history[k]):
            k += 1
        found.setdefault(k, (was, now))
    return found


def _finishes(history: tuple[dict[str, Any], ...], was: Range, now: Range) -> bool:
    """The range grew by just the exchange that carried a summary (the model's call and
    its result), as Cline 3 leaves it out once the task has gone on from it
    (`currentlySummarizing`): the end of that summary, not a compaction of its own."""
    start = was[1] + 1
    return (
        now[0] == was[0]
        and now[1] == was[1] + 2
        and start < len(history)
        and _summary(history[start]) is not None
    )


def _compaction(
    index: int, kept: tuple[dict[str, Any], ...], was: Range | None, now: Range, counted: int | None
) -> Compaction:
    """A growth of the range: a summary where a message it leaves sent up to the request
    (`kept`) is the model's call of a summarizing tool, else a truncation."""
    tool = next((t for item in kept if (t := _summary(item)) is not None), None)
    hidden = now[1] - (was[1] if was is not None else now[0] - 1)
    fields = (("deleted_range", list(now)), ("messages_hidden", hidden))
    if tool is not None:
        words = [f"summarized: the model's {tool} call stands for the {hidden:,} messages it hides"]
        return Compaction(index, SUMMARIES[tool], counted, details=Event("condense", tuple(words), fields))
    words = [f"truncated: {hidden:,} more messages left out after the first pair, none summarized"]
    return Compaction(index, "auto", counted, details=Event("truncation", tuple(words), fields))


def _summary(item: dict[str, Any]) -> str | None:
    """The summarizing tool the model's reply calls (None: none)."""
    if item.get("role") != "assistant":
        return None
    names = [
        as_dict(b).get("name") for b in as_list(item.get("content")) if as_dict(b).get("type") == "tool_use"
    ]
    return next((n for n in names if isinstance(n, str) and n in SUMMARIES), None)


def _usage(item: dict[str, Any], reply: Request | None, model: str | None) -> Usage | None:
    """The request's tokens as its panel row wrote them (what is not cached, then the
    cache's writes and reads), else the reply's own `metrics` (the whole prompt, of it
    what the cache held)."""
    named = _named(item) or model
    if reply is not None:
        return Usage(reply.tokens_in, reply.cache_writes, reply.cache_reads, reply.tokens_out, model=named)
    tokens = as_dict(as_dict(item.get("metrics")).get("tokens"))
    prompt = count(tokens.get("prompt"))
    if item.get("role") != "assistant" or prompt is None:
        return None
    cached = min(count(tokens.get("cached")) or 0, prompt)
    return Usage(prompt - cached, 0, cached, count(tokens.get("completion")) or 0, model=named)


def _cwd(history: tuple[dict[str, Any], ...]) -> str | None:
    """The folder its environment details name, where they name one path (a workspace of
    several names its primary folder only by name)."""
    for item in history:
        content = item.get("content")
        texts = [content] if isinstance(content, str) else [as_dict(b).get("text") for b in as_list(content)]
        for text in texts:
            found = CWD.search(text) if isinstance(text, str) else None
            if found and not found.group(1).startswith("Primary: "):
                return found.group(1)
    return None


def _named(item: dict[str, Any]) -> str | None:
    model = as_dict(item.get("modelInfo")).get("modelId")
    return model if isinstance(model, str) and model else None


def _model(task: Task) -> str | None:
    """The model its rows last name."""
    for row in reversed((*task.history, *task.panel)):
        found = _named(row)
        if found:
            return found
    return None

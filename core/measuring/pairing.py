"""Tool-use / tool-result pairing (docs/strategies.md): check a request, or repair it the way
Claude Code's ensureToolResultPairing does.

The check works on API turns: consecutive assistant messages with one id are one
response, consecutive user (and tool) messages are one user turn, exactly as they are
merged before sending. System messages (compact boundaries) are not sent and are ignored.
Parallel tool calls are written one line per call, each result as it comes back, so a
response's lines can have results between them: Claude Code merges them into one
assistant message before sending (`normalizeMessagesForAPI`), the results after it, and
so does `sent_order`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count
from operator import is_not
from typing import Literal, NamedTuple

from compaction_inspector.core.model import Block, Message, immutable

ORPHAN_TEXT = "[Orphaned tool result removed due to conversation resume]"
MISSING_RESULT_TEXT = "[Tool result missing due to internal error]"
INTERRUPTED_TEXT = "[Tool use interrupted]"

ProblemKind = Literal[
    "first_not_user", "missing_result", "orphan_result", "duplicate_tool_use", "duplicate_result"
]


@immutable(slots=True)
class PairingProblem:
    kind: ProblemKind
    index: int
    tool_use_id: str | None
    message: str

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "index": self.index,
            "tool_use_id": self.tool_use_id,
            "message": self.message,
        }


class Turn(NamedTuple):
    """Messages sent as one API message (a named tuple: a long session has tens of
    thousands)."""

    side: Literal["user", "assistant"]
    indices: tuple[int, ...]


def sent_order(messages: Sequence[Message]) -> list[int] | None:
    """The order the messages are sent in, when it is not theirs (None): an assistant
    message with the id of the response before, with only tool results (or unsent
    system lines) between, joins that response, and the results come after it."""
    if not _interleaved(messages):
        return None
    order: list[int] = []
    response: list[int] = []  # the open response's messages
    held: list[int] = []  # the results (and system lines) since it
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if not (response and m.id is not None and m.id == messages[response[-1]].id):
                order += response + held
                response, held = [], []
            response.append(i)
        elif response and (m.role == "system" or m.is_tool_result):
            held.append(i)
        else:
            order += [*response, *held, i]
            response, held = [], []
    return order + response + held


def _interleaved(messages: Sequence[Message]) -> bool:
    """Whether a response's lines have tool results between them (most sessions: no)."""
    last_id: str | None = None  # of the last assistant message, while only results follow it
    between = False
    for m in messages:
        role = m.role
        if role == "assistant":
            if between and m.id is not None and m.id == last_id:
                return True
            last_id, between = m.id, False
        elif role != "system":
            if m.is_tool_result:
                between = True
            else:
                last_id = None
    return False


def api_turns(messages: Sequence[Message]) -> list[Turn]:
    turns: list[Turn] = []
    side: Literal["user", "assistant"] = "user"
    indices: list[int] = []
    last_id: str | None = None
    for i, m in enumerate(messages):
        role = m.role
        if role == "system":
            continue
        if role == "assistant":
            if not (indices and side == "assistant" and m.id == last_id):
                if indices:
                    turns.append(Turn(side, tuple(indices)))
                side, indices = "assistant", []
            last_id = m.id
        elif not (indices and side == "user"):
            if indices:
                turns.append(Turn(side, tuple(indices)))
            side, indices = "user", []
        indices.append(i)
    if indices:
        turns.append(Turn(side, tuple(indices)))
    return turns


def check(messages: Sequence[Message]) -> list[PairingProblem]:
    """Every way `messages` would be an invalid request; empty when it is valid.

    One pass that keeps only the open turn and the assistant turn before it: a long
    session is checked before every replay and after every strategy, and making its
    turns (`api_turns`) costs more than the check itself. Problems come turn by turn,
    as `repair` meets them. A turn that pairs as usual is passed in line; `_closed`
    finds what is wrong with any other."""
    problems: list[PairingProblem] = []
    seen_uses: set[str] = set()
    waiting: dict[str, int] = {}  # the previous assistant turn's calls: id -> first index

    side = ""  # of the open turn; none is open before the first message sent
    tools: list[tuple[int, str]] = []  # its calls or results
    last_id: str | None = None
    order = sent_order(messages)
    for i, m in enumerate(messages) if order is None else ((i, messages[i]) for i in order):
        role = m.role
        if role == "assistant":
            if side != "assistant" or m.id != last_id:
                if not side:
                    problems.append(
                        PairingProblem("first_not_user", i, None, "the first message is not a user message")
                    )
                elif tools or waiting:
                    # the usual user turn: each waiting call answered once, and nothing else
                    usual = side == "user" and len(tools) == len(waiting)
                    if usual and {t for _, t in tools} == waiting.keys():
                        waiting = {}
                    else:
                        waiting = _closed(side, tools, waiting, seen_uses, problems)
                side, tools = "assistant", []
            last_id = m.id
            for b in m.blocks:
                if b.type == "tool_use" and b.id is not None:
                    tools.append((i, b.id))
        elif role != "system":
            if side != "user":
                if tools or waiting:
                    # the open turn is an assistant's (one is open once anything holds
                    # tools); the usual one: new calls, each made once, after all were answered
                    calls = {t: k for k, t in tools}
                    if not waiting and len(calls) == len(tools) and seen_uses.isdisjoint(calls):
                        seen_uses.update(calls)
                        waiting = calls
                    else:
                        waiting = _closed(side, tools, waiting, seen_uses, problems)
                side, tools = "user", []
            for b in m.blocks:
                if b.type == "tool_result" and b.tool_use_id is not None:
                    tools.append((i, b.tool_use_id))
    if tools or waiting:
        waiting = _closed(side, tools, waiting, seen_uses, problems)
    if waiting:  # the last turn was an assistant's: nothing follows to answer it
        waiting = _closed("user", [], waiting, seen_uses, problems)
    return problems


def joins_cleanly(front: Sequence[Message], messages: Sequence[Message], start: int, end: int) -> bool:
    """Whether `front` (user messages) then messages[start:end] needs no pairing repair,
    where messages[:end] needs none and is sent in its own order (a summary put before a
    kept tail). Only the user turn `front` opens can pair otherwise: from the next
    assistant turn on, checking the two lists is in the same state (waiting on nothing,
    that turn's calls open), so the rest is checked only up to that turn's first message."""
    n = start
    while n < end and messages[n].role != "assistant":
        n += 1
    before = n - 1
    while before >= 0 and messages[before].role == "system":
        before -= 1
    # no turn opens in both (or it goes on with a response whose first lines are cut)
    if n == end or (
        before >= 0 and messages[before].role == "assistant" and messages[before].id == messages[n].id
    ):
        return not fixable(check([*front, *messages[start:end]]))
    window = [*front, *messages[start : n + 1]]
    # the calls of its last message find their results after it
    return not any(p.index < len(window) - 1 for p in fixable(check(window)))


def fixable(problems: list[PairingProblem]) -> list[PairingProblem]:
    """What a repair mends: a request that opens with another role is sent as it is."""
    return [p for p in problems if p.kind != "first_not_user"]


def _closed(
    side: str,
    tools: list[tuple[int, str]],
    waiting: dict[str, int],
    seen_uses: set[str],
    problems: list[PairingProblem],
) -> dict[str, int]:
    """A turn of `side` that does not pair as usual, closed: its problems added, and the
    calls now waiting for results. `tools`: its calls or results (index, id); `waiting`:
    the calls the turn before left; `seen_uses`: every call id so far."""
    answered = {tid for _, tid in tools} if side == "user" else set()
    problems.extend(
        PairingProblem("missing_result", i, tid, f"tool_use {tid} has no tool_result after it")
        for tid, i in waiting.items()
        if tid not in answered
    )
    if side == "assistant":
        calls: dict[str, int] = {}
        for i, tid in tools:
            if tid in seen_uses:
                problems.append(PairingProblem("duplicate_tool_use", i, tid, f"tool_use {tid} is repeated"))
            seen_uses.add(tid)
            calls.setdefault(tid, i)
        return calls
    answered_here: set[str] = set()
    for i, tid in tools:
        if tid not in waiting:
            problems.append(
                PairingProblem("orphan_result", i, tid, f"tool_result {tid} has no tool_use before it")
            )
        elif tid in answered_here:
            problems.append(
                PairingProblem("duplicate_result", i, tid, f"tool_use {tid} has more than one result")
            )
        answered_here.add(tid)
    return {}


def last_assistant_turn(messages: Sequence[Message]) -> int:
    """Where the last assistant turn starts; len(messages) if there is none. Found from
    the end: a session cut off mid-tool has its unanswered calls there."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None)
    return len(messages) if last is None else _turn_edge(messages, last, -1)


def _turn_edge(messages: Sequence[Message], i: int, step: int) -> int:
    """The first (`step` -1) or last (`step` 1) message of assistant message i's turn,
    found by walking from it: a few messages, where `api_turns` reads them all."""
    edge, j = i, i + step
    while 0 <= j < len(messages):
        m = messages[j]
        if m.role != "system":
            if m.role != "assistant" or m.id != messages[i].id:
                break
            edge = j
        j += step
    return edge


def missing_results(tool_use_ids: Sequence[str]) -> Message:
    """The message repair adds after calls that nothing answers."""
    return Message(role="user", blocks=_missing_blocks(tool_use_ids), is_meta=True, is_synthetic=True)


def _missing_blocks(tool_use_ids: Sequence[str]) -> tuple[Block, ...]:
    return tuple(Block.tool_result(tid, MISSING_RESULT_TEXT, is_error=True) for tid in tool_use_ids)


def _answering(turns: Sequence[Turn], t: int) -> Turn | None:
    """The user turn right after turn `t`, which answers its calls, if there is one."""
    following = turns[t + 1] if t + 1 < len(turns) else None
    return following if following is not None and following.side == "user" else None


def repair(messages: Sequence[Message], problems: Sequence[PairingProblem] | None = None) -> list[Message]:
    """A valid request made from `messages` by Claude Code's repair rules. Unchanged
    messages are passed through as the same objects; edited ones remember their source.
    `problems`, if the caller has them, are `check(messages)`: when every problem is a
    call without a result, only those calls' turns are touched instead of walking the
    whole request."""
    return repair_indexed(messages, problems)[0]


def repair_indexed(
    messages: Sequence[Message], problems: Sequence[PairingProblem] | None = None
) -> tuple[list[Message], list[int]]:
    """`repair`, and where each prefix ends in what it made: [k] is how many of the
    repaired messages come of messages[:k] (a message dropped adds none; the results
    added after a turn count with its last message)."""
    order = sent_order(messages)
    if order is not None:
        return _repaired_as_sent(messages, order)
    if problems is not None and all(p.kind in ("missing_result", "first_not_user") for p in problems):
        return _add_missing_results(messages, [p for p in problems if p.kind == "missing_result"])
    turns = api_turns(messages)
    edits: dict[int, list[Block]] = {}  # only the messages whose blocks change

    def blocks(i: int) -> Sequence[Block]:
        return edits[i] if i in edits else messages[i].blocks

    _drop_repeated_calls(messages, turns, edits)

    def uses_of(turn: Turn) -> list[str]:
        return [b.id for i in turn.indices for b in blocks(i) if b.type == "tool_use" and b.id is not None]

    inserted_after: dict[int, list[Message]] = {}
    for t, turn in enumerate(turns):
        if turn.side == "user":
            before = turns[t - 1] if t > 0 else None
            calls = set(uses_of(before)) if before is not None and before.side == "assistant" else set()
            answered: set[str] = set()
            for i in turn.indices:
                current = blocks(i)
                kept = []
                for b in current:
                    if b.type == "tool_result":
                        if b.tool_use_id not in calls or b.tool_use_id in answered:
                            continue
                        answered.add(b.tool_use_id)
                    kept.append(b)
                if len(kept) != len(current):
                    edits[i] = kept
        else:
            following = _answering(turns, t)
            answered_ids = (
                {b.tool_use_id for i in following.indices for b in blocks(i) if b.type == "tool_result"}
                if following is not None
                else set()
            )
            missing = [tid for tid in uses_of(turn) if tid not in answered_ids]
            if not missing:
                continue
            if following is not None:
                first = following.indices[0]
                edits[first] = [*_missing_blocks(missing), *blocks(first)]
            else:
                inserted_after.setdefault(turn.indices[-1], []).append(missing_results(missing))
    return _edited(messages, edits, inserted_after)


def _repaired_as_sent(messages: Sequence[Message], order: list[int]) -> tuple[list[Message], list[int]]:
    """`repair_indexed` of messages the agent sent in `order`: repaired as sent, a prefix
    ending where every message before it is sent."""
    sent, sent_ends = repair_indexed([messages[i] for i in order])
    prefix_ends, p, highest = [0], 0, -1
    for k in range(1, len(messages) + 1):
        while p < len(order) and max(highest, order[p]) < k:
            highest = max(highest, order[p])
            p += 1
        prefix_ends.append(sent_ends[p])
    return sent, prefix_ends


def _drop_repeated_calls(
    messages: Sequence[Message], turns: Sequence[Turn], edits: dict[int, list[Block]]
) -> None:
    """A tool call made again under an id already used is left out (`edits`: by message)."""
    seen_uses: set[str] = set()
    for turn in turns:
        if turn.side != "assistant":
            continue
        for i in turn.indices:
            kept = []
            for b in messages[i].blocks:
                if b.type == "tool_use" and b.id is not None:
                    if b.id in seen_uses:
                        continue
                    seen_uses.add(b.id)
                kept.append(b)
            if len(kept) != len(messages[i].blocks):
                edits[i] = kept


def _edited(
    messages: Sequence[Message], edits: dict[int, list[Block]], inserted_after: dict[int, list[Message]]
) -> tuple[list[Message], list[int]]:
    """The messages with their `edits` made and the results `inserted_after` them, and
    where each prefix ends in them. A message left empty stays as a note where the
    request needs it (an assistant's turn, the first message) and goes otherwise."""
    out: list[Message] = []
    ends = [0]
    for i, m in enumerate(messages):
        new_blocks = tuple(edits[i]) if i in edits else m.blocks
        if new_blocks is m.blocks or new_blocks == m.blocks:
            out.append(m)
        elif new_blocks:
            out.append(m.with_blocks(new_blocks))
        elif m.role == "assistant":
            out.append(m.with_blocks((Block("text", text=INTERRUPTED_TEXT),)))
        elif not out:
            out.append(m.with_blocks((Block("text", text=ORPHAN_TEXT),)))
        if i in inserted_after:
            out.extend(inserted_after[i])
        ends.append(len(out))
    return out, ends


@immutable(eq=False, slots=True)
class Repairs:
    """A request's check and repair, for the requests that pair alike with it
    (`repaired_like`): a session's request, which every strategy's run on it ends by
    checking and repairing, and most runs change only the text of a few of its messages.
    Made only where repair adds results and nothing else (`repairs_of`)."""

    source: tuple[Message, ...]
    problems: list[PairingProblem]
    repaired: list[Message]
    at: list[int]  # [i]: where source[i] stands in `repaired`
    edited: tuple[int, ...]  # the source messages repair gave results to
    added: tuple[int, ...]  # where the messages of results it added after a turn stand


def repairs_of(messages: tuple[Message, ...]) -> Repairs | None:
    """`messages`' `Repairs`, where it is sent in its own order and its only problems are
    calls nothing answers (or a first message that is not a user's); else None."""
    problems = check(messages)
    if any(p.kind not in ("missing_result", "first_not_user") for p in problems):
        return None
    if sent_order(messages) is not None:
        return None
    repaired, ends = _add_missing_results(messages, [p for p in problems if p.kind == "missing_result"])
    at = ends[:-1]  # nothing is dropped: the messages before source[i] become ends[i]
    edited = tuple(i for i, m in enumerate(messages) if repaired[at[i]] is not m)
    placed = set(at)
    added = tuple(j for j in range(len(repaired)) if j not in placed)
    return Repairs(messages, problems, repaired, at, edited, added)


def pairs_alike(a: Message, b: Message) -> bool:
    """Whether the check and repair read two messages alike: the same role, response and
    kind, the same calls and results in the same order (a cleared result pairs alike)."""
    return (
        a.role == b.role
        and a.id == b.id
        and a.is_tool_result == b.is_tool_result
        and _pairing_blocks(a) == _pairing_blocks(b)
    )


def _pairing_blocks(m: Message) -> list[tuple[str, str | None]]:
    return [
        (b.type, b.id if b.type == "tool_use" else b.tool_use_id)
        for b in m.blocks
        if b.type == "tool_use" or b.type == "tool_result"
    ]


class Repaired(NamedTuple):
    """`check` and `repair` of a request, and what repair changed: the messages it
    replaced (`removed`), those it put in their place and added (`added`)."""

    problems: list[PairingProblem]
    messages: list[Message]
    removed: list[Message]
    added: list[Message]


def repaired_like(known: Repairs, messages: tuple[Message, ...]) -> Repaired | None:
    """`messages` checked and repaired from `known`, where each message it does not
    share with `known.source` pairs alike with the one in its place: the same problems,
    and the same results put in the same places (on its own message, where it edited one
    repair gives results to). None where they do not pair alike: check it whole."""
    source = known.source
    if len(messages) != len(source):
        return None
    differ = list(compress(count(), map(is_not, messages, source)))
    if not all(pairs_alike(messages[i], source[i]) for i in differ):
        return None
    out, at = list(known.repaired), known.at
    for i in differ:
        j = at[i]
        if out[j] is source[i]:
            out[j] = messages[i]
        else:  # repair put results first on this message: put them on its edit
            given = out[j].blocks[: len(out[j].blocks) - len(source[i].blocks)]
            out[j] = messages[i].with_blocks(given + messages[i].blocks)
    removed = [messages[i] for i in known.edited]
    added = [out[at[i]] for i in known.edited] + [out[j] for j in known.added]
    return Repaired(known.problems, out, removed, added)


def _add_missing_results(
    messages: Sequence[Message], missing: Sequence[PairingProblem]
) -> tuple[list[Message], list[int]]:
    """What `repair` makes of a request whose only problems are unanswered calls: error
    results put first in the user turn that follows each call's turn, or a message of
    them after it when no user turn follows."""
    out = list(messages)
    by_turn: dict[int, list[str]] = {}  # by the last message of the call's turn
    edges: dict[int, int] = {}  # each message of a turn walked once: linear in the request
    for p in sorted(missing, key=lambda p: p.index):
        if p.index not in edges:
            last = _turn_edge(messages, p.index, 1)
            edges.update(dict.fromkeys(range(p.index, last + 1), last))
        by_turn.setdefault(edges[p.index], []).append(p.tool_use_id or "")
    added: dict[int, Message] = {}  # a message of results after a turn no user turn follows
    for last, ids in by_turn.items():
        following = next((j for j in range(last + 1, len(messages)) if messages[j].role != "system"), None)
        if following is not None and messages[following].role != "assistant":
            out[following] = messages[following].with_blocks(
                _missing_blocks(ids) + messages[following].blocks
            )
        else:
            added[last] = missing_results(ids)
    if not added:
        return out, list(range(len(out) + 1))
    ends = list(range(len(out) + 1))
    shift = 0
    for i in range(len(out)):
        shift += i in added
        ends[i + 1] += shift
    return [
        m for i, original in enumerate(out) for m in ((original, added[i]) if i in added else (original,))
    ], ends

"""Local, deterministic volley summaries (docs/strategies.md#hysteresis): no network, same input, same text.

    [memory:context v1 | session=<id>]
    <the user's intent, at most 80 characters>
    - actions: Read ×3, Edit ×2, Bash
    - outcomes: test result: 1 failed, 4 passed; test result: 5 passed
    - files: tinyparse/__init__.py, tests/test_parser.py

The whole text stays within the per-volley cap: bullets are shortened, then left out.
A summary with room to spare (of a whole span, as the agents' own strategies write)
then lists the span's facts word for word, the most used first: its paths, commands,
identifiers, numbers and URLs, which is what a summary is measured on (`retention`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import accumulate, chain
from operator import itemgetter

from compaction_inspector.core import topic
from compaction_inspector.core.caching.memo import on_forget, per_session
from compaction_inspector.core.model import SUMMARY_PREFIX, Block, Message, immutable, text_message
from compaction_inspector.core.replaying.retention import Facts, ranked
from compaction_inspector.core.selection import Selection, keep, kept
from compaction_inspector.core.text import one_line

TITLE_CHARS = 80
OUTCOME_TAIL = 2000
MIN_SUMMARY_CHARS = 200
KEPT_ROOM = 200  # what a summary needs left after its bullets to list the span's facts too
KEPT_SCAN_CHARS = 400_000  # of a span's newest text read for them: a 100 MB span would take seconds
PATH_KEYS = ("file_path", "path", "notebook_path", "filename")
EDIT_TOOLS = frozenset(
    {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "write_file", "edit_file"}
)
_TEST_RESULT = re.compile(r"\b(\d+ (?:passed|failed|errors?)(?:, \d+ (?:passed|failed|skipped|errors?))*)")
_PATH_HINT = re.compile("|".join([*(f'"{k}"' for k in PATH_KEYS), re.escape("*** ")]))
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def marker_line(session_id: str | None) -> str:
    return f"{SUMMARY_PREFIX}context v1 | session={session_id or 'unknown'}]"


def block_paths(block: Block) -> list[str]:
    """Paths a tool call names: its path arguments, or the files of a patch."""
    raw = block.input_json
    if block.type != "tool_use" or not raw or not _PATH_HINT.search(raw):
        return []  # most calls name no path: not parsing them is most of the saving
    data = block.input
    if isinstance(data, dict):
        return [str(data[k]) for k in PATH_KEYS if isinstance(data.get(k), str)]
    if isinstance(data, str):
        return _PATCH_FILE.findall(data)
    return []


def _verdict(text: str) -> re.Match[str] | None:
    """The first test-runner count in `text`. Found from the keywords (a fast substring
    scan) rather than by trying the pattern at every character of a long output."""
    first = len(text)
    for word in (" passed", " failed", " error"):
        i = text.find(word)
        while 0 < i < first and not text[i - 1].isdecimal():
            i = text.find(word, i + 1)
        if 0 < i < first:
            first = i
    if first == len(text):
        return None
    while first > 0 and text[first - 1].isdecimal():
        first -= 1
    return _TEST_RESULT.search(text, first)


def _outcome(block: Block) -> str | None:
    """What a tool result says of how its call went, if anything."""
    text = block.text[-OUTCOME_TAIL:]  # runners print their verdict last
    match = _verdict(text)
    if match:
        return f"test result: {match.group(1)}"
    if "build failed" in text.lower():
        return "build failed"
    if block.is_error:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return "error: " + one_line(lines[-1] if lines else "tool error", 60)
    return None


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def summary_text(
    volley: Sequence[Message], cap: int, session_id: str | None, known: Facts | None = None
) -> str:
    """The summary of one volley, at most `cap` characters long (`known`: the session's
    facts, so its own messages' are found once)."""
    volley = tuple(volley)
    if len(volley) == 1 and _alone(volley[0]):
        return _summary_alone(volley[0], cap, session_id, known)
    return _summary_text(volley, cap, session_id, known)


def _alone(message: Message) -> bool:
    """A summary a strategy wrote, one text: summarized alone, what it comes to is a
    matter of its text (no fact of it is the session's own)."""
    return (
        message.is_compact_summary
        and bool(message.replaces)
        and message.role == "user"
        and len(message.blocks) == 1
        and message.blocks[0].type == "text"
    )


# A summary summarized alone (a policy firing again before anything new is old enough to
# join it: 42 % of Aider's summaries of a 20 MB session) most often comes out as it went
# in: what each text comes to is kept, by the text, the cap and the session.
_ALONE: dict[tuple[str, int, str | None], tuple[str, Selection | None]] = {}
_ALONE_KEPT = 256
on_forget(_ALONE.clear)


def _summary_alone(summary: Message, cap: int, session_id: str | None, known: Facts | None) -> str:
    key = (summary.blocks[0].text, cap, session_id)
    found = _ALONE.get(key)
    if found is None:
        text = _summary_text((summary,), cap, session_id, known)
        found = (text, kept(text))
        if len(_ALONE) >= _ALONE_KEPT:
            _ALONE.clear()
        _ALONE[key] = found
    text, selection = found
    return keep(selection) if selection is not None else text  # kept again: it is read by its items


# Messages hash by identity, so the same volley is read once however often a preflight
# policy re-runs over it, and once for all the caps it is summarized at; a span opening
# with a summary a replay wrote is read once, and not kept (it would keep the summary).
@per_session(maxsize=8192, held=lambda volley: not (volley and volley[0].written))
def _facts(volley: tuple[Message, ...]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A volley's title and its bullets (label, value), before any cap applies: its
    messages' own (`_message_facts`, each read once however many spans hold it) merged."""
    each = [_message_facts(m) for m in volley]
    human = next((m for m in volley if m.is_human), None)
    reply = next((m for m, f in zip(reversed(volley), reversed(each), strict=True) if f.replied), None)
    found = [outcome for f in each for outcome in f.outcomes]
    if reply is not None:
        text = " ".join(b.text for b in reply.blocks if b.type == "text")
        found.append("reply: " + one_line(text.split(". ")[0], 90))
    title = topic.title(human.text, TITLE_CHARS) if human else "agent activity"
    # most used first, ties in the order met (a stable sort, as Counter.most_common)
    tools = Counter(chain.from_iterable(f.tools for f in each))
    files = Counter(chain.from_iterable(f.files for f in each))
    actions = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in _by_count(tools))
    return title, (
        ("actions", actions),
        ("outcomes", "; ".join(dict.fromkeys(found))),
        ("files", ", ".join(path for path, _ in _by_count(files)[:3])),
    )


@immutable(slots=True)
class _MessageFacts:
    tools: tuple[str, ...]  # the tools it calls, as often as called
    files: tuple[str, ...]  # the paths its calls name
    outcomes: tuple[str, ...]  # what its tool results say of how their calls went
    replied: bool  # an assistant message with text


# every message a span holds, however long: a bounded cache walked in order by a span
# longer than it would miss on every message, at every summary (but a message a replay
# wrote, read once)
@per_session(maxsize=None, held=lambda m: not m.written)
def _message_facts(m: Message) -> _MessageFacts:
    tools: list[str] = []
    files: list[str] = []
    outcomes: list[str] = []
    replied = False
    for block in m.blocks:
        kind = block.type
        if kind == "tool_use":
            tools.append(block.name or "tool")
            files += block_paths(block)
        elif kind == "tool_result":
            outcome = _outcome(block)
            if outcome is not None:
                outcomes.append(outcome)
        elif kind == "text" and m.role == "assistant":
            replied = True
    return _MessageFacts(tuple(tools), tuple(files), tuple(outcomes), replied)


def _by_count(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=itemgetter(1), reverse=True)


def _summary_text(volley: tuple[Message, ...], cap: int, session_id: str | None, known: Facts | None) -> str:
    title, bullets = _facts(volley)
    head = f"{marker_line(session_id)}\n{_shorten(title, TITLE_CHARS)}"
    text = _shorten(head, cap)
    for label, value in bullets:
        if not value:
            continue
        room = cap - len(text) - len(f"\n- {label}: ")
        if room < 12:
            break
        text += f"\n- {label}: {_shorten(value, room)}"
    if cap - len(text) >= KEPT_ROOM:  # a summary of a span, not of a volley within a few hundred
        lists = _kept(volley, cap - len(text), known)
        if lists:  # written as a selection: counted and read by its facts, not its text
            return keep(Selection(text, lists))
    return text


def _kept(
    volley: tuple[Message, ...], room: int, known: Facts | None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The span's own facts, word for word, as far as `room` goes: its paths, the
    commands run, identifiers, numbers and URLs, each kind's most used first and the
    kinds taken in turn, so no kind crowds out the others; each kind listed with its
    facts."""
    newest, read = len(volley), 0
    while newest > 0 and read < KEPT_SCAN_CHARS:  # a long span: its newest part, as an agent's summary leans
        newest -= 1
        read += volley[newest].char_count
    chosen = _chosen(ranked(volley[newest:], known), room)
    return tuple((kind, tuple(items)) for kind, items in chosen.items() if items)


def _chosen(found: dict[str, list[str]], room: int) -> dict[str, list[str]]:
    """Each kind's facts taken in turn, its next while it fits in `room` with its heading
    and separators: the turns that all fit taken at once, the rest walked."""
    depth, used = _whole_rounds(found, room)
    chosen = {kind: items[:depth] for kind, items in found.items()}
    added = True
    while added:
        added = False
        for kind, items in found.items():
            if depth >= len(items):
                continue
            cost = len(items[depth]) + (len(f"\n- {kind}: ") if not chosen[kind] else 2)
            if used + cost <= room:
                chosen[kind].append(items[depth])
                used, added = used + cost, True
        depth += 1
    return chosen


def _whole_rounds(found: dict[str, list[str]], room: int) -> tuple[int, int]:
    """How many turns of `_kept`'s round all fit in `room` (each kind's first that many
    facts), and the characters they take: taken at once, the round is walked only after."""
    # each kind's characters for its first j facts: its heading, the facts, "; " between
    # them (as far as `room` could hold: a fact costs 3 characters at least)
    spent = [
        (len(f"\n- {kind}: ") - 2, list(accumulate(map(len, items[: room // 3 + 1]), initial=0)))
        for kind, items in found.items()
        if items  # a kind with none takes no room
    ]
    deepest = max((len(chars) - 1 for _, chars in spent), default=0)

    def total(depth: int) -> int:
        if not depth:
            return 0
        used = 0
        for head, chars in spent:  # a plain loop: asked about ten times of every summary
            j = min(depth, len(chars) - 1)
            used += head + chars[j] + 2 * j
        return used

    low, high = 0, deepest  # total(low) fits; find the deepest that does
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if total(mid) <= room else (low, mid - 1)
    return low, total(low)


def summarize(
    volley: Sequence[Message], cap: int, session_id: str | None, known: Facts | None = None
) -> Message:
    """A summary message standing for the volley's messages (never for a summary). The
    same volley gives the same message object, so its token count is computed once."""
    return _summarize(tuple([m for m in volley if not m.is_summary_item]), cap, session_id, known)


@per_session(maxsize=8192)
def _summarize(
    sources: tuple[Message, ...], cap: int, session_id: str | None, known: Facts | None
) -> Message:
    text = summary_text(sources, cap, session_id, known)
    return text_message("user", text, is_synthetic=True, replaces=sources)


def shrink(
    summary: Message, volley: Sequence[Message], cap: int, session_id: str | None, known: Facts | None = None
) -> Message:
    """`summary` (of `volley`) rewritten within a smaller cap: an edit of it, so a diff
    shows it rewritten rather than replaced. The same summary and cap give the same
    message, so its token count is computed once."""
    return _shrink(summary, tuple(volley), cap, session_id, known)


@per_session(maxsize=16384)
def _shrink(
    summary: Message, volley: tuple[Message, ...], cap: int, session_id: str | None, known: Facts | None
) -> Message:
    return summary.with_blocks((Block("text", text=_summary_text(volley, cap, session_id, known)),))

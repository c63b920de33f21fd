"""What Claude Code puts back into the context after it compacts (docs/agents.md).

The five most recently modified files of those its Read, Edit and Write tools touched,
leaving out the plan file and CLAUDE.md memory files: each read again from disk, whole
(with Read's line numbers) when its content fits in 5,000 tokens, else replaced by a short
reference (never cut); 50,000 tokens in all. Then the plan file, when the session has
one, and the skills it invoked, the newest first, each cut to its first 5,000 tokens,
25,000 in all. Versions that write `attachment` lines record all this themselves; for
the others it is worked out here from the tool calls.

The file tools' results tell what each file held: the whole text after an Edit or a
Write where the transcript records it (`Session.touches`), else the latest Read's result;
a Read of part of a file stands for the whole in proportion.

"Most recently modified" is the file's modification time when last touched, which Claude
Code keeps beside what it read (`readFileState`) and sorts by: a file it edited or wrote
has the time of that change, later than any file it only read. A file only read was last
changed at a time the transcript does not hold: such files come after the ones it
changed, the most recently read first.

Skills come from its Skill tool and from slash commands whose text follows as a meta
message; a session begun from a plan (`planContent` on its first prompt) has that plan.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from compaction_inspector.core.measuring.tokens import TokenCounter
from compaction_inspector.core.model import Block, FileTouch, Message, immutable
from compaction_inspector.core.topic import command

MAX_FILES = 5  # POST_COMPACT_MAX_FILES_TO_RESTORE
MAX_FILE_TOKENS = 5_000  # POST_COMPACT_MAX_TOKENS_PER_FILE
BUDGET_TOKENS = 50_000  # POST_COMPACT_TOKEN_BUDGET
MAX_SKILL_TOKENS = 5_000
SKILLS_BUDGET_TOKENS = 25_000
FILE_TOOLS = frozenset({"Read", "Edit", "Write"})
SKILL_TOOLS = frozenset({"Skill"})
REMEMBERED_FILES = 100  # READ_FILE_STATE_CACHE_SIZE: the files its read-file state holds
MEMORY_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
PLANS_FOLDER = "/.claude/plans/"
PLAN_FILE = "the plan file this session carries out"  # its path is not in the transcript


@immutable()
class Reinjected:
    """One thing put back: its message (as Claude Code sends it), its size in the
    model's tokens, and whether it went in whole or as a reference."""

    name: str
    kind: str  # "file", "plan" or "skill"
    message: Message
    tokens: int
    whole: bool


@immutable()
class _Seen:
    """A file as last touched: the text that stands for it, and how much of it that is."""

    text: str
    share: float
    numbered: bool  # the text already carries Read's line numbers
    changed: int | None = None  # when Claude Code last changed it (a call's position); None: not here
    touched: int = 0  # the position of the call that left it


def reference(path: str) -> str:
    """What stands for a file too large to put back."""
    return (
        f"Note: {path} was read before the last conversation was summarized, but the contents "
        "are too large to include. Use Read tool if you need to access it."
    )


_LINE_NUMBER = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)


def _unnumbered(text: str) -> str:
    """A Read result's file content, without the line numbers Read puts before each line."""
    return _LINE_NUMBER.sub("", text)


def _numbered(text: str) -> str:
    """A file as Read shows it: each line after its number."""
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.split("\n"), 1))


def _file_message(path: str, text: str, kind: str) -> Message:
    return Message(
        "user", (Block("text", text=f"{path}\n{text}"),), is_meta=True, is_synthetic=True, attachment=kind
    )


def _is_plan(path: str) -> bool:
    return PLANS_FOLDER in path.replace("\\", "/")


def _is_memory(path: str) -> bool:
    return path.replace("\\", "/").rsplit("/", 1)[-1] in MEMORY_FILES


@immutable()
class _Limits:
    max_files: int = MAX_FILES
    max_file_tokens: int = MAX_FILE_TOKENS
    budget_tokens: int = BUDGET_TOKENS


@immutable()
class _Memory:
    """What Claude Code holds when it compacts: the files it read or wrote (the newest
    `REMEMBERED_FILES`, in the order last touched), the plan and the skills invoked."""

    files: dict[str, _Seen]
    plan: tuple[str, _Seen] | None
    skills: dict[str, str]  # in the order last invoked


def _memory(
    messages: Sequence[Message], touches: Mapping[str, FileTouch], sizer: _Sizer, limits: _Limits
) -> _Memory:
    files: dict[str, _Seen] = {}
    plan: tuple[str, _Seen] | None = None
    skills: dict[str, str] = {}
    calls: dict[str, tuple[str, str, dict[str, object]]] = {}  # call id -> tool, path, input
    pending_skill: str | None = None
    for at, m in enumerate(messages):
        if m.is_compact_boundary:  # Claude Code forgets what was read, then reads its picks again
            kept = _pick(files, sizer, limits)
            files = {r.name: files[r.name] for r in reversed(kept) if r.whole}
            continue
        if m.role == "user" and pending_skill is not None:
            if m.is_meta and m.attachment is None:  # the skill's own text, sent after its call
                skills.pop(pending_skill, None)
                skills[pending_skill] = m.text
            pending_skill = None  # a local command (/clear) answers with its output instead
        if m.is_human:  # a skill run as a slash command: its text follows as the next meta message
            pending_skill = command(m.text)
        if m.plan is not None:
            plan = (PLAN_FILE, _Seen(m.plan, 1.0, False))
        for b in m.blocks:
            if b.type == "tool_use" and b.id and b.name in (*FILE_TOOLS, *SKILL_TOOLS):
                given = b.input if isinstance(b.input, dict) else {}
                path = (
                    given.get("file_path")
                    if b.name in FILE_TOOLS
                    else given.get("skill") or given.get("command")
                )
                if isinstance(path, str):
                    calls[b.id] = (b.name, path, given)
            elif b.type == "tool_result" and b.tool_use_id in calls and not b.is_error:
                tool, path, given = calls.pop(b.tool_use_id)
                if tool in SKILL_TOOLS:
                    pending_skill = path
                    continue
                before = files.get(path)
                seen = _seen(tool, given, b.text, touches.get(b.tool_use_id), before)
                if seen is None:
                    continue
                # its time on disk: this call's if it changed the file, else the last change seen
                changed = at if tool != "Read" else before.changed if before else None
                seen = replace(seen, changed=changed, touched=at)
                if _is_plan(path):
                    plan = (path, seen)
                elif not _is_memory(path):
                    files.pop(path, None)
                    files[path] = seen
                    if len(files) > REMEMBERED_FILES:  # the least recently touched is let go
                        del files[next(iter(files))]
    return _Memory(files, plan, skills)


def reinjected(
    messages: Sequence[Message],
    touches: Mapping[str, FileTouch],
    counter: TokenCounter,
    scale: float,
    *,
    max_files: int = MAX_FILES,
    max_file_tokens: int = MAX_FILE_TOKENS,
    budget_tokens: int = BUDGET_TOKENS,
) -> list[Reinjected]:
    """What Claude Code would put back after compacting `messages` (the history up to
    the compaction), in the order it sends them. Sizes are the model's tokens:
    `scale` × counted. Earlier compactions in `messages` put back their own files, which
    stay in its memory of what was read."""
    limits = _Limits(max_files, max_file_tokens, budget_tokens)
    sizer = _Sizer(counter, scale, limits.max_file_tokens)
    return _put_back(_memory(messages, touches, sizer, limits), sizer, limits)


def reinjected_range(
    messages: Sequence[Message], touches: Mapping[str, FileTouch], counter: TokenCounter, scale: float
) -> tuple[list[Reinjected], tuple[int, int]]:
    """`reinjected`, and the least and the most its files can hold over every order of
    modification times the transcript allows: a file it only read was last changed
    before that read, at a time the transcript does not hold, so it may outrank any file
    changed before the read, or none (`reinjected` picks the files it changed first)."""
    limits = _Limits()
    sizer = _Sizer(counter, scale, limits.max_file_tokens)
    memory = _memory(messages, touches, sizer, limits)
    files = memory.files
    sizes = {path: sizer(path, seen).tokens for path, seen in files.items()}
    changed = [p for p in _newest(files) if files[p].changed is not None]
    only_read = [p for p in files if files[p].changed is None]
    wanted = min(limits.max_files, len(files))
    totals = []
    for k in range(min(wanted, len(changed)) + 1):  # the k files changed last go back
        # the newest change left out: a file read before it was changed before it too
        bar = files[changed[k]].changed if k < len(changed) else None
        eligible = sorted(sizes[p] for p in only_read if bar is None or files[p].touched > bar)
        need = wanted - k
        if len(eligible) < need:
            continue
        base = sum(sizes[p] for p in changed[:k])
        totals += [base + sum(eligible[:need]), base + sum(eligible[len(eligible) - need :])]
    span = (
        (min(min(totals), limits.budget_tokens), min(max(totals), limits.budget_tokens)) if totals else (0, 0)
    )
    return _put_back(memory, sizer, limits), span


def _put_back(memory: _Memory, sizer: _Sizer, limits: _Limits) -> list[Reinjected]:
    counter, scale = sizer.counter, sizer.scale
    out = _pick(memory.files, sizer, limits)
    if memory.plan is not None:
        path, seen = memory.plan
        message = _file_message(path, seen.text, "plan_file_reference")
        out.append(Reinjected(path, "plan", message, _tokens(counter, message, scale, seen.share), True))
    room = SKILLS_BUDGET_TOKENS
    for name, text in reversed(memory.skills.items()):  # the newest invoked first
        tokens = _tokens(counter, _skill_message(text), scale, 1.0)
        whole = tokens <= MAX_SKILL_TOKENS
        if not whole:  # its head, as much as the cap holds
            text = text[: len(text) * MAX_SKILL_TOKENS // tokens]
            tokens = _tokens(counter, _skill_message(text), scale, 1.0)
        if tokens > room:
            continue
        room -= tokens
        out.append(Reinjected(name, "skill", _skill_message(text), tokens, whole))
    return out


def _skill_message(text: str) -> Message:
    return Message("user", (Block("text", text=text),), is_meta=True, is_synthetic=True, attachment="skill")


def _seen(
    tool: str, given: Mapping[str, object], result: str, touch: FileTouch | None, before: _Seen | None
) -> _Seen | None:
    """What stands for a file after one call of a file tool; None when nothing does."""
    if touch is not None and touch.text is not None:
        return _Seen(touch.text, 1.0, False)
    if tool == "Write" and isinstance(given.get("content"), str):
        return _Seen(str(given["content"]), 1.0, False)
    if tool == "Read":
        return _Seen(result, touch.share if touch is not None else 1.0, True)
    return before  # an Edit the transcript records no text of: the file as last seen


def _tokens(counter: TokenCounter, message: Message, scale: float, share: float) -> int:
    return round(scale * counter.count(message, remember=False) / max(share, 1e-9))


def _newest(files: Mapping[str, _Seen]) -> list[str]:
    """The files by modification time, newest first: those Claude Code changed by when it
    changed them, then those it only read, the most recently read first (`files` is in
    the order last touched)."""
    touched = list(files)[::-1]
    changed = sorted(
        (p for p in touched if files[p].changed is not None), key=lambda p: -(files[p].changed or 0)
    )
    return changed + [p for p in touched if files[p].changed is None]


class _Sizer:
    """Each file as Claude Code reads it again, made once per call: whole when its
    content fits the limit, else a reference to it."""

    def __init__(self, counter: TokenCounter, scale: float, max_file_tokens: int) -> None:
        self.counter, self.scale, self.max_file_tokens = counter, scale, max_file_tokens
        self.made: dict[tuple[str, str, float, bool], Reinjected] = {}  # by path and what stands for it

    def __call__(self, path: str, seen: _Seen) -> Reinjected:
        key = (path, seen.text, seen.share, seen.numbered)
        if key not in self.made:
            self.made[key] = self._restored(path, seen)
        return self.made[key]

    def _restored(self, path: str, seen: _Seen) -> Reinjected:
        counter, scale = self.counter, self.scale
        # the limit is on the file's content; what goes back carries Read's line numbers
        content = _unnumbered(seen.text) if seen.numbered else seen.text
        if _tokens(counter, _file_message(path, content, "file"), scale, seen.share) <= self.max_file_tokens:
            message = _file_message(path, seen.text if seen.numbered else _numbered(seen.text), "file")
            return Reinjected(path, "file", message, _tokens(counter, message, scale, seen.share), True)
        message = Message(
            "user", (Block("text", text=reference(path)),), is_meta=True, is_synthetic=True, attachment="file"
        )
        return Reinjected(path, "file", message, _tokens(counter, message, scale, 1.0), False)


def _pick(files: Mapping[str, _Seen], sizer: _Sizer, limits: _Limits) -> list[Reinjected]:
    """The newest files, each whole or as a reference, within the budget."""
    out: list[Reinjected] = []
    room = limits.budget_tokens
    for path in _newest(files)[: limits.max_files]:
        restored = sizer(path, files[path])
        if restored.tokens > room:
            continue
        room -= restored.tokens
        out.append(restored)
    return out


KEEPS_LAST_ROUND_FROM = (2, 1, 282)  # a proxy record of a 2.1.282 request after a compaction


def kept_round(before: Sequence[Message], after: Sequence[Message]) -> list[Message]:
    """The last API round Claude Code keeps as it ran when it compacts mid-turn (2.1.282:
    the request after the compaction holds the last tool call and its result right after
    the summary and the date): the response whose calls the messages just before the
    compaction answer, and those results. None where it compacted at a turn's end (no
    results last), or where the transcript writes them again after the compaction."""
    start = len(before)
    while start and before[start - 1].role == "user" and before[start - 1].tool_result_ids():
        start -= 1
    results = before[start:]
    answered = {i for m in results for i in m.tool_result_ids()}
    if not answered or start == 0 or before[start - 1].role != "assistant":
        return []
    response = before[start - 1].id
    first = start
    while first and before[first - 1].role == "assistant" and before[first - 1].id == response:
        first -= 1
    calls = list(before[first:start])
    if not answered & {i for m in calls for i in m.tool_use_ids()}:
        return []
    written = {i for m in after for i in (*m.tool_use_ids(), *m.tool_result_ids())}
    return [] if answered & written else [*calls, *results]

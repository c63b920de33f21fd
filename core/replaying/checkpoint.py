"""Checkpoints and truncation detection (docs/strategies.md#checkpoints; the truncation protocol).

A checkpoint is appended to `<memory>/YYYY-MM-DD.md` in the protocol's format, filled
deterministically from the session. Truncation is likely when a session now holds fewer
messages than its last checkpoint recorded; the recovery summary comes from that
checkpoint. Appending never rewrites earlier checkpoints, and the write is atomic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from compaction_inspector.core import topic
from compaction_inspector.core.files import locked, read_text, write_atomic
from compaction_inspector.core.formats.common import as_list
from compaction_inspector.core.measuring.grouping import api_round_starts
from compaction_inspector.core.model import Message, Session, immutable
from compaction_inspector.core.replaying.summary import EDIT_TOOLS, block_paths
from compaction_inspector.core.text import one_line
from compaction_inspector.core.timestamps import parse as parse_time

HEADING = re.compile(r"^##\s*Checkpoint\s*\[(\d{1,2}:\d{2})\]\s*[—–-]+\s*Message\s*#\s*(\d+)", re.IGNORECASE)
SECTION = re.compile(r"^###\s*(.+?)\s*$")
CHECKBOX = re.compile(r"^\s*[-*]\s*\[([ xX])\]\s*(.*)$")
BULLET = re.compile(r"^\s*[-*]\s+(.*)$")
FIELD = re.compile(r"^\s*[-*]\s*\*\*(.+?):\*\*\s*(.*)$")
FILE_LINE = re.compile(r"^\s*[-*]\s*`([^`]+)`\s*(?:[—–-]+\s*(.*))?$")
COUNT = re.compile(r"\*\*Messages this session:\*\*\s*(\d+)", re.IGNORECASE)
DECISION = re.compile(
    r"\b(I'll|I will|I decided|I chose|decided to|going with|instead of|we'll use|I'm going to)\b",
    re.IGNORECASE,
)
DESTRUCTIVE = re.compile(
    r"rm\s+-[a-zA-Z]*(rf|fr)|git\s+push\b[^\n]*(--force|\s-f\b)|git\s+reset\s+--hard|git\s+clean\s+-[a-z]*f"
    r"|git\s+branch\s+-D|drop\s+(table|database)|\btruncate\s+table\b|\bmkfs\b",
    re.IGNORECASE,
)
TODO_TOOLS = frozenset({"TodoWrite", "update_plan", "todo_write"})


@dataclass
class Checkpoint:
    time: str  # HH:MM
    message_number: int
    topic: str = ""
    goal: str = ""
    session_id: str | None = None
    decisions: list[tuple[bool, str]] = field(default_factory=list)
    action_items: list[tuple[bool, str]] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    status: str = ""
    files: list[tuple[str, str]] = field(default_factory=list)
    message_count: int = 0
    date: str | None = None  # YYYY-MM-DD, from the file it was read from

    @property
    def heading(self) -> str:
        return f"## Checkpoint [{self.time}] — Message #{self.message_number}"

    def render(self) -> str:
        def boxes(items: list[tuple[bool, str]], empty: str) -> list[str]:
            return [f"- [{'x' if done else ' '}] {text}" for done, text in items] or [f"- {empty}"]

        lines = [
            self.heading,
            "",
            "### Session Context",
            f"- **Topic:** {self.topic}",
            f"- **Goal:** {self.goal}",
        ]
        if self.session_id:
            lines.append(f"- **Session:** `{self.session_id}`")
        lines += ["", "### Decisions Made", *boxes(self.decisions, "None recorded")]
        lines += ["", "### Action Items", *boxes(self.action_items, "None recorded")]
        lines += [
            "",
            "### Open Questions",
            *([f"- {q}" for q in self.open_questions] or ["- None"]),
        ]
        lines += ["", "### Current Status", self.status or "Nothing yet."]
        lines += ["", "### Files Modified"]
        lines += [f"- `{path}` — {what}" for path, what in self.files] or ["- None"]
        lines += ["", "### Message Count", f"**Messages this session:** {self.message_count}", ""]
        return "\n".join(lines)

    def recovery(self) -> str:
        """The protocol's recovery line: what we were doing, what was done, what is next."""
        done = [t for d, t in self.action_items if d]
        pending = [t for d, t in self.action_items if not d]
        working_on = self.goal or self.topic or "an unknown task"
        last = done[-1] if done else (self.status or "nothing recorded")
        after = pending[0] if pending else (self.open_questions[0] if self.open_questions else "not recorded")
        return (
            f"Recovered context: we were working on “{_sentence(working_on)}”, last completed "
            f"{_sentence(last)}, next step {_sentence(after)}."
        )


def _sentence(text: str) -> str:
    return one_line(text, 160).rstrip(".")


# --- filling a checkpoint from a session ---------------------------------------------------


def _local(timestamp: str | None) -> datetime:
    when = parse_time(timestamp)
    return when.astimezone() if when is not None else datetime.now().astimezone()


def _texts(m: Message) -> str:
    return "\n".join(b.text for b in m.blocks if b.type == "text")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _action_items(messages: Sequence[Message]) -> list[tuple[bool, str]]:
    todos: list[tuple[bool, str]] = []
    for m in messages:
        for b in m.blocks:
            if b.type == "tool_use" and b.name in TODO_TOOLS and isinstance(b.input, dict):
                items = as_list(b.input.get("todos") or b.input.get("plan"))
                todos = [
                    (
                        str(t.get("status")) == "completed",
                        one_line(str(t.get("content") or t.get("step") or ""), 120),
                    )
                    for t in items
                    if isinstance(t, dict)
                ]
    boxes: dict[str, bool] = {}
    for m in messages:
        if m.role == "assistant":
            for line in _texts(m).splitlines():
                match = CHECKBOX.match(line)
                if match:
                    boxes[one_line(match.group(2), 120)] = match.group(1) != " "
    return todos + [(done, text) for text, done in boxes.items() if text not in {t for _, t in todos}]


def build(session: Session, at: int | None = None) -> Checkpoint:
    """A checkpoint of the session as it stood at message `at` (default the last): the
    heading names message #at, numbered from 0 as everywhere else; the count says how
    many messages the session held then (at + 1)."""
    messages = session.messages
    if not messages:
        raise ValueError("the session has no messages to checkpoint")
    at = len(messages) - 1 if at is None else at
    if not 0 <= at < len(messages):
        raise ValueError(
            f"message {at} does not exist: the session has {len(messages)} (0 to {len(messages) - 1})"
        )
    upto = messages[: at + 1]
    when = _local(next((m.timestamp for m in reversed(upto) if m.timestamp), None))
    humans = [m for m in upto if m.is_human]
    first = topic.title(humans[0].text, 120) if humans else ""
    latest = topic.title(humans[-1].text, 200) if humans else ""
    title = session.metadata.get("title")
    last_human = max((i for i, m in enumerate(upto) if m.is_human), default=-1)
    replies = [m for m in upto if m.role == "assistant" and _texts(m).strip()]
    decisions = [
        (True, one_line(s, 160))
        for m in replies
        for s in _sentences(_texts(m))
        if DECISION.search(s) and not s.endswith("?")
    ]
    questions = [
        one_line(s, 200)
        for m in upto[last_human + 1 :]
        if m.role == "assistant"
        for s in _sentences(_texts(m))
        if s.endswith("?")
    ]
    files: dict[str, list[str]] = {}
    for m in upto:
        for b in m.blocks:
            if b.type == "tool_use" and b.name in EDIT_TOOLS:
                for path in block_paths(b):
                    files.setdefault(_relative(path, session.metadata.get("cwd")), []).append(
                        b.name or "edit"
                    )
    return Checkpoint(
        time=when.strftime("%H:%M"),
        message_number=at,  # the message's number as the app and every command show it
        topic=one_line(str(title), 120) if title else first,
        goal=latest,
        session_id=session.session_id,
        decisions=list(dict.fromkeys(decisions))[-6:],
        action_items=_action_items(upto),
        open_questions=list(dict.fromkeys(questions)),
        status=one_line(_texts(replies[-1]), 400) if replies else "",
        files=[(path, _what(tools)) for path, tools in files.items()],
        message_count=at + 1,
        date=when.strftime("%Y-%m-%d"),
    )


def _what(tools: list[str]) -> str:
    created = "created" if tools[0] in ("Write", "write_file") else ""
    edits = sum(1 for t in tools if t not in ("Write", "write_file"))
    parts = [p for p in (created, f"{edits} edit{'s' if edits != 1 else ''}" if edits else "") if p]
    if not parts:
        parts = [f"rewritten {len(tools)} times" if len(tools) > 1 else "written"]
    return ", then ".join(parts) + f" ({', '.join(sorted(set(tools)))})"


def append_checkpoint(
    session: Session, memory_dir: str | Path, at: int | None = None
) -> tuple[Path, Checkpoint]:
    """Append a checkpoint to `<memory_dir>/YYYY-MM-DD.md`; earlier text is kept as is."""
    checkpoint = build(session, at)
    path = Path(memory_dir) / f"{checkpoint.date}.md"
    if session.path and path.exists() and Path(session.path).resolve() == path.resolve():
        raise ValueError(f"refusing to write into the transcript {session.path}")
    with locked(path):  # another checkpoint to the same day waits, so neither is lost
        existing = read_text(path) if path.exists() else f"# Memory {checkpoint.date}\n"
        separator = "" if existing.endswith("\n\n") else "\n" if existing.endswith("\n") else "\n\n"
        write_atomic(path, existing + separator + checkpoint.render(), protect=session.path)
    return path, checkpoint


# --- reading memory files back ----------------------------------------------------------------


def parse(text: str, date: str | None = None) -> list[Checkpoint]:
    """Every checkpoint in a memory file, tolerant of hand edits (extra text, `-` or `*`
    bullets, missing sections, other headings between checkpoints)."""
    checkpoints: list[Checkpoint] = []
    current: Checkpoint | None = None
    section = ""
    status: list[str] = []

    def close() -> None:
        if current is not None:
            current.status = "\n".join(status).strip()
            checkpoints.append(current)

    for line in text.splitlines():
        heading = HEADING.match(line.strip())
        if heading:
            close()
            current = Checkpoint(time=heading.group(1), message_number=int(heading.group(2)), date=date)
            section, status = "", []
            continue
        if current is None:
            continue
        if line.startswith("## "):
            close()
            current = None
            continue
        header = SECTION.match(line)
        if header:
            section = header.group(1).lower()
            continue
        count = COUNT.search(line)
        if count:
            current.message_count = int(count.group(1))
            continue
        _read_line(current, section, line, status)
    close()
    return checkpoints


def _read_line(c: Checkpoint, section: str, line: str, status: list[str]) -> None:
    if "context" in section:
        match = FIELD.match(line)
        if match:
            key, value = match.group(1).lower(), match.group(2).strip()
            if key == "topic":
                c.topic = value
            elif key == "goal":
                c.goal = value
            elif key == "session":
                c.session_id = value.strip("`") or None
    elif "decision" in section or "action" in section:
        box = CHECKBOX.match(line)
        bullet = BULLET.match(line)
        target = c.decisions if "decision" in section else c.action_items
        if box:
            target.append((box.group(1) != " ", box.group(2).strip()))
        elif bullet and bullet.group(1).strip() not in ("None recorded", "None"):
            target.append((False, bullet.group(1).strip()))
    elif "question" in section:
        bullet = BULLET.match(line)
        if bullet and bullet.group(1).strip() != "None":
            c.open_questions.append(bullet.group(1).strip())
    elif "status" in section:
        status.append(line)
    elif "file" in section:
        match = FILE_LINE.match(line)
        if match:
            c.files.append((match.group(1), (match.group(2) or "").strip()))


def read_memory(memory_dir: str | Path) -> list[Checkpoint]:
    """All checkpoints under `memory_dir`, oldest file first, in file order."""
    folder = Path(memory_dir)
    if not folder.is_dir():
        return []
    out: list[Checkpoint] = []
    for path in sorted(folder.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md")):
        if path.is_dir():  # a folder named like a day holds no checkpoints
            continue
        out += parse(read_text(path), date=path.stem)
    return out


@immutable()
class Detection:
    truncated: bool
    message_count: int
    checkpoint: Checkpoint | None

    @property
    def report(self) -> str:
        if self.checkpoint is None:
            return "No earlier checkpoint for this session."
        if not self.truncated:
            return (
                f"No truncation: {self.message_count} messages now, "
                f"{self.checkpoint.message_count} at the last checkpoint."
            )
        return (
            f"truncation likely: {self.message_count} messages now, "
            f"{self.checkpoint.message_count} at the last checkpoint ({self.checkpoint.date} "
            f"{self.checkpoint.time}).\n{self.checkpoint.recovery()}"
        )


def detect(session: Session, memory_dir: str | Path) -> Detection:
    """Compare the session's message count with its last checkpoint's."""
    mine = [c for c in read_memory(memory_dir) if c.session_id == session.session_id]
    last = mine[-1] if mine else None
    count = len(session.messages)
    return Detection(last is not None and count < last.message_count, count, last)


# --- checkpoint triggers for simulate -------------------------------------------------------


@immutable()
class Trigger:
    index: int  # the checkpoint is written before this message
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"index": self.index, "reason": self.reason}


def triggers(
    messages: Sequence[Message],
    every: int = 10,
    compactions: Sequence[int] = (),
    pressure_crossings: Sequence[int] = (),
) -> list[Trigger]:
    """Where the protocol would write checkpoints: every `every` API rounds, before
    destructive tool calls, at compaction events and where pressure crosses a threshold."""
    found: dict[int, list[str]] = {}
    for n, start in enumerate(api_round_starts(messages)):
        if n and n % every == 0:
            found.setdefault(start, []).append(f"{every} exchanges")
    for i, m in enumerate(messages):
        for b in m.blocks:
            if b.type == "tool_use" and DESTRUCTIVE.search(b.input_json or ""):
                found.setdefault(i, []).append(f"before destructive {b.name}")
    for i in compactions:
        found.setdefault(i, []).append("compaction")
    for i in pressure_crossings:
        found.setdefault(i, []).append("pressure threshold crossed")
    return [Trigger(i, ", ".join(dict.fromkeys(r))) for i, r in sorted(found.items())]

"""The session model: immutable messages made of blocks, and a loaded session.

Messages compare and hash by identity. A strategy that keeps a message passes the very
same object through, which is how diffs tell kept from rewritten and how token counts
are reused without re-encoding.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field
from typing import Any, Literal, Protocol, TypeVar, dataclass_transform

import orjson

Role = Literal["user", "assistant", "system", "tool"]
BlockType = Literal["text", "thinking", "tool_use", "tool_result", "image", "document"]
Kind = Literal["message", "tool_result", "summary", "marker", "meta", "attachment"]

# The largest count (tokens, a window, a number of anything) read from a file or a user:
# exact as a float, so arithmetic on it never overflows (a 401-digit integer does).
MAX_COUNT = 2**53
SUMMARY_PREFIX = "[memory:"
PTL_MARKER_TEXT = "[earlier conversation truncated for compaction retry]"
# what stands for a compaction's summary an agent keeps encrypted (Codex's remote compaction)
ENCRYPTED_SUMMARY = "[the compaction's summary: encrypted, not in the rollout]"


_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def immutable(
    *, eq: bool = True, slots: bool = False, kw_only: bool = False
) -> Callable[[type[_T]], type[_T]]:
    """A dataclass the type checker holds immutable (mypy --strict runs with the tests):
    every value class of the product. Not frozen at run time: Python 3.11 compiles each
    method a dataclass is given on its own, a frozen one has two more (`__setattr__`,
    `__delattr__`) and sets each field through `object.__setattr__`, so the classes every
    command imports at its start are made a fifth faster, and their instances built faster
    (sessions hold millions of messages). Its instances hash by value (`eq=True`, but where
    the class defines its own hash) or by identity (`eq=False`), as they would frozen.
    `slots`: instances with no `__dict__`, for the classes made by the million."""

    def make(cls: type[_T]) -> type[_T]:
        own = cls.__dict__.get("__hash__", MISSING)
        explicit = not (own is MISSING or (own is None and "__eq__" in cls.__dict__))
        return dataclass(eq=eq, unsafe_hash=eq and not explicit, slots=slots, kw_only=kw_only)(cls)

    return make


@immutable(slots=True)
class Block:
    """One content block. `text` holds text, thinking text or a tool result's content."""

    type: BlockType
    text: str = ""
    id: str | None = None
    name: str | None = None
    input_json: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False

    @staticmethod
    def tool_use(id: str, name: str, input: Any) -> Block:
        return Block("tool_use", id=id, name=name, input_json=canonical_json(input))

    @staticmethod
    def tool_result(tool_use_id: str, text: str, is_error: bool = False) -> Block:
        # positional: edits make these by the ten thousand
        return Block("tool_result", text, None, None, None, tool_use_id, is_error)

    @property
    def input(self) -> Any:
        if not self.input_json:
            return {}
        try:
            return orjson.loads(self.input_json)
        except orjson.JSONDecodeError:  # integers beyond 64 bits, written by json
            return json.loads(self.input_json)

    def render(self) -> str:
        """The block as the text a reader (and a token counter) sees."""
        if self.type == "tool_use":
            return f"{self.name or ''} {self.input_json or '{}'}"
        if self.type in ("image", "document"):
            return ""
        return self.text


@immutable(slots=True)
class Usage:
    """Token usage an API response reported."""

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_write_1h_tokens: int = 0  # of the cache written, what is kept for an hour (billed higher)
    model: str | None = None  # the model that answered, where the transcript names it

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_dict(self) -> dict[str, Any]:
        """As Anthropic reports it."""
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
        }
        if self.cache_write_1h_tokens:
            out["cache_creation"] = {
                "ephemeral_5m_input_tokens": self.cache_creation_input_tokens - self.cache_write_1h_tokens,
                "ephemeral_1h_input_tokens": self.cache_write_1h_tokens,
            }
        return out


@immutable(slots=True)
class Reasoning:
    """What an agent's reasoning item holds that the transcript does not show (Codex,
    docs/agents.md): Codex's own estimate from the length of its encrypted content
    (None: the rollout lacks it or it was redacted), and the reasoning tokens its
    response reported (on the response's last reasoning item; 0 on the others)."""

    encrypted: int | None = None
    reported: int = 0


@immutable(eq=False, slots=True)
class Message:
    """One transcript message. Identity is the message: see the module docstring."""

    role: Role
    blocks: tuple[Block, ...]
    id: str | None = None
    line: int | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    request_id: str | None = None
    timestamp: str | None = None
    is_meta: bool = False
    is_sidechain: bool = False
    is_compact_summary: bool = False
    is_compact_boundary: bool = False
    is_synthetic: bool = False
    usage: Usage | None = None
    # Source messages this one stands for: the volleys a summary condenses, or the
    # original of an edited message. Empty for messages read from the transcript.
    replaces: tuple[Message, ...] = ()
    # What a meta message injected by the agent is (Claude Code `attachment` lines: file,
    # task_reminder, skill_listing, ...); None for every other message.
    attachment: str | None = None
    # The marker of a microcompaction: some tool results cleared here, the history kept.
    is_microcompact: bool = False
    # An agent's reasoning item: what its encrypted content stands for (None elsewhere).
    reasoning: Reasoning | None = None
    # The plan a prompt sets out to carry out (Claude Code's `planContent`, on the first
    # prompt after leaving plan mode): the session's plan file, put back after a compaction.
    plan: str | None = None
    # Derived once at construction: every strategy and grouping asks these many times.
    is_tool_result: bool = field(init=False, repr=False)
    is_summary_item: bool = field(init=False, repr=False)
    is_human: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        blocks = self.blocks
        if len(blocks) == 1:  # most messages: answered without making generators
            only = blocks[0]
            all_results = only.type == "tool_result"
            summary_text = only.type == "text" and only.text.startswith(SUMMARY_PREFIX)
        else:
            all_results = bool(blocks) and all(b.type == "tool_result" for b in blocks)
            summary_text = any(b.type == "text" and b.text.startswith(SUMMARY_PREFIX) for b in blocks)
        tool_result = self.role == "tool" or (self.role == "user" and all_results)
        summary = self.is_compact_summary or summary_text
        # A tool result answers tool calls and a summary was written by a compaction:
        # neither was typed by a person, so neither opens a volley.
        human = self.role == "user" and not self.is_meta and not tool_result and not summary
        # set directly: a record is not frozen at run time
        self.is_tool_result = tool_result  # type: ignore[misc]
        self.is_summary_item = summary  # type: ignore[misc]
        self.is_human = human  # type: ignore[misc]

    @property
    def text(self) -> str:
        if len(self.blocks) == 1:  # most messages: no generator to make
            return self.blocks[0].render()
        return "\n".join(part for b in self.blocks if (part := b.render()))

    @property
    def written(self) -> bool:
        """Written by a strategy or a repair, not the transcript's own: it replaces others,
        or is synthetic."""
        return bool(self.replaces or self.is_synthetic)

    @property
    def char_count(self) -> int:
        return sum(len(b.render()) for b in self.blocks)

    @property
    def is_ptl_marker(self) -> bool:
        return (
            self.role == "user"
            and self.is_meta
            and len(self.blocks) == 1
            and self.blocks[0].type == "text"
            and self.blocks[0].text == PTL_MARKER_TEXT
        )

    @property
    def kind(self) -> Kind:
        if self.is_compact_boundary or self.is_microcompact or self.is_ptl_marker:
            return "marker"
        if self.is_summary_item:
            return "summary"
        if self.is_tool_result:
            return "tool_result"
        if self.attachment is not None:
            return "attachment"
        if self.is_meta:
            return "meta"
        return "message"

    def tool_use_ids(self) -> list[str]:
        return [b.id for b in self.blocks if b.type == "tool_use" and b.id is not None]

    def tool_result_ids(self) -> list[str]:
        return [b.tool_use_id for b in self.blocks if b.type == "tool_result" and b.tool_use_id is not None]

    def standing_in(self) -> Message:
        """What stands for this message among the sources of one that replaces it: the
        messages it stands for, without its text (`core.reporting.diff.sources` follows
        either alike where this message is not in the list compared)."""
        return Message(self.role, (), is_compact_summary=self.is_compact_summary, replaces=self.replaces)

    def with_blocks(self, blocks: tuple[Block, ...]) -> Message:
        """An edited copy that remembers it stands for this message."""
        # spelled out, positional: strategies make tens of thousands of these
        return Message(
            self.role,
            blocks,
            self.id,
            self.line,
            self.uuid,
            self.parent_uuid,
            self.request_id,
            self.timestamp,
            self.is_meta,
            self.is_sidechain,
            self.is_compact_summary,
            self.is_compact_boundary,
            self.is_synthetic,
            self.usage,
            (self,),
            self.attachment,
            self.is_microcompact,
            self.reasoning,
            self.plan,
        )


def text_message(role: Role, text: str, **flags: Any) -> Message:
    return Message(role=role, blocks=(Block("text", text=text),), **flags)


@immutable(slots=True)
class Diagnostic:
    """Something the loader noticed: a skipped line, a repaired field, a count."""

    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message}


class CompactionDetails(Protocol):
    """What an agent's record says of one of its compactions beyond the counts every
    agent's may hold (its package defines it): as JSON, and in words."""

    def to_dict(self) -> dict[str, Any]: ...

    def said(self) -> list[str]: ...


@immutable(slots=True)
class Compaction:
    """A compaction the transcript itself records (docs/agents.md): where its boundary
    marker sits and the context sizes the agent wrote down, when it did."""

    index: int  # of the boundary marker in `Session.messages`
    trigger: str | None = None  # "auto", "manual", or None where the format does not say
    pre_tokens: int | None = None  # the context the agent measured before it
    post_tokens: int | None = None  # ... and after it
    # "compact": the history summarized; "microcompact": only the `cleared` tool results
    # emptied (Claude Code's microcompact_boundary), the rest kept
    kind: str = "compact"
    cleared: tuple[str, ...] = ()  # the tool_use ids whose results a microcompact cleared
    tokens_saved: int | None = None  # what the agent estimated a microcompact saved
    hidden_tokens: int = 0  # of the new history, what the transcript holds only encrypted (estimated)
    call: Usage | None = None  # its own summarize request's usage, where the transcript records it
    duration_ms: int | None = None  # how long it took, where the agent records it
    # what its agent's record says of it beyond these, in the agent's own words (an
    # object its package defines)
    details: CompactionDetails | None = None
    # what the agent sent after it that the transcript does not record, in words (a hook
    # that ran on it and whose output no line holds): the context after it may be more
    unrecorded: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "post_tokens": self.post_tokens,
            **({"cleared": list(self.cleared), "tokens_saved": self.tokens_saved} if self.cleared else {}),
            # what newer versions record, where they do
            **({"duration_ms": self.duration_ms} if self.duration_ms is not None else {}),
            **(self.details.to_dict() if self.details is not None else {}),
            **({"unrecorded": list(self.unrecorded)} if self.unrecorded else {}),
        }


@immutable(slots=True)
class Check:
    """A point where the agent compared its own count with its limit, as the transcript
    records what that count is made of (Codex, docs/agents.md): before the request that
    would hold `messages[:index]`. `reported` is the last response's total tokens,
    `new_items` Codex's estimate (bytes / 4) of the items recorded since the last one the
    model generated; the reasoning term is read from the messages (`Message.reasoning`)."""

    index: int
    # "mid-turn": after a request that needs a follow-up; "pre-turn": before a user turn;
    # "model switch": before the first request of a model with a smaller window
    when: str
    reported: int
    new_items: int
    window: int | None = None  # the recorded window in force (a model switch's: the new model's)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "when": self.when,
            "reported": self.reported,
            "new_items": self.new_items,
            **({"window": self.window} if self.window is not None else {}),
        }


@immutable(slots=True)
class FileTouch:
    """What a Read, Edit or Write call left of a file, where the transcript records it
    (Claude Code's `toolUseResult`): the whole text after an Edit or a Write, or the
    share of the file a Read showed."""

    path: str
    text: str | None = None  # the whole file after the call; None: the result shows it
    share: float = 1.0  # of the file's lines the result shows (a Read of part of it)


@immutable()
class Session:
    """A loaded transcript: the main conversation plus what was set aside."""

    messages: tuple[Message, ...]
    format: str
    path: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    sidechain: tuple[Message, ...] = ()
    # Request bodies a proxy log or JSONL of bodies holds; which one is open.
    request_count: int = 1
    request_index: int = 0
    content_hash: str | None = None  # of the bytes read: keys the persistent token cache
    compactions: tuple[Compaction, ...] = ()  # the transcript's own, in order
    # A request body's own prompt outside its messages (system prompt, tool definitions),
    # by label: the overhead of the context it sent (docs/pressure.md).
    preamble: tuple[tuple[str, str], ...] = ()
    # What the logged response to a request body reported: its prompt is the whole body.
    request_usage: Usage | None = None
    # What each file tool call left of its file, by tool_use id, where the transcript says
    touches: Mapping[str, FileTouch] = field(default_factory=dict)
    # Where the agent checked its own count against its limit, where the transcript says
    checks: tuple[Check, ...] = ()
    # whose prices its responses are billed at: its format's (None: the table finds each model's)
    provider: str | None = None

    @property
    def session_id(self) -> str | None:
        value = self.metadata.get("session_id")
        return str(value) if value is not None else None

    def human_turns(self) -> int:
        return sum(1 for m in self.messages if m.is_human)


def canonical_json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):  # e.g. integers beyond 64 bits
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def shared_run(a: tuple[Message, ...], b: tuple[Message, ...], direction: int) -> int:
    """How many leading (1) or trailing (-1) messages two lists share (the same
    objects), by galloping over slice comparisons, which run in C. A step's before
    and after share all but what it changed."""
    limit = min(len(a), len(b))
    done, size = 0, 1
    while done < limit:
        size = min(size, limit - done)
        if direction > 0:
            same = a[done : done + size] == b[done : done + size]
        else:
            same = a[len(a) - done - size : len(a) - done] == b[len(b) - done - size : len(b) - done]
        if same:
            done += size
            size *= 2
        elif size == 1:
            break
        else:
            size //= 2
    return done


def alike_head(a: tuple[Message, ...], b: tuple[Message, ...], source: frozenset[Message]) -> int:
    """How many leading messages two requests share: the same messages, or messages a
    strategy made again alike (not from the transcript, `source`: a summary or a
    cleared result made anew for each request)."""
    head = shared_run(a, b, 1)
    while head < min(len(a), len(b)):
        x, y = a[head], b[head]
        if x is not y and (x in source or y in source or x.role != y.role or x.blocks != y.blocks):
            break
        head += 1
    return head


def shared_ends(a: tuple[Message, ...], b: tuple[Message, ...]) -> tuple[int, int]:
    """How many messages two lists share at the start, then at the end of the rest."""
    head = shared_run(a, b, 1)
    return head, shared_run(a[head:], b[head:], -1)

"""The user's own sessions: where each agent keeps them (its package says, `core.agents`),
and a row for each.

A row (`core.session_index.Row`) is what a list of sessions shows; scanning reads a file
once (the loaders stream it) and never writes it. Rows are kept in the index
(`core.session_index`), so a session is scanned again only when it changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.files import walk
from compaction_inspector.core.formats.common import LoadError
from compaction_inspector.core.formats.kinds import stored_in
from compaction_inspector.core.measuring.context_model import responses
from compaction_inspector.core.measuring.grouping import api_round_starts
from compaction_inspector.core.model import Message, Session
from compaction_inspector.core.pricing.cost import Cost, keyed_tokens, session_cost
from compaction_inspector.core.session_index import Index, Place, Row, problem
from compaction_inspector.core.timestamps import written
from compaction_inspector.core.topic import asks, title

FOLDER = "folder"  # a folder named to the list: any transcripts in it, whatever their agent
TITLE_CHARS = 1_000  # a title kept whole (lists cut it to fit); past this it is a pasted text


def roots(catalogue: Catalogue, given: dict[str, str | Path | None] | None = None) -> list[tuple[str, Path]]:
    """Where each agent keeps its sessions, by its format: the folder `given` for it,
    else its environment's, else the home's."""
    given = given or {}
    return [(name, agent.folder(given.get(name))) for name, agent in catalogue.by_format.items()]


def rows(
    catalogue: Catalogue,
    found: list[Found],
    progress: Callable[[int, int, Row], None] | None = None,
    jobs: int = 1,
    index: Index | None = None,
) -> list[Row]:
    """A row for each file, newest activity first, kept in `index` (the user's by
    default): scanned only when it changed, in up to `jobs` forked processes
    (`Index.rows`); `progress(done, total, row)` hears of each."""
    index = Index() if index is None else index
    return index.rows(found, partial(scan, catalogue), progress, jobs, places(catalogue))


def places(catalogue: Catalogue) -> list[Place]:
    """The agents' places, as the index keeps them (every agent's that has a `places`
    module: otherwise none, and a list is always made with the agents)."""
    made = [
        (a.format, a.places.__name__, a.folder_option, type(a).__module__)
        for a in catalogue.agents
        if a.places is not None
    ]
    return made if len(made) == len(catalogue.agents) else []


def find(catalogue: Catalogue, places: list[tuple[str, Path]]) -> list[Found]:
    """Every session file in `places`, each agent's found as it keeps them,
    a named folder's any transcripts in it but sub-agents' (its JSONL files, and the JSON
    files an agent writes whole for a session). A folder that cannot be read
    is left out (its neighbours are not); links are not followed."""
    found: list[Found] = []
    for agent, root in places:
        if agent in catalogue.by_format:
            found += catalogue.by_format[agent].find(root)
        else:
            found += [
                Found(f, agent, str(f.parent.relative_to(root)))
                for f in walk(root, "*.json*")
                if f.parent.name != "subagents"
                and (f.suffix == ".jsonl" or (f.suffix == ".json" and catalogue.formats.written_whole(f)))
            ]
    return found


def scan(catalogue: Catalogue, found: Found) -> Row:
    """The row of one session file; a file that cannot be read is a row with its problem."""
    try:
        st = stored_in(found.path)[0].stat()
        session = catalogue.formats.load(found.path)
    except LoadError as exc:
        return problem(found, str(exc))
    except OSError as exc:
        return problem(found, exc.strerror or str(exc))
    except (RecursionError, MemoryError) as exc:  # one file past what can be read stays one row
        return problem(found, f"too large or deep to read ({type(exc).__name__})")
    messages = session.messages
    # its first prompt that asks for work: a session begun after /clear starts with that command
    first = next((m for m in messages if m.is_human and asks(m.text)), None) or next(
        (m for m in messages if m.is_human), None
    )
    named = session.metadata.get("title")
    # the messages' own times, else the span a proxy log records, else the file's time
    stamps = (
        [m.timestamp for m in messages if m.timestamp]
        or [t for t in (session.metadata.get("started"), session.metadata.get("ended")) if isinstance(t, str)]
        or [_iso(st.st_mtime)]
    )
    prompts = [r.prompt_tokens for r in responses(session)]
    cost = whole_cost(catalogue, session)
    sub = cost.subagents if cost.has_subagents else None
    return Row(
        path=str(found.path),
        agent=session.format if found.agent == FOLDER else found.agent,
        # where the session ran, as it records it (Codex's folders are dates, Claude Code's
        # encode the path in a way that cannot be read back when the path is gone)
        project=str(session.metadata["cwd"]) if session.metadata.get("cwd") else found.project,
        title=title(str(named), TITLE_CHARS)
        if named
        else title(first.text, TITLE_CHARS)
        if first
        else "(no prompt)",
        started=min(stamps) if stamps else None,
        last_activity=max(stamps) if stamps else None,
        model=session.metadata.get("model"),
        messages=len(messages),
        api_rounds=len(api_round_starts(messages)),
        peak_context_tokens=max(prompts) if prompts else None,
        peak_pressure=round(Config(catalogue).for_session(session).window.pressure(max(prompts)), 4)
        if prompts
        else None,
        compactions=len(session.compactions),
        bytes=session.metadata.get("bytes", st.st_size),
        subagents=len(found.subagents),
        subagent_of=found.subagent_of,
        cost_usd=float(round(cost.whole, 2)) if cost.whole_priced else None,
        subagents_cost_usd=float(round(sub.total, 2)) if sub is not None and sub.priced else None,
        unpriced=cost.unpriced_line() or None,
        tokens={model: keyed_tokens(t) for model, t in cost.whole_tokens.items()} or None,
    )


def _iso(seconds: float) -> str:
    return written(int(seconds) * 1000)  # whole seconds: a file's time, not a transcript's


def _tools(catalogue: Catalogue, session: Session) -> tuple[str, ...]:
    agent = catalogue.by_format.get(session.format)
    return agent.task_tools if agent is not None else ()


def task_calls(messages: Sequence[Message], tools: Sequence[str]) -> frozenset[str]:
    """The ids of the calls among `messages` to the tools that start a sub-agent."""
    return frozenset(
        b.id for m in messages for b in m.blocks if b.type == "tool_use" and b.name in tools and b.id
    )


def subagent_files(
    catalogue: Catalogue, session: Session, messages: Sequence[Message], calls: frozenset[str] | None = None
) -> list[Path]:
    """Where the sub-agents the results of the session's task calls among `messages`
    name keep their transcripts, as its agent says (`Agent.subagent_files`): only the
    result of such a call (`calls`, by default those among `messages`) names one, so the
    same words in a file a tool read are not an agent's. Whether or not the files are
    there (the app opens the first that is)."""
    agent = catalogue.by_format.get(session.format)
    if agent is None or session.path is None:
        return []
    calls = task_calls(messages, agent.task_tools) if calls is None else calls
    results = [
        b
        for m in messages
        if m.is_tool_result
        for b in m.blocks
        if b.type == "tool_result" and b.tool_use_id in calls
    ]
    return agent.subagent_files(Path(session.path), results)


def subagent_sessions(catalogue: Catalogue, session: Session) -> tuple[tuple[Session, ...], tuple[str, ...]]:
    """The sub-agents' own transcripts the session names (beside its file), read, and
    those named but missing or unreadable; each once, however often it is named."""
    if session.path is None:
        return (), ()
    found: list[Session] = []
    unread: list[str] = []
    # a file of many sessions names its sub-agents' sessions; a transcript, their files
    named = session.metadata.get("subagent_sessions")
    paths = (
        [Path(str(n)) for n in named]
        if isinstance(named, list)
        else subagent_files(catalogue, session, session.messages)
    )
    for path in dict.fromkeys(paths):
        try:
            found.append(catalogue.formats.load(path))
        except LoadError:
            unread.append(str(path))
    return tuple(found), tuple(unread)


def whole_cost(catalogue: Catalogue, session: Session) -> Cost:
    """What the session cost with every sub-agent it ran (`session_cost`)."""
    return session_cost(session, *subagent_sessions(catalogue, session))


def transcripts_under(catalogue: Catalogue, names: Iterable[str]) -> list[Path]:
    """The transcripts `names` give: a folder, every `.jsonl` or `.json` file under it and
    every session of an agent's file of many (a database); a file, itself, or the
    sessions it holds."""
    suffixes = (".jsonl", ".json", *(x for s in catalogue.formats.stores for x in s.SUFFIXES))
    found: list[Path] = []
    for name in names:
        p = Path(name)
        files = sorted(q for q in p.rglob("*") if q.suffix in suffixes and q.is_file()) if p.is_dir() else [p]
        for file in catalogue.formats.sessions_among(files):
            found += catalogue.formats.sessions_in(file) or [file]
    return found


def subagent(catalogue: Catalogue, session: Session, near: Sequence[Message]) -> Path | Session | str:
    """The sub-agent a task call among `near` started (a call to one of its agent's
    `task_tools`): its own transcript where its agent keeps it, or (kept inline, as older
    Claude Code did) its sidechain as a session of its own; else why there is none to open."""
    tools = _tools(catalogue, session)
    named = subagent_files(catalogue, session, near, task_calls(session.messages, tools))
    found = next((p for p in named if stored_in(p)[0].is_file()), None)
    if found is not None:
        return found
    inline = inline_subagent(session.sidechain, near, tools)
    if inline:
        return dataclasses.replace(session, messages=inline, sidechain=(), content_hash=None)
    if named:  # the result names its transcript, which is not beside this file
        return (
            f"The sub-agent's transcript is missing: {named[0]} (its result names it; the file "
            "was not copied or was removed)"
        )
    starts = " or ".join(tools) or "sub-agent"
    return f"No sub-agent here: a {starts} call (or its result) opens the transcript it started"


def inline_subagent(
    sidechain: Sequence[Message], messages: Sequence[Message], tools: Sequence[str]
) -> tuple[Message, ...]:
    """The sub-agent a call to one of `tools` among `messages` started, where older Claude
    Code kept it inline (sidechain lines of the session's own file): the sidechain whose
    first message is the call's prompt, and every message that descends from it. Empty
    when there is none."""
    prompts = {
        str(b.input.get("prompt")).strip()
        for m in messages
        for b in m.blocks
        if b.type == "tool_use" and b.name in tools and isinstance(b.input, dict)
    }
    chain: list[Message] = []
    members: set[str] = set()
    for m in sidechain:
        inside = m.parent_uuid is not None and m.parent_uuid in members
        if inside or (not members and m.is_human and m.text.strip() in prompts):
            chain.append(m)
            members.add(m.uuid or "")
    return tuple(chain)

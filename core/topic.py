"""A prompt's own words, for titles and topics (docs/formats.md).

Agents wrap what a person typed: Claude Code puts the editor's selection or open file
before it (`<ide_selection>`, `<ide_opened_file>`), injects `<system-reminder>` blocks,
and writes slash commands as `<command-name>`, `<command-message>`, `<command-args>` and
their output as `<local-command-stdout>`; a shell command typed with `!` is
`<bash-input>`, its output `<bash-stdout>` and `<bash-stderr>`. A title or topic is the
person's words, not the wrapper: a shell command reads as `$ git switch main`.
"""

from __future__ import annotations

import re

from compaction_inspector.core.text import one_line

WRAPPERS = (
    "ide_selection",
    "ide_opened_file",
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-stdout",
    "bash-stderr",
)
_NAMES = "|".join(map(re.escape, WRAPPERS))
_BLOCK = re.compile(rf"<({_NAMES})\b[^>]*>.*?(?:</\1>|$)", re.S)  # unclosed: to the end
_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_SHELL = re.compile(r"<bash-input>(.*?)(?:</bash-input>|$)", re.S)  # what the person typed after `!`


def own_words(text: str) -> str:
    """`text` without the agent's wrappers; a bare slash command reads as the command
    and its arguments; text that is all wrapper stays as it is."""
    words = _SHELL.sub(lambda m: f"$ {m.group(1).strip()}", _BLOCK.sub(" ", text)).strip()
    if words:
        return words
    command = _COMMAND.search(text)
    if command:
        args = _ARGS.search(text)
        return " ".join(
            part.strip() for part in (command.group(1), args.group(1) if args else "") if part.strip()
        )
    return text


def command(text: str) -> str | None:
    """The slash command `text` runs (`/review` is "review"), or None."""
    found = _COMMAND.search(text)
    return found.group(1).strip().lstrip("/") or None if found else None


# slash commands that manage a session rather than ask for work: a session begun after
# `/clear` has it as its first prompt, and its title is the prompt that follows
SESSION_COMMANDS = frozenset({"clear", "compact", "resume", "continue", "model", "config", "status",
                              "cost", "context", "login", "logout", "help", "exit", "quit"})  # fmt: skip


def asks(text: str) -> bool:
    """`text` asks for work: words of the person's own, or a command that is not one that
    manages the session (`/clear`); not only the agent's wrappers (a command's empty
    `<local-command-stdout>`)."""
    if _BLOCK.sub(" ", text).strip():
        return True
    found = command(text)
    return found is not None and found not in SESSION_COMMANDS


def title(text: str, width: int) -> str:
    """A prompt's own words on one line, cut at `width`."""
    return one_line(own_words(text), width)

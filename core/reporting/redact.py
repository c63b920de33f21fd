"""What a report shared outside the team leaves out: file paths, strings that look like
secrets (API keys, tokens, long random strings), e-mail addresses, people's names where
the text says whose they are (a commit's author or its login, a sign-off, `git config
user.name`, a name before an address, a tracker's `assignee` or `createdBy`; an agent's
or a bot's name is kept), GitHub's node ids and repositories named with their organisation
(a Go import path, a clone URL), each replaced by a marker saying what it was, so the text
keeps its shape."""

from __future__ import annotations

import re
from functools import cache, partial

# keys with a known prefix, then any long run of letters, digits, - and _ that mixes
# letters and digits (random ids and secrets, not words)
_SECRET = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,})\b"
)
# an absolute path: /home/x/..., ~/..., C:\...; up to whitespace or a quote
_PATH = re.compile(
    r"(?:(?<![\w.:/])~?/(?:[\w.@+-]+/)+[\w.@+-]*|\b[A-Za-z]:\\(?:[^\s\"'<>|\\]+\\)*[^\s\"'<>|\\]*)"
)


# a repository named by its host, organisation and name, as Go imports, clone URLs and links
# write it (github.com/acme/billing/internal/...): the host is kept, the rest masked
_REPOSITORY = re.compile(
    r"(?:(?<=//)|(?<![\w.@/-]))(?P<host>(?:[a-z0-9-]+\.)+[a-z]{2,})(?P<sep>/)[\w.-]+/[\w.-]+(?:/[\w.@%+-]*)*"
    r"|\bgit@(?P<ssh>(?:[a-z0-9-]+\.)+[a-z]{2,}):[\w.-]+/[\w.-]+"
)


def _repository(m: re.Match[str]) -> str:
    if m.group("ssh") is not None:
        return f"git@{m.group('ssh')}:<repository>"
    return f"{m.group('host')}/<repository>"


_EMAIL = re.compile(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
# GitHub's GraphQL node ids: the newer `I_kwDO…`, `PR_kwDO…`, `U_kgDO…`, and the older base64 `MDQ6…`
_NODE_ID = re.compile(
    r"\b(?:[A-Z]{1,4}_k[gw]D[A-Za-z0-9_-]{6,}|MD(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{10,}={0,2})"
)
_NAME = r"[A-Z][\w'’-]+(?:\s+[A-Z][\w'’.-]*)+"
_LOGIN = r"[A-Za-z0-9][\w.-]*(?:\[bot\])?"  # one word after an author's label: a login
_ADDRESS = r"\s*<(?:<email>|[^>\s]+@[^>\s]+)>"
# a name where the text says it is a person's: after an author's label (a name or a
# login), before an address, or as the value of a tracker's field that names a person
_PERSON = re.compile(
    rf"(?P<lead>(?:Author|Committer|Co-[Aa]uthored-[Bb]y|Signed-[Oo]ff-[Bb]y|Reviewed-[Bb]y|user\.name)"
    rf"[:=]?\s*[\"']?)(?P<who>{_NAME}|{_LOGIN})(?P<address>{_ADDRESS})?"
    rf"|(?P<named>{_NAME})(?P<before>{_ADDRESS})"
    r"|(?P<field>\"(?:assignees?|createdBy|created_by|author|authorName|reviewers?|requestedReviewers?|owner"
    r"|creator|reporter|requester|login|username|userName|displayName|display_name|committer|updatedBy"
    r"|updated_by|mergedBy|merged_by|closedBy|closed_by)\"\s*:\s*\")(?P<value>[^\"\\]{1,100})(?=\")"
)
# a CI or an app, not a person: its name is kept (and each agent's, as it signs: `bots`)
_BOTS = r"\[bot\]|\bbot\b|no-?reply|github-actions|dependabot|renovate|copilot"


@cache  # one pattern a report: the agents it is given do not change
def _bot(agents: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join([_BOTS, *(rf"\b{re.escape(name)}\b" for name in agents)]), re.I)


def _person(m: re.Match[str], bot: re.Pattern[str]) -> str:
    whole = m.group(0)
    if bot.search(whole):
        return whole
    if m.group("field") is not None:
        return m.group("field") + "<name>"
    if m.group("named") is not None:
        return "<name>" + m.group("before")
    return m.group("lead") + "<name>" + (m.group("address") or "")


def redacted(text: str, agents: tuple[str, ...] = ()) -> str:
    """`text` with paths as `<path>`, secret-looking strings as `<secret>`, addresses as
    `<email>`, people's names as `<name>` (a bot's kept, and an agent's: `agents`, the
    names the agents sign with, `Files.signs_as`), GitHub node ids as `<id>` and a
    repository after its host as `<repository>`."""
    text = _PERSON.sub(partial(_person, bot=_bot(agents)), text)
    text = _REPOSITORY.sub(_repository, text)
    text = _EMAIL.sub("<email>", _NODE_ID.sub("<id>", text))
    return _PATH.sub("<path>", _SECRET.sub("<secret>", text))

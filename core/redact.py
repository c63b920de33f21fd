"""What a report shared outside the team leaves out: file paths, strings that look like
secrets (API keys, tokens, long random strings), e-mail addresses, people's names where
the text says whose they are (a commit's author, a sign-off, `git config user.name`, a
name before an address) and GitHub's node ids, each replaced by a marker saying what it
was, so the text keeps its shape."""

from __future__ import annotations

import re

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


_EMAIL = re.compile(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
# GitHub's GraphQL node ids: the newer `I_kwDO…`, `PR_kwDO…`, `U_kgDO…`, and the older base64 `MDQ6…`
_NODE_ID = re.compile(
    r"\b(?:[A-Z]{1,4}_k[gw]D[A-Za-z0-9_-]{6,}|MD(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{10,}={0,2})"
)
_NAME = r"[A-Z][\w'’-]+(?:\s+[A-Z][\w'’.-]*)+"
# a name where the text says it is a person's: before an address, after an author's label
_PERSON = re.compile(
    rf"(?P<lead>(?:Author|Committer|Co-[Aa]uthored-[Bb]y|Signed-[Oo]ff-[Bb]y|Reviewed-[Bb]y|user\.name)"
    rf"[:=]?\s*[\"']?){_NAME}|{_NAME}(?=\s*<(?:<email>|[^>\s]+@[^>\s]+)>)"
)


def redacted(text: str) -> str:
    """`text` with paths as `<path>`, secret-looking strings as `<secret>`, addresses as
    `<email>`, people's names as `<name>` and GitHub node ids as `<id>`."""
    text = _PERSON.sub(lambda m: (m.group("lead") or "") + "<name>", text)
    text = _EMAIL.sub("<email>", _NODE_ID.sub("<id>", text))
    return _PATH.sub("<path>", _SECRET.sub("<secret>", text))

"""What a report shared outside the team leaves out: file paths and strings that look
like secrets (API keys, tokens, long random strings), each replaced by a marker saying
what it was, so the text keeps its shape."""

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


def redacted(text: str) -> str:
    """`text` with paths as `<path>` and secret-looking strings as `<secret>`."""
    return _PATH.sub("<path>", _SECRET.sub("<secret>", text))

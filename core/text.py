"""Transcript text made safe to show on a terminal.

Messages hold whatever a model or a shell printed. Control characters (escape sequences,
clear-screen, OSC clipboard writes and hyperlinks, bidi overrides) are replaced by
visible stand-ins so they are read, never executed. Markup is a separate concern: the
callers render text as plain `Text`, never as markup.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
# a lone surrogate cannot be written as UTF-8 at all: shown as its code, like a C1 control
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ ... ␟
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character except newline and tab shown, not obeyed,
    and every lone surrogate shown as its code point."""
    return _UNSAFE.sub(_stand_in, text)


def say(text: str, stream: TextIO | None = None) -> None:
    """A line of plain output (stderr unless `stream`), shown, not obeyed: for the
    command line's lines that need no Rich (errors, warnings, what was written)."""
    print(visible(text), file=stream or sys.stderr)


def one_line(text: str, width: int) -> str:
    """The first `width` characters of `text` on one line, for previews and titles."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def shown(value: object, width: int = 40) -> str:
    """A value from a file or a user, quoted for an error message: its repr on one line,
    cut to `width`; an integer too long to print is described by its length."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**width:
        return f"a number of more than {width} digits"
    return one_line(repr(value), width)


def clauses(text: str) -> tuple[str, ...]:
    """`text` cut before each space that follows a semicolon ("a; b; c": "a;", " b;",
    " c"); joined, they are `text`. A tokenizer's pieces and the facts `core.replaying.retention`
    finds each start anew at such a space, so a text's counts are the sums of its
    clauses': a summary listing facts is read from the clauses seen in summaries before."""
    parts = text.split("; ")
    if len(parts) == 1:
        return (text,)
    return (parts[0] + ";", *[f" {p};" for p in parts[1:-1]], " " + parts[-1])


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` with thousands separators and the noun in the number it takes: "1 summary",
    "2 summaries", "30,697 messages"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"

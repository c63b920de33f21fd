"""One value set in an agent's JSON settings file with every other byte kept: its layout,
its order, and (in JSONC, as opencode reads it) its comments. The edit is made in the
text and read back: a file the edit would change anywhere else is refused, not written."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

_VALUE = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)'
_COMMENT = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)  # JSONC's comments, strings kept
_TRAILING = re.compile(r",(\s*[}\]])")


def load_jsonc(text: str) -> Any:
    """JSON, or JSON with comments and trailing commas (JSONC: opencode's settings, VS
    Code's). Raises ValueError where it is neither."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        plain = _TRAILING.sub(r"\1", _COMMENT.sub(lambda m: m.group(1) or "", text))
        return orjson.loads(plain)


def _first(text: str, opened: re.Match[str] | None, entry: str) -> str:
    """`entry` put first in the object whose opening brace `opened` found, in the layout
    its next entry has (its own line and indent, or a space)."""
    if opened is None:
        raise ValueError("no object to add the setting to")
    at = opened.end()
    rest = text[at:]
    space = rest[: len(rest) - len(rest.lstrip())]
    if rest.lstrip().startswith("}"):  # empty: the entry alone
        return (
            f"{text[:at]} {entry} {rest.lstrip()}"
            if "\n" not in space
            else f"{text[:at]}{space}{entry}{rest}"
        )
    if "\n" in space:
        return f"{text[:at]}{space}{entry},{rest}"
    after = re.search(r",([ \t]*)\"", text)  # the file's own space between entries
    return f"{text[:at]}{space}{entry},{after.group(1) if after else ' '}{rest.lstrip(' ')}"


def entry(text: str, key: str, load: Callable[[str], Any] = orjson.loads) -> str | None:
    """What a settings file's `text` sets `key` (`section.name`) to, as text; None where it
    sets nothing, or is not what `load` reads (its agent's reader)."""
    section, _, name = key.partition(".")
    try:
        data = load(text) if text.strip() else {}
    except ValueError:
        return None
    held = data.get(section) if isinstance(data, dict) else None
    value = held.get(name) if isinstance(held, dict) else None
    return None if value is None else str(value)


def with_key(text: str, key: str, value: Any, load: Callable[[str], Any] = orjson.loads) -> str:
    """`text` with `key` (`section.name`) set to `value` (`with_entry`)."""
    section, _, name = key.partition(".")
    return with_entry(text, section, name, value, load)


def with_entry(
    text: str, section: str, key: str, value: Any, load: Callable[[str], Any] = orjson.loads
) -> str:
    """`text` with `section.key` set to `value`: the value replaced where the key is
    there, else the key added first in `section`, else `section` added first in the top
    object; `load` reads the file as its agent does. Raises ValueError where the file is
    not an object with `section` an object, or the edit would change anything else."""
    try:
        data = load(text) if text.strip() else {}
    except ValueError as exc:
        raise ValueError(f"not JSON that can be read: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get(section, {}), dict):
        raise ValueError(f"not a JSON object with a {section} object")
    held = data.get(section, {})
    want = {**data, section: {**held, key: value}}
    written = orjson.dumps(value).decode()
    if not text.strip():
        made = "{\n  " + f'"{section}": {{\n    "{key}": {written}\n  }}' + "\n}\n"
    elif key in held:
        opened = re.search(rf'"{re.escape(section)}"\s*:\s*\{{', text)
        start = opened.end() if opened else 0
        found = re.compile(rf'("{re.escape(key)}"\s*:\s*){_VALUE}').search(text, start)
        if found is None:
            raise ValueError(f"{section}.{key} is not where it can be set")
        made = text[: found.start()] + found.group(1) + written + text[found.end() :]
    elif section in data:
        colon = re.search(r'"\s*:([ \t]*)', text)  # the file's own space after a colon
        entry = f'"{key}":{colon.group(1) if colon else " "}{written}'
        made = _first(text, re.search(rf'"{re.escape(section)}"\s*:\s*\{{', text), entry)
    else:
        made = _first(text, re.search(r"\{", text), f'"{section}": {{"{key}": {written}}}')
    try:
        back = load(made)
    except ValueError as exc:
        raise ValueError("the edit would leave the file unreadable") from exc
    if back != want:
        raise ValueError("the edit would change more than the setting")
    return made

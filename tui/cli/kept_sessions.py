"""`compaction-inspector sessions` answered from the index (`core.session_index`) where it
keeps a row for every session the agents' places hold now, as each file is now: the agents'
`places` modules it names are imported, and neither the agents, their strategies, the
settings nor the reading of a session. Anything else (an option this does not read, a
session new or changed since) is the whole command's to answer."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from compaction_inspector.core.contract.files import Found, Places, folder
from compaction_inspector.core.session_index import Index


def shown(argv: Sequence[str]) -> bool:
    """Print the list `sessions` `argv` asks for where the index holds it whole: True; False
    where the whole command must make it, having printed nothing."""
    try:
        index = Index()
        kept = index.kept_places()
        asked = _asked(argv, {option for _, _, option, _ in kept}) if kept else None
        if asked is None:
            return False
        as_json, named = asked
        places: list[tuple[str, Path]] = []
        found: list[Found] = []
        for agent, module, option, _ in kept:
            own = cast(Places, importlib.import_module(module))
            root = folder(own.home, named.get(option))
            places.append((agent, root))
            found += own.find(root)
        rows = index.kept(found)
    except Exception:  # an index edited by hand, a place that fails: the whole command says what
        return False
    if rows is None:
        return False
    if as_json:
        from compaction_inspector.tui.cli.json_out import print_json

        print_json([r.to_dict() for r in rows])
    else:
        from compaction_inspector.tui.cli.session_table import print_sessions

        print_sessions(rows, places)
    return True


def _asked(argv: Sequence[str], options: set[str]) -> tuple[bool, dict[str, str]] | None:
    """`--json` and each folder named, by its option; None for anything the whole
    command's parser must read (help, an abbreviation, a bad or missing value)."""
    as_json, named = False, {}
    words = iter(argv)
    for word in words:
        if word == "--json":
            as_json = True
            continue
        name, equals, value = word.partition("=")
        if not name.startswith("--") or (name[2:] not in options and name != "--jobs"):
            return None
        if not equals:
            value = next(words, "-")
        if value.startswith("-") or (name == "--jobs" and not (value.isdigit() and int(value) >= 1)):
            return None
        if name != "--jobs":  # how many processes would read a changed file: none is read here
            named[name[2:]] = value
    return as_json, named

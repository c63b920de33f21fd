"""`compaction-inspector serve`: the app in a browser, through textual-serve (the `serve`
extra). Each browser that connects runs the app on the file named (or the bundled
sample), never on the user's session list, which would show every session to whoever
connects. The page works offline: textual-serve's page links a web font, which is left
out of the copy of its template served here."""

from __future__ import annotations

import re
import shlex
import socket
import sys
import tempfile
from pathlib import Path

from compaction_inspector.core.text import say

EXTRA = "pip install 'compaction-inspector[serve]'"
_WEB_FONT = re.compile(r'\s*<link\s+rel="stylesheet"\s+href="https?://[^"]*"\s*/?>', re.S)


def offline_templates(into: Path) -> Path:
    """textual-serve's page templates with every remote stylesheet link left out."""
    import textual_serve

    source = Path(textual_serve.__file__).parent / "templates"
    for template in source.iterdir():
        if template.is_file():
            (into / template.name).write_text(_WEB_FONT.sub("", template.read_text()))
    return into


def bindable(host: str, port: int) -> str | None:
    """Why the server could not listen on `host`:`port` (in use, no such address), or None."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server's own socket does
            probe.bind(address)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def serve(file: str | None, host: str, port: int) -> int:
    """Serve the app on `file` (the bundled sample when None) until interrupted."""
    try:
        from textual_serve.server import Server
    except ImportError:
        say(f"compaction-inspector: serve needs textual-serve: {EXTRA}")
        return 2
    taken = bindable(host, port)
    if taken is not None:
        say(f"compaction-inspector: cannot serve on {host}:{port}: {taken}")
        return 2
    target = ["open", file] if file is not None else ["open", "--sample"]
    command = shlex.join([sys.executable, "-m", "compaction_inspector.tui.cli", *target])
    with tempfile.TemporaryDirectory() as folder:
        server = Server(
            command,
            host=host,
            port=port,
            title="Compaction Inspector",
            templates_path=offline_templates(Path(folder)),
        )
        if host not in ("127.0.0.1", "localhost", "::1"):
            say(f"compaction-inspector: serving on {host}: anyone who can reach it can open this transcript")
        server.serve()
    return 0

"""The app's screen as SVG that shows the same anywhere, offline: Rich's template links
its font to a CDN, which is dropped (a local Fira Code, else a monospace font, draws it)."""

from __future__ import annotations

import re
from typing import Any

from textual.app import App

_REMOTE_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')


def offline_svg(app: App[Any], title: str | None = None) -> str:
    """What is on screen now, as SVG with no remote URL to fetch."""
    return _REMOTE_FONT.sub("", app.export_screenshot(title=title))

"""What was in force when a session ran (docs/agents.md, "What the session itself says of
the point"), worked out once for every surface: its agent's window and the output it
reserves, with where they come from; the point, with the record or the rule that puts it
there; whether it compacted on its own; and, where the session ran with other settings than
today's, where today's put the point once the agent restarts; and where it compacts a
conversation left idle, for an agent that does.

The sources, in order: what the session's own record allows (`core.own.evidence`: a
compaction at C says the point was at most C, a request sent at P without compacting says
it was above P); the user's settings as they are now, where the record does not contradict
them; the agent's rule for its version; the default. `analyze`, `compactions`, `watch`, the
status line, the gauge, the report and `compare` read `Config.account` and nothing else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import immutable
from compaction_inspector.core.own.autocompact import Point

if TYPE_CHECKING:
    from compaction_inspector.core.catalogue import Catalogue
    from compaction_inspector.core.own.evidence import Bounds


class Settings(Protocol):
    """What the account reads of the inspector's settings (`core.config.Config`)."""

    @property
    def catalogue(self) -> Catalogue: ...

    @property
    def window(self) -> Window: ...

    @property
    def preset(self) -> str | None: ...

    @property
    def source(self) -> str | None: ...

    @property
    def strategies(self) -> Mapping[str, Any]: ...

    @property
    def agent_settings(self) -> Any: ...

    @property
    def bounds(self) -> Bounds | None: ...

    @property
    def agent(self) -> str | None: ...

    @property
    def window_recorded(self) -> bool: ...  # the window is the session's (or the default)

    def options(self, strategy: str) -> Any: ...


@immutable()
class Account:
    """What was in force, and where today's settings differ (`set_now`)."""

    window: Window
    window_source: str  # who set the window, in words
    point: Point | None  # None: no agent's rule (no preset); its tokens None: it never compacts on its own
    set_now: int | None = None  # where today's settings put the point, where it ran with others
    idle: Point | None = None  # where it compacts a conversation left idle (None: it has no such rule)

    @property
    def tokens(self) -> int | None:
        """The point in tokens; None without a preset, where it never compacts on its own,
        or in a window too small for its rule."""
        point = self.point
        return point.tokens if point is not None and point.tokens and point.tokens > 0 else None

    @property
    def auto(self) -> bool:
        """It compacted on its own."""
        return self.point is not None and self.point.tokens is not None

    @property
    def reserve(self) -> int:
        """The output it reserved of the window."""
        return self.window.reserved_output

    @property
    def note(self) -> str:
        """The point and why, in a line."""
        point = self.point
        if point is None:
            return "no preset: no auto-compact point"
        at = f"{point.tokens:,}" if point.tokens else "none"
        return f"auto-compact at {at}: {point.rule}"


Recorded = tuple[Point | None, int | None]  # the point the record puts in force, and today's


def of(settings: Settings, window_source: str, found: Recorded) -> Account:
    """The account of `settings` (a config for one session), `found` what its record puts
    in force (`recorded`)."""
    point, set_now = found
    agent = settings.catalogue.by_format.get(settings.agent or "")
    return Account(
        settings.window,
        window_source,
        point if point is not None else rule(settings),
        set_now,
        agent.idle(settings) if agent is not None else None,
    )


def recorded(settings: Settings) -> Recorded:
    """The point the session's record puts its agent at, where the rule under today's
    settings falls outside it: the rule without today's settings where the record allows
    that (today's then named as `set_now`), else the compaction's own count; (None, None)
    where the rule stands, the options are tuned, or the agent's point cannot be moved so."""
    agent = settings.catalogue.by_format.get(settings.agent or "")
    if settings.bounds is None or agent is None or not settings.window_recorded:
        return None, None
    own = settings.catalogue.strategies.get(agent.format)
    if own is None or settings.strategies.get(agent.format) != own.default_options():
        return None, None  # a what-if (or no replay of its own): the record says nothing of it
    plain: Any = dataclasses.replace(settings, bounds=None)  # type: ignore[type-var]
    found = rule(plain)
    if found is None or settings.bounds.holds(found.tokens):
        return None, None
    if agent.at_point(plain.options(agent.format), 1) is None:
        return None, None
    record = settings.bounds.told
    now = f"{found.tokens:,} ({found.rule})" if found.tokens else found.rule
    if settings.agent_settings is not None:
        before = rule(
            dataclasses.replace(plain, agent_settings=agent.recorded_settings(settings.agent_settings))
        )
        if before is not None and settings.bounds.holds(before.tokens):
            ran = Point(before.tokens, f"{before.rule}, as the session ran ({record}); set now: {now}")
            return ran, found.tokens
    if settings.bounds.at_most is None:
        return Point(found.tokens, f"{found.rule}; not what it ran with: {record}"), None
    return Point(settings.bounds.at_most, f"the session's own record: {record}; the rule says {now}"), None


def rule(settings: Settings) -> Point | None:
    """The preset's agent's rule in the window, under the options and today's settings."""
    preset = settings.catalogue.presets.get(settings.preset or "")
    if preset is None:
        return None
    if preset.agent is not None:
        return settings.catalogue.by_format[preset.agent].point(settings.window, settings)
    share, size = preset.fraction or 1.0, settings.window.context_window
    return Point(int(size * share), f"{share:.0%} of the window {size:,}")

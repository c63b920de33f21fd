"""What an agent counted against its own point: at each check its transcript records, and
before each of its automatic compactions (why it fired there)."""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property

from compaction_inspector.core.config import Config
from compaction_inspector.core.measuring.context_model import ContextModel, Response
from compaction_inspector.core.model import Session, immutable
from compaction_inspector.core.own import autocompact
from compaction_inspector.core.own.autocompact import Count


@immutable()
class AgentCounts:
    """The count the agent compared with its point (`core.own.autocompact`): at every check
    the transcript records (Codex), and just before each full compaction (Codex's last
    check; Claude Code's `preTokens` before an automatic one)."""

    checks: tuple[Count, ...]
    before: dict[int, Count]  # by the compaction's boundary index

    def between(self, start: int, end: int) -> list[Count]:
        """The checks before requests start+1 .. end."""
        ends = self._ends
        return list(self.checks[bisect_right(ends, start) : bisect_right(ends, end)])

    def at(self, end: int) -> Count | None:
        """The last check before the request messages[:end] (None: none yet); the gauge
        asks at every step."""
        k = bisect_right(self._ends, end)
        return self.checks[k - 1] if k else None

    @cached_property
    def _ends(self) -> list[int]:
        """Each check's message index, in order (the loader records them in order)."""
        return [k.index if k.index is not None else -1 for k in self.checks]


def agent_counts(session: Session, model: ContextModel, config: Config) -> AgentCounts:
    """The agent's own counts under the preset's point; none when the preset is not
    this session's agent."""
    point = config.account.point
    if point is None or config.agent != session.format:
        return AgentCounts((), {})
    agent = config.catalogue.by_format[session.format]

    def point_in(window: int) -> autocompact.Point | None:
        """Another model's window (before a switch): its own point."""
        return config.with_window(config.window_source, window, 0).account.point

    checks = agent.checks(session, config, point, point_in)
    counts = AgentCounts(checks, {})
    for c in session.compactions:
        if c.kind != "compact":
            continue
        segment = model.segment_start(c.index)
        if checks:
            found = counts.between(segment, c.index)
            if found:
                counts.before[c.index] = found[-1]
        else:
            last = last_response(model.responses, c.index, segment)
            count = agent.recorded(c, last.prompt_tokens if last else None, point, config)
            if count is not None:
                counts.before[c.index] = count
    return counts


def last_response(responses: tuple[Response, ...], end: int, segment: int) -> Response | None:
    before = [r for r in responses if segment <= r.start < end]
    return before[-1] if before else None

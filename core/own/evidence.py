"""What a session's own record says of the point its agent compacted at, whatever a rule
or today's settings say: an automatic compaction at a count C says the point was at most
C, and a request sent without compacting first, after a response whose prompt was P
tokens, says it was above P (every agent here counts at least its last response's prompt:
Claude Code's `tokenCountWithEstimation`, Codex's `get_total_token_usage`, opencode's
`isOverflow`). Where the two cross, the compaction's own count is the stronger evidence."""

from __future__ import annotations

from compaction_inspector.core.model import Session, immutable


@immutable()
class Bounds:
    """The point a session's record allows: above `above` (its largest prompt reported by
    a response followed by a request with no compaction first), at most `at_most` (its smallest automatic
    compaction's recorded count); each with the transcript line that says so."""

    above: int | None = None
    above_line: int | None = None
    at_most: int | None = None
    at_most_line: int | None = None

    def holds(self, tokens: int | None) -> bool:
        """A point the record allows (None: it never compacts on its own)."""
        if tokens is None:
            return self.at_most is None
        return (self.above is None or tokens > self.above) and (
            self.at_most is None or tokens <= self.at_most
        )

    @property
    def told(self) -> str:
        """ "it sent a request after 150,210 without compacting (line 812) and compacted on
        its own at 167,066 (line 903)"."""
        said = []
        if self.above is not None:
            said.append(f"it sent a request after {self.above:,} without compacting{_line(self.above_line)}")
        if self.at_most is not None:
            said.append(f"compacted on its own at {self.at_most:,}{_line(self.at_most_line)}")
        return " and ".join(said)


def _line(line: int | None) -> str:
    return f" (line {line})" if line is not None else ""


def bounds(session: Session, counts_recorded: bool) -> Bounds | None:
    """The session's bounds on its point (None: its record says nothing of it);
    `counts_recorded`: its automatic compactions record the count its agent compared."""
    at_most: tuple[int, int | None] | None = None
    automatic = [
        c for c in session.compactions if c.kind == "compact" and c.trigger == "auto" and c.pre_tokens
    ]
    if counts_recorded and automatic:
        c = min(automatic, key=lambda c: c.pre_tokens or 0)
        marker = session.messages[c.index] if c.index < len(session.messages) else None
        at_most = (c.pre_tokens or 0, marker.line if marker is not None else None)
    above: tuple[int, int | None] | None = None
    last: tuple[object, int, str | None] | None = None  # the last response: its key, total, model
    for m in session.messages:
        if m.is_sidechain:
            continue
        if m.is_compact_boundary:
            last = None  # the request after a compaction says nothing of the point
            continue
        usage = m.usage
        if usage is None:
            continue
        key = m.request_id or m.id or usage
        total = usage.prompt_tokens
        if last is not None and key == last[0]:  # one response streamed as several lines
            last = (key, max(total, last[1]), last[2])
            continue
        if last is not None and last[2] == usage.model and (above is None or last[1] > above[0]):
            above = (last[1], m.line)
        last = (key, total, usage.model)
    if above is not None and at_most is not None and above[0] >= at_most[0]:
        above = None
    if above is None and at_most is None:
        return None
    return Bounds(
        above[0] if above else None,
        above[1] if above else None,
        at_most[0] if at_most else None,
        at_most[1] if at_most else None,
    )

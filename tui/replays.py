"""The timeline's replays, in a worker: the policy shown (and the one compared with it),
sampled to the chart's columns and posted at once; then each priced on a whole replay,
as a sampled one reads less than each request sent."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from compaction_inspector.core.cost import replay_cost
from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.sessions import whole_cost
from compaction_inspector.core.simulate import Cancelled
from compaction_inspector.core.strategies import DEFAULT, REGISTRY
from compaction_inspector.core.summarizer import SummarizerError
from compaction_inspector.tui import messages
from compaction_inspector.tui.screens.progress import summarizer_failed

TIMELINE_POINTS = 200  # the chart has far fewer columns than a long session has rounds
NO_COMPACTION = "no compaction"


def compared(choice: str) -> str:
    """The policy name of the timeline's second curve (`none` and `no compaction`: the
    baseline, as a report compares with it)."""
    return BASELINE if choice in ("none", NO_COMPACTION) else choice


def replay_and_price(
    inspection: Inspection,
    strategy: str,
    compare: str,
    run: int,
    post: Callable[[Message], object],
    cancelled: Callable[[], bool],
) -> None:
    """Post `Replayed`, then `Priced`; nothing once `cancelled` (a newer replay supersedes)."""
    name = strategy if REGISTRY[strategy].timeline else DEFAULT
    every = max(1, len(inspection.segments.round_ends) // TIMELINE_POINTS)
    policies = [inspection.policy(name)]
    if compare != "none":
        policies.append(inspection.policy(compared(compare), against=name))
    try:
        main, *rest = (inspection.replay(p, cancelled, every) for p in policies)
        if cancelled():
            return
        post(messages.Replayed(run, main, rest[0] if rest else None))
        whole = [s if every == 1 else inspection.replay(s.policy, cancelled) for s in (main, *rest)]
    except Cancelled:
        return
    except SummarizerError as exc:
        post(messages.Refused("replay", run, summarizer_failed(exc)))
        return
    costs = [replay_cost(inspection.session, s) for s in whole]
    if not cancelled():
        post(
            messages.Priced(
                run, costs[0], costs[1] if len(costs) > 1 else None, whole_cost(inspection.session)
            )
        )

"""The timeline's replays, in a worker: the policy shown (and the one compared with it),
replayed whole and posted at once, then priced. The chart's columns each hold as many
rounds as they must; its cursor moves a round at a time."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from compaction_inspector.core.inspection import BASELINE, Inspection
from compaction_inspector.core.replaying.simulate import Cancelled
from compaction_inspector.core.replaying.simulation import AS_IT_RAN
from compaction_inspector.core.replaying.summarizer import SummarizerError
from compaction_inspector.core.strategies import DEFAULT
from compaction_inspector.tui.screens.progress import summarizer_failed
from compaction_inspector.tui.session import messages


def compared(choice: str) -> str:
    """The policy name of the timeline's second curve (`none` and `as it ran`: the
    baseline, as a report compares with it)."""
    return BASELINE if choice in ("none", AS_IT_RAN) else choice


def replay_and_price(
    inspection: Inspection,
    strategy: str,
    compare: str,
    run: int,
    post: Callable[[Message], object],
    cancelled: Callable[[], bool],
) -> None:
    """Post `Replayed`, then `Priced`; nothing once `cancelled` (a newer replay supersedes)."""
    name = strategy if inspection.config.catalogue.strategies[strategy].timeline else DEFAULT
    policies = [inspection.policy(name)]
    if compare != "none":
        policies.append(inspection.policy(compared(compare), against=name))
    try:
        main, *rest = (inspection.replay(p, cancelled) for p in policies)
        if cancelled():
            return
        post(messages.Replayed(run, main, rest[0] if rest else None))
        costs = [inspection.priced(p, cancelled)[1] for p in policies]
    except Cancelled:
        return
    except SummarizerError as exc:
        post(messages.Refused("replay", run, summarizer_failed(exc)))
        return
    if not cancelled():
        post(messages.Priced(run, costs[0], costs[1] if len(costs) > 1 else None, inspection.real_cost))

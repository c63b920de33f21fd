"""opencode's overflow rule (`packages/opencode/src/session/overflow.ts`, the same from
1.15 on, and `compaction.ts`'s `isOverflow` before it): after a response whose tokens reach
the usable input, it compacts. The usable input is the model's input limit less `reserved`
(`compaction.reserved`, else min(20,000, its output allowance)) where the model has one;
otherwise its context less its output allowance, min(output limit, 32,000)
(`ProviderTransform.maxOutputTokens`, `OUTPUT_TOKEN_MAX`), with nothing else taken off."""

from __future__ import annotations

from compaction_inspector.core.agents.opencode.settings import OpencodeSettings
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import immutable

OUTPUT_TOKEN_MAX = 32_000  # the most output it asks of any model
COMPACTION_BUFFER = 20_000  # the reserve under an input limit, at most


@immutable()
class Limits:
    """A model's limits as models.dev gives them (`input` None: the model has no input
    limit of its own), and where they come from."""

    context: int
    output: int
    input: int | None
    source: str


@immutable()
class Overflow:
    """Where opencode compacts a session: the window (the input limit or the context) less
    what its rule takes off, that rule in words, and the user's `compaction` settings it
    was worked out under."""

    window: Window
    rule: str
    own: OpencodeSettings | None

    @property
    def point(self) -> int:
        return self.window.usable


def output_allowance(output: int) -> int:
    """What it asks the model to leave for a reply: its output limit, at most 32,000."""
    return min(output, OUTPUT_TOKEN_MAX) or OUTPUT_TOKEN_MAX


def overflow(limits: Limits, own: OpencodeSettings | None) -> Overflow:
    """The rule of the module's docstring for a model's limits, under the user's settings."""
    allowance = output_allowance(limits.output)
    reserved = own.reserved if own is not None else None
    if limits.input:
        take = reserved.value if reserved is not None else min(COMPACTION_BUFFER, allowance)
        why = (
            reserved.told("compaction.reserved")
            if reserved is not None
            else (f"min({COMPACTION_BUFFER:,}, its output allowance {allowance:,})")
        )
        window = _window(limits.input, take)
        return Overflow(window, f"its input limit {limits.input:,} less {take:,} reserved ({why})", own)
    rule = (
        f"its context {limits.context:,} less its output allowance {allowance:,} "
        f"(min(output limit, {OUTPUT_TOKEN_MAX:,}))"
    )
    if reserved is not None:
        rule += f"; {reserved.told('compaction.reserved')} applies only to a model with an input limit"
    return Overflow(_window(limits.context, allowance), rule, own)


def _window(size: int, take: int) -> Window:
    """`size` less `take`; where that leaves nothing (opencode's max(0, …)), one token, so
    every response overflows as it would."""
    return Window(size, min(take, size - 1))

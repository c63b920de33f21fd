"""The output a reply adds to the request after it, as the context model and the status
line count it (docs/pressure.md): apart, so the status line reads it without the model."""

from __future__ import annotations


def held_output(reported: int, counted: float) -> float:
    """The output a reply adds to the next request: what its lines report, unless they
    hold more than twice that. A line reports its output as far as it had streamed
    (2.0.76 writes 1 on replies of hundreds of tokens), so such a report is a figure from
    mid-stream and the reply's lines, `counted` (in the model's tokens), stand for it; a
    whole report stands, whatever a tokenizer's estimate of the same lines says."""
    return counted if counted > 2 * reported else float(reported)

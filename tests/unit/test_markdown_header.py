"""The Markdown export's header gives the request a step works on, not the whole transcript."""

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.measuring.tokens import make_counter
from compaction_inspector.core.reporting.markdown import compaction_markdown
from compaction_inspector.sample_sessions import path


def test_the_header_is_the_request_sent_next_as_its_first_step_counts_it() -> None:
    ins = Inspection.open(
        path("claude_code_compacted.jsonl"), Config(CATALOGUE, window=Window(5000, 500), preset=None)
    )
    ins = Inspection.of(ins.session, ins.config, make_counter("chars4"))
    result = ins.run("hysteresis")
    text = compaction_markdown(ins, result)
    first = result.steps[0].tokens_before
    assert f"{first:,} tokens of context" in text
    assert (
        f"{len(ins.session.messages) - ins.live:,} of the transcript's {len(ins.session.messages):,} messages"
        in text
    )

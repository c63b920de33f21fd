"""The session's own record bounds its agent's point (`core.own.evidence`): an automatic
compaction at a count C says at most C, a request sent without compacting after a prompt
of P says above P; a rule or today's settings outside those bounds give way. The
transcripts are built here as Claude Code writes them (2.1.74: a 200,000 window, 20,000
reserved, its rule's point 167,000)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.own.account import recorded
from compaction_inspector.core.own.evidence import Bounds, bounds
from tests.helpers import load
from tests.unit.test_statusline import line, prompt, reply


def boundary(uuid: str, pre: int, trigger: str = "auto") -> str:
    return line(
        uuid, "system", subtype="compact_boundary", compactMetadata={"trigger": trigger, "preTokens": pre}
    )


def transcript(
    tmp_path: Path, prompts: list[int], compacted: int | None = None, cwd: Path | None = None
) -> Path:
    """One prompt, then a response for each figure of `prompts`, and an automatic
    compaction at `compacted` after them (then one more response)."""
    extra: dict[str, Any] = {"cwd": str(cwd)} if cwd else {}
    lines = [json.dumps({**json.loads(prompt(0, "go")), **extra})]
    for n, tokens in enumerate(prompts):
        lines += reply(n, tokens)
    if compacted is not None:
        lines += [boundary("c", compacted), *reply(len(prompts), 20_000)]
    file = tmp_path / "s.jsonl"
    file.write_text("\n".join(lines) + "\n")
    return file


def test_the_bounds_are_the_largest_prompt_sent_on_and_the_smallest_automatic_compaction(
    tmp_path: Path,
) -> None:
    file = transcript(tmp_path, [100_000, 150_000, 160_000], compacted=169_500)
    found = bounds(load(file), counts_recorded=True)
    # lines: 1 the prompt, 2-3 / 4-5 / 6-7 the responses (each streamed as two lines), 8 the boundary
    assert found == Bounds(150_000, 6, 169_500, 8)
    assert found.told == (
        "it sent a request after 150,000 without compacting (line 6) and compacted on its own at "
        "169,500 (line 8)"
    )
    assert not found.holds(150_000) and found.holds(150_001) and found.holds(169_500)
    assert not found.holds(169_501) and not found.holds(None)
    assert bounds(load(file), counts_recorded=False) == Bounds(150_000, 6, None, None)


def test_a_rule_inside_the_bounds_stands(tmp_path: Path) -> None:
    file = transcript(tmp_path, [100_000, 150_000, 166_000], compacted=168_000)
    config = Config(CATALOGUE).for_session(load(file))
    assert recorded(config) == (None, None) and config.account.tokens == 167_000


def test_a_compaction_under_the_rules_point_puts_the_point_at_its_count(tmp_path: Path) -> None:
    """As a model with a window of its own run through Claude Code: it compacted on its
    own at 139,899 where the rule says 167,000; "why here" fires, and so does the replay."""
    file = transcript(tmp_path, [100_000, 130_000], compacted=139_899)
    inspection = Inspection.open(file, Config(CATALOGUE))
    config = inspection.config
    assert config.account.tokens == 139_899
    assert config.account.point is not None and config.account.point.rule == (
        "the session's own record: it sent a request after 100,000 without compacting (line 4) and "
        "compacted on its own at 139,899 (line 6); the rule says 167,000 (13,000 under the effective "
        "window of 180,000 (200,000 less 20,000 reserved for output))"
    )
    assert config.options("claude-code").auto_compact_tokens == 139_899
    (own,) = inspection.own_compactions()
    assert own.count is not None and own.count.fires and own.count.point.tokens == 139_899


def test_todays_override_the_session_ran_past_is_set_now_not_what_was_in_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE 70 in settings.json today puts the point at
    126,000, but the session sent requests at 150,000 without compacting and compacted at
    169,500: it ran at its default, 167,000, and the point says both."""
    home = tmp_path / "claude"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    file = transcript(tmp_path, [100_000, 150_000, 160_000], compacted=169_500, cwd=tmp_path / "p")
    config = Config(CATALOGUE).for_session(load(file))
    assert config.account.tokens == 167_000
    assert config.account.point is not None and config.account.point.rule == (
        "13,000 under the effective window of 180,000 (200,000 less 20,000 reserved for output), as "
        "the session ran (it sent a request after 150,000 without compacting (line 6) and compacted "
        "on its own at 169,500 (line 8)); set now: 126,000 (your CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of 70 "
        f"({home / 'settings.json'}): 70 % of 180,000)"
    )
    assert config.options("claude-code").auto_compact_tokens == 167_000


def test_a_tuned_point_is_a_what_if_the_record_does_not_move(tmp_path: Path) -> None:
    file = transcript(tmp_path, [100_000, 130_000], compacted=139_899)
    config = Config(CATALOGUE).for_session(load(file))
    options = config.options("claude-code")
    tuned = config.with_options("claude-code", type(options)(auto_compact_tokens=120_000))
    assert recorded(tuned) == (None, None) and tuned.account.tokens == 120_000


@given(
    st.lists(st.integers(1, 300_000), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(1, 300_000)),
)
def test_the_bounds_always_hold_the_compactions_own_count(prompts: list[int], compacted: int | None) -> None:
    """Whatever the session, its smallest automatic compaction's count is a point its
    record allows, and nothing above it is."""
    from compaction_inspector.core.model import Compaction, Message, Session, Usage

    messages = [
        Message("assistant", (), id=f"r{n}", line=n + 1, usage=Usage(input_tokens=p))
        for n, p in enumerate(prompts)
    ]
    compactions: tuple[Compaction, ...] = ()
    if compacted is not None:
        messages.append(Message("system", (), line=len(messages) + 1, is_compact_boundary=True))
        compactions = (Compaction(len(messages) - 1, "auto", compacted),)
    found = bounds(Session(tuple(messages), "plain", compactions=compactions), counts_recorded=True)
    sent_on = max(prompts[:-1], default=None)
    if compacted is None:
        assert found == (Bounds(sent_on, prompts.index(sent_on) + 2) if sent_on is not None else None)
    else:
        assert found is not None and found.holds(compacted) and not found.holds(compacted + 1)

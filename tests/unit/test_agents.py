"""Each agent is one package, registered by the format it writes (`core.agents.registry`):
what the list, the window, the point and the counts read of an agent comes from its record
in the catalogue, so a made-up fourth agent added to it here is listed, measured and
counted like the real ones."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents import registry
from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.agent import Agent, ConfigView, Found, Preset, SessionWindow
from compaction_inspector.core.files import walk
from compaction_inspector.core.formats.common import Records, iter_dicts, name_compactions
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Block, Compaction, Message, Role, Session, Usage
from compaction_inspector.core.own.autocompact import Count, Point
from compaction_inspector.core.sessions import find, roots
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.cli import build_parser
from tests.helpers import load
from tests.hostile import COMMANDS, run_cli

TOY = "toy-agent"
TOY_WINDOW = Window(50_000, 5_000)


class ToyJournal:
    """A made-up agent's JSONL: a line per message, and a line for each compaction."""

    FORMAT = TOY
    PROVIDER = "anthropic"
    DESCRIBED = "the toy's JSONL"

    def looks_like(self, record: dict[str, Any]) -> bool:
        return record.get("toy") is True

    def load(self, records: Records, path: str | None) -> Session:
        messages: list[Message] = []
        compactions: list[Compaction] = []
        for number, record in iter_dicts(records):
            if record.get("compacted"):
                compactions.append(Compaction(len(messages), "auto", record.get("pre")))
                messages.append(
                    Message(
                        "system", (Block("text", text="compaction"),), line=number, is_compact_boundary=True
                    )
                )
                continue
            usage = (
                Usage(input_tokens=record["prompt"], output_tokens=5, model="claude-sonnet-4-5")
                if "prompt" in record
                else None
            )
            role: Role = "assistant" if record["role"] == "assistant" else "user"
            messages.append(
                Message(role, (Block("text", text=record["text"]),), record.get("id"), number, usage=usage)
            )
        name_compactions(messages, compactions)
        return Session(
            tuple(messages), TOY, path, {"model": "claude-sonnet-4-5"}, compactions=tuple(compactions)
        )

    def appended(self, session: Session, records: Records) -> Session | None:
        return None


class Toy(Agent):
    """A made-up agent: one class, its hooks where it has something to say."""

    format = TOY
    name = "Toy"
    folder_option = "toy-dir"
    folder_help = "the toy's sessions folder"
    journal = ToyJournal()
    presets = (Preset(TOY, TOY_WINDOW.context_window, TOY_WINDOW.reserved_output, "a toy agent", agent=TOY),)
    compaction_mark = b'"compacted"'

    def __init__(self, home: Path) -> None:
        self._home = home

    def home(self) -> Path:
        return self._home

    def find(self, root: Path) -> list[Found]:
        return [Found(p, TOY, p.parent.name) for p in walk(root, "*.jsonl")]

    def point(self, window: Window, settings: ConfigView) -> Point:
        return Point(window.usable - 1_000, "1,000 under the usable window")

    def window(self, settings: ConfigView, session: Session) -> SessionWindow | None:
        return SessionWindow(TOY, TOY_WINDOW, "the session's toy window") if session.format == TOY else None

    def recorded(
        self, compaction: Compaction, reported: int | None, at: Point, settings: ConfigView
    ) -> Count | None:
        pre = compaction.pre_tokens
        return Count("Toy", (("its own count", pre),), (), at) if pre is not None else None


def registering(monkeypatch: pytest.MonkeyPatch, agent: Agent) -> Catalogue:
    """The catalogue with `agent` added to the registry's, as its one line there would
    add it; the command line makes it the one it passes down."""
    catalogue = Catalogue((*registry.AGENTS, agent))
    monkeypatch.setattr(registry, "CATALOGUE", catalogue)
    return catalogue


def test_a_registered_agent_is_listed_measured_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue = registering(monkeypatch, Toy(tmp_path / "toy-home"))
    # its sessions, where it keeps them or where its option says
    (tmp_path / "toy-home" / "day").mkdir(parents=True)
    kept = tmp_path / "toy-home" / "day" / "one.jsonl"
    kept.write_bytes(path().read_bytes())
    assert (TOY, tmp_path / "toy-home") in roots(catalogue)
    assert roots(catalogue, {TOY: tmp_path})[-1] == (TOY, tmp_path)
    assert [f.path for f in find(catalogue, [(TOY, tmp_path / "toy-home")])] == [kept]
    parsed = build_parser().parse_args(["sessions", "--toy-dir", str(tmp_path)])
    assert parsed.toy_dir == str(tmp_path)
    # its window and its point, for a session of its format
    assert TOY in catalogue.presets
    session = dataclasses.replace(load(path()), format=TOY)
    config = Config(catalogue).for_session(session)
    assert (config.preset, config.window, str(config.window_source)) == (
        TOY,
        TOY_WINDOW,
        "the session's toy window",
    )
    assert config.agent == TOY and config.auto_compact_tokens == 44_000
    # the count it recorded before its compaction, against its point
    (own,) = Inspection.of(session, config).own_compactions()
    assert own.count is not None and own.count.agent == "Toy" and own.count.point.tokens == 44_000


def test_an_agent_writing_a_format_already_registered_is_refused() -> None:
    with pytest.raises(ValueError, match="registered already"):
        Catalogue((*registry.AGENTS, registry.AGENTS[-1]))


def toy_file(folder: Path) -> Path:
    lines: list[dict[str, Any]] = []
    for n in range(12):
        lines.append({"toy": True, "role": "user", "text": f"task {n}: " + "words " * 300})
        lines.append(
            {
                "toy": True,
                "role": "assistant",
                "text": "done " * 200,
                "id": f"r{n}",
                "prompt": 4_000 * (n + 1),
            }
        )
        if n == 9:
            lines.append({"toy": True, "compacted": True, "pre": 40_500})
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "toy-session.jsonl"
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


def test_a_made_up_agent_and_its_format_go_through_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered, a third agent's sessions open, are analysed, compacted, replayed, compared,
    reported and swept like the two real ones', its window and point its own."""
    registering(monkeypatch, Toy(tmp_path / "toy-home"))
    target = toy_file(tmp_path / "toy-home" / "day")
    for command in COMMANDS:
        outcome = run_cli([command[0], str(target if command[0] != "sweep" else target.parent), *command[1:]])
        assert outcome.crash is None and outcome.code == 0, (command, outcome.err)
    analysed = json.loads(run_cli(["analyze", str(target), "--json"]).out)
    assert analysed["format"] == TOY and analysed["auto_compact"]["tokens"] == 44_000
    (own,) = json.loads(run_cli(["compactions", str(target), "--json"]).out)
    assert own["agent_count"]["agent"] == "Toy" and own["agent_count"]["point"] == 44_000
    report = run_cli(["report", str(target), "-o", str(tmp_path / "toy.html")])
    assert report.code == 0 and (tmp_path / "toy.html").exists()
    listed = json.loads(run_cli(["sessions", "--json", "--toy-dir", str(tmp_path / "toy-home")]).out)
    assert any(row["agent"] == TOY and row["path"] == str(target) for row in listed)

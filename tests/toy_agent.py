"""A made-up agent written as a real one is: a package of its own (the tests copy this
file to `core/agents/toy/agent.py` of an installed tree and register it with one line)
whose JSONL has a line per message and a line for each compaction."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.contract.files import Found
from compaction_inspector.core.contract.rules import ConfigView, Preset, SessionWindow
from compaction_inspector.core.files import walk
from compaction_inspector.core.formats.common import Records, iter_dicts, name_compactions
from compaction_inspector.core.measuring.pressure import Window
from compaction_inspector.core.model import Block, Compaction, Message, Role, Session, Usage
from compaction_inspector.core.own.autocompact import Count, Point

TOY = "toy-agent"
TOY_WINDOW = Window(50_000, 5_000)
HOME = "TOY_HOME"  # where it keeps its sessions


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

    homes = (HOME,)

    def home(self) -> Path:
        return Path(os.environ.get(HOME) or Path.home() / ".toy")

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

"""Each agent is one package, registered by the format it writes (`core.agents.registry`):
what the list, the window, the point and the counts read of an agent comes from its record
in the catalogue, so a made-up agent added to it here is listed, measured and
counted like the real ones."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents import registry
from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.catalogue import Catalogue
from compaction_inspector.core.config import Config
from compaction_inspector.core.contract.agent import Agent
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.core.sessions import find, roots
from compaction_inspector.sample_sessions import path
from compaction_inspector.tui.cli.commandline import build_parser
from tests.helpers import installed_tree, load
from tests.toy_agent import HOME, TOY, TOY_WINDOW, Toy


def registering(monkeypatch: pytest.MonkeyPatch, agent: Agent) -> Catalogue:
    """The catalogue with `agent` added to the registry's, as its one line there would
    add it; the command line makes it the one it passes down."""
    catalogue = Catalogue((*registry.AGENTS, agent))
    monkeypatch.setattr(registry, "CATALOGUE", catalogue)
    return catalogue


def test_a_registered_agent_is_listed_measured_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME, str(tmp_path / "toy-home"))
    catalogue = registering(monkeypatch, Toy())
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
    assert config.agent == TOY and config.account.tokens == 44_000
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


def test_a_new_agent_is_its_package_and_one_registry_line(tmp_path: Path) -> None:
    """Written as a real agent is (its package, its line in the registry, nothing else),
    a new agent's sessions are found in its own home, which the tests isolate from its
    registration alone, and open, are analysed, compacted, replayed, compared, reported
    and swept like the real ones', its window and point its own."""
    tree = installed_tree(tmp_path / "installed", copied=True)
    agents = tree / "compaction_inspector" / "core" / "agents"
    (agents / "toy").mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "toy_agent.py", agents / "toy" / "agent.py")
    (agents / "toy" / "__init__.py").write_text("")
    registry_file = agents / "registry.py"
    text = registry_file.read_text()
    tuple_line = next(line for line in text.splitlines() if line.startswith("AGENTS: tuple[Agent, ...] = ("))
    text = text.replace(tuple_line, tuple_line.removesuffix(")") + ", Toy())")
    text = text.replace(
        "from compaction_inspector.core.catalogue",
        "from compaction_inspector.core.agents.toy.agent import Toy\n"
        "from compaction_inspector.core.catalogue",
    )
    registry_file.write_text(text)
    homes = tmp_path / "homes"
    done = subprocess.run(
        [sys.executable, "-c", FOURTH, str(homes)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["home"] == str(homes / HOME.lower())
    assert said["failed"] == []
    assert said["format"] == TOY and said["point"] == 44_000 and said["agent_count"] == ["Toy", 44_000]
    assert said["listed"] and said["report"]


ROOT = Path(__file__).resolve().parents[2]
# run in the installed tree with the toy registered: its home from its registration, then
# every command on a session of it
FOURTH = """
import json, os, sys
from pathlib import Path
from compaction_inspector.core.agents.registry import AGENTS
from tests.helpers import isolated_homes
os.environ.update(isolated_homes(AGENTS, sys.argv[1]))
from tests.hostile import COMMANDS, run_cli
from tests.unit.test_agents import toy_file
home = os.environ["TOY_HOME"]
target = toy_file(Path(home) / "day")
failed = []
for command in COMMANDS:
    named = str(target if command[0] != "sweep" else target.parent)
    outcome = run_cli([command[0], named, *command[1:]])
    if outcome.crash is not None or outcome.code != 0:
        failed.append([command, outcome.err[-400:]])
analysed = json.loads(run_cli(["analyze", str(target), "--json"]).out)
(own,) = json.loads(run_cli(["compactions", str(target), "--json"]).out)
report = Path(home) / "toy.html"
run_cli(["report", str(target), "-o", str(report)])
listed = json.loads(run_cli(["sessions", "--json"]).out)
print(json.dumps({
    "home": home,
    "failed": failed,
    "format": analysed["format"],
    "point": analysed["auto_compact"]["tokens"],
    "agent_count": [own["agent_count"]["agent"], own["agent_count"]["point"]],
    "report": report.exists(),
    "listed": any(row["agent"] == "toy-agent" and row["path"] == str(target) for row in listed),
}))
"""


def test_an_agent_owns_its_names_where_another_tool_s_variant_had_one() -> None:
    """A tool with no package here is a variant (`goose`); an agent registered
    under that name owns it, and the variant gives way rather than clash."""

    class Goose(Toy):
        format = "goose"

    assert "goose" in CATALOGUE.strategies
    catalogue = Catalogue((*registry.AGENTS, Goose()))
    assert "goose" not in catalogue.strategies and catalogue.by_format["goose"].name == "Toy"

"""Where a session stands against its agent's point is one answer on every surface, the
session's account (`core.own.account`): `compactions` ends with the line `analyze` gives,
and `watch --once` (the status line's figures) says the same tokens and requests left."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from compaction_inspector.core.config import Config
from compaction_inspector.core.inspection import Inspection
from compaction_inspector.sample_sessions import path
from tests.helpers import load
from tests.test_cli import run
from tests.unit.test_opencode import built


@pytest.mark.parametrize(
    "name", ["claude_code_compacted.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"]
)
def test_compactions_analyze_and_watch_say_the_same_next_check(name: str) -> None:
    file = str(path(name))
    left = json.loads(run("analyze", file, "--json").stdout)["compacts_in"]
    said = (
        f"compacts in ~{left['tokens_left']:,} tokens (about {left['requests_left']:,} requests at this pace)"
    )
    now = " ".join(run("compactions", file).stdout.split()).split("now: ")[-1]
    assert now.startswith(f"its point {left['point']:,}; ") and now.endswith(said)
    assert said in " ".join(run("analyze", file).stdout.split())
    watched = run("watch", "--once", file).stdout
    tokens = left["tokens_left"]
    shown = f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k"
    assert re.search(rf"compacts in ~{re.escape(shown)} \(about {left['requests_left']:,} requests", watched)


LAYERS = [
    ({"user": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "90"}}, 151_200),
    (
        {
            "user": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "90"},
            "project": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "80"},
        },
        134_400,
    ),
    (
        {
            "project": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "80"},
            "local": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"},
        },
        117_600,
    ),
    ({"local": {"DISABLE_AUTO_COMPACT": "true"}}, None),
]


@pytest.mark.parametrize(("layers", "point"), LAYERS)
def test_every_surface_reads_one_point_from_the_settings_layers(
    layers: dict[str, dict[str, str]], point: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's settings built from its documented keys in its three layers (user,
    the project's, the local one): `analyze`, `compactions`, `watch --once`, the status
    line and the replay's own strategy say the same point."""
    user, project = tmp_path / "user", tmp_path / "project"
    files = {
        "user": user / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }
    for layer, env in layers.items():
        files[layer].parent.mkdir(parents=True, exist_ok=True)
        files[layer].write_text(json.dumps({"env": env}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    transcript = tmp_path / "session.jsonl"
    records = [json.loads(x) for x in path("claude_code_session.jsonl").read_text().splitlines() if x.strip()]
    transcript.write_text("".join(json.dumps({**r, "cwd": str(project)}) + "\n" for r in records))
    file = str(transcript)

    said = f"{point:,}" if point is not None else "none"
    analyzed = json.loads(run("analyze", "--json", file).stdout)
    assert (analyzed["compacts_in"] or {}).get("point") == point
    assert f"now: its point {said}" in " ".join(run("compactions", file).stdout.split()) or point is None
    shown = f"{point / 1000:.0f}k" if point is not None else "no point"
    assert f"of {shown} · " in run("watch", "--once", file).stdout
    monkeypatch.setattr(
        "sys.stdin",
        io.StringIO(json.dumps({"transcript_path": file, "workspace": {"project_dir": str(project)}})),
    )
    assert f"of {shown} · " in run("statusline").stdout
    inspection = Inspection.of(load(transcript), Config(CATALOGUE))
    assert inspection.config.account.tokens == point  # the one account they all read
    assert getattr(inspection.run("claude-code").stats, "point") == point  # noqa: B009  # the replay's


WORK, LIMIT = 'profile = "work"\n', "model_auto_compact_token_limit = "
CODEX_FILES = [
    ("model_auto_compact_token_limit = 200000\n", 200_000),
    (
        'profile = "work"\nmodel_auto_compact_token_limit = 230000\n\n'
        "[profiles.work]\nmodel_auto_compact_token_limit = 180000\n",
        180_000,
    ),
    (
        'profile = "work"\nmodel_auto_compact_token_limit = 230000\n\n[profiles.work]\nmodel = "o4-mini"\n',
        230_000,
    ),
    ("model_auto_compact_token_limit = 900000\n", 257_684),  # never above 90 % of the raw window
]


@pytest.mark.parametrize(("toml", "point"), CODEX_FILES)
def test_every_surface_reads_one_point_from_codexs_config_and_its_profile(
    toml: str, point: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex's `config.toml` built from its documented keys, the top level and the default
    profile's table: `analyze`, `compactions`, `watch --once` and the replay's own strategy
    say the same limit."""
    (tmp_path / "config.toml").write_text(toml)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    monkeypatch.setenv("COMPACTION_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    file = str(path("codex_rollout.jsonl"))
    assert json.loads(run("analyze", "--json", file).stdout)["compacts_in"]["point"] == point
    assert f"now: its point {point:,}" in " ".join(run("compactions", file).stdout.split())
    assert f"of {point / 1000:.0f}k · " in run("watch", "--once", file).stdout
    inspection = Inspection.of(load(path("codex_rollout.jsonl")), Config(CATALOGUE))
    assert inspection.config.account.tokens == point  # the one account they all read
    assert getattr(inspection.run("codex").stats, "limit") == point  # noqa: B009  # the replay's


def test_every_surface_reads_one_point_from_opencodes_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """opencode's `compaction.reserved` in its global settings, with a model that has an
    input limit in the models.dev catalogue it keeps: `analyze`, `compactions`, `watch
    --once` and the account say the same point, its input limit less the reserve."""
    file, main, _ = built(tmp_path)
    (tmp_path / "config" / "opencode").mkdir(parents=True)
    (tmp_path / "config" / "opencode" / "opencode.jsonc").write_text('{"compaction": {"reserved": 30000}}')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    limits = {"context": 400_000, "input": 272_000, "output": 128_000}
    models = {"anthropic": {"models": {"claude-sonnet-4-5": {"limit": limits}}}}
    (tmp_path / "cache" / "opencode").mkdir(parents=True)
    (tmp_path / "cache" / "opencode" / "models.json").write_text(json.dumps(models))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    name, point = f"{file}#{main}", 272_000 - 30_000
    assert json.loads(run("analyze", "--json", name).stdout)["compacts_in"]["point"] == point
    assert f"now: its point {point:,}" in " ".join(run("compactions", name).stdout.split())
    assert f"of {point / 1000:.0f}k · " in run("watch", "--once", name).stdout
    assert Config(CATALOGUE).for_session(load(name)).account.tokens == point  # the one account they read

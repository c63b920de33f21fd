"""The domain runs without the UI, and everything installs under one name."""

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from compaction_inspector.core.agents.registry import CATALOGUE
from tests.helpers import installed_tree


def test_no_core_module_names_textual_in_any_import() -> None:
    """Not at the top, not inside a function, not as `import textual.x`: core is the
    domain, and runs where Textual is not installed."""
    root = Path(__file__).resolve().parent.parent
    found = sorted(
        f"{file.relative_to(root)}:{node.lineno}"
        for file in (root / "core").rglob("*.py")
        for node in ast.walk(ast.parse(file.read_text()))
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "textual" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "textual")
    )
    assert found == []


def test_no_value_class_is_frozen_at_run_time() -> None:
    """Every value class is an `immutable` record (`core.model`): the type checker holds
    it frozen, and no command pays at its start for the two methods and the slower
    `__init__` a dataclass frozen at run time is made with."""
    root = Path(__file__).resolve().parent.parent
    found = sorted(
        f"{file.relative_to(root)}:{node.lineno}"
        for folder in ("core", "tui")
        for file in (root / folder).rglob("*.py")
        for node in ast.walk(ast.parse(file.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "dataclass"
        and any(k.arg == "frozen" for k in node.keywords)
    )
    assert found == []


def test_core_does_not_import_textual() -> None:
    code = (
        "import sys, pkgutil, importlib\n"
        "import compaction_inspector.core as core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'compaction_inspector.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import compaction_inspector.tui.cli\n"
        "print('textual' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


# what the app's first look never needs: each is imported when its key or command is used
_NOT_AT_START = (
    "importlib.metadata",
    "tomlkit",
    "yaml",
    "compaction_inspector.core.reporting.html_report",
    "compaction_inspector.core.reporting.markdown",
    "compaction_inspector.core.reporting.sweep_report",
    "compaction_inspector.core.sweeping.sweep",
    "compaction_inspector.tui.screens.applying",
    "compaction_inspector.tui.screens.browser",
    "compaction_inspector.tui.screens.compare",
    "compaction_inspector.tui.screenshot",
)


def test_opening_the_app_imports_no_exporter_and_no_modal_screen() -> None:
    code = (
        "import sys\n"
        "import compaction_inspector.tui.cli.commandline, compaction_inspector.tui.app\n"
        f"print([m for m in {_NOT_AT_START!r} if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_nothing_generic_is_installed() -> None:
    """Outside the checkout, only `compaction_inspector` is importable: no bare `core`."""
    code = (
        "import importlib.util\n"
        "print([n for n in ('core', 'tui', 'sample_sessions') if importlib.util.find_spec(n)])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert proc.stdout.strip() == "[]"


def test_every_package_is_installed() -> None:
    """A plain `pip install .` (the README's run command) holds every package of the
    checkout: pyproject lists each folder with an `__init__.py` under its top folders."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {name: root / folder for name, folder in config["package-dir"].items()}
    found = {
        ".".join([top, *init.parent.relative_to(folder).parts])
        for top, folder in folders.items()
        for init in folder.rglob("__init__.py")
    }
    assert found == set(config["packages"])


def test_the_library_leaves_the_collector_alone() -> None:
    """Only the app and the command line set the collector (`tui.heap`): loading,
    counting, every strategy and a replay change neither its thresholds nor what it
    has frozen, so two workers cannot race on it."""
    code = (
        "import gc\n"
        "from compaction_inspector.core.agents.registry import CATALOGUE\n"
        "from compaction_inspector.core.replaying.simulate import Policy, simulate\n"
        "from compaction_inspector.core.strategies import Context, run\n"
        "from compaction_inspector.core.measuring.tokens import make_counter\n"
        "from compaction_inspector.sample_sessions import path\n"
        "before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())\n"
        "session = CATALOGUE.formats.load(path())\n"
        "context = Context(make_counter('cl100k_base'))\n"
        "for declared in CATALOGUE.strategies.values():\n"
        "    run(declared, session.messages, None, context)\n"
        "    simulate(session.messages, Policy(declared), context)\n"
        "print(before == (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "True"


def _imports() -> dict[str, set[str]]:
    """Each module of core and tui, and the modules of the package it imports anywhere in
    it (at the top, under TYPE_CHECKING or inside a function), in every form: `from pkg
    import sub` names the submodule, not the package; `import pkg.mod` names the module;
    a relative import is read from the module's own package."""
    root = Path(__file__).resolve().parent.parent
    modules: dict[str, Path] = {}
    packages: set[str] = set()
    for folder in ("core", "tui"):
        for file in (root / folder).rglob("*.py"):
            parts = list(file.relative_to(root).with_suffix("").parts)
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = file
            if parts[-1] == "__init__":
                packages.add(name)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        for node in ast.walk(ast.parse(file.read_text())):
            for target, names in _targets(node, name, name in packages):
                subs = {f"{target}.{n}" for n in names} & modules.keys()
                whole = {_nearest(target, modules.keys())} if len(subs) < len(names) or not names else set()
                edges[name] |= (subs | whole) - {name, ""}
    return edges


def _targets(node: ast.AST, module: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """The modules of the package an import statement names, each with the names it takes
    from it (none for `import a.b`), without the package's own prefix."""
    if isinstance(node, ast.Import):
        return [(a.name.removeprefix(PACKAGE), []) for a in node.names if a.name.startswith(PACKAGE)]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:  # relative: from the module's own package up
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
        return [(target, [a.name for a in node.names])]
    if node.module and node.module.startswith(PACKAGE):
        return [(node.module.removeprefix(PACKAGE), [a.name for a in node.names])]
    return []


def _nearest(target: str, modules: Iterable[str]) -> str:
    """`target`, or the nearest package above it that is a module here."""
    known = set(modules)
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target


PACKAGE = "compaction_inspector."


def test_the_import_reader_sees_every_form_of_import() -> None:
    """`import a.b`, a relative import and an import inside a function are edges too."""
    source = (
        "import compaction_inspector.core.model\n"
        "from . import segment\n"
        "from ..agents import registry\n"
        "def later():\n"
        "    import compaction_inspector.core.config as config\n"
    )
    found = [t for node in ast.walk(ast.parse(source)) for t in _targets(node, "core.strategies.base", False)]
    assert sorted(found) == [
        ("core.agents", ["registry"]),
        ("core.config", []),
        ("core.model", []),
        ("core.strategies", ["segment"]),
    ]


def test_no_module_imports_itself_through_others() -> None:
    """No import loop in core or tui, counting imports made only for type checking or
    inside a function: each layer names only what is below it."""
    edges = _imports()
    loops = []
    for start in edges:
        seen, todo = set(), list(edges[start])
        while todo:
            name = todo.pop()
            if name == start:
                loops.append(start)
                break
            if name not in seen and name in edges:
                seen.add(name)
                todo.extend(edges[name])
    assert loops == []


def _agent_packages() -> set[str]:
    root = Path(__file__).resolve().parents[1] / "core" / "agents"
    return {p.parent.name for p in root.glob("*/__init__.py")}


def test_only_the_registry_imports_an_agents_package() -> None:
    """An agent's package is imported by itself and by the registry only: generic modules
    get the catalogue the front end made of the registry, so no import runs back up."""
    edges = _imports()
    packages = {f"core.agents.{name}" for name in _agent_packages()}
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        for target in targets
        for package in packages
        if (target == package or target.startswith(package + "."))
        and not (module == package or module.startswith(package + "."))
        and module != "core.agents.registry"
    )
    assert reaching == []


def _named_in_code(source: str, words: re.Pattern[str]) -> list[str]:
    """The identifiers and string literals of `source` that match `words` (comments and
    docstrings aside)."""
    tree = ast.parse(source)
    documented: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                documented.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type in (tokenize.NAME, tokenize.STRING)
        and token.start[0] not in documented
        and words.search(token.string)
    ]


def test_no_generic_module_names_an_agent() -> None:
    """What is an agent's is in its package: outside `core/agents/`, no module names a
    registered agent in its code (its name's first word, any case): the names an agent
    signs with and its own models' tokenizer are its package's (`Files.signs_as`,
    `Files.o200k_models`)."""

    # a name as a word of its own ("roo" is in "headroom"): no letter either side
    names = "|".join(re.escape(a.name.split()[0]) for a in CATALOGUE.agents)
    words = re.compile(rf"(?<![a-z])(?:{names})(?![a-z])", re.IGNORECASE)
    root = Path(__file__).resolve().parents[1]
    named = {
        str(file.relative_to(root)): found
        for folder in ("core", "tui")
        for file in sorted((root / folder).rglob("*.py"))
        if not str(file.relative_to(root)).startswith("core/agents/")
        and (found := _named_in_code(file.read_text(), words))
    }
    assert named == {}


ROOT = Path(__file__).resolve().parent.parent


def _contracts() -> dict[str, dict[str, Any]]:
    """The import-linter contracts `pyproject.toml` holds, by id."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the package as it installs (`tree`), against the contracts
    of `pyproject.toml`."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
    )


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    done = _lint(installed_tree(tmp_path, copied=False))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(_contracts())} kept, 0 broken." in done.stdout


def test_the_contracts_name_every_generic_module_and_every_agent() -> None:
    """A module added to core, or an agent added to the registry, is inside the contracts
    without anyone remembering to list it."""
    core = ROOT / "core"
    generic = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    generic |= {p.name for p in core.iterdir() if (p / "__init__.py").is_file() and p.name != "agents"}
    contracts = _contracts()
    listed = contracts["generic-below-the-agents"]["source_modules"]
    assert sorted(listed) == sorted(f"compaction_inspector.core.{m}" for m in generic)
    agents = {f"compaction_inspector.core.agents.{p}" for p in _agent_packages()}
    assert set(contracts["agents-apart"]["modules"]) == agents


SEEDS = {
    # a plain import of an agent's module, from a generic one
    "plain": ("core/pricing/cost.py", "import compaction_inspector.core.agents.codex.rules\n", "generic"),
    # a relative import of an agent's package
    "relative": ("core/strategies/trim.py", "from ..agents.claude_code import rules\n", "generic-below"),
    # Textual, imported inside a core function
    "deferred": ("core/text.py", "\n\ndef _seeded() -> None:\n    import textual\n", "core-below"),
    # one agent importing another
    "agent": (
        "core/agents/codex/rules.py",
        "from compaction_inspector.core.agents.opencode import overflow\n",
        "agents-apart",
    ),
}


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_a_seeded_violation_breaks_its_contract(tmp_path: Path, seed: str) -> None:
    file, line, broken = SEEDS[seed]
    tree = installed_tree(tmp_path, copied=True)
    seeded = tree / "compaction_inspector" / file
    seeded.write_text(seeded.read_text() + line)
    done = _lint(tree)
    assert done.returncode != 0, done.stdout
    name = next(c["name"] for i, c in _contracts().items() if i.startswith(broken))
    assert re.search(rf"{re.escape(name)}\s+BROKEN", done.stdout), done.stdout

"""The domain runs without the UI, and everything installs under one name."""

import subprocess
import sys


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


def test_nothing_generic_is_installed() -> None:
    """Outside the checkout, only `compaction_inspector` is importable: no bare `core`."""
    code = (
        "import importlib.util\n"
        "print([n for n in ('core', 'tui', 'sample_sessions') if importlib.util.find_spec(n)])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert proc.stdout.strip() == "[]"

"""The domain runs without the UI: importing all of core never imports Textual."""

import subprocess
import sys


def test_core_does_not_import_textual() -> None:
    code = (
        "import sys, pkgutil, importlib, core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import tui.cli\n"
        "print('textual' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"

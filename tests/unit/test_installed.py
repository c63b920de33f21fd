"""A distribution's version read from its `.dist-info` folder's name, without importing
`importlib.metadata`, for a package with an `__init__` and for a namespace package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compaction_inspector.core.installed import version


@pytest.mark.parametrize("init", [True, False])
def test_the_version_is_the_dist_info_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, init: bool
) -> None:
    package = tmp_path / "made_up_pkg"
    package.mkdir()
    if init:
        (package / "__init__.py").write_text("")
    (tmp_path / "made_up_pkg-3.1.4.dist-info").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "importlib.metadata", raising=False)
    assert version("made-up-pkg", "made_up_pkg") == "3.1.4"
    assert "importlib.metadata" not in sys.modules


def test_with_no_dist_info_beside_it_the_metadata_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install keeps its `.dist-info` away from the package."""
    (tmp_path / "made_up_pkg").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    from importlib.metadata import PackageNotFoundError

    with pytest.raises(PackageNotFoundError):
        version("made-up-pkg", "made_up_pkg")

"""What is installed: a distribution's version, read from the name of the `.dist-info`
folder an install puts beside its package (PEP 427). `importlib.metadata` costs a call
0.04 s more (its import alone), so it is asked only where no such folder is found (an
editable install)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

OURS = "compaction-inspector"  # our distribution's name


def version(distribution: str, package: str) -> str:
    """The installed version of `distribution`, whose import name is `package`."""
    spec = importlib.util.find_spec(package)
    # the package's folders (a namespace package, ours, has no `__init__` to be its origin)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    name = distribution.replace("-", "_")
    found = sorted({f for folder in folders for f in Path(folder).parent.glob(f"{name}-*.dist-info")})
    if len(found) == 1:
        return found[0].name.removeprefix(f"{name}-").removesuffix(".dist-info")
    from importlib.metadata import version as metadata_version

    return metadata_version(distribution)


def ours() -> str:
    """Our installed version."""
    return version(OURS, "compaction_inspector")

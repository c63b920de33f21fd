"""Writing files without ever losing one: temporary file, fsync, rename; never the input."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class WriteRefused(OSError):
    """The write would replace the transcript that was opened, or a file it must not."""


def same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def _mode(target: Path) -> int:
    """Keep a replaced file's permissions; a new file gets the usual ones (mkstemp's
    private 0600 would surprise whoever shares an export)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(
    path: str | Path, data: str | bytes, *, protect: str | Path | None = None, overwrite: bool = True
) -> Path:
    """Replace `path` with `data` in one step; readers see the old or the new file, never
    half of one. Refuses when `path` is `protect` (the opened transcript), and with
    `overwrite=False` raises FileExistsError when `path` exists at all (checked as the
    file is put in place)."""
    target = Path(path)
    if protect is not None and target.exists() and same_file(target, protect):
        raise WriteRefused(f"refusing to overwrite the input file {protect}")
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, _mode(target))
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:  # a link fails if the name is taken, in the same step that makes the file
            os.link(tmp, target)  # FileExistsError names the target
            Path(tmp).unlink()
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def free_stem(stem: Path, suffixes: tuple[str, ...]) -> Path:
    """`stem`, or `stem-2`, `stem-3`, ...: the first for which no file with any of the
    suffixes exists yet, so a new export never lands on an earlier one."""
    candidate, n = stem, 1
    while any(candidate.with_name(candidate.name + s).exists() for s in suffixes):
        n += 1
        candidate = stem.with_name(f"{stem.name}-{n}")
    return candidate

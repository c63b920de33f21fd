"""Reading and writing files without ever losing one or hanging on one.

Reading opens regular files only: a FIFO or a device named like a transcript would block
or never end. Writing is a temporary file, fsync, rename; never the input, through a
link to the file it names, never over a read-only file, and under a lock where several
writers may add to one file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import sqlite3


class WriteRefused(OSError):
    """The write would replace the transcript that was opened, or a file it must not."""


class NotRegularFile(OSError):
    """The path is a folder, a FIFO, a device or a socket, not a file to read."""


class Busy(OSError):
    """Another writer held the lock for longer than this one would wait."""


class Changed(OSError):
    """The file no longer holds what the change was made from; nothing was written."""


_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def open_regular(path: str | Path) -> BinaryIO:
    """`path` opened to read, if it is a regular file (or a link to one); anything else
    raises NotRegularFile at once, without waiting for a FIFO's writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise NotRegularFile(0, f"{kind}, not a file to read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str | Path) -> str:
    """A regular file's text (UTF-8, undecodable bytes replaced)."""
    with open_regular(path) as f:
        return f.read().decode("utf-8", errors="replace")


def read_settings(
    paths: Iterable[Path], load: Callable[[str], Any], refused: list[str]
) -> Iterator[tuple[Path, Any]]:
    """Each settings file of `paths` there is, read as its agent reads it (`load`); one
    that cannot be used is left out, and why is added to `refused`."""
    for path in paths:
        try:
            yield path, load(read_text(path))
        except FileNotFoundError:
            continue
        except OSError as exc:
            refused.append(f"{path} not read: {exc.strerror or exc}")
        except ValueError as exc:  # a JSON decoder's error
            refused.append(f"{path} not used: not JSON ({exc})")


@contextmanager
def locked(
    path: str | Path, wait: float | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on `path`'s folder (no lock file is left behind), so
    writers that read, change and replace a file there take turns instead of losing
    each other's work. With `wait`, gives up after that many seconds (Busy), having
    called `waiting` once if it had to wait at all."""
    folder = Path(os.path.realpath(path)).parent
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        _lock(fd, folder, wait, waiting)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _lock(fd: int, folder: Path, wait: float | None, waiting: Callable[[], None] | None) -> None:
    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise Busy(
                    0, f"another program kept writing in {folder} for {wait:g} s: nothing written"
                ) from None
            if waiting is not None:
                waiting()
                waiting = None
            time.sleep(0.05)


def held(path: str | Path) -> bytes | None:
    """What `path` holds now, byte for byte (None: there is no file yet, or it is a link
    to a file not made yet). Refuses a link that leads round in a loop and anything but a
    regular file, before anything is written."""
    try:
        with open_regular(path) as f:
            return f.read()
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise WriteRefused(f"{path} is {exc.strerror}: not changed") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WriteRefused(f"{path} is a link that leads round in a loop: not changed") from None
        raise


def writable(path: str | Path) -> None:
    """Raise WriteRefused where `path` could not be replaced (a read-only file, a folder
    that takes no new file), so a refused write leaves nothing behind, not even a backup."""
    target = Path(os.path.realpath(path))
    if target.exists() and not (os.access(target, os.W_OK) and target.stat().st_mode & stat.S_IWUSR):
        raise WriteRefused(f"{path} is read-only: not replaced")
    folder = next((p for p in (target.parent, *target.parent.parents) if p.exists()), None)
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK):
        raise WriteRefused(f"{folder} takes no new file: {path} not written")


def rewrite(
    path: str | Path,
    before: bytes | None,
    after: str,
    wait: float = 10.0,
    waiting: Callable[[], None] | None = None,
) -> Path | None:
    """Replace a file other programs also write (an agent's settings) with `after`, only
    if it still holds `before` (None: no file), else Changed; the file as it was kept
    beside it first (`.bak`, `.bak-2`, ...), whose path is returned (None where there was
    no file). Every such writer of the folder takes one lock (`locked`), so two never
    lose each other's change; one that cannot have it in `wait` seconds gives up (Busy)."""
    writable(path)
    with locked(path, wait, waiting):
        now = held(path)
        if now != before:
            raise Changed(0, f"{path} changed since it was read: nothing written")
        backup = None
        if now is not None:
            name = Path(path)
            backup = free_stem(name.with_name(name.name + ".bak"), ("",))
            write_atomic(backup, now, overwrite=False)
        write_atomic(path, after)
    return backup


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
    path: str | Path,
    data: str | bytes | Iterable[str],
    *,
    protect: str | Path | None = None,
    overwrite: bool = True,
) -> Path:
    """Replace `path` with `data` (or the pieces it yields, written as they come) in one
    step; readers see the old or the new file, never half of one. Refuses when `path` is
    `protect` (the opened transcript), and with `overwrite=False` raises FileExistsError
    when `path` exists at all (checked as the file is put in place). A link is written
    through: the file it names is replaced and the link stays. A read-only file is
    refused, not replaced."""
    if not str(path):
        raise WriteRefused("no file name given")
    target = Path(os.path.realpath(path))
    if protect is not None and target.exists() and same_file(target, protect):
        raise WriteRefused(f"refusing to overwrite the input file {protect}")
    writable(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, _mode(target))
        with os.fdopen(fd, "wb") as out:
            for piece in [data] if isinstance(data, str | bytes) else data:
                out.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
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


def folders(root: Path) -> list[Path]:
    """The folders in `root`, sorted, links left out; none where it cannot be read."""
    with contextlib.suppress(OSError):
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    return []


def files(folder: Path, pattern: str) -> list[Path]:
    """The files in `folder` matching `pattern`, sorted; none where it cannot be read."""
    with contextlib.suppress(OSError):
        return sorted(p for p in folder.glob(pattern) if p.is_file())
    return []


def walk(root: Path, pattern: str) -> Iterator[Path]:
    """Files matching `pattern` under `root`, never through a link (no loops)."""
    for folder, dirs, names in os.walk(root, followlinks=False, onerror=lambda _: None):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            if path.match(pattern):
                yield path


def sqlite_as_it_is(file: Path, scratch: Callable[[], Path]) -> sqlite3.Connection:
    """A read-only connection to an application's SQLite database as it is now, making
    nothing beside it: the file itself, opened immutable, where it has no write-ahead log;
    else a copy of it and its log in a folder `scratch` gives (the log would otherwise be
    replayed into it, and a shared-memory file made beside it)."""
    import shutil  # here: the status line, which imports this module, opens no database
    import sqlite3

    log = Path(f"{file}-wal")
    if log.exists() and log.stat().st_size > 0:
        copy = scratch() / file.name
        shutil.copyfile(file, copy)
        shutil.copyfile(log, Path(f"{copy}-wal"))
        uri = f"{copy.as_uri()}?mode=ro"
    else:
        uri = f"{file.resolve().as_uri()}?immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)

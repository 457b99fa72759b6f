"""Atomic file writes: the one way the package writes a file.

The data goes to a temporary file beside the target, named
``.<name>.<pid>.<random>.tmp``, is flushed to disk and renamed over the
target, so a reader sees the old file or the new one, never half of one.
A temporary left by a process that was killed is removed by the next write
of the same target (its process id names a process that no longer runs).
The written file keeps the mode of the file it replaces, and a new file gets
the mode the umask allows (``0o666 & ~umask``), as ``open(path, "w")`` would.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from pathlib import Path

__all__ = ["atomic_write", "updating"]

_umask_lock = threading.Lock()


def atomic_write(path, write, *, suffix: str = ".tmp") -> Path:
    """Write ``path`` atomically through ``write(temporary_path)``.

    Parameters
    ----------
    path : path-like
        The target; its folder must exist.
    write : callable
        ``write(temporary: Path)`` writes the whole content to ``temporary``
        (an empty file that exists).
    suffix : str, default ".tmp"
        The temporary's suffix (some writers choose the format by it).

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    _remove_stale_temporaries(folder, path.name)
    mode = _mode_for(path)
    handle, name = tempfile.mkstemp(
        dir=folder, prefix=f".{path.name}.{os.getpid()}.", suffix=suffix
    )
    temporary = Path(name)
    try:
        os.close(handle)
        write(temporary)
        with open(temporary, "rb+") as stream:
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    return path


@contextlib.contextmanager
def updating(path):
    """Hold ``path`` for an update (read, change, write) that no other process may interleave.

    An exclusive lock on ``.<name>.lock`` beside it, held until the block
    ends: a second process updating the same file waits for the first and
    then reads what it wrote (two ``eigenvision enroll`` runs into one model
    both land; without it the last writer wins and one enrolment is lost).

    Parameters
    ----------
    path : path-like
        The file to be updated (it need not exist yet).

    Yields
    ------
    Path
        ``path``.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    with open(folder / f".{path.name}.lock", "a+b") as handle:
        _lock(handle.fileno())
        try:
            yield path
        finally:
            _unlock(handle.fileno())


def _lock(descriptor: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: byte-range lock on the lock file's first byte
        import msvcrt

        os.lseek(descriptor, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(descriptor, msvcrt.LK_LOCK, 1)
                return
            except OSError:  # LK_LOCK gives up after 10 s: keep waiting
                continue
    fcntl.flock(descriptor, fcntl.LOCK_EX)


def _unlock(descriptor: int) -> None:
    try:
        import fcntl
    except ImportError:
        import msvcrt

        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)
        return
    fcntl.flock(descriptor, fcntl.LOCK_UN)


def _mode_for(path: Path) -> int:
    """The replaced file's permission bits, or what the umask gives a new file."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    with _umask_lock:  # elsewhere: set and restore (process-wide, so under a lock)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _remove_stale_temporaries(folder: Path, name: str) -> None:
    """Delete ``.<name>.<pid>.*`` temporaries whose writing process is gone."""
    prefix = f".{name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not entry.name.startswith(prefix):
                continue
            pid = entry.name[len(prefix) :].split(".", 1)[0]
            if pid.isdigit() and not _running(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True

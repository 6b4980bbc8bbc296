"""Atomic file writes: write a temp file beside the target, then rename over it.

A failed write (an exception half-way, a full disk, a killed process) leaves the target as it
was: never a half-written model file.

Temp files are named ``.<target name>.gluonport-tmp-<pid>-<random>`` so that they are hidden,
say whose they are, and can be recognised later. A process killed while writing cannot remove
its temp file, so every write first removes the *stale* temp files of ours in the same folder:
those whose name matches that exact pattern and whose writer is gone (no process with that pid
on this machine) or that have not been written to for :data:`STALE_AFTER_S` seconds (the pid may
have been reused; a live writer touches its file continuously). Nothing else is ever removed.

Two files that belong together (MXNet's ``PREFIX-symbol.json`` + ``PREFIX-NNNN.params``) are
written inside :func:`atomic_group`: both are written completely to temp files first, and only
then renamed into place one right after the other, so that a process killed at a random moment
almost always leaves either the old pair or the new one. (The two renames cannot be one atomic
step; the readers check that the files fit each other, see ``gluonport._paramcheck``.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from typing import IO

__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_text", "atomic_group",
           "create_temp", "remove_stale_temps", "TEMP_MARK", "STALE_AFTER_S"]

#: What every temp file name of ours contains.
TEMP_MARK = ".gluonport-tmp-"
#: A temp file not written to for this long is stale even if its pid is alive (pid reuse).
STALE_AFTER_S = 3600.0

_TEMP_RE = re.compile(r"\..+" + re.escape(TEMP_MARK) + r"(\d+)-[0-9a-f]{12}")
_local = threading.local()


def _temp_path(path: str) -> str:
    folder, base = os.path.split(path)
    return os.path.join(folder, f".{base}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(6)}")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill(pid, 0) would end pid
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else (or we cannot tell): keep its file
    return True


def remove_stale_temps(folder: str, now: float | None = None) -> list[str]:
    """Remove the stale temp files of ours in ``folder``; returns the names removed.

    Only names matching ``.<name>.gluonport-tmp-<pid>-<12 hex digits>`` are considered; one is
    stale when no process ``pid`` runs on this machine or its mtime is older than
    :data:`STALE_AFTER_S`. Errors (a file removed meanwhile, no permission) are ignored.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_RE.fullmatch(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_S
            if old or not _pid_alive(int(match.group(1))):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def _create(path: str) -> tuple[int, str]:
    """Create a fresh temp file for ``path`` (mode 0666 less the umask, as ``open`` gives)."""
    for _ in range(100):
        tmp = _temp_path(path)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                           0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temp file beside {path}")


def create_temp(path: str | os.PathLike) -> tuple[int, str]:
    """``(fd, temp path)`` of a fresh temp file for ``path``, after removing the stale temp
    files in its folder; the caller renames it into place or removes it."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path)
    # Errors name the target or its folder, never the temp file that could not be made.
    if not os.path.isdir(folder):
        name = os.path.basename(path)
        if os.path.exists(folder):
            raise NotADirectoryError(errno.ENOTDIR, f"cannot write {name}: the folder is a file",
                                     folder)
        raise FileNotFoundError(errno.ENOENT, f"cannot write {name}: no such folder", folder)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file to write", path)
    remove_stale_temps(folder)
    return _create(path)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """Open a temp file in ``path``'s folder; on success it replaces ``path``.

    Inside :func:`atomic_group` the rename waits for the end of the group.
    """
    path = os.path.abspath(os.fspath(path))
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8",
                                                             "newline": ""})) as f:
            yield f
            group = getattr(_local, "group", None)
            if group is not None:
                # On disk now, so that the renames at the end of the group are quick: renaming
                # over an existing file otherwise makes ext4 (auto_da_alloc) and others write
                # the new file's data inside the rename, which widens the window between them.
                f.flush()
                os.fsync(f.fileno())
        if group is not None:
            group.append((tmp, path))
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_group() -> Iterator[None]:
    """Write several files with :func:`atomic_open` and rename them all at the end, in the order
    their writes finished; an error before that leaves every target as it was.

    Put the file that readers treat as the commit point last (for MXNet's pair: the params
    first, then the symbol file). A group inside a group joins the outer one.
    """
    if getattr(_local, "group", None) is not None:
        yield
        return
    _local.group = pending = []
    try:
        yield
        _local.group = None
        # Hold the files being replaced open until every rename is done: freeing a replaced
        # file's blocks then happens after the last rename, not inside the first one.
        held = []
        try:
            for _, path in pending:
                with contextlib.suppress(OSError):
                    held.append(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
            while pending:
                tmp, path = pending[0]
                os.replace(tmp, path)
                pending.pop(0)
        finally:
            for fd in held:
                os.close(fd)
    finally:
        _local.group = None
        for tmp, _ in pending:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path, "w") as f:
        f.write(text)

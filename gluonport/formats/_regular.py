"""Opening model files: only regular files are read.

A FIFO, a terminal, ``/dev/zero`` or a folder given where a model, parameter or input file is
expected would block forever, never end or fail with a foreign error; every reader opens its
file through :func:`open_regular`, which refuses them before reading a byte. The file is opened
non-blocking (so opening a FIFO cannot wait for a writer) and checked with ``fstat`` on the
open descriptor (so a file swapped after a check is still caught).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import IO

from ..errors import FormatError

__all__ = ["open_regular", "check_regular"]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _a(what: str) -> str:
    return ("an " if what[:1].lower() in "aeiou" else "a ") + what


def _refuse(path: str, what: str, mode: int) -> FormatError:
    return FormatError(f"is {_kind(mode)}, not {_a(what)}; give the path of a regular file",
                       path)


def check_regular(path: str | os.PathLike, what: str = "file") -> None:
    """Raise :class:`FormatError` unless ``path`` names an existing regular file (a symlink to
    one is fine). ``what`` words the message (``"params file"``)."""
    label = os.fspath(path)
    try:
        st = os.stat(label)
    except FileNotFoundError:
        hint = " (a symlink to a missing file)" if os.path.islink(label) else ""
        raise FormatError(f"no such {what}{hint}", label) from None
    except (OSError, ValueError) as exc:  # ENOTDIR, ELOOP, ENAMETOOLONG, NUL in the path
        raise FormatError(f"cannot be read as {_a(what)}: "
                          f"{getattr(exc, 'strerror', None) or exc}", label) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(label, what, st.st_mode)


def open_regular(path: str | os.PathLike, what: str = "file") -> IO[bytes]:
    """``path`` opened for binary reading (unbuffered), or :class:`FormatError` when it is not
    an existing, readable regular file."""
    label = os.fspath(path)
    check_regular(label, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(label, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FormatError(f"no such {what}", label) from None
        raise FormatError(f"cannot be opened: {exc.strerror or exc}", label) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped for something else after check_regular
            raise _refuse(label, what, mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise

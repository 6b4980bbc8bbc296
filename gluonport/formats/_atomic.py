"""Atomic file writes: write a temp file beside the target, then rename over it.

A failed write (an exception half-way, a full disk) leaves the target as it was: never a
half-written model file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO

__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_text"]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """Open a temp file in ``path``'s folder; on success it replaces ``path``."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8",
                                                             "newline": ""})) as f:
            yield f
        # mkstemp creates 0600 files; give the result the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path, "w") as f:
        f.write(text)

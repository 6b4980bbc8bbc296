"""Bounded little-endian reading and writing of MXNet's binary files.

:class:`Reader` walks a buffer (``bytes``, ``memoryview`` or an ``mmap``) and tracks the byte
offset. Every read first checks that the bytes it needs are there, using Python integers (which
cannot overflow), so a header that claims 2**40 elements raises :class:`FormatError` naming the
file and the offset before anything is allocated. Arrays come back as ``numpy.frombuffer`` views
of the buffer: no copy is made (except for a record that sits at an offset that is not a multiple of
its itemsize, which is copied once so that numpy computes on it with BLAS), and views of a
read-only buffer (``bytes``, a read-only ``mmap``) are read-only.

:class:`Writer` is the mirror image over a binary file object; arrays are written straight from
their memory (no ``tobytes`` copy).
"""

from __future__ import annotations

import struct
from typing import IO, Any

import numpy as np

from ..errors import FormatError

__all__ = ["Reader", "Writer", "MAX_NDIM"]

# numpy cannot represent more dimensions than this (32 before numpy 2.0, 64 since).
MAX_NDIM = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")


class Reader:
    """Reads little-endian fields from ``buf``, refusing to run past its end.

    Parameters
    ----------
    buf:
        The bytes to read; anything that exports a buffer.
    path:
        The file name put in front of error messages (``"<bytes>"`` when there is none).
    pos:
        The offset to start at.
    """

    def __init__(self, buf: Any, path: str = "<bytes>", pos: int = 0):
        self.buf = buf
        self.view = memoryview(buf).cast("B")
        self.path = path
        self.pos = pos

    @property
    def size(self) -> int:
        """Total length of the buffer in bytes."""
        return len(self.view)

    @property
    def remaining(self) -> int:
        """Bytes left after the current offset."""
        return self.size - self.pos

    def error(self, message: str, offset: int | None = None) -> FormatError:
        """A :class:`FormatError` for this file at ``offset`` (the current offset by default)."""
        return FormatError(message, path=self.path, offset=self.pos if offset is None else offset)

    def need(self, nbytes: int, what: str) -> None:
        """Raise unless ``nbytes`` bytes remain; ``what`` names the field in the message."""
        if nbytes < 0:
            raise self.error(f"{what}: negative size {nbytes}")
        if nbytes > self.remaining:
            raise self.error(
                f"{what} needs {nbytes} bytes but only {self.remaining} remain in the "
                f"{self.size}-byte file; the file is truncated or its header is corrupt")

    def _unpack(self, st: struct.Struct, what: str) -> int:
        self.need(st.size, what)
        (value,) = st.unpack_from(self.view, self.pos)
        self.pos += st.size
        return value

    def u32(self, what: str = "u32") -> int:
        """Read an unsigned 32-bit integer."""
        return self._unpack(_U32, what)

    def i32(self, what: str = "i32") -> int:
        """Read a signed 32-bit integer."""
        return self._unpack(_I32, what)

    def u64(self, what: str = "u64") -> int:
        """Read an unsigned 64-bit integer."""
        return self._unpack(_U64, what)

    def i64(self, what: str = "i64") -> int:
        """Read a signed 64-bit integer."""
        return self._unpack(_I64, what)

    def peek_u32(self) -> int | None:
        """The next u32 without moving, or None when fewer than 4 bytes remain."""
        if self.remaining < 4:
            return None
        return _U32.unpack_from(self.view, self.pos)[0]

    def raw(self, nbytes: int, what: str = "bytes") -> memoryview:
        """A zero-copy view of the next ``nbytes`` bytes."""
        self.need(nbytes, what)
        out = self.view[self.pos:self.pos + nbytes]
        self.pos += nbytes
        return out

    def string(self, what: str = "string") -> str:
        """Read a ``u64`` length followed by that many UTF-8 bytes (no NUL)."""
        start = self.pos
        length = self.u64(f"{what} length")
        data = self.raw(length, f"{what} of {length} bytes")
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(f"{what} is not valid UTF-8 ({exc.reason})", start) from None

    def ints(self, dtype: str, count: int, what: str) -> list[int]:
        """Read ``count`` integers of a numpy ``dtype`` (``'<u4'``, ``'<i8'``) as a list."""
        dt = np.dtype(dtype)
        self.need(count * dt.itemsize, what)
        out = np.frombuffer(self.view, dt, count, self.pos).tolist()
        self.pos += count * dt.itemsize
        return out

    def array(self, dtype: np.dtype, shape: tuple[int, ...], what: str) -> np.ndarray:
        """A zero-copy array of ``shape`` over the next bytes, bounds-checked first."""
        count = 1
        for d in shape:
            count *= d
        dt = np.dtype(dtype)
        start = self.pos
        self.need(count * dt.itemsize, f"{what} ({count} x {dt.itemsize}-byte elements)")
        try:
            arr = np.frombuffer(self.view, dt, count, self.pos).reshape(shape)
        except (ValueError, OverflowError) as exc:
            raise self.error(f"{what}: shape {shape} cannot be represented ({exc})",
                             start) from None
        self.pos += count * dt.itemsize
        if not arr.flags.aligned:
            # A record after an odd-sized bool/int8/float16 one starts at an offset that is not
            # a multiple of its itemsize. numpy computes on such views without BLAS (a copy per
            # matmul, and other rounding than an aligned copy of the same values), so copy it
            # once here, keeping the view's read-only-ness.
            writeable = arr.flags.writeable
            arr = arr.copy()
            arr.flags.writeable = writeable
        return arr


class Writer:
    """Writes little-endian fields to a binary file object and counts the bytes written."""

    def __init__(self, f: IO[bytes]):
        self.f = f
        self.pos = 0

    def _put(self, data: Any) -> None:
        n = self.f.write(data)
        self.pos += memoryview(data).nbytes if n is None else n

    def u32(self, v: int) -> None:
        self._put(_U32.pack(v))

    def i32(self, v: int) -> None:
        self._put(_I32.pack(v))

    def u64(self, v: int) -> None:
        self._put(_U64.pack(v))

    def i64(self, v: int) -> None:
        self._put(_I64.pack(v))

    def string(self, s: str) -> None:
        """``u64`` byte length, then the UTF-8 bytes."""
        data = s.encode("utf-8")
        self.u64(len(data))
        self._put(data)

    def raw(self, data: Any) -> None:
        """Bytes, or anything exporting a contiguous buffer (written without a copy)."""
        if memoryview(data).nbytes:
            self._put(data)

    def array(self, arr: np.ndarray) -> None:
        """The raw bytes of a C-contiguous little-endian array (caller prepares it)."""
        if arr.size:
            self._put(arr.reshape(-1).view(np.uint8))

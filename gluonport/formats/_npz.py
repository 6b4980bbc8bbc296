"""Reading MXNet 2.0 parameter files: ``.npy`` (one array) and uncompressed ``.npz`` (a ZIP).

MXNet 2.0 (``src/serialization/cnpy.cc``) writes one ``<name>.npy`` member per array, or
``arr_<i>.npy`` for a list, and a sparse array as a folder of members: ``<name>/data.npy``,
``<name>/indices.npy``, ``<name>/indptr.npy`` (csr), ``<name>/shape.npy`` and
``<name>/format.npy`` (the text ``csr`` or ``row_sparse``; its NPY header is malformed, so, like
MXNet, we skip it and read the text). bfloat16 uses the non-standard descr ``'<b2'``, which numpy
cannot parse, so the NPY header is parsed here rather than by ``numpy.load``. The header is read
with ``ast.literal_eval`` (never pickle) and must describe a plain numeric dtype.

Stored (uncompressed) members are returned as zero-copy views of the file buffer; deflated
members (``numpy.savez_compressed``) are inflated, never past their declared size.
"""

from __future__ import annotations

import ast
import io
import re
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from .._core import dtypes
from ..errors import DTypeError, FormatError, ShapeError
from ._binary import MAX_NDIM, Reader
from ._sparse import SparseArray

__all__ = ["read_npy", "read_npz"]

_CSR_MEMBERS = frozenset({"data", "indices", "indptr", "format", "shape"})
_RSP_MEMBERS = frozenset({"data", "indices", "format", "shape"})
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError,
               ValueError, struct.error, zlib.error, OSError, KeyError, RuntimeError,
               IndexError, OverflowError, UnicodeDecodeError)
_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand data more than ~1032:1
# A plain scalar descr: byte order, type code, item size ('<f4', '|b1', '<b2'). Anything else
# (structured, sub-array, comma strings) is refused before numpy parses it: np.dtype runs a
# small parser of its own on such text and raises SyntaxError, among others, on garbage.
_PLAIN_DESCR = re.compile(r"[<>|=]?[A-Za-z?][0-9]{0,2}")


def _header(r: Reader, what: str) -> tuple[int, str]:
    """Skip the NPY magic and version; return (offset of the header text, the text)."""
    start = r.pos
    if bytes(r.raw(6, f"{what} NPY magic")) != b"\x93NUMPY":
        raise r.error(f"{what} is not an NPY array (no \\x93NUMPY magic)", start)
    major = r.raw(2, f"{what} NPY version")[0]
    if major not in (1, 2, 3):
        raise r.error(f"{what} has NPY format version {major}; known: 1, 2, 3", start + 6)
    if major == 1:
        hlen = r.ints("<u2", 1, f"{what} NPY header length")[0]
    else:
        hlen = r.u32(f"{what} NPY header length")
    at = r.pos
    text = bytes(r.raw(hlen, f"{what} NPY header"))
    return at, text.decode("utf-8" if major == 3 else "latin1")


def _parse_header(r: Reader, what: str) -> tuple[np.dtype, bool, tuple[int, ...], bool]:
    """(storage dtype, is bfloat16, shape, fortran order) from an NPY header."""
    at, text = _header(r, what)
    try:
        meta = ast.literal_eval(text)
        descr, fortran, shape = meta["descr"], meta["fortran_order"], meta["shape"]
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
        raise r.error(f"{what} has an unreadable NPY header {text[:80]!r}", at) from None
    if not isinstance(descr, str) or not isinstance(fortran, bool) or not isinstance(
            shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise r.error(f"{what}: NPY header {text.strip()!r} needs a str descr, a bool "
                      "fortran_order and a tuple of non-negative ints as shape", at)
    if len(shape) > MAX_NDIM:
        raise r.error(f"{what} has {len(shape)} dimensions; numpy allows {MAX_NDIM}", at)
    if not _PLAIN_DESCR.fullmatch(descr):
        raise r.error(f"{what} has dtype {descr[:40]!r}, which is not a plain numeric NPY "
                      "dtype such as '<f4'; MXNet writes no other", at)
    if descr.lstrip("<>|=") == "b2":  # MXNet 2.0's bfloat16
        return np.dtype("<u2" if descr[0] != ">" else ">u2"), True, shape, fortran
    try:
        dt = np.dtype(descr)
        dtypes.from_numpy(dt)
    except (TypeError, ValueError, DTypeError) as exc:
        raise r.error(f"{what} has dtype {descr!r}, which has no MXNet type flag ({exc})",
                      at) from None
    return dt, False, shape, fortran


def _array(r: Reader, what: str, bfloat16: str) -> tuple[np.ndarray, int]:
    """Read one NPY array at the reader's offset: (values, MXNet dtype flag)."""
    dt, is_bf16, shape, fortran = _parse_header(r, what)
    arr = r.array(dt, shape[::-1] if fortran else shape, f"{what} data")
    if fortran:
        arr = arr.T
    if dt.byteorder == ">":
        arr = arr.astype(dt.newbyteorder("<"))
    if is_bf16:
        return (dtypes.bfloat16_to_float32(arr) if bfloat16 == "float32" else arr), 12
    return arr, dtypes.flag_of(arr.dtype)


def read_npy(buf: Any, label: str, bfloat16: str) -> tuple[np.ndarray, int]:
    """A whole ``.npy`` file: (array, dtype flag)."""
    return _array(Reader(buf, label), "the NPY file", bfloat16)


def read_npz(buf: Any, label: str, bfloat16: str
             ) -> tuple[list[Any], list[str], list[tuple[int, str]]]:
    """A ``.npz`` file: arrays, names, and (dtype flag, stype) per array, in ZIP order."""
    try:
        return _read_npz(buf, label, bfloat16)
    except _ZIP_ERRORS as exc:
        raise FormatError(f"not a readable ZIP (.npz) file: {type(exc).__name__}: {exc}",
                          path=label) from None


class _BufferFile(io.RawIOBase):
    """A read-only, seekable file over any buffer (bytes, numpy array, ``mmap``), no copy.

    ``zipfile`` needs ``seekable()``, which ``mmap`` lacks, and ``io.BytesIO`` would copy.
    """

    def __init__(self, buf: Any):
        super().__init__()
        self._view = memoryview(buf).cast("B")
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        if base + offset < 0:
            raise OSError("seek before the start of the file")
        self._pos = base + offset
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        # Only what is there: RawIOBase.read(n) would first allocate n bytes, and zipfile asks
        # for a member's declared compressed size, which a damaged file sets to 4 GiB.
        end = len(self._view) if size is None or size < 0 else self._pos + size
        data = bytes(self._view[self._pos:end])
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read()

    def readinto(self, b: Any) -> int:
        chunk = self._view[self._pos:self._pos + len(b)]
        n = len(chunk)
        memoryview(b).cast("B")[:n] = chunk
        self._pos += n
        return n


def _read_npz(buf: Any, label: str, bfloat16: str
              ) -> tuple[list[Any], list[str], list[tuple[int, str]]]:
    with zipfile.ZipFile(_BufferFile(buf)) as zf:
        members = {i.filename[:-4]: i for i in zf.infolist() if i.filename.endswith(".npy")}
        folders: dict[str, set[str]] = {}
        for name in members:
            if "/" in name:
                folder, _, base = name.rpartition("/")
                folders.setdefault(folder, set()).add(base)
        sparse = {f for f, c in folders.items() if c in (_CSR_MEMBERS, _RSP_MEMBERS)}
        arrays, names, meta = [], [], []
        done: set[str] = set()
        for name in members:
            folder = name.rpartition("/")[0] if "/" in name else None
            if folder in sparse:
                if folder in done:
                    continue
                done.add(folder)
                arr, flag, stype = _sparse(zf, buf, label, members, folder, bfloat16)
                name = folder
            else:
                arr, flag = _array(_member(zf, buf, label, members[name]),
                                   f"member {name}.npy", bfloat16)
                stype = "default"
            arrays.append(arr)
            names.append(name)
            meta.append((flag, stype))
    return arrays, names, meta


def _member(zf: zipfile.ZipFile, buf: Any, label: str, info: zipfile.ZipInfo) -> Reader:
    """A Reader positioned at a member's bytes: a view of ``buf`` when stored uncompressed."""
    if info.compress_type == zipfile.ZIP_STORED:
        r = Reader(buf, label, info.header_offset)
        if bytes(r.raw(4, f"member {info.filename} local header")) != b"PK\x03\x04":
            raise r.error(f"member {info.filename}: bad ZIP local header", info.header_offset)
        r.pos += 22
        name_len, extra_len = r.ints("<u2", 2, f"member {info.filename} local header")
        r.pos += name_len + extra_len
        start = r.pos
        r.need(info.file_size, f"member {info.filename}")
        return Reader(r.view[:start + info.file_size], label, start)
    if info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 1024:
        raise FormatError(f"member {info.filename} claims {info.file_size} bytes from "
                          f"{info.compress_size} compressed bytes, which deflate cannot do",
                          path=label)
    return Reader(zf.read(info), f"{label}:{info.filename}")


def _sparse(zf: zipfile.ZipFile, buf: Any, label: str, members: dict[str, zipfile.ZipInfo],
            folder: str, bfloat16: str) -> tuple[SparseArray, int, str]:
    def part(base: str) -> np.ndarray:
        r = _member(zf, buf, label, members[f"{folder}/{base}"])
        return _array(r, f"member {folder}/{base}.npy", bfloat16 if base == "data" else "raw")

    fr = _member(zf, buf, label, members[f"{folder}/format"])
    _header(fr, f"member {folder}/format.npy")  # malformed in MXNet's files: skip it
    fmt = bytes(fr.raw(fr.remaining)).rstrip(b"\x00").decode("ascii", "replace").strip()
    data, flag = part("data")
    shape = part("shape")[0]
    indices = part("indices")[0]
    try:
        if fmt == "csr":
            return SparseArray("csr", shape.tolist(), data, indices, part("indptr")[0]), flag, fmt
        if fmt == "row_sparse":
            return SparseArray("row_sparse", shape.tolist(), data, indices), flag, fmt
    except ShapeError as exc:
        raise FormatError(f"sparse array {folder!r}: {exc}", path=label) from None
    raise FormatError(f"sparse array {folder!r} has format {fmt!r}; MXNet reads only csr and "
                      "row_sparse", path=label)

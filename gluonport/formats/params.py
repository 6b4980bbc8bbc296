"""MXNet's binary NDArray-list file (``.params``): read every version, write 1.9.1's bytes.

The layout is in ``FORMATS.md`` Part 1. In short: ``u64 0x112``, ``u64 0``, ``u64 N``, N array
records, ``u64 K``, K names (``K = 0`` is a list, ``K = N`` a dict). Records come in four versions,
told apart by their first ``u32``: V3 ``0xF993FACA`` (np-shape semantics), V2 ``0xF993FAC9``
(every MXNet 0.12-1.9 by default), V1 ``0xF993FAC8`` (0.11), anything else is a V0 record whose
first ``u32`` is its ndim (0.8-0.10). MXNet 2.0 writes ``.npz``/``.npy`` instead; those are
recognised by their first bytes and read by :mod:`._npz`.

Reading is zero-copy: with ``mmap=True`` (the default) a file is memory-mapped and dense arrays
are read-only ``numpy`` views of the mapping, so loading is as fast as mapping the file and pages
are read on first touch. ``mmap=False`` reads the file into one private buffer and returns
writable views of it. Every size is checked against the bytes left before anything is allocated.

Writing produces exactly the bytes ``mx.nd.save`` of MXNet 1.9.1 produces for the same arrays,
names and contexts, into a temporary file that replaces the target only when complete.
"""

from __future__ import annotations

import mmap as _mmap
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from .._core import dtypes
from ..context import Context
from ..errors import DTypeError, FormatError, GluonportError, ShapeError
from . import _npz
from ._atomic import atomic_open
from ._binary import MAX_NDIM, Reader, Writer
from ._regular import open_regular
from ._sparse import SparseArray

__all__ = ["load", "load_with_info", "save", "ArrayInfo", "ParamsFile", "SparseArray",
           "LIST_MAGIC", "V1_MAGIC", "V2_MAGIC", "V3_MAGIC", "decode_record", "encode_record"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
_STYPE_CODES = {v: k for k, v in _STYPE_NAMES.items()}
_NUM_AUX = {0: 0, 1: 1, 2: 2}
_INT_FLAGS = frozenset({3, 4, 5, 6, 8, 9, 10, 11})
_BF16_STRUCT = np.dtype([("bfloat16", "<u2")])  # what MXNet 1.x Python shows for bfloat16

Array = np.ndarray | SparseArray | None
Source = str | os.PathLike | bytes | bytearray | memoryview | IO[bytes]


@dataclass(frozen=True)
class ArrayInfo:
    """What a record says besides its values; pass it back to :func:`save` to reproduce it.

    Attributes
    ----------
    version:
        Record version: 0, 1, 2 or 3 (see the module docstring); 2 for MXNet 2.0 npz members.
    stype:
        ``'default'``, ``'row_sparse'`` or ``'csr'``.
    dev_type, dev_id:
        The context the array was saved from (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared).
        Arrays are always loaded on the host, as MXNet without a GPU does.
    flag:
        The MXNet dtype flag as written (12 = bfloat16, even when loaded as float32).
    offset:
        Byte offset of the record in its file (-1 when not from a file).
    """

    version: int = 2
    stype: str = "default"
    dev_type: int = 1
    dev_id: int = 0
    flag: int = 0
    offset: int = -1

    @property
    def saved_context(self) -> Context | None:
        """The saved context as a :class:`Context`; None for an unknown ``dev_type`` code."""
        try:
            return Context.from_devtype(self.dev_type, max(self.dev_id, 0))
        except GluonportError:
            return None


@dataclass
class ParamsFile:
    """Everything a parameter file holds: arrays, names, and per-array :class:`ArrayInfo`.

    ``names`` is None for a list file (K = 0). ``arrays[i]`` is None for a "none" record (an
    uninitialised MXNet array). ``trailing_bytes`` counts bytes after the last name, which MXNet
    ignores and so does :func:`load` unless ``strict=True``.
    """

    arrays: list[Array]
    names: list[str] | None
    infos: list[ArrayInfo]
    format: str = "ndarray-list"
    trailing_bytes: int = 0
    source: str = field(default="<bytes>", repr=False)

    def data(self) -> list[Array] | dict[str, Array]:
        """A list, or a dict in file order, as ``mx.nd.load`` returns (duplicate names: last)."""
        if self.names is None:
            return list(self.arrays)
        return dict(zip(self.names, self.arrays))


# --------------------------------------------------------------------------------------------
# reading


def load(source: Source, *, mmap: bool = True, bfloat16: str = "float32",
         strict: bool = False) -> list[Array] | dict[str, Array]:
    """Load an MXNet parameter / NDArray file, as ``mx.nd.load`` does, into numpy arrays.

    Parameters
    ----------
    source:
        A path, the file's bytes, or a binary file object.
    mmap:
        Memory-map a path and return read-only zero-copy views (pages are read on first touch).
        False reads the file into memory and returns writable arrays.
    bfloat16:
        ``'float32'`` widens bfloat16 records (flag 12) to float32; ``'raw'`` keeps their
        ``uint16`` bits.
    strict:
        Refuse bytes after the last name. MXNet ignores them, and so does the default.

    Returns
    -------
    list or dict
        A list when the file has no names (``mx.nd.save(f, [a, b])`` or a single array), else a
        dict in file order. Dense arrays are ``numpy.ndarray``; row_sparse/csr arrays are
        :class:`SparseArray`; an uninitialised ("none") record is None. MXNet 2.0 ``.npz``
        files give a dict, ``.npy`` files a list of one.

    Raises
    ------
    FormatError
        For any malformed input, naming the file and the byte offset.
    """
    return load_with_info(source, mmap=mmap, bfloat16=bfloat16, strict=strict).data()


def load_with_info(source: Source, *, mmap: bool = True, bfloat16: str = "float32",
                   strict: bool = False) -> ParamsFile:
    """Like :func:`load`, but return a :class:`ParamsFile` with each array's :class:`ArrayInfo`.

    ``save(path, load_with_info(src))`` rewrites an MXNet 1.x V2/V3 file byte for byte.
    """
    if bfloat16 not in ("float32", "raw"):
        raise ValueError(f"bfloat16 must be 'float32' or 'raw', got {bfloat16!r}")
    buf, label = _open_source(source, mmap)
    head = bytes(memoryview(buf)[:6])
    if head[:2] == b"PK":
        arrays, names, meta = _npz.read_npz(buf, label, bfloat16)
        infos = [ArrayInfo(2, stype, 1, 0, flag) for flag, stype in meta]
        return ParamsFile(arrays, names, infos, "npz", 0, label)
    if head == b"\x93NUMPY":
        arr, flag = _npz.read_npy(buf, label, bfloat16)
        return ParamsFile([arr], None, [ArrayInfo(2, "default", 1, 0, flag)], "npy", 0, label)
    return _read_list(Reader(buf, label), bfloat16, strict)


def _open_source(source: Source, use_mmap: bool) -> tuple[Any, str]:
    """The file's bytes (a buffer) and a label for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return source, "<bytes>"
    if hasattr(source, "read"):
        data = source.read()
        if not isinstance(data, (bytes, bytearray)):
            raise FormatError("the file object must be opened in binary mode ('rb')",
                              path=str(getattr(source, "name", "<stream>")))
        return data, str(getattr(source, "name", "<stream>"))
    path = os.fspath(source)
    with open_regular(path, "params file") as f:
        size = os.fstat(f.fileno()).st_size
        if use_mmap and size > 0:
            return _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ), str(path)
        # np.empty + readinto: one pass over the data (bytearray(n) would zero-fill it first).
        buf = np.empty(size, np.uint8)
        got = 0
        while got < size:
            n = f.readinto(memoryview(buf)[got:])
            if not n:
                break
            got += n
        return buf[:got], str(path)


def _read_list(r: Reader, bfloat16: str, strict: bool) -> ParamsFile:
    if r.size == 0:
        raise r.error("the file is empty; an MXNet NDArray file has at least 32 bytes", 0)
    magic = r.u64("file magic")
    if magic != LIST_MAGIC:
        raise r.error(f"not an MXNet NDArray file: it starts with {bytes(r.view[:8]).hex(' ')}, "
                      "expected 12 01 00 00 00 00 00 00 (magic 0x112), a ZIP (.npz, MXNet 2.0) "
                      "or an NPY file", 0)
    r.u64("reserved header field")
    count_at = r.pos
    n = r.u64("array count")
    if 4 * n > r.remaining:  # every record has at least its 4-byte magic
        raise r.error(f"the header claims {n} arrays but only {r.remaining} bytes follow",
                      count_at)
    arrays: list[Array] = []
    infos: list[ArrayInfo] = []
    for i in range(n):
        arr, info = _read_record(r, i, bfloat16)
        arrays.append(arr)
        infos.append(info)
    names = _read_names(r, n)
    trailing = r.remaining
    if strict and trailing:
        raise r.error(f"{trailing} unexpected bytes after the last name (strict=True; MXNet "
                      "ignores them: load with strict=False to do the same)")
    return ParamsFile(arrays, names, infos, "ndarray-list", trailing, r.path)


def _read_names(r: Reader, n: int) -> list[str] | None:
    at = r.pos
    k = r.u64("name count")
    if k not in (0, n):
        raise r.error(f"the file has {n} arrays but {k} names; MXNet requires 0 names (a list) "
                      "or one name per array (a dict): the file is corrupt", at)
    if k == 0:
        return None
    return [r.string(f"name {j}") for j in range(k)]


def _read_record(r: Reader, index: int, bfloat16: str) -> tuple[Array, ArrayInfo]:
    start = r.pos
    magic = r.u32(f"record {index} magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        return _read_v23(r, index, start, 2 if magic == V2_MAGIC else 3, bfloat16)
    if magic == V1_MAGIC:
        shape = _read_tshape(r, f"record {index} shape")
        version = 1
    else:
        shape = _read_v0_shape(r, index, start, magic)
        version = 0
    if shape is None or len(shape) == 0 or -1 in shape:  # "none": nothing follows the shape
        return None, ArrayInfo(version, "default", 1, 0, -1, start)
    dev_type, dev_id, flag, dt = _read_ctx_flag(r, index)
    arr = _finish(r.array(dt.numpy, shape, f"record {index} data"), flag, bfloat16)
    return arr, ArrayInfo(version, "default", dev_type, dev_id, flag, start)


def decode_record(data: bytes, label: str) -> Array:
    """Decode one NDArray record (no list header), as in an NDArray handle MXNet pickles.

    Parameters
    ----------
    data : bytes
        The record: magic, shape, context, type flag and data.
    label : str
        What errors name as the source.

    Returns
    -------
    numpy.ndarray, SparseArray or None
        The array (bfloat16 widened to float32); ``None`` for a "none" record.

    Raises
    ------
    FormatError
        The record is truncated or malformed.
    """
    arr, _ = _read_record(Reader(data, label), 0, "float32")
    return arr


def encode_record(what: str, arr: np.ndarray, label: str) -> bytes:
    """Encode one dense array as a V2 NDArray record (no list header), on ``cpu(0)``.

    Parameters
    ----------
    what : str
        What errors call the array.
    arr : numpy.ndarray
        The array.
    label : str
        What errors name as the destination.

    Returns
    -------
    bytes
        The record's header followed by the array's bytes.
    """
    head, values = _prepare(what, arr, None, 2, False, label)
    return head + np.ascontiguousarray(values).tobytes()


def _read_v0_shape(r: Reader, index: int, start: int, ndim: int) -> tuple[int, ...]:
    if ndim > MAX_NDIM:
        raise r.error(f"record {index} starts with {ndim:#010x}, which is no record magic (V1 "
                      f"{V1_MAGIC:#x}, V2 {V2_MAGIC:#x}, V3 {V3_MAGIC:#x}) nor a legacy V0 "
                      f"ndim (at most {MAX_NDIM}): the file is corrupt", start)
    return tuple(r.ints("<u4", ndim, f"record {index} V0 dims"))


def _read_tshape(r: Reader, what: str) -> tuple[int, ...] | None:
    """An ``i32 ndim`` + ``ndim x i64`` shape; None for ndim -1 (unknown)."""
    at = r.pos
    ndim = r.i32(f"{what} ndim")
    if ndim == -1:
        return None
    if ndim < -1 or ndim > MAX_NDIM:
        raise r.error(f"{what} has ndim {ndim}; valid: -1 (unknown) to {MAX_NDIM}", at)
    dims = r.ints("<i8", ndim, f"{what} dims")
    for j, d in enumerate(dims):
        if d < -1:
            raise r.error(f"{what} has a negative dimension {d}", at + 4 + 8 * j)
    return tuple(dims)


def _read_ctx_flag(r: Reader, index: int) -> tuple[int, int, int, dtypes.DType]:
    dev_type = r.i32(f"record {index} dev_type")
    dev_id = r.i32(f"record {index} dev_id")
    at = r.pos
    flag = r.i32(f"record {index} dtype flag")
    return dev_type, dev_id, flag, _dtype_at(r, flag, at, f"record {index}")


def _dtype_at(r: Reader, flag: int, at: int, what: str) -> dtypes.DType:
    try:
        return dtypes.from_flag(flag)
    except DTypeError as exc:
        raise r.error(f"{what}: {exc}", at) from None


def _is_none_shape(shape: tuple[int, ...] | None, version: int) -> bool:
    if shape is None or -1 in shape:
        return True
    return len(shape) == 0 and version != 3  # V3: ndim 0 is a 0-d scalar


def _read_v23(r: Reader, index: int, start: int, version: int,
              bfloat16: str) -> tuple[Array, ArrayInfo]:
    what = f"record {index}"
    stype_at = r.pos
    stype = r.i32(f"{what} storage type")
    if stype not in _STYPE_NAMES:
        raise r.error(f"{what} has storage type {stype}; known: 0 dense, 1 row_sparse, 2 csr",
                      stype_at)
    if version == 3 and stype != 0:
        raise r.error(f"{what} is a V3 (np-shape) record with sparse storage type {stype}, "
                      "which MXNet forbids", stype_at)
    sshape = _read_tshape(r, f"{what} storage shape") if stype else None
    shape = _read_tshape(r, f"{what} shape")
    if _is_none_shape(shape, version):
        return None, ArrayInfo(version, _STYPE_NAMES[stype], 1, 0, -1, start)
    dev_type, dev_id, flag, dt = _read_ctx_flag(r, index)
    info = ArrayInfo(version, _STYPE_NAMES[stype], dev_type, dev_id, flag, start)
    if stype == 0:
        return _finish(r.array(dt.numpy, shape, f"{what} data"), flag, bfloat16), info
    return _read_sparse(r, what, start, stype, sshape, shape, dt, bfloat16), info


def _read_sparse(r: Reader, what: str, start: int, stype: int, sshape: tuple[int, ...] | None,
                 shape: tuple[int, ...], dt: dtypes.DType, bfloat16: str) -> SparseArray:
    if sshape is None or -1 in sshape:
        raise r.error(f"{what}: a sparse record needs a known storage shape", start)
    aux: list[tuple[dtypes.DType, tuple[int, ...]]] = []
    for j in range(_NUM_AUX[stype]):
        at = r.pos
        aux_flag = r.i32(f"{what} aux {j} dtype flag")
        aux_dt = _dtype_at(r, aux_flag, at, f"{what} aux {j}")
        if aux_flag not in _INT_FLAGS:
            raise r.error(f"{what} aux {j} has dtype {aux_dt.name}; sparse indices are integers",
                          at)
        aux_shape = _read_tshape(r, f"{what} aux {j} shape")
        if aux_shape is None or -1 in aux_shape:
            raise r.error(f"{what} aux {j} has an unknown shape", at + 4)
        aux.append((aux_dt, aux_shape))
    # Like MXNet's loader (Chunk::CheckAndAlloc), take the stored row/value count from the
    # indices' shape, not from storage_shape: mx.nd.save can write a stale storage_shape[0].
    if stype == 1:
        if len(sshape) != len(shape) or len(aux[0][1]) != 1:
            raise r.error(f"{what}: row_sparse storage shape {sshape} / index shape "
                          f"{aux[0][1]} do not fit the shape {shape}", start)
        dshape = (aux[0][1][0], *sshape[1:])
    else:
        dshape = aux[1][1]
    data = _finish(r.array(dt.numpy, dshape, f"{what} data"), dt.flag, bfloat16)
    parts = [r.array(a.numpy, s, f"{what} aux {j} data") for j, (a, s) in enumerate(aux)]
    try:
        if stype == 1:
            return SparseArray("row_sparse", shape, data, parts[0])
        return SparseArray("csr", shape, data, parts[1], parts[0])  # on disk: indptr, indices
    except ShapeError as exc:
        raise r.error(f"{what}: inconsistent sparse record: {exc}", start) from None


def _finish(arr: np.ndarray, flag: int, bfloat16: str) -> np.ndarray:
    if flag == 12 and bfloat16 == "float32":
        return dtypes.bfloat16_to_float32(arr)
    return arr


# --------------------------------------------------------------------------------------------
# writing


def save(target: str | os.PathLike[str] | IO[bytes], data: Any, *, version: int | None = None,
         info: Sequence[ArrayInfo | None] | Mapping[str, ArrayInfo] | None = None,
         allow_mxnet2_dtypes: bool = False) -> None:
    """Save arrays as MXNet 1.x's ``mx.nd.save`` does, byte for byte.

    Parameters
    ----------
    target:
        A path (written to a temporary file in the same directory, then renamed over the
        target, so a failed save never leaves a partial file) or a writable binary file object.
    data:
        A list/tuple of arrays (saved with no names), a dict name -> array (insertion order), a
        single array (a list of one, as MXNet does), or a :class:`ParamsFile`. An array is a
        numpy array, a :class:`SparseArray`, or any object with ``asnumpy()``; an object's
        ``context`` attribute gives the saved context (default ``cpu(0)``). bfloat16 is given
        as MXNet's structured dtype ``[('bfloat16', '<u2')]``, an object whose ``dtype`` is
        ``'bfloat16'``, or through ``info`` (flag 12).
    version:
        Record version, 2 (MXNet 1.x default) or 3 (np-shape semantics, which 1.x loads only
        under ``npx.set_np()``). None: 3 when ``info`` says so for any array, else 2.
        V2 cannot hold a 0-d array: 0-d arrays are saved with shape ``(1,)``, which is what
        MXNet 1.x itself does (``mx.nd.array(3.0).shape == (1,)``). Use V3 to keep them 0-d.
    info:
        Per-array :class:`ArrayInfo` (a sequence aligned with the arrays, or a dict by name),
        as :func:`load_with_info` returns: gives the context, the version, and flag 12
        (bfloat16) for float32 values, which are then stored as bfloat16.
    allow_mxnet2_dtypes:
        Permit int16/uint16/uint32/uint64 (flags 8-11), which MXNet 1.x cannot load.

    Raises
    ------
    DTypeError
        A dtype without an MXNet flag, or flags 8-11 without ``allow_mxnet2_dtypes``.
    FormatError
        Something the format cannot hold (a None array, a sparse array in V3, a non-str name).
    """
    label = _target_label(target)
    arrays, names, infos = _normalise(data, info, label)
    if version is None:
        version = 3 if any(i is not None and i.version == 3 for i in infos) else 2
    if version not in (2, 3):
        raise FormatError(f"can only write record versions 2 and 3, not {version}", path=label)
    parts = [_prepare(_describe(names, i), a, infos[i], version, allow_mxnet2_dtypes, label)
             for i, a in enumerate(arrays)]
    if hasattr(target, "write"):
        _write(Writer(target), parts, names)  # type: ignore[arg-type]
    else:
        _atomic_write(os.fspath(target), parts, names)  # type: ignore[arg-type]


def _target_label(target: Any) -> str:
    if hasattr(target, "write"):
        return str(getattr(target, "name", "<stream>"))
    return str(os.fspath(target))


def _describe(names: list[str] | None, i: int) -> str:
    return f"array {i}" if names is None else f"array {i} {names[i]!r}"


def _normalise(data: Any, info: Any, label: str
               ) -> tuple[list[Any], list[str] | None, list[ArrayInfo | None]]:
    """(arrays, names or None, one ArrayInfo-or-None per array)."""
    if isinstance(data, ParamsFile):
        arrays, names = list(data.arrays), data.names
        info = data.infos if info is None else info
    elif isinstance(data, Mapping):
        names, arrays = list(data.keys()), list(data.values())
    elif isinstance(data, (list, tuple)):
        arrays, names = list(data), None
    else:
        arrays, names = [data], None
    if names is not None:
        for j, name in enumerate(names):
            if not isinstance(name, str):
                raise FormatError(f"array {j}: names must be str, got {type(name).__name__} "
                                  f"{name!r}", path=label)
    if info is None:
        return arrays, names, [None] * len(arrays)
    if isinstance(info, Mapping):
        if names is None:
            raise FormatError("info given by name but the data is a list; pass a sequence",
                              path=label)
        return arrays, names, [info.get(n) for n in names]
    infos = list(info)
    if len(infos) != len(arrays):
        raise FormatError(f"info has {len(infos)} entries for {len(arrays)} arrays", path=label)
    return arrays, names, infos


def _context_of(obj: Any, info: ArrayInfo | None) -> tuple[int, int]:
    if info is not None:
        return info.dev_type, info.dev_id
    ctx = getattr(obj, "context", None)
    if isinstance(ctx, Context):
        return ctx.device_typeid, ctx.device_id
    return 1, 0


def _tshape(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _prepare(what: str, obj: Any, info: ArrayInfo | None, version: int, mx2: bool,
             label: str) -> list[Any]:
    """The pieces of one record: header bytes, then the arrays whose bytes follow."""
    if obj is None:
        raise FormatError(f"{what} is None; MXNet cannot save an uninitialised array either",
                          path=label)
    dev_type, dev_id = _context_of(obj, info)
    magic = V3_MAGIC if version == 3 else V2_MAGIC
    want_bf16 = info is not None and info.flag == 12
    if isinstance(obj, SparseArray):
        if version == 3:
            raise FormatError(f"{what} is {obj.stype}; V3 (np-shape) records cannot be sparse: "
                              "save with version=2", path=label)
        return _prepare_sparse(what, obj, dev_type, dev_id, want_bf16, mx2)
    arr, flag = _values(what, obj, want_bf16, mx2)
    if arr.ndim == 0 and version == 2:
        arr = arr.reshape(1)  # V2 ndim 0 means "none"; MXNet 1.x arrays are never 0-d
    head = struct.pack("<Ii", magic, 0) + _tshape(arr.shape) + struct.pack(
        "<iii", dev_type, dev_id, flag)
    return [head, arr]


def _prepare_sparse(what: str, sp: SparseArray, dev_type: int, dev_id: int, want_bf16: bool,
                    mx2: bool) -> list[Any]:
    data, flag = _values(what, sp.data, want_bf16, mx2)
    aux = [sp.indices] if sp.stype == "row_sparse" else [sp.indptr, sp.indices]
    aux = [_values(f"{what} indices", a, False, True)[0] for a in aux]
    head = [struct.pack("<Ii", V2_MAGIC, _STYPE_CODES[sp.stype]), _tshape(data.shape),
            _tshape(sp.shape), struct.pack("<iii", dev_type, dev_id, flag)]
    for a in aux:
        head += [struct.pack("<i", dtypes.flag_of(a.dtype)), _tshape(a.shape)]
    return [b"".join(head), data, *aux]


def _values(what: str, obj: Any, want_bf16: bool, mx2: bool) -> tuple[np.ndarray, int]:
    """C-ordered little-endian numpy values and their dtype flag."""
    arr = obj.asnumpy() if hasattr(obj, "asnumpy") else obj
    arr = np.asarray(arr)
    if want_bf16 or arr.dtype == _BF16_STRUCT or str(getattr(obj, "dtype", "")) == "bfloat16":
        return _bf16_bits(what, arr), 12
    try:
        row = dtypes.from_numpy(arr.dtype)
    except DTypeError as exc:
        raise DTypeError(f"{what}: {exc}") from None
    if not row.mx1_loadable and not mx2:
        raise DTypeError(
            f"{what}: dtype {row.name} (flag {row.flag}) cannot be loaded by MXNet 1.x, which "
            f"fails with 'Unknown type enum {row.flag}'; cast it (e.g. to int32 or int64), or "
            "pass allow_mxnet2_dtypes=True for a file that only MXNet 2.0 reads")
    return np.asarray(arr, dtype=row.numpy, order="C"), row.flag


def _bf16_bits(what: str, arr: np.ndarray) -> np.ndarray:
    """bfloat16 bits: uint16 (or the structured dtype) as is; floats rounded to nearest even."""
    if arr.dtype == _BF16_STRUCT:
        arr = arr.view("<u2")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 2:
        return np.asarray(arr, dtype="<u2", order="C")
    if arr.dtype.kind != "f":
        raise DTypeError(f"{what}: bfloat16 needs float values or uint16 bits, got {arr.dtype}")
    u = np.asarray(arr, dtype="<f4", order="C").view("<u4")
    # Values that are already bfloat16 (low half zero, NaN payloads too) keep their bits.
    exact = (u >> 16).astype("<u2")
    return np.where((u & 0xFFFF) == 0, exact, dtypes.float32_to_bfloat16(u.view("<f4")))


def _write(w: Writer, parts: list[list[Any]], names: list[str] | None) -> None:
    w.u64(LIST_MAGIC)
    w.u64(0)
    w.u64(len(parts))
    for rec in parts:
        for piece in rec:
            if isinstance(piece, np.ndarray):
                w.array(piece)
            else:
                w.raw(piece)
    w.u64(0 if names is None else len(names))
    for name in names or ():
        w.string(name)


def _atomic_write(path: str, parts: list[list[Any]], names: list[str] | None) -> None:
    with atomic_open(path, "wb") as f:
        _write(Writer(f), parts, names)

"""The one dtype table: MXNet type flag <-> numpy dtype <-> ONNX ``TensorProto`` type.

MXNet stores dtypes as mshadow ``TypeFlag`` integers (in ``.params`` records and in the
``__dtype__`` attribute of symbol variables). numpy has no bfloat16, so flag 12 is held as raw
``uint16`` bits and converted with :func:`bfloat16_to_float32`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DTypeError

__all__ = [
    "DType",
    "TABLE",
    "from_flag",
    "from_numpy",
    "from_onnx",
    "to_numpy",
    "flag_of",
    "onnx_of",
    "name_of",
    "bfloat16_to_float32",
    "float32_to_bfloat16",
    "BFLOAT16",
]


@dataclass(frozen=True)
class DType:
    """One row of the table.

    ``mx1_loadable`` says whether MXNet 1.9.1 can load this flag from a file (flags 8-11 exist in
    its enum but fail with ``Unknown type enum``).
    """

    flag: int
    name: str
    numpy: np.dtype
    onnx: int
    mx1_loadable: bool = True

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize


# ONNX TensorProto.DataType values are fixed by the ONNX spec; written out so importing this
# module does not import onnx.
TABLE: tuple[DType, ...] = (
    DType(0, "float32", np.dtype("<f4"), 1),
    DType(1, "float64", np.dtype("<f8"), 11),
    DType(2, "float16", np.dtype("<f2"), 10),
    DType(3, "uint8", np.dtype("u1"), 2),
    DType(4, "int32", np.dtype("<i4"), 6),
    DType(5, "int8", np.dtype("i1"), 3),
    DType(6, "int64", np.dtype("<i8"), 7),
    DType(7, "bool", np.dtype("?"), 9),
    DType(8, "int16", np.dtype("<i2"), 5, mx1_loadable=False),
    DType(9, "uint16", np.dtype("<u2"), 4, mx1_loadable=False),
    DType(10, "uint32", np.dtype("<u4"), 12, mx1_loadable=False),
    DType(11, "uint64", np.dtype("<u8"), 13, mx1_loadable=False),
    # bfloat16 has no numpy dtype; its bits are carried as uint16.
    DType(12, "bfloat16", np.dtype("<u2"), 16),
)
BFLOAT16 = TABLE[12]

_BY_FLAG = {d.flag: d for d in TABLE}
_BY_ONNX = {d.onnx: d for d in TABLE}
_BY_NAME = {d.name: d for d in TABLE}
# numpy -> row; uint16 maps to the real uint16 row, never to bfloat16.
_BY_NUMPY = {d.numpy: d for d in TABLE if d.flag != 12}


def from_flag(flag: int) -> DType:
    """The row for an MXNet type flag; :class:`DTypeError` for an unknown one."""
    try:
        return _BY_FLAG[int(flag)]
    except (KeyError, ValueError, TypeError):
        raise DTypeError(
            f"unknown MXNet dtype flag {flag!r}; known flags: "
            + ", ".join(f"{d.flag}={d.name}" for d in TABLE)) from None


def from_onnx(onnx_type: int) -> DType:
    """The row for an ONNX ``TensorProto`` data type."""
    try:
        return _BY_ONNX[int(onnx_type)]
    except KeyError:
        raise DTypeError(f"ONNX tensor type {onnx_type} has no MXNet equivalent") from None


def from_numpy(dtype: Any) -> DType:
    """The row for anything numpy accepts as a dtype, or a name such as ``'float32'``.

    Also accepts ``'bfloat16'`` and an MXNet flag given as an int.

    >>> from_numpy('float16').flag
    2
    """
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return from_flag(int(dtype))
    try:
        nd = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError):  # numpy parses some strings as code
        raise DTypeError(f"{dtype!r} is not a dtype") from None
    row = _BY_NUMPY.get(nd.newbyteorder("<") if nd.byteorder == ">" else nd)
    if row is None:
        raise DTypeError(f"dtype {nd} has no MXNet type flag; supported: "
                         + ", ".join(d.name for d in TABLE))
    return row


def to_numpy(dtype: Any) -> np.dtype:
    """numpy dtype for a name, flag, numpy dtype or DType (bfloat16 gives uint16 bits)."""
    return from_numpy(dtype).numpy


def flag_of(dtype: Any) -> int:
    """MXNet type flag of a dtype."""
    return from_numpy(dtype).flag


def onnx_of(dtype: Any) -> int:
    """ONNX ``TensorProto`` data type of a dtype."""
    return from_numpy(dtype).onnx


def name_of(dtype: Any) -> str:
    """MXNet's name of a dtype (``'float32'``), as written in op attributes."""
    return from_numpy(dtype).name


def bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    """Widen raw bfloat16 bits (uint16) to float32: the bits become the upper half."""
    # np.uint32(16), not 16: numpy < 2 widens a 0-d uint32 shifted by a Python int to int64.
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def float32_to_bfloat16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 bits (uint16), round-to-nearest-even, NaN kept a NaN."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)

"""Creation operators: ``_zeros``, ``_ones``, ``_full``, ``_arange``, ``_eye``, ``_linspace``,
``_zeros_without_dtype``. They take no inputs; ``nd.zeros``/``sym.zeros`` and friends call them.

MXNet 1.9.1's semantics (``src/operator/tensor/init_op.h``; goldens in tests/golden/ops/init.npz):

* ``ctx`` is a string attribute (``"cpu(0)"``) that only places an imperative result; the
  ``nd`` front end reads it, the computation ignores it;
* ``shape`` uses legacy semantics: ``()`` or a 0 dim is unknown, to be filled by graph inference;
* ``_arange`` without ``stop`` counts from 0 to ``start``; each value is computed in the output
  dtype as ``start + (i // repeat) * step`` (so float32 results match MXNet's bit for bit) and
  the length is ``ceil((stop - start) / step) * repeat``. Integer dtypes truncate ``start`` and
  ``step`` first, and so does float16 (MXNet's ``half_t`` kernel runs in integer arithmetic);
* ``_linspace`` computes ``start + step * i`` in double and then rounds to the dtype.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..attrs import Bool, DType, Float, Int, Optional, Shape, Str
from ..errors import OpAttributeError, ShapeError
from ._shape import known
from .registry import OpDef, register
from .unary import CAST_DTYPES, c_cast

__all__ = ["arange_length"]

_ALL_TYPES = tuple(d for d in CAST_DTYPES if d != "bool")  # MXNET_ADD_ALL_TYPES
_EYE_TYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _np_dtype(name: str) -> np.dtype:
    return dtypes.to_numpy(name)


def _out_shape(p) -> tuple | None:
    """The ``shape`` attribute in legacy form: ``None`` when nothing is known."""
    shape = tuple(p.shape) if p.shape is not None else ()
    return shape if shape else None


def _fill_shape(op: str, p) -> tuple[int, ...]:
    shape = _out_shape(p)
    if not known(shape):
        raise ShapeError(f"{op}: shape={p.shape} is not fully known; give every dimension "
                         "(0 means unknown in MXNet 1.x)")
    return shape


def _init_shape(p, in_shapes):
    return [], [_out_shape(p)]


def _init_type(p, in_types):
    return [], [_np_dtype(p.dtype)]


def _filler(op: str, value):
    def compute(p):
        fill = p.value if value is None else value
        arr = np.full(_fill_shape(op, p), fill, dtype=np.float64)
        return _to_dtype(arr, p.dtype)

    return compute


def _to_dtype(arr: np.ndarray, name: str) -> np.ndarray:
    """Convert like ``static_cast<DType>`` (bfloat16 as its raw bits)."""
    if name == "bfloat16":
        return dtypes.float32_to_bfloat16(arr.astype(np.float32))
    return c_cast(arr, _np_dtype(name))


def _init_params(dtype_choices, extra=None):
    fields = {"shape": Shape(()), "ctx": Str(""), "dtype": DType("float32", choices=dtype_choices)}
    fields.update(extra or {})
    return fields


for _name, _value in (("_zeros", 0.0), ("_ones", 1.0)):
    register(OpDef(_name, params=_init_params(CAST_DTYPES), inputs=(),
                   compute=_filler(_name, _value), infer_shape=_init_shape,
                   infer_type=_init_type))

register(OpDef("_full", params=_init_params(CAST_DTYPES, {"value": Float()}), inputs=(),
               compute=_filler("_full", None), infer_shape=_init_shape, infer_type=_init_type,
               aliases=("_npi_full",)))


def _zeros_without_dtype_type(p, in_types):
    return [], [None if p.dtype < 0 else dtypes.from_flag(p.dtype).numpy]


def _zeros_without_dtype(p):
    flag = 0 if p.dtype < 0 else p.dtype  # unknown dtype: float32, as an imperative call gives
    return np.zeros(_fill_shape("_zeros_without_dtype", p), dtypes.from_flag(flag).numpy)


register(OpDef("_zeros_without_dtype",
               params={"shape": Shape(()), "ctx": Str(""), "dtype": Int(-1)}, inputs=(),
               compute=_zeros_without_dtype, infer_shape=_init_shape,
               infer_type=_zeros_without_dtype_type))


# --- ranges -----------------------------------------------------------------------------------
def _range_bounds(p) -> tuple[float, float]:
    """MXNet's ``RangeParamParser``: without ``stop`` (and no ``infer_range``), count 0..start."""
    if p.stop is None:
        return 0.0, p.start
    return p.start, p.stop


def arange_length(p) -> int:
    """Output length of ``_arange``; raises :class:`OpAttributeError` on an empty or bad range."""
    if p.step == 0:
        raise OpAttributeError(f"_arange: step=0 is not allowed (start={p.start}, "
                               f"stop={p.stop}); give a non-zero step")
    if p.repeat <= 0:
        raise OpAttributeError(f"_arange: repeat={p.repeat} must be positive")
    start, stop = _range_bounds(p)
    if (p.step > 0 and not start < stop) or (p.step < 0 and not start > stop):
        raise OpAttributeError(f"_arange: invalid range (start, stop, step) = ({start}, {stop}, "
                               f"{p.step}): it holds no values")
    return int(math.ceil((stop - start) / p.step)) * p.repeat


def _arange_shape(p, in_shapes):
    if p.infer_range and p.stop is None:
        return [], [None]  # the length comes from the consumer (graph inference)
    return [], [(arange_length(p),)]


def _arange(p):
    if p.infer_range and p.stop is None:
        raise ShapeError("_arange: infer_range=True without stop needs the output length from "
                         "graph shape inference; give stop")
    start, _ = _range_bounds(p)
    index = np.arange(arange_length(p), dtype=np.int64) // p.repeat
    if p.dtype in ("float32", "float64"):
        work = _np_dtype(p.dtype).type
        return work(start) + index.astype(work) * work(p.step)
    # Integer dtypes truncate start and step first (static_cast<DType>). MXNet 1.9.1 computes
    # float16 (half_t) ranges in integer arithmetic too: arange(0.5, 6, 1.5) gives 0, 1, 2, 3.
    s0 = int(c_cast(np.float64(start), np.int64))
    st = int(c_cast(np.float64(p.step), np.int64))
    return _to_dtype(s0 + index * st, p.dtype)


register(OpDef(
    "_arange",
    params={"start": Float(), "stop": Optional(Float()), "step": Float(1.0), "repeat": Int(1),
            "infer_range": Bool(False), "ctx": Str(""),
            "dtype": DType("float32", choices=_ALL_TYPES)},
    inputs=(), compute=_arange, infer_shape=_arange_shape, infer_type=_init_type))


def _linspace(p):
    if p.num < 0:
        raise OpAttributeError(f"_linspace: num={p.num} must be non-negative")
    steps = p.num - 1 if p.endpoint else p.num
    step = (p.stop - p.start) / steps if steps > 0 else 0.0
    return _to_dtype(p.start + step * np.arange(p.num, dtype=np.float64), p.dtype)


def _linspace_shape(p, in_shapes):
    if p.num < 0:
        raise OpAttributeError(f"_linspace: num={p.num} must be non-negative")
    return [], [(p.num,)]


register(OpDef(
    "_linspace",
    params={"start": Float(), "stop": Float(), "num": Int(), "endpoint": Bool(True),
            "ctx": Str(""), "dtype": DType("float32", choices=_ALL_TYPES)},
    inputs=(), compute=_linspace, infer_shape=_linspace_shape, infer_type=_init_type,
    aliases=("_npi_linspace",)))


def _eye_shape(p, in_shapes):
    return [], [(p.N, p.M if p.M > 0 else p.N)]


def _eye(p):
    cols = p.M if p.M > 0 else p.N
    return np.eye(p.N, cols, k=p.k, dtype=_np_dtype(p.dtype))


register(OpDef(
    "_eye",
    params={"N": Int(), "M": Int(0), "k": Int(0), "ctx": Str(""),
            "dtype": DType("float32", choices=_EYE_TYPES)},
    inputs=(), compute=_eye, infer_shape=_eye_shape, infer_type=_init_type))

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

ONNX export: the outputs are constants (all attributes are static): stored as such up to
``FOLD_LIMIT`` elements, built from ``Range``/``EyeLike`` and the same arithmetic above it.
``_arange(infer_range=True)`` and partial ``shape`` attributes, whose sizes come from the graph,
are refused with the way out.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, DType, Float, Int, Optional, Shape, Str
from ...errors import OpAttributeError, ShapeError
from ..infer import known
from ..lowering import LoweringContext, lowering
from ..math.unary import CAST_DTYPES, c_cast
from ..registry import OpDef, register, zero_gradient

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
        # the one value converted as MXNet's static_cast, then the array built in that dtype
        # (not a float64 array cast afterwards: that is 2-8 times the memory of the result)
        scalar = _to_dtype(np.asarray(fill, dtype=np.float64), p.dtype)
        return np.full(_fill_shape(op, p), scalar, dtype=scalar.dtype)

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
    register(OpDef(_name, params=_init_params(CAST_DTYPES), inputs=(), gradient=zero_gradient,
                   compute=_filler(_name, _value), infer_shape=_init_shape,
                   infer_type=_init_type, all_zeros=(lambda p: True) if _value == 0 else None))

register(OpDef("_full", params=_init_params(CAST_DTYPES, {"value": Float()}), inputs=(),
               gradient=zero_gradient,
               compute=_filler("_full", None), infer_shape=_init_shape, infer_type=_init_type,
               aliases=("_npi_full",), all_zeros=lambda p: float(p.value) == 0.0))


def _zeros_without_dtype_type(p, in_types):
    return [], [None if p.dtype < 0 else dtypes.from_flag(p.dtype).numpy]


def _zeros_without_dtype(p):
    flag = 0 if p.dtype < 0 else p.dtype  # unknown dtype: float32, as an imperative call gives
    return np.zeros(_fill_shape("_zeros_without_dtype", p), dtypes.from_flag(flag).numpy)


register(OpDef("_zeros_without_dtype",
               params={"shape": Shape(()), "ctx": Str(""), "dtype": Int(-1)}, inputs=(),
               gradient=zero_gradient,
               compute=_zeros_without_dtype, infer_shape=_init_shape,
               infer_type=_zeros_without_dtype_type, all_zeros=lambda p: True))


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
    inputs=(), compute=_arange, infer_shape=_arange_shape, infer_type=_init_type,
    gradient=zero_gradient))


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
    gradient=zero_gradient,
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
    inputs=(), gradient=zero_gradient, compute=_eye, infer_shape=_eye_shape, infer_type=_init_type))


# --- ONNX export --------------------------------------------------------------------------------
# Every attribute is static, so the outputs are constants. Up to FOLD_LIMIT elements they are
# stored as one (exact: the values come from the compute above); larger ranges and identities are
# built at run time from a few nodes that evaluate the compute's own arithmetic, so a model does
# not carry megabytes of arange.
FOLD_LIMIT = 4096


def _shape_attr(ctx: LoweringContext, op: str) -> tuple[int, ...]:
    """The ``shape`` attribute; 0 dims (MXNet's "infer from the graph", e.g. an RNN layer's
    begin state of unknown batch) take the inferred output shape when it does not vary with
    the dynamic axes."""
    shape = _out_shape(ctx.params)
    inferred = ctx.out_shapes[0] if ctx.out_shapes else None
    dynamic = any(ctx.out_dynamic[0]) if ctx.out_dynamic and ctx.out_dynamic[0] else False
    if not known(shape) and known(inferred) and not dynamic:
        shape = tuple(inferred)
    if not known(shape):
        raise ctx.fail(f"{op}: shape={ctx.params.shape} is not fully given (MXNet infers the "
                       "0 dims from the graph); give every dimension, or use zeros_like / "
                       "ones_like on a tensor of the wanted shape")
    return shape


def _fill_onnx(op: str):
    """``ConstantOfShape`` with the value converted to the dtype (bfloat16: its uint16 bits,
    as gluonport carries bfloat16)."""

    def handler(ctx: LoweringContext) -> None:
        from onnx import numpy_helper

        p = ctx.params
        shape = _shape_attr(ctx, op)
        if op == "_zeros_without_dtype":  # dtype -1: what the graph inferred, else float32
            value = np.zeros((1,), ctx.out_dtypes[0] or np.float32)
        else:
            fill = p.value if op == "_full" else (1.0 if op == "_ones" else 0.0)
            value = _to_dtype(np.full((1,), fill, np.float64), p.dtype)
        ctx.make("ConstantOfShape", [ctx.ints(shape, "shape")], outputs=[ctx.outputs[0]],
                 value=numpy_helper.from_array(value, "value"))

    return handler


for _name in ("_zeros", "_ones", "_full", "_zeros_without_dtype"):
    lowering(_name)(_fill_onnx(_name))


def _constant(ctx: LoweringContext, value: np.ndarray) -> None:
    """Output 0 is the constant ``value``."""
    ctx.make("Identity", [ctx.const(value, "value")], outputs=[ctx.outputs[0]])


def _index(ctx: LoweringContext, n: int, repeat: int = 1) -> str:
    """``[0, 1, ..., n-1] // repeat`` as int64."""
    idx = ctx.make("Range", [ctx.const(np.int64(0)), ctx.const(np.int64(n)),
                             ctx.const(np.int64(1))])
    return idx if repeat == 1 else ctx.make("Div", [idx, ctx.const(np.int64(repeat))])


def _affine(ctx: LoweringContext, idx: str, start, step, work) -> str:
    """``start + idx * step`` in ``work`` (a Mul and an Add: the compute's two roundings)."""
    x = ctx.cast_to(idx, work) if np.dtype(work) != np.int64 else idx
    return ctx.make("Add", [ctx.const(np.asarray(start, work)),
                            ctx.make("Mul", [x, ctx.const(np.asarray(step, work))])])


def _deliver(ctx: LoweringContext, y: str, work) -> None:
    out = np.dtype(ctx.out_dtypes[0])
    if out == np.dtype(work):
        ctx.make("Identity", [y], outputs=[ctx.outputs[0]])
    else:
        ctx.make("Cast", [y], outputs=[ctx.outputs[0]], to=dtypes.onnx_of(out))


def _arange_onnx(ctx: LoweringContext) -> None:
    """A constant; above FOLD_LIMIT, ``Range`` and the compute's arithmetic: float32/float64
    ``start + i * step`` in the dtype, the others in int64 from the truncated start and step."""
    p = ctx.params
    if p.infer_range and p.stop is None:
        raise ctx.fail("_arange with infer_range=True takes its length from the graph at run "
                       "time (MXNet infers it from the consumer); give stop, or use "
                       "_contrib_arange_like, which exports")
    n = arange_length(p)
    if n <= FOLD_LIMIT or p.dtype == "bfloat16":
        _constant(ctx, _arange(p))
        return
    start, _ = _range_bounds(p)
    idx = _index(ctx, n, p.repeat)
    if p.dtype in ("float32", "float64"):
        _deliver(ctx, _affine(ctx, idx, start, p.step, _np_dtype(p.dtype)), p.dtype)
        return
    s0 = c_cast(np.float64(start), np.int64)
    st = c_cast(np.float64(p.step), np.int64)
    _deliver(ctx, _affine(ctx, idx, s0, st, np.int64), np.int64)


lowering("_arange")(_arange_onnx)


def _linspace_onnx(ctx: LoweringContext) -> None:
    """A constant; above FOLD_LIMIT, ``start + step * i`` in double, converted to the dtype."""
    p = ctx.params
    if p.num <= FOLD_LIMIT or p.dtype == "bfloat16":
        _constant(ctx, _linspace(p))
        return
    steps = p.num - 1 if p.endpoint else p.num
    step = (p.stop - p.start) / steps if steps > 0 else 0.0
    _deliver(ctx, _affine(ctx, _index(ctx, p.num), p.start, step, np.float64), np.float64)


lowering("_linspace")(_linspace_onnx)


def _eye_onnx(ctx: LoweringContext) -> None:
    """A constant; above FOLD_LIMIT, ``EyeLike`` (k) on a zero matrix, float32 then cast for
    the dtypes onnxruntime's EyeLike lacks."""
    p = ctx.params
    n, m = _eye_shape(p, [])[1][0]
    if n * m <= FOLD_LIMIT:
        _constant(ctx, _eye(p))
        return
    from onnx import numpy_helper

    dt = _np_dtype(p.dtype)
    work = dt if dt in (np.float32, np.float64, np.int32, np.int64) else np.dtype(np.float32)
    zeros = ctx.make("ConstantOfShape", [ctx.ints([n, m], "shape")],
                     value=numpy_helper.from_array(np.zeros(1, work), "value"))
    _deliver(ctx, ctx.make("EyeLike", [zeros], k=p.k), work)


lowering("_eye")(_eye_onnx)

"""Reductions: ``sum``, ``mean``, ``prod``, ``nansum``, ``nanprod``, ``max``, ``min``, ``norm``,
``argmax``, ``argmin``, ``argmax_channel``, with their ONNX lowerings.

MXNet 1.9.1 (legacy, non-numpy mode) semantics kept here:

* ``axis=None`` and ``axis=()`` both reduce over every axis, and a full reduction without
  ``keepdims`` gives shape ``(1,)``, never a 0-d array; ``exclude=True`` reduces over the axes
  *not* listed (and is ignored when ``axis`` is empty).
* The output keeps the input dtype: integer sums wrap around in that dtype, an integer ``mean``
  divides the wrapped sum with truncation toward zero.
* ``max``/``min`` propagate NaN; ``argmax``/``argmin`` return the first maximum / minimum (a NaN
  counts as the maximum and the minimum) and, like MXNet 1.x, in the *input* dtype (float32
  indices for float32 data).
* ``norm`` with ``ord=2`` on integer data follows MXNet's scaled reduction carried out in integer
  arithmetic: the result is ``trunc(max|x| * sqrt(count of elements equal to max|x|))``.

The statistics ops (``moments``, ``cumsum``, ``_histogram``, ``all_finite``) are in
:mod:`.stats`; ONNX lowerings of the reductions are at the end of this file.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, Enum, Int, Optional, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, known, norm_axis
from ..lowering import LoweringContext, deliver, lowering, onnx_reduce
from ..registry import OpDef, register, zero_gradient

__all__ = ["reduce_axes", "reduced_shape", "count_slices", "keep_or_drop"]

_AXES_PARAMS = {"axis": Optional(Shape()), "keepdims": Bool(False), "exclude": Bool(False)}
_AXIS_PARAMS = {"axis": Optional(Int()), "keepdims": Bool(False)}
_NORM_DTYPES = ("float16", "float32", "float64", "int64", "int32", "int8")


def reduce_axes(axis: tuple | None, ndim: int, exclude: bool = False) -> tuple[int, ...]:
    """The sorted, non-negative axes MXNet reduces over for ``axis``/``exclude``.

    ``None`` or ``()`` means every axis (``exclude`` is then ignored, as in MXNet). Duplicates
    and out-of-range axes raise :class:`ShapeError`.

    >>> reduce_axes((-1, 0), 3), reduce_axes((1,), 3, exclude=True), reduce_axes((), 2, True)
    ((0, 2), (0, 2), (0, 1))
    """
    if not axis:
        return tuple(range(ndim))
    axes = sorted(norm_axis(int(a), ndim, "reduction axis") for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"reduction axes {tuple(axis)} have duplicates; list each axis once")
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(axes)


def reduced_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple:
    """Output shape of a reduction: reduced axes become 1 (``keepdims``) or disappear; a result
    with no axis left is ``(1,)``."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept or (1,)


def _axes_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None]
    axes = reduce_axes(p.axis, len(shape), p.exclude)
    return in_shapes, [reduced_shape(tuple(shape), axes, p.keepdims)]


def _minmax_rule(p, in_shapes):
    shape = in_shapes[0]
    if known(shape) and int(np.prod(shape)) == 0:
        raise ShapeError(f"cannot take max/min of an empty array of shape {fmt(shape)}")
    return _axes_rule(p, in_shapes)


def _acc_dtype(dtype: np.dtype) -> np.dtype:
    """Accumulate float16 in float32 (MXNet's safe accumulation); others in their own dtype."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


ReduceFn = Callable[[np.ndarray, tuple, np.dtype], np.ndarray]


def _mean(x: np.ndarray, axes: tuple, acc: np.dtype) -> np.ndarray:
    total = np.sum(x, axis=axes, dtype=acc, keepdims=True)
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if np.issubdtype(acc, np.integer):  # C integer division truncates toward zero
        return np.trunc(total.astype(np.float64) / count)
    return total / acc.type(count)


_REDUCERS: list[tuple[str, ReduceFn, tuple[str, ...], bool]] = [
    # (name, fn(x, axes, accumulation dtype) keeping dims, aliases, is max/min)
    ("sum", lambda x, a, t: np.sum(x, axis=a, dtype=t, keepdims=True),
     ("sum_axis", "_sparse_sum"), False),
    ("mean", _mean, ("_sparse_mean",), False),
    ("prod", lambda x, a, t: np.prod(x, axis=a, dtype=t, keepdims=True), (), False),
    ("nansum", lambda x, a, t: np.nansum(x, axis=a, dtype=t, keepdims=True), (), False),
    ("nanprod", lambda x, a, t: np.nanprod(x, axis=a, dtype=t, keepdims=True), (), False),
    ("max", lambda x, a, t: np.max(x, axis=a, keepdims=True), ("max_axis",), True),
    ("min", lambda x, a, t: np.min(x, axis=a, keepdims=True), ("min_axis",), True),
]


# --- gradients: MXNet's _backward_<op> kernels ------------------------------------------------
# Each takes (ograd, data) or (ograd, data, out) -- MXNet's read the input shape from the forward
# node -- with the forward op's attributes, and returns ``ograd`` broadcast back over the reduced
# axes times MXNet's elementwise factor (ReduceAxesBackwardUseInOut's OP(data, out)).
GradFactor = Callable[[np.ndarray, np.ndarray], np.ndarray]
_NOT_DIFFERENTIATED = ("a backward kernel: MXNet 1.9.1 registers no gradient for it, so "
                       "gradients of gradients through it are not available")


def _nanprod_factor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), x.dtype.type(0), y / x)


_GRAD_FACTORS: dict[str, tuple[bool, GradFactor | None]] = {
    # name: (uses the output, factor(data, output broadcast) or None for 1)
    "sum": (False, None),
    "mean": (False, None),  # and / count (ReduceAxesBackwardUseNone<normalize=true>)
    "nansum": (False, lambda x, y: (~np.isnan(x)).astype(x.dtype)),  # nansum_grad
    "prod": (True, lambda x, y: y / x),  # rdiv(data, out)
    "nanprod": (True, _nanprod_factor),  # nanprod_grad
    "max": (True, lambda x, y: (x == y).astype(x.dtype)),  # eq: every tied maximum
    "min": (True, lambda x, y: (x == y).astype(x.dtype)),
}


def _grad_axes(p, ndim: int) -> tuple[int, ...]:
    return reduce_axes(p.axis, ndim, getattr(p, "exclude", False))


def _backward_compute(name: str, factor: GradFactor | None) -> Callable:
    def compute(p, og: np.ndarray, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        axes = _grad_axes(p, x.ndim)
        kept = reduced_shape(x.shape, axes, True)
        work = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        g = np.broadcast_to(og.reshape(kept).astype(work, copy=False), x.shape)
        with np.errstate(all="ignore"):
            if name == "mean":
                g = g / work.type(max(int(np.prod([x.shape[a] for a in axes])), 1))
            if factor is not None:
                yk = None if y is None else y.reshape(kept).astype(work, copy=False)
                g = g * factor(x.astype(work, copy=False), yk)
        if g.dtype == x.dtype and g.flags.writeable and not np.shares_memory(g, og):
            return g  # already a fresh array
        return np.array(g, dtype=x.dtype)

    return compute


def _norm_factor(p) -> GradFactor:
    """``_backward_norm``: ``sign(x)`` (ord 1) or ``x / norm`` (ord 2; 0/0 is NaN, as MXNet)."""
    return (lambda x, y: np.sign(x)) if p.ord == 1 else (lambda x, y: x / y)


def _norm_backward(p, og: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _backward_compute("norm", _norm_factor(p))(p, og, x, y)


def _grad_shape(p, in_shapes):
    return in_shapes, [in_shapes[1]]


def _grad_type(p, in_types):
    return in_types, [in_types[1]]


def _reduce_attrs(p, keys: tuple[str, ...]) -> dict:
    return {k: getattr(p, k) for k in keys if getattr(p, k) is not None}


def _reduce_rule(name: str, uses_out: bool, keys: tuple[str, ...] = ("axis", "keepdims",
                                                                        "exclude")):
    """FGradient of a reduction: ``_backward_<name>(ograd, data[, out], **attrs)``."""
    op_name = f"_backward_{name}"

    def rule(F, p, inputs, outputs, ograds):
        extra = [outputs[0]] if uses_out else []
        return [getattr(F._internal, op_name)(ograds[0], inputs[0], *extra,
                                              **_reduce_attrs(p, keys))]

    return rule


def _reducer(fn: ReduceFn) -> Callable:
    def compute(p, x: np.ndarray) -> np.ndarray:
        axes = reduce_axes(p.axis, x.ndim, p.exclude)
        out = fn(x, axes, _acc_dtype(x.dtype))
        return np.asarray(out).astype(x.dtype, copy=False).reshape(
            reduced_shape(x.shape, axes, p.keepdims))

    return compute


for _name, _fn, _aliases, _minmax in _REDUCERS:
    _uses_out, _factor = _GRAD_FACTORS[_name]
    register(OpDef(_name, params=_AXES_PARAMS, compute=_reducer(_fn),
                   infer_shape=_minmax_rule if _minmax else _axes_rule, aliases=_aliases,
                   doc=f"``{_name}`` over ``axis`` (all axes by default).",
                   lists_input_names=False, gradient=_reduce_rule(_name, _uses_out)))
    register(OpDef(f"_backward_{_name}", params=_AXES_PARAMS,
                   inputs=("ograd", "data", "out") if _uses_out else ("ograd", "data"),
                   compute=_backward_compute(_name, _factor), infer_shape=_grad_shape,
                   infer_type=_grad_type, no_gradient=_NOT_DIFFERENTIATED,
                   doc=f"``{_name}``'s gradient: ``ograd`` broadcast back to ``data``'s shape"
                       + (" times MXNet's factor of (data, out)." if _uses_out else ".")))


# --- norm ------------------------------------------------------------------------------------
def _int_l2(x: np.ndarray, axes: tuple) -> np.ndarray:
    """MXNet's scaled L2 reduction run in integer arithmetic (see the module docstring)."""
    mag = np.abs(x.astype(np.int64))
    scale = np.max(mag, axis=axes, keepdims=True)
    count = np.sum((mag == scale) & (mag != 0), axis=axes, keepdims=True)
    return np.trunc(scale * np.sqrt(count.astype(np.float64)))


def _norm(p, x: np.ndarray) -> np.ndarray:
    if p.ord not in (1, 2):
        raise OpAttributeError(f"norm: ord={p.ord} is not supported; MXNet's norm takes ord=1 "
                               "or ord=2")
    axes = reduce_axes(p.axis, x.ndim)
    if p.ord == 1:
        out = np.sum(np.abs(x), axis=axes, dtype=_acc_dtype(x.dtype), keepdims=True)
    elif np.issubdtype(x.dtype, np.integer):
        out = _int_l2(x, axes)
    else:
        wide = x.astype(np.float64)
        out = np.sqrt(np.sum(wide * wide, axis=axes, keepdims=True))
    dtype = np.dtype(p.out_dtype) if p.out_dtype is not None else x.dtype
    return out.astype(dtype).reshape(reduced_shape(x.shape, axes, p.keepdims))


def _norm_shape(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None]
    return in_shapes, [reduced_shape(tuple(shape), reduce_axes(p.axis, len(shape)), p.keepdims)]


def _norm_type(p, in_types):
    dt = in_types[0]
    if p.out_dtype is not None:
        return in_types, [np.dtype(p.out_dtype)]
    return in_types, [dt]


_NORM_PARAMS = {"ord": Int(2), "axis": Optional(Shape()),
                "out_dtype": Optional(Enum(_NORM_DTYPES)), "keepdims": Bool(False)}
register(OpDef(
    "norm",
    params=_NORM_PARAMS,
    compute=_norm, infer_shape=_norm_shape, infer_type=_norm_type, aliases=("_sparse_norm",),
    doc="L1 (``ord=1``) or L2 (``ord=2``, Frobenius over several axes) norm.",
    lists_input_names=False,
    gradient=_reduce_rule("norm", True, ("ord", "axis", "out_dtype", "keepdims"))))
register(OpDef(
    "_backward_norm", params=_NORM_PARAMS, inputs=("ograd", "data", "out"),
    compute=_norm_backward, infer_shape=_grad_shape, infer_type=_grad_type,
    no_gradient=_NOT_DIFFERENTIATED,
    doc="``norm``'s gradient: ``ograd`` broadcast back times ``sign(data)`` (ord 1) or "
        "``data / out`` (ord 2)."))


# --- argmax / argmin -------------------------------------------------------------------------
def _axis_shape(shape: tuple, axis: int | None, keepdims: bool) -> tuple:
    """MXNet's ReduceAxisShapeImpl: a global search (or a 1-d input) gives ``(1,)``."""
    if axis is None or len(shape) == 1:
        if axis is not None:
            norm_axis(axis, len(shape))
        return (1,) * len(shape) if keepdims else (1,)
    ax = norm_axis(axis, len(shape))
    if keepdims:
        return tuple(1 if i == ax else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i != ax)


def _axis_rule(p, in_shapes):
    shape = in_shapes[0]
    if not known(shape):  # MXNet needs the full input shape here
        return in_shapes, [None]
    return in_shapes, [_axis_shape(tuple(shape), p.axis, p.keepdims)]


def _search(fn: Callable) -> Callable:
    def compute(p, x: np.ndarray) -> np.ndarray:
        shape = _axis_shape(x.shape, p.axis, p.keepdims)
        if p.axis is None:
            return np.asarray(fn(x.reshape(-1))).astype(x.dtype).reshape(shape)
        out = fn(x, axis=norm_axis(p.axis, x.ndim))
        return np.asarray(out).astype(x.dtype).reshape(shape)

    return compute


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(OpDef(_name, params=_AXIS_PARAMS, compute=_search(_fn), infer_shape=_axis_rule,
                   doc=f"``{_name}`` along ``axis`` (flattened when None), in the input dtype.",
                   lists_input_names=False, gradient=zero_gradient))

_CHANNEL = type("ChannelParams", (), {"axis": 1, "keepdims": False})()


def _argmax_channel(p, x: np.ndarray) -> np.ndarray:
    return _search(np.argmax)(_CHANNEL, x)


register(OpDef(
    "argmax_channel", compute=_argmax_channel,
    infer_shape=lambda p, s: _axis_rule(_CHANNEL, s),
    doc="Legacy ``argmax(data, axis=1)``: the index of the largest channel of each row.",
    no_gradient="MXNet 1.9.1 registers no FGradient for argmax_channel (an index output)"))


# --- ONNX export -----------------------------------------------------------------------------
# ONNX Reduce* take ``axes`` as an attribute until opset 18 (ReduceSum: until 13) and as an input
# after. onnxruntime has no int8/uint8/int16 reductions and its ReduceMax/ArgMax look past a NaN
# that is not first, so reductions widen small ints and float16 (MXNet accumulates float16 in
# float32 too) and add NaN handling where MXNet propagates NaN. ArgMax/ArgMin see a NaN as
# +/-inf: the first NaN wins as in MXNet, unless an infinity of that sign comes before it.
_WIDEN = {"float16": np.float32, "int8": np.int32, "uint8": np.int32, "int16": np.int32,
          "uint16": np.int32}


def _finish(ctx: LoweringContext, y: str, work, keepdims: bool, full: bool) -> None:
    """Give a full reduction MXNet's ``(1,)`` shape and cast back from the ``work`` dtype."""
    if full and not keepdims:
        y = ctx.make("Reshape", [y, ctx.ints([1], "one")])
    deliver(ctx, y, 0, work)


def _widened(ctx: LoweringContext, x: str, dtype: np.dtype) -> tuple[str, np.dtype]:
    wide = np.dtype(_WIDEN.get(dtype.name, dtype))
    return (x, dtype) if wide == dtype else (ctx.cast_to(x, wide), wide)


def _nan_to(ctx: LoweringContext, x: str, dtype: np.dtype, value: float) -> str:
    """``x`` with every NaN replaced by ``value`` (floats only)."""
    if dtype.kind != "f":
        return x
    fill = ctx.const(np.asarray(value, dtype=dtype), "fill")
    return ctx.make("Where", [ctx.make("IsNaN", [x]), fill, x])


def _nan_poison(ctx: LoweringContext, x: str, y: str, dtype: np.dtype, axes: tuple,
                keepdims: bool) -> str:
    """``y`` + (NaN where the reduced slice of ``x`` holds a NaN, else 0)."""
    if dtype.kind != "f":
        return y
    nan = ctx.const(np.asarray(np.nan, dtype=dtype), "nan")
    zero = ctx.const(np.asarray(0, dtype=dtype), "zero")
    poison = ctx.make("Where", [ctx.make("IsNaN", [x]), nan, zero])
    return ctx.make("Add", [y, onnx_reduce(ctx, "ReduceSum", poison, axes, keepdims)])


def count_slices(ctx: LoweringContext, axes: tuple, dtype: np.dtype) -> str:
    """Number of elements per reduced slice, in ``dtype`` (from Shape when dynamic)."""
    shape, dyn = ctx.shape, ctx.in_dynamic[0]
    if not any(dyn[a] for a in axes):
        return ctx.const(np.asarray(int(np.prod([shape[a] for a in axes])), dtype=dtype), "n")
    dims = ctx.make("Gather", [ctx.make("Shape", [ctx.inputs[0]]), ctx.ints(axes, "axes")])
    n = onnx_reduce(ctx, "ReduceProd", dims, (0,), False)
    return ctx.cast_to(n, dtype)


def _to_reduce(op_type: str, nan_fill: float | None = None, poison: bool = False):
    def handler(ctx: LoweringContext) -> None:
        p, dtype = ctx.params, np.dtype(ctx.dtype)
        axes = reduce_axes(p.axis, len(ctx.shape), p.exclude)
        x = ctx.inputs[0]
        if nan_fill is not None:
            x = _nan_to(ctx, x, dtype, nan_fill)
        if not axes:  # exclude=True listing every axis: nothing is reduced
            return deliver(ctx, x)
        if poison:  # ReduceMax/Min: every dtype is supported, only NaN needs help
            y = _nan_poison(ctx, x, onnx_reduce(ctx, op_type, x, axes, p.keepdims), dtype,
                            axes, p.keepdims)
            return _finish(ctx, y, dtype, p.keepdims, len(axes) == len(ctx.shape))
        if op_type == "ReduceMean" and dtype.kind in "iu":
            return _int_mean(ctx, x, dtype, axes, p.keepdims)
        xw, work = _widened(ctx, x, dtype)
        y = onnx_reduce(ctx, op_type, xw, axes, p.keepdims)
        _finish(ctx, y, work, p.keepdims, len(axes) == len(ctx.shape))

    handler.__name__ = f"to_{op_type}"
    return handler


def _int_mean(ctx: LoweringContext, x: str, dtype: np.dtype, axes: tuple, keepdims: bool) -> None:
    """MXNet sums in the integer dtype (wrapping), then divides truncating toward zero."""
    xw, work = _widened(ctx, x, dtype)
    total = onnx_reduce(ctx, "ReduceSum", xw, axes, keepdims)
    if work != dtype:  # wrap the sum as MXNet's int8 accumulator does
        total = ctx.cast_to(ctx.cast_to(total, dtype), work)
    y = ctx.make("Div", [total, count_slices(ctx, axes, work)])  # integer Div truncates
    _finish(ctx, y, work, keepdims, len(axes) == len(ctx.shape))





def keep_or_drop(ctx: LoweringContext, y: str, axes: tuple, keepdims: bool) -> str:
    """``y`` reduced with keepdims, reshaped to the requested keepdims form."""
    if keepdims:
        return y
    if len(axes) == len(ctx.shape):
        return ctx.make("Reshape", [y, ctx.ints([1], "one")])
    return ctx.make("Squeeze", [y, ctx.ints(axes, "axes")])


def _int_l2_onnx(ctx: LoweringContext, axes: tuple, keepdims: bool) -> str:
    """MXNet's integer L2 norm (see :func:`_int_l2`), in float64."""
    mag = ctx.make("Abs", [ctx.cast_to(ctx.inputs[0], np.int64)])
    scale = onnx_reduce(ctx, "ReduceMax", mag, axes, True)
    zero = ctx.const(np.asarray(0, dtype=np.int64), "zero")
    hit = ctx.make("And", [ctx.make("Equal", [mag, scale]),
                           ctx.make("Not", [ctx.make("Equal", [mag, zero])])])
    count = onnx_reduce(ctx, "ReduceSum", ctx.cast_to(hit, np.float64), axes, True)
    y = ctx.make("Mul", [ctx.cast_to(scale, np.float64), ctx.make("Sqrt", [count])])
    return keep_or_drop(ctx, ctx.make("Floor", [y]), axes, keepdims)


def _norm_onnx(ctx: LoweringContext) -> None:
    """``ord=1`` -> ReduceL1, ``ord=2`` -> ReduceL2 (integer L2 as MXNet computes it)."""
    p, dtype = ctx.params, np.dtype(ctx.dtype)
    if p.ord not in (1, 2):
        raise ctx.fail(f"norm ord={p.ord} has no ONNX lowering (MXNet supports ord 1 and 2)")
    axes = reduce_axes(p.axis, len(ctx.shape))
    if p.ord == 2 and dtype.kind in "iu":
        return deliver(ctx, _int_l2_onnx(ctx, axes, p.keepdims), 0, np.float64)
    xw, work = _widened(ctx, ctx.inputs[0], dtype)
    y = onnx_reduce(ctx, "ReduceL1" if p.ord == 1 else "ReduceL2", xw, axes, p.keepdims)
    _finish(ctx, y, work, p.keepdims, len(axes) == len(ctx.shape))


def _to_arg(op_type: str, nan_fill: float):
    """ArgMax/ArgMin: a NaN counts as the extreme (as in MXNet); indices in the input dtype."""

    def handler(ctx: LoweringContext) -> None:
        p = ctx.params if ctx.node.op.name != "argmax_channel" else _CHANNEL
        dtype, ndim = np.dtype(ctx.dtype), len(ctx.shape)
        x = _nan_to(ctx, ctx.inputs[0], dtype, nan_fill)
        if p.axis is None:
            flat = ctx.make("Reshape", [x, ctx.ints([-1], "flat")])
            y = ctx.make(op_type, [flat], axis=0, keepdims=1)
            if p.keepdims and ndim > 1:
                y = ctx.make("Reshape", [y, ctx.ints([1] * ndim, "ones")])
        else:
            axis = norm_axis(p.axis, ndim)
            y = ctx.make(op_type, [x], axis=axis, keepdims=int(p.keepdims or ndim == 1))
        deliver(ctx, y, 0, np.int64)

    handler.__name__ = f"to_{op_type}"
    return handler


for _name, _op_type, _fill, _poison in (
        ("sum", "ReduceSum", None, False), ("mean", "ReduceMean", None, False),
        ("prod", "ReduceProd", None, False), ("nansum", "ReduceSum", 0.0, False),
        ("nanprod", "ReduceProd", 1.0, False), ("max", "ReduceMax", None, True),
        ("min", "ReduceMin", None, True)):
    lowering(_name)(_to_reduce(_op_type, _fill, _poison))
lowering("norm")(_norm_onnx)


# gradients: ograd (and out) back to keepdims form, times the factor, Expand to data's shape
def _kept(ctx: LoweringContext, y: str, axes: tuple, keepdims: bool, ndim: int) -> str:
    if keepdims:
        return y
    if len(axes) == ndim:
        return ctx.make("Reshape", [y, ctx.ints([1] * ndim, "ones")])
    return ctx.make("Unsqueeze", [y, ctx.ints(axes, "axes")])


def _backward_onnx(name: str):
    def handler(ctx: LoweringContext) -> None:
        p, ndim = ctx.params, len(ctx.in_shapes[1])
        dtype = np.dtype(ctx.in_dtypes[1])
        work = np.dtype(np.float32) if dtype == np.float16 else dtype
        axes = _grad_axes(p, ndim)
        og = _kept(ctx, ctx.cast_to(ctx.inputs[0], work) if ctx.in_dtypes[0] != work
                   else ctx.inputs[0], axes, p.keepdims, ndim)
        x = ctx.inputs[1] if dtype == work else ctx.cast_to(ctx.inputs[1], work)
        if name == "mean":
            dims = ctx.make("Gather", [ctx.make("Shape", [ctx.inputs[1]]),
                                       ctx.ints(axes, "axes")])
            n = ctx.cast_to(onnx_reduce(ctx, "ReduceProd", dims, (0,), False), work)
            og = ctx.make("Div", [og, n])
        factor = None
        if len(ctx.inputs) > 2:
            y = ctx.inputs[2] if ctx.in_dtypes[2] == work else ctx.cast_to(ctx.inputs[2], work)
            y = _kept(ctx, y, axes, p.keepdims, ndim)
            if name in ("max", "min"):
                factor = ctx.cast_to(ctx.make("Equal", [x, y]), work)
            elif name == "norm":
                factor = ctx.make("Sign", [x]) if p.ord == 1 else ctx.make("Div", [x, y])
            else:  # prod, nanprod: out / x (0 where x is NaN for nanprod)
                factor = ctx.make("Div", [y, x])
                if name == "nanprod":
                    zero = ctx.const(np.asarray(0, dtype=work), "zero")
                    factor = ctx.make("Where", [ctx.make("IsNaN", [x]), zero, factor])
        elif name == "nansum":
            factor = ctx.cast_to(ctx.make("Not", [ctx.make("IsNaN", [x])]), work)
        g = ctx.make("Expand", [og, ctx.make("Shape", [ctx.inputs[1]])])
        if factor is not None:
            g = ctx.make("Mul", [g, factor])
        deliver(ctx, g, 0, work)

    handler.__name__ = f"to_backward_{name}"
    return handler


for _name in (*_GRAD_FACTORS, "norm"):
    lowering(f"_backward_{_name}")(_backward_onnx(_name))
lowering("argmax")(_to_arg("ArgMax", np.inf))
lowering("argmin")(_to_arg("ArgMin", -np.inf))
lowering("argmax_channel")(_to_arg("ArgMax", np.inf))

"""Statistics: ``moments``, ``_np_cumsum`` (alias ``cumsum``), ``_histogram`` (alias
``_npi_histogram``), ``all_finite``, ``multi_all_finite``, with their ONNX lowerings.

MXNet 1.9.1 semantics kept here:

* ``moments`` needs explicit ``axes`` (MXNet refuses none); it sums in MXNet's accumulation
  type (float32 in float64, float16 in float32, integers in int64), casts the sum to the data's
  dtype and divides there (integers truncate); the variance is the mean of ``(x - mean)**2``
  computed in the data's dtype.
* ``cumsum`` casts each element to the output dtype (``dtype``, else the input's; bool gives
  int64) and sums in it step by step (integers wrap, float16 rounds every step). MXNet 1.9.1
  fails at run time on a negative ``axis``; here it counts from the end as numpy does.
* ``_histogram`` counts (int64) the flattened data in ``bin_cnt`` bins over ``range`` (an empty
  range widened by 0.5 each side) with MXNet's index-then-correct-against-the-edges rule, or
  between the ``bins`` input's edges (walked until the first edge above the value, so unsorted
  edges behave as in MXNet); values outside (and NaN) are not counted.
* ``all_finite``/``multi_all_finite`` give float32 ``[1.]`` or ``[0.]`` for float data (integer
  data is refused, as MXNet does). With ``init_output=False`` MXNet leaves an all-finite
  output untouched (it accumulates into ``out=``); here that output is ``[1.]``.

ONNX lowerings (below in this file):

``all_finite`` and ``multi_all_finite``.

* ``moments`` follows MXNet's arithmetic exactly: sums in MXNet's accumulation type
  (``ReduceSum`` in float64 for float32 data, int64 for integers), the sum cast to the data's
  dtype and divided in it (integers truncate), ``(x - mean)**2`` in the data's dtype. float16
  and small-integer steps run in float32 / int64 and are cast back after each one, which is
  what a float16 or wrapping integer operation does.
* ``_np_cumsum`` is ``CumSum`` after the cast to the output dtype (integers in int64, cast back:
  wrapping is the same). float16 sums in float32 and rounds once at the end, where MXNet
  rounds after every step: equal up to float16 rounding of the running sum.
* ``_histogram``: each element's bin index as MXNet's kernels compute it (the uniform kernel's
  position in the range, corrected against the edges; explicit edges walked until the first
  one above the element), counted with ``ScatterElements(reduction='add')`` from opset 16 and
  a one-hot sum before. Comparisons run in float64 (exact for float16/32/64 and int32 data).
* ``all_finite``: the product of ``IsFinite`` flags (1 for an empty input, as MXNet).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, FloatTuple, Int, Optional, Shape
from ...errors import DTypeError, OpAttributeError, ShapeError
from ..infer import fmt, known, norm_axis
from ..lowering import LoweringContext, deliver, lowering, onnx_reduce
from ..registry import OpDef, register
from .reduce import count_slices, keep_or_drop, reduce_axes, reduced_shape

__all__ = ["uniform_range"]


# --- moments ---------------------------------------------------------------------------------
# MXNet's safe accumulation types (MXNET_ACC_TYPE_SWITCH), which moments always uses
_SAFE_ACC = {"float16": np.float32, "float32": np.float64, "float64": np.float64,
             "uint8": np.uint32, "int8": np.int32, "int32": np.int64, "int64": np.int64,
             "bool": np.int64}


def _moments_axes(p, ndim: int) -> tuple[int, ...]:
    if not p.axes:
        raise OpAttributeError("moments: empty axes are not supported (MXNet refuses them); "
                               "for global moments pass every axis, e.g. axes=(0, 1, 2)")
    return reduce_axes(p.axes, ndim)


def _moments_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        if not p.axes:
            _moments_axes(p, 0)  # refuses empty axes before any shape is known
        return in_shapes, [None, None]
    out = reduced_shape(tuple(shape), _moments_axes(p, len(shape)), p.keepdims)
    return in_shapes, [out, out]


def _normalized(total: np.ndarray, dtype: np.dtype, count: int) -> np.ndarray:
    """MXNet's ``normalize`` step: the sum cast to the data's dtype, divided in that dtype
    (integers truncate toward zero; the count itself is cast to the dtype, as MXNet does)."""
    total = total.astype(dtype)
    div = np.asarray(count).astype(dtype)
    if dtype.kind not in "iub":
        return total / div
    if div == 0:
        raise ShapeError(f"moments: {count} elements per moment is 0 as {dtype.name}; MXNet "
                         "divides by zero there. Reduce fewer elements or cast the data")
    t, d = total.astype(np.int64), np.int64(div)
    q = np.abs(t) // abs(d)
    return np.where((t < 0) != (d < 0), -q, q).astype(dtype)


def _moments(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean, then the mean of ``(x - mean)**2`` computed in the data's dtype; both sums in
    MXNet's accumulation type (float32 sums in float64)."""
    axes = _moments_axes(p, x.ndim)
    acc = _SAFE_ACC.get(x.dtype.name, x.dtype)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    mean = _normalized(np.sum(x, axis=axes, dtype=acc, keepdims=True), x.dtype, count)
    with np.errstate(over="ignore"):
        diff = (x - mean).astype(x.dtype, copy=False)
        var = _normalized(np.sum(diff * diff, axis=axes, dtype=acc, keepdims=True), x.dtype,
                          count)
    shape = reduced_shape(x.shape, axes, p.keepdims)
    return mean.reshape(shape), var.reshape(shape)


def _moments_grad(F, p, inputs, outputs, ograds):
    """MXNet's ``_backward_moments``: ``ograd_mean / N + ograd_var * 2 (x - mean) / N``, built
    from the reductions' backward kernels (``_backward_mean`` is ``ograd / N`` broadcast back,
    ``_backward_sum`` broadcasts ``mean`` back)."""
    x, mean = inputs[0], outputs[0]
    attrs = {"axis": p.axes, "keepdims": p.keepdims}
    g_mean = F._internal._backward_mean(ograds[0], x, **attrs)
    g_var = F._internal._backward_mean(ograds[1], x, **attrs)
    centred = F.elemwise_sub(x, F._internal._backward_sum(mean, x, **attrs))
    return [F.elemwise_add(g_mean, F.elemwise_mul(F._internal._mul_scalar(g_var, scalar=2.0),
                                                  centred))]


register(OpDef(
    "moments", params={"axes": Optional(Shape()), "keepdims": Bool(False)}, compute=_moments,
    num_outputs=2, infer_shape=_moments_rule, gradient=_moments_grad,
    doc="Mean and (biased) variance over ``axes``; two outputs."))


# --- cumsum ---------------------------------------------------------------------------------
_CUMSUM_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64")


def _cumsum_dtype(p, dtype: np.dtype) -> np.dtype:
    if p.dtype is not None:
        return np.dtype(p.dtype)
    return np.dtype(np.int64) if dtype == np.bool_ else np.dtype(dtype)


def _cumsum(p, a: np.ndarray) -> np.ndarray:
    """Each element cast to the output dtype, then summed in it step by step (integers wrap,
    float16 rounds at every step)."""
    dtype = _cumsum_dtype(p, a.dtype)
    x = a.astype(dtype, copy=False)
    if p.axis is None:
        return np.cumsum(x.reshape(-1), dtype=dtype)
    return np.cumsum(x, axis=norm_axis(p.axis, a.ndim), dtype=dtype)


def _cumsum_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None]
    if p.axis is not None:
        norm_axis(p.axis, len(shape))
        return in_shapes, [tuple(shape)]
    return in_shapes, [(int(np.prod(shape, dtype=np.int64)),) if known(shape) else None]


def _cumsum_type(p, in_types):
    dt = in_types[0]
    if p.dtype is not None:
        return in_types, [np.dtype(p.dtype)]
    return in_types, [None if dt is None else _cumsum_dtype(p, np.dtype(dt))]


_CUMSUM_PARAMS = {"axis": Optional(Int()), "dtype": Optional(Enum(_CUMSUM_DTYPES))}


def _cumsum_grad(F, p, inputs, outputs, ograds):
    return [F._internal._backward_np_cumsum(ograds[0], inputs[0], axis=p.axis)]


register(OpDef(
    "_np_cumsum", params=_CUMSUM_PARAMS,
    inputs=("a",), compute=_cumsum, infer_shape=_cumsum_rule, infer_type=_cumsum_type,
    aliases=("cumsum",), gradient=_cumsum_grad,
    doc="Cumulative sum along ``axis`` (of the flattened array when None), in ``dtype``."))


def _cumsum_backward(p, og: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Reversed cumulative sum of ``ograd`` along ``axis`` (flattened when None), in ograd's
    dtype, reshaped and cast to ``a``'s."""
    g = og.reshape(-1) if p.axis is None else og
    axis = 0 if p.axis is None else norm_axis(p.axis, a.ndim)
    rev = np.flip(np.cumsum(np.flip(g, axis), axis=axis, dtype=og.dtype), axis)
    return rev.reshape(a.shape).astype(a.dtype)


register(OpDef(
    "_backward_np_cumsum", params=_CUMSUM_PARAMS, inputs=("ograd", "a"),
    compute=_cumsum_backward, infer_shape=lambda p, s: (s, [s[1]]),
    infer_type=lambda p, t: (t, [t[1]]),
    no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
    doc="``cumsum``'s gradient: inputs (ograd, a); the reversed cumulative sum of ``ograd``."))


# --- histogram ------------------------------------------------------------------------------
def uniform_range(p) -> tuple[float, float, int]:
    """``(low, high, bin_cnt)`` of a uniform histogram (an empty range widened by 0.5 each
    side, as MXNet does)."""
    if len(p.range) != 2 or p.range[0] > p.range[1]:
        raise OpAttributeError(f"_histogram: range={p.range} must be (low, high) with low <= "
                               "high")
    lo, hi = float(p.range[0]), float(p.range[1])
    return (lo - 0.5, hi + 0.5, int(p.bin_cnt)) if lo == hi else (lo, hi, int(p.bin_cnt))


def _uniform_bins(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bin index of each element (-1: outside) and the edges, as MXNet's uniform kernel: an
    index from the position in the range, corrected against the edges in the data's dtype."""
    lo, hi, cnt = uniform_range(p)
    i = np.arange(cnt + 1, dtype=np.float64)
    edges = ((hi * i + (cnt - i) * lo) / cnt).astype(x.dtype)
    v = x.reshape(-1)
    wide = v.astype(np.float64)
    inside = (wide >= lo) & (wide <= hi)
    with np.errstate(invalid="ignore"):
        t = np.where(inside, (wide - lo) * cnt / (hi - lo), 0).astype(np.int64)
    t = np.minimum(t, cnt - 1)
    t -= v < edges[t]
    t += (v >= edges[t + 1]) & (t != cnt - 1)
    return np.where(inside, t, -1), edges


def _edge_bins(x: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """Bin index of each element against explicit edges: MXNet walks the edges until the
    first one above the element (edges need not be sorted)."""
    if bins.dtype != x.dtype or bins.ndim != 1 or bins.size < 2:
        raise ShapeError(f"_histogram: bins must be a 1-d array of >= 2 edges in the data's "
                         f"dtype {x.dtype}, got shape {bins.shape} {bins.dtype}")
    v, nb = x.reshape(-1), bins.size - 1
    inside = (v >= bins[0]) & (v <= bins[nb])
    if np.all(bins[1:] >= bins[:-1]):
        first = np.searchsorted(bins, v, side="right")
    else:
        below = (v[:, None] - bins[None, :]) < 0
        first = np.where(below.any(axis=1), below.argmax(axis=1), nb + 1)
    return np.where(inside, np.minimum(first - 1, nb - 1), -1)


def _hist_check(p) -> None:
    if (p.bin_cnt is None) != (p.range is None):
        raise OpAttributeError("_histogram: give bin_cnt and range together, or neither (then "
                               "the bin edges are the 'bins' input)")


def _histogram(p, x: np.ndarray, bins: np.ndarray | None = None) -> tuple:
    _hist_check(p)
    if p.bin_cnt is not None:
        target, edges = _uniform_bins(p, x)
    else:
        target, edges = _edge_bins(x, bins), bins.copy()
    counts = np.bincount(target[target >= 0], minlength=edges.size - 1)
    return counts.astype(np.int64), edges


def _hist_inputs(p) -> tuple[str, ...]:
    return ("data",) if p.bin_cnt is not None else ("data", "bins")


def _hist_rule(p, in_shapes):
    _hist_check(p)
    if p.bin_cnt is not None:
        return in_shapes, [(p.bin_cnt,), (p.bin_cnt + 1,)]
    bins = in_shapes[1]
    if bins is None:
        return in_shapes, [None, None]
    if len(bins) != 1 or (bins[0] and bins[0] < 2):
        raise ShapeError(f"_histogram: bins must be a 1-d vector of >= 2 edges, got {fmt(bins)}")
    return in_shapes, [(bins[0] - 1 if bins[0] else 0,), tuple(bins)]


def _hist_type(p, in_types):
    return in_types, [np.dtype(np.int64), in_types[0]]


register(OpDef(
    "_histogram",
    params={"bin_cnt": Optional(Int()), "range": Optional(FloatTuple())}, inputs=_hist_inputs,
    compute=_histogram, num_outputs=2, infer_shape=_hist_rule, infer_type=_hist_type,
    aliases=("_npi_histogram",),
    no_gradient="MXNet 1.9.1 registers no FGradient for _histogram (integer counts)",
    doc="Counts (int64) of the flattened data in ``bin_cnt`` equal bins over ``range``, or "
        "between the given ``bins`` edges; second output: the edges."))


# --- all_finite / multi_all_finite ----------------------------------------------------------
def _all_finite(p, *arrays: np.ndarray) -> np.ndarray:
    """1.0 when every element of every input is finite, else 0.0 (float32, shape (1,))."""
    for a in arrays:
        if a.dtype.kind != "f":
            raise DTypeError(f"all_finite: input dtype {a.dtype} is not supported (MXNet "
                             "supports floating point types only); cast it, e.g. "
                             "x.astype('float32')")
    ok = all(bool(np.isfinite(a).all()) for a in arrays)
    return np.array([1.0 if ok else 0.0], dtype=np.float32)


def _flag_rule(p, in_shapes):
    return in_shapes, [(1,)]


def _flag_type(p, in_types):
    return in_types, [np.dtype(np.float32)]


_FLAG = {"infer_shape": _flag_rule, "infer_type": _flag_type, "compute": _all_finite}
_FLAG_NO_GRAD = ("MXNet 1.9.1 registers no FGradient for it (a 0/1 flag for mixed-precision "
                 "loss scaling)")
register(OpDef(
    "all_finite", params={"init_output": Bool(True)}, **_FLAG, no_gradient=_FLAG_NO_GRAD,
    doc="Whether every element is finite: ``[1.0]`` or ``[0.0]`` (float32)."))
register(OpDef(
    "multi_all_finite", params={"num_arrays": Int(1), "init_output": Bool(True)},
    variadic="num_arrays", **_FLAG, no_gradient=_FLAG_NO_GRAD,
    doc="Whether every element of all ``num_arrays`` inputs is finite: ``[1.0]`` or "
        "``[0.0]``."))


# --- ONNX lowerings ---------------------------------------------------------------------------
def _work(dtype: np.dtype) -> np.dtype:
    """Where one elementwise step of ``dtype`` arithmetic runs before the cast back."""
    if dtype == np.float16:
        return np.dtype(np.float32)
    return np.dtype(np.int64) if dtype.kind in "iu" else dtype


def _in_dtype(ctx: LoweringContext, op_type: str, a: str, b: str, dtype: np.dtype) -> str:
    """``a <op> b`` rounded (or wrapped) to ``dtype`` as one operation of that dtype."""
    work = _work(dtype)
    if work == dtype:
        return ctx.make(op_type, [a, b])
    y = ctx.make(op_type, [ctx.cast_to(a, work), ctx.cast_to(b, work)])
    return ctx.cast_to(y, dtype)


def _mean_of(ctx: LoweringContext, x: str, axes: tuple, dtype: np.dtype, count: str) -> str:
    """MXNet's normalised sum: accumulate, cast to ``dtype``, divide in ``dtype``."""
    acc = np.dtype(_SAFE_ACC[dtype.name])
    acc = np.dtype(np.int64) if acc.kind in "iu" else acc
    total = onnx_reduce(ctx, "ReduceSum", ctx.cast_to(x, acc) if acc != dtype else x, axes, True)
    return _in_dtype(ctx, "Div", ctx.cast_to(total, dtype) if acc != dtype else total, count,
                     dtype)


def _moments_onnx(ctx: LoweringContext) -> None:
    p, dtype = ctx.params, np.dtype(ctx.dtype)
    if dtype.name not in _SAFE_ACC or dtype == np.bool_:
        raise ctx.fail(f"moments of {dtype} data has no ONNX export; cast it to float32")
    axes = _moments_axes(p, len(ctx.shape))
    count = count_slices(ctx, axes, dtype)
    mean = _mean_of(ctx, ctx.inputs[0], axes, dtype, count)
    diff = _in_dtype(ctx, "Sub", ctx.inputs[0], mean, dtype)
    var = _mean_of(ctx, _in_dtype(ctx, "Mul", diff, diff, dtype), axes, dtype, count)
    for k, y in enumerate((mean, var)):
        deliver(ctx, keep_or_drop(ctx, y, axes, p.keepdims), k)


def _cumsum_onnx(ctx: LoweringContext) -> None:
    p, out = ctx.params, np.dtype(ctx.out_dtypes[0])
    x = ctx.inputs[0] if np.dtype(ctx.dtype) == out else ctx.cast_to(ctx.inputs[0], out)
    work = _work(out)
    x = x if work == out else ctx.cast_to(x, work)
    if p.axis is None:
        x, axis = ctx.make("Reshape", [x, ctx.ints([-1], "flat")]), 0
    else:
        axis = p.axis
    y = ctx.make("CumSum", [x, ctx.const(np.int64(axis), "axis")])
    deliver(ctx, y if work == out else ctx.cast_to(y, out))


def _cumsum_backward_onnx(ctx: LoweringContext) -> None:
    """``CumSum(reverse=1)`` of ograd (flattened when axis is None), reshaped to ``a``."""
    p, og_dtype = ctx.params, np.dtype(ctx.in_dtypes[0])
    work = _work(og_dtype)
    g = ctx.inputs[0] if work == og_dtype else ctx.cast_to(ctx.inputs[0], work)
    if p.axis is None:
        g, axis = ctx.make("Reshape", [g, ctx.ints([-1], "flat")]), 0
    else:
        axis = p.axis
    y = ctx.make("CumSum", [g, ctx.const(np.int64(axis), "axis")], reverse=1)
    if work != og_dtype:
        y = ctx.cast_to(y, og_dtype)
    if p.axis is None:
        y = ctx.make("Reshape", [y, ctx.make("Shape", [ctx.inputs[1]])])
    deliver(ctx, y, 0, og_dtype)


# --- histogram --------------------------------------------------------------------------------
def _ge_le(ctx: LoweringContext, v: str, lo: str, hi: str) -> str:
    return ctx.make("And", [ctx.make("GreaterOrEqual", [v, lo]),
                            ctx.make("LessOrEqual", [v, hi])])


def _uniform_target(ctx: LoweringContext, v: str, edges: np.ndarray) -> str:
    """MXNet's uniform bin index (-1 outside the range) of the float64 values ``v``."""
    lo, hi, cnt = uniform_range(ctx.params)
    const = {name: ctx.const(np.float64(val), name) for name, val in
             (("lo", lo), ("hi", hi), ("scale", cnt / (hi - lo)))}
    inside = _ge_le(ctx, v, const["lo"], const["hi"])
    pos = ctx.make("Mul", [ctx.make("Sub", [v, const["lo"]]), const["scale"]])
    pos = ctx.make("Where", [inside, pos, ctx.const(np.float64(0), "zero")])
    t = ctx.make("Min", [ctx.cast_to(pos, np.int64), ctx.const(np.int64(cnt - 1), "last")])
    e64 = ctx.const(edges.astype(np.float64), "edges64")
    below = ctx.make("Less", [v, ctx.make("Gather", [e64, t])])
    t = ctx.make("Sub", [t, ctx.cast_to(below, np.int64)])
    nxt = ctx.make("Gather", [e64, ctx.make("Add", [t, ctx.const(np.int64(1), "one")])])
    up = ctx.make("And", [ctx.make("GreaterOrEqual", [v, nxt]),
                          ctx.make("Not", [ctx.make("Equal", [t, ctx.const(np.int64(cnt - 1),
                                                                           "last")])])])
    t = ctx.make("Add", [t, ctx.cast_to(up, np.int64)])
    return ctx.make("Where", [inside, t, ctx.const(np.int64(-1), "outside")])


def _edges_target(ctx: LoweringContext, v: str, n_bins: int) -> str:
    """Bin index against the ``bins`` input: the first edge above the element, minus one."""
    b = ctx.cast_to(ctx.inputs[1], np.float64)
    ends = [ctx.make("Gather", [b, ctx.const(np.int64(i), "end")]) for i in (0, n_bins)]
    inside = _ge_le(ctx, v, *ends)
    below = ctx.cast_to(ctx.make("Less", [ctx.make("Unsqueeze", [v, ctx.ints([1], "axes")]), b]),
                        np.int32)
    first = ctx.make("ArgMax", [below], axis=1, keepdims=0)
    hit = ctx.cast_to(onnx_reduce(ctx, "ReduceMax", below, (1,), False), np.bool_)
    first = ctx.make("Where", [hit, first, ctx.const(np.int64(n_bins + 1), "past")])
    t = ctx.make("Min", [ctx.make("Sub", [first, ctx.const(np.int64(1), "one")]),
                         ctx.const(np.int64(n_bins - 1), "last")])
    return ctx.make("Where", [inside, t, ctx.const(np.int64(-1), "outside")])


def _bin_counts(ctx: LoweringContext, target: str, n_bins: int) -> str:
    """How many elements fall in each bin (index -1: none)."""
    if ctx.opset >= 16:
        shifted = ctx.make("Add", [target, ctx.const(np.int64(1), "one")])
        ones = ctx.make("Add", [ctx.make("Mul", [shifted, ctx.const(np.int64(0), "zero")]),
                                ctx.const(np.int64(1), "one")])
        counts = ctx.make("ScatterElements", [ctx.const(np.zeros(n_bins + 1, np.int64), "bins"),
                                              shifted, ones], axis=0, reduction="add")
        return ctx.make("Slice", [counts, ctx.ints([1], "s"), ctx.ints([n_bins + 1], "e")])
    hot = ctx.make("Equal", [ctx.make("Unsqueeze", [target, ctx.ints([1], "axes")]),
                             ctx.ints(np.arange(n_bins), "bin_ids")])
    return onnx_reduce(ctx, "ReduceSum", ctx.cast_to(hot, np.int64), (0,), False)


def _histogram_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    v = ctx.cast_to(ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1], "flat")]), np.float64)
    if p.bin_cnt is not None:
        edges = _uniform_bins(p, np.zeros(0, np.dtype(ctx.dtype)))[1]
        target, n_bins = _uniform_target(ctx, v, edges), int(p.bin_cnt)
        edge_out = ctx.const(edges, "edges")
    else:
        if ctx.is_dynamic(1):
            raise ctx.fail("_histogram needs a static number of bin edges to export to ONNX")
        n_bins = int(ctx.in_shapes[1][0]) - 1
        target, edge_out = _edges_target(ctx, v, n_bins), ctx.inputs[1]
    deliver(ctx, _bin_counts(ctx, target, n_bins), 0)
    if ctx.wants(1):
        ctx.make("Identity", [edge_out], outputs=[ctx.outputs[1]])


def _all_finite_onnx(ctx: LoweringContext) -> None:
    flags = []
    for i, x in enumerate(ctx.inputs):
        if np.dtype(ctx.in_dtypes[i]) == np.float16:
            x = ctx.cast_to(x, np.float32)
        bad = ctx.make("Or", [ctx.make("IsInf", [x]), ctx.make("IsNaN", [x])])
        flat = ctx.make("Reshape", [ctx.cast_to(ctx.make("Not", [bad]), np.float32),
                                    ctx.ints([-1], "flat")])
        flags.append(onnx_reduce(ctx, "ReduceProd", flat, (0,), True))
    y = flags[0]
    for f in flags[1:]:
        y = ctx.make("Mul", [y, f])
    deliver(ctx, y)


lowering("moments")(_moments_onnx)
lowering("_np_cumsum")(_cumsum_onnx)
lowering("_backward_np_cumsum")(_cumsum_backward_onnx)
lowering("_histogram")(_histogram_onnx)
lowering("all_finite")(_all_finite_onnx)
lowering("multi_all_finite")(_all_finite_onnx)

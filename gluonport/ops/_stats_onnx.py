"""ONNX export of reduce.py's statistics ops: ``moments``, ``_np_cumsum``, ``_histogram``,
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

from .lowering import LoweringContext, deliver, lowering
from .reduce import (
    _SAFE_ACC,
    _count,
    _keep_or_drop,
    _moments_axes,
    _uniform_bins,
    onnx_reduce,
    uniform_range,
)

__all__: list[str] = []


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
    count = _count(ctx, axes, dtype)
    mean = _mean_of(ctx, ctx.inputs[0], axes, dtype, count)
    diff = _in_dtype(ctx, "Sub", ctx.inputs[0], mean, dtype)
    var = _mean_of(ctx, _in_dtype(ctx, "Mul", diff, diff, dtype), axes, dtype, count)
    for k, y in enumerate((mean, var)):
        deliver(ctx, _keep_or_drop(ctx, y, axes, p.keepdims), k)


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
lowering("_histogram")(_histogram_onnx)
lowering("all_finite")(_all_finite_onnx)
lowering("multi_all_finite")(_all_finite_onnx)

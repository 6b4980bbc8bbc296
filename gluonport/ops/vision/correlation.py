"""FlowNet's Correlation (``src/operator/correlation.cc``), with its ONNX lowering.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.attr_fields import Bool, Int
from ...errors import ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, const_as, deliver, lowering, onnx_reduce
from ..lowering.dims import Dims
from ..registry import define

__all__: list[str] = []


# --- Correlation -----------------------------------------------------------------------------
def _corr_geometry(p, height: int, width: int) -> tuple[int, int, int]:
    """Output height, width and displacement-grid width of MXNet's Correlation."""
    border = p.max_displacement + (p.kernel_size - 1) // 2
    top_h = math.ceil((height + 2 * p.pad_size - 2 * border) / p.stride1)
    top_w = math.ceil((width + 2 * p.pad_size - 2 * border) / p.stride1)
    if top_h < 1 or top_w < 1 or min(p.kernel_size, p.stride1, p.stride2) < 1:
        raise ShapeError(f"Correlation: kernel_size={p.kernel_size}, max_displacement="
                         f"{p.max_displacement} and pad_size={p.pad_size} do not fit a "
                         f"{height}x{width} input; pad more or shrink the neighbourhood")
    return top_h, top_w, 2 * (p.max_displacement // p.stride2) + 1


def _corr_shape(p, in_shapes):
    a = in_shapes[0]
    merged = in_shapes[0] if in_shapes[1] is None else merge(a, in_shapes[1], "data2: ")
    if merged is None:
        return in_shapes, [None] * 3
    if len(merged) != 4:
        raise ShapeError(f"Correlation: inputs must be 4-d NCHW, got shape {fmt(merged)}")
    n, c, h, w = merged
    if not (h and w):
        return [merged, merged], [None] * 3
    top_h, top_w, grid = _corr_geometry(p, h, w)
    tmp = (n, h + 2 * p.pad_size, w + 2 * p.pad_size, c)
    return [merged, merged], [(n, grid * grid, top_h, top_w), tmp, tmp]


def _correlation_grad(F, p, ins, outs, ogs):
    """MXNet's FGradient: ``_backward_Correlation`` of the output's gradient and both maps."""
    out = F._internal._backward_Correlation(
        ogs[0], ins[0], ins[1], **{k: v for k, v in p.as_dict().items() if v is not None})
    return [out[0], out[1]]


def _correlation(p, data1, data2):
    """Correlation of patches of ``data1`` with displaced patches of ``data2`` (FlowNet),
    one vectorized pass per displacement."""
    n, c, h, w = data1.shape
    k, md, s1, pad = p.kernel_size, p.max_displacement, p.stride1, p.pad_size
    top_h, top_w, grid = _corr_geometry(p, h, w)
    radius = md // p.stride2
    padded = []
    for x in (data1, data2):   # extra zeros past the far border keep every window in range
        z = np.zeros((n, c, h + 2 * pad + k, w + 2 * pad + k), dtype=x.dtype)
        z[:, :, pad:pad + h, pad:pad + w] = x
        padded.append(z)
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    ref = padded[0][:, :, md:md + rh, md:md + rw]
    out = np.empty((n, grid * grid, top_h, top_w), dtype=data1.dtype)
    for t in range(grid * grid):
        dy, dx = (t // grid - radius) * p.stride2, (t % grid - radius) * p.stride2
        other = padded[1][:, :, md + dy:md + dy + rh, md + dx:md + dx + rw]
        if p.is_multiply:
            prod = np.einsum("nchw,nchw->nhw", ref, other)
        else:
            prod = np.abs(ref - other).sum(axis=1)
        win = np.lib.stride_tricks.sliding_window_view(prod, (k, k), axis=(1, 2))
        out[:, t] = win[:, ::s1, ::s1][:, :top_h, :top_w].sum(axis=(-2, -1)) / (k * k * c)
    tmps = [np.ascontiguousarray(z[:, :, :h + 2 * pad, :w + 2 * pad].transpose(0, 2, 3, 1))
            for z in padded]
    return out, tmps[0], tmps[1]


define(
    "Correlation",
    params={"kernel_size": Int(1), "max_displacement": Int(1), "stride1": Int(1),
            "stride2": Int(1), "pad_size": Int(0), "is_multiply": Bool(True)},
    compute=_correlation, inputs=("data1", "data2"), infer_shape=_corr_shape, num_outputs=3,
    num_visible_outputs=1, output_names=("output", "tmp1", "tmp2"),
    doc="FlowNet correlation between patches of two feature maps.", check_shapes=True,
    lists_output_names=True, gradient=_correlation_grad)


def _window_spread(og: np.ndarray, k: int, stride: int) -> np.ndarray:
    """``(N, T, top_h, top_w)`` -> ``(N, T, rh, rw)``: each value added over the ``k x k``
    window it averaged (the transpose of the forward's window sums)."""
    n, t, top_h, top_w = og.shape
    out = np.zeros((n, t, (top_h - 1) * stride + k, (top_w - 1) * stride + k), dtype=og.dtype)
    span_h, span_w = (top_h - 1) * stride + 1, (top_w - 1) * stride + 1
    for a in range(k):
        for b in range(k):
            out[:, :, a:a + span_h:stride, b:b + span_w:stride] += og
    return out


def _correlation_backward(p, og, data1, data2):
    """MXNet's CorrelationBackward: per displacement, the spread head gradient times the other
    map's shifted patch (``is_multiply``), or times ``+-1`` by ``data1 >= data2`` (absolute
    differences); accumulated on the padded maps (in float32, float64 for float64 data, as
    MXNet accumulates in the data type), then cropped."""
    n, c, h, w = data1.shape
    k, md, s1, pad = p.kernel_size, p.max_displacement, p.stride1, p.pad_size
    top_h, top_w, grid = _corr_geometry(p, h, w)
    radius = md // p.stride2
    work = np.float64 if data1.dtype == np.float64 else np.float32
    padded = []
    for x in (data1, data2):
        z = np.zeros((n, c, h + 2 * pad + k, w + 2 * pad + k), dtype=work)
        z[:, :, pad:pad + h, pad:pad + w] = x
        padded.append(z)
    grads = [np.zeros_like(z) for z in padded]
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    ref = padded[0][:, :, md:md + rh, md:md + rw]
    spread = _window_spread(og.astype(work) / work(k * k * c), k, s1)
    tmp = np.empty((n, c, rh, rw), dtype=work)
    for t in range(grid * grid):
        dy, dx = (t // grid - radius) * p.stride2, (t % grid - radius) * p.stride2
        other = padded[1][:, :, md + dy:md + dy + rh, md + dx:md + dx + rw]
        g = spread[:, t:t + 1]
        if p.is_multiply:
            grads[0][:, :, md:md + rh, md:md + rw] += np.multiply(g, other, out=tmp)
            grads[1][:, :, md + dy:md + dy + rh, md + dx:md + dx + rw] += np.multiply(
                g, ref, out=tmp)
        else:
            np.copyto(tmp, np.where(ref >= other, g, -g))
            grads[0][:, :, md:md + rh, md:md + rw] += tmp
            grads[1][:, :, md + dy:md + dy + rh, md + dx:md + dx + rw] -= tmp
    return tuple(z[:, :, pad:pad + h, pad:pad + w].astype(x.dtype)
                 for z, x in zip(grads, (data1, data2)))


define(
    "_backward_Correlation",
    params={"kernel_size": Int(1), "max_displacement": Int(1), "stride1": Int(1),
            "stride2": Int(1), "pad_size": Int(0), "is_multiply": Bool(True)},
    compute=_correlation_backward, inputs=("ograd", "data1", "data2"),
    infer_shape=lambda p, s: (s, [s[1], s[2]]), infer_type=lambda p, t: (t, [t[1], t[2]]),
    num_outputs=2, no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
    doc="Correlation's gradient: inputs (ograd, data1, data2); outputs both maps' gradients.")


# --- Correlation -----------------------------------------------------------------------------
def _correlation_onnx(ctx: LoweringContext) -> None:
    """Per displacement: ``sum_c ref * shifted`` (or ``|ref - shifted|``), then the mean over the
    ``kernel_size`` window at ``stride1`` divided by the channel count."""
    p, dt = ctx.params, np.dtype(ctx.dtype)
    dims = Dims(ctx)
    if any(dims.dyn[1:]):
        raise ctx.fail("Correlation's channel and spatial dims must be fixed (its output "
                       "layout depends on them)")
    _, c, h, w = dims.static
    k, md, s1, pad = p.kernel_size, p.max_displacement, p.stride1, p.pad_size
    top_h, top_w, grid = _corr_geometry(p, h, w)
    radius = md // p.stride2
    pads = ctx.ints([0, 0, pad, pad, 0, 0, pad + k, pad + k], "pads")
    padded = [ctx.make("Pad", [x, pads]) for x in ctx.inputs[:2]]
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    ref = _window(ctx, padded[0], md, md, rh, rw)
    prods = []
    for t in range(grid * grid):
        dy, dx = (t // grid - radius) * p.stride2, (t % grid - radius) * p.stride2
        other = _window(ctx, padded[1], md + dy, md + dx, rh, rw)
        if p.is_multiply:
            prod = ctx.make("Mul", [ref, other])
        else:
            prod = ctx.make("Abs", [ctx.make("Sub", [ref, other])])
        prods.append(onnx_reduce(ctx, "ReduceSum", prod, (1,), True))
    out = ctx.make("Concat", prods, axis=1) if len(prods) > 1 else prods[0]
    out = _window_sums(ctx, out, k, s1, top_h, top_w)
    deliver(ctx, ctx.make("Div", [out, const_as(ctx, k * k * c, dt, "count")]))
    for i in (1, 2):
        if ctx.wants(i):
            inner = _window(ctx, padded[i - 1], 0, 0, h + 2 * pad, w + 2 * pad)
            deliver(ctx, ctx.make("Transpose", [inner], perm=[0, 2, 3, 1]), i)


def _window(ctx: LoweringContext, x: str, y0: int, x0: int, height: int, width: int,
            step: int = 1) -> str:
    """``x[:, :, y0:y0+height:step, x0:x0+width:step]``."""
    return ctx.make("Slice", [x, ctx.ints([y0, x0], "start"),
                              ctx.ints([y0 + height, x0 + width], "stop"), ctx.ints([2, 3], "ax"),
                              ctx.ints([step, step], "step")])


def _window_sums(ctx: LoweringContext, x: str, k: int, stride: int, top_h: int, top_w: int) -> str:
    """Sums over ``k x k`` windows at ``stride``: one strided Slice per window offset, added (any
    dtype; onnxruntime's pooling kernels lack float64)."""
    span_h, span_w = (top_h - 1) * stride + 1, (top_w - 1) * stride + 1
    total = None
    for i in range(k):
        for j in range(k):
            part = _window(ctx, x, i, j, span_h, span_w, stride)
            total = part if total is None else ctx.make("Add", [total, part])
    return total


lowering("Correlation")(_correlation_onnx)


def _spread_onnx(ctx: LoweringContext, og: str, k: int, stride: int, top_h: int,
                 top_w: int) -> str:
    """:func:`_window_spread` from Pad/Reshape/Slice: zeros inserted between the values for a
    stride, then the ``k x k`` shifted copies added."""
    if stride > 1:
        y = ctx.make("Unsqueeze", [og, ctx.ints([3, 5], "axes")])       # (N, T, th, 1, tw, 1)
        y = ctx.make("Pad", [y, ctx.ints([0] * 6 + [0, 0, 0, stride - 1, 0, stride - 1],
                                         "gaps")])
        y = ctx.make("Reshape", [y, ctx.ints([0, 0, top_h * stride, top_w * stride], "up")])
        og = _window(ctx, y, 0, 0, (top_h - 1) * stride + 1, (top_w - 1) * stride + 1)
    total = None
    for a in range(k):
        for b in range(k):
            part = ctx.make("Pad", [og, ctx.ints([0, 0, a, b, 0, 0, k - 1 - a, k - 1 - b],
                                                 "shift")])
            total = part if total is None else ctx.make("Add", [total, part])
    return total


def _place(ctx: LoweringContext, x: str, y0: int, x0: int, rh: int, rw: int, full_h: int,
           full_w: int, pad: int, h: int, w: int) -> str:
    """A ``(N, C, rh, rw)`` patch at ``(y0, x0)`` of the padded map, cropped to the data."""
    x = ctx.make("Pad", [x, ctx.ints([0, 0, y0, x0, 0, 0, full_h - y0 - rh, full_w - x0 - rw],
                                     "place")])
    return _window(ctx, x, pad, pad, h, w)


def _correlation_backward_onnx(ctx: LoweringContext) -> None:
    """The numpy kernel's steps: the spread head gradient per displacement times the shifted
    patches (or ``+-1`` by ``data1 >= data2``), placed on the padded maps and cropped."""
    p, dt = ctx.params, np.dtype(ctx.in_dtypes[1])
    dims = Dims(ctx, 1)
    if any(dims.dyn[1:]):
        raise ctx.fail("Correlation's channel and spatial dims must be fixed (its output "
                       "layout depends on them)")
    _, c, h, w = dims.static
    k, md, s1, pad = p.kernel_size, p.max_displacement, p.stride1, p.pad_size
    top_h, top_w, grid = _corr_geometry(p, h, w)
    radius = md // p.stride2
    full_h, full_w = h + 2 * pad + k, w + 2 * pad + k
    pads = ctx.ints([0, 0, pad, pad, 0, 0, pad + k, pad + k], "pads")
    padded = [ctx.make("Pad", [x, pads]) for x in ctx.inputs[1:3]]
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    ref = _window(ctx, padded[0], md, md, rh, rw)
    og = ctx.make("Div", [ctx.inputs[0], const_as(ctx, k * k * c, dt, "count")])
    spread = _spread_onnx(ctx, og, k, s1, top_h, top_w)
    g1, g2 = None, []
    for t in range(grid * grid):
        dy, dx = (t // grid - radius) * p.stride2, (t % grid - radius) * p.stride2
        other = _window(ctx, padded[1], md + dy, md + dx, rh, rw)
        g = ctx.make("Slice", [spread, ctx.ints([t], "t0"), ctx.ints([t + 1], "t1"),
                               ctx.ints([1], "ax")])
        if p.is_multiply:
            a, b = ctx.make("Mul", [g, other]), ctx.make("Mul", [g, ref])
        else:
            a = ctx.make("Where", [ctx.make("GreaterOrEqual", [ref, other]), g,
                                   ctx.make("Neg", [g])])
            b = ctx.make("Neg", [a])
        g1 = a if g1 is None else ctx.make("Add", [g1, a])
        g2.append(_place(ctx, b, md + dy, md + dx, rh, rw, full_h, full_w, pad, h, w))
    deliver(ctx, _place(ctx, g1, md, md, rh, rw, full_h, full_w, pad, h, w), 0)
    total = g2[0]
    for part in g2[1:]:
        total = ctx.make("Add", [total, part])
    deliver(ctx, total, 1)


lowering("_backward_Correlation")(_correlation_backward_onnx)

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
    lists_output_names=True)


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

"""ONNX export of the contrib family (gluonport/ops/contrib.py).

* ``interleaved_matmul_*`` (BERT/transformer exports): Reshape/Gather/Transpose/MatMul over the
  ``(seq, batch, heads * k * dim)`` projections; the head size must be fixed, seq and batch may
  vary.
* ``BilinearSampler``/``SpatialTransformer`` map to ``GridSample`` (so they export from opset
  16; there is no exact lowering for older opsets short of hand-written gathers) with
  ``align_corners=1`` (MXNet puts -1 and 1 on the centres of the border pixels) and zero
  padding (MXNet reads corners outside the input as 0).
* ``ModulatedDeformableConvolution`` (DCNv2) is ONNX's ``DeformConv`` (so both deformable
  convolutions export from opset 19, where onnxruntime runs DeformConv): the same
  sampling (inside ``(-1, H)``, outside corners zero) and offset layout (per group and tap, y
  then x). ``DeformableConvolution`` (DCNv1) samples inside ``[0, H)`` only and clamps the far
  corner; it becomes ``DeformConv`` with a mask that zeroes samples outside ``[0, H)`` and the
  offsets of samples in ``[H - 1, H)`` moved onto row ``H - 1`` exactly, which reproduces
  MXNet's kernel.
* ``Correlation``: one Slice/Mul/ReduceSum per displacement, then the kernel-window sums as
  strided Slices added together (exact in any dtype; onnxruntime pools no float64).
"""

from __future__ import annotations

import math

import numpy as np

from .lowering import LoweringContext, deliver, lowering, simple
from .lowering.dims import Dims
from .math.reduce import onnx_reduce

__all__: list[str] = []


def _f(ctx: LoweringContext, value, dtype, hint: str = "c") -> str:
    return ctx.const(np.asarray(value, dtype=dtype), hint)


def _calc(dtype) -> np.dtype:
    """MXNet's compute precision for the float-attribute elementwise ops: double for float64,
    float otherwise."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


# --- elementwise -----------------------------------------------------------------------------
def _div_sqrt_dim_onnx(ctx: LoweringContext) -> None:
    """``x / sqrt(d)`` with the divisor cast to ``x``'s dtype (integer ``Div`` truncates, as
    MXNet's integer kernel does)."""
    dt = np.dtype(ctx.dtype)
    dims = Dims(ctx)
    last = len(dims.static) - 1
    if last < 0:
        return deliver(ctx, ctx.make("Identity", [ctx.inputs[0]]))
    if not dims.dyn[last]:
        divisor = _f(ctx, np.asarray(math.sqrt(dims.static[last])).astype(dt), dt, "sqrt_dim")
    else:
        d = ctx.cast_to(dims.scalar(last), np.float64)
        divisor = ctx.cast_to(ctx.make("Sqrt", [d]), dt)
    deliver(ctx, ctx.make("Div", [ctx.inputs[0], divisor]))


def _quadratic_onnx(ctx: LoweringContext) -> None:
    """``x * (a * x + b) + c`` at float (double for float64) precision, cast back."""
    p, dt = ctx.params, np.dtype(ctx.dtype)
    calc = _calc(dt)
    x = ctx.inputs[0] if dt == calc else ctx.cast_to(ctx.inputs[0], calc)
    ax = ctx.make("Mul", [_f(ctx, p.a, calc, "a"), x])
    y = ctx.make("Add", [ctx.make("Mul", [x, ctx.make("Add", [ax, _f(ctx, p.b, calc, "b")])]),
                         _f(ctx, p.c, calc, "c")])
    deliver(ctx, y if dt == calc else ctx.cast_to(y, dt))


# --- interleaved attention matmuls -----------------------------------------------------------
def _head_dim(ctx: LoweringContext, i: int, parts: int) -> int:
    dims = Dims(ctx, i)
    if dims.dyn[2]:
        raise ctx.fail("the projection (last) dimension must be fixed, not dynamic")
    return dims.static[2] // (parts * ctx.params.heads)


def _split_heads(ctx: LoweringContext, i: int, parts: int, part: int, perm: list[int]) -> str:
    """Block ``part`` of input ``i`` as ``(batch*heads, ...)`` in ``perm`` order of
    ``(seq, batch*heads, dim)``."""
    dim = _head_dim(ctx, i, parts)
    x = ctx.make("Reshape", [ctx.inputs[i], ctx.ints([0, -1, parts, dim], "heads")])
    x = ctx.make("Gather", [x, ctx.const(np.asarray(part, np.int64), "part")], axis=2)
    return ctx.make("Transpose", [x], perm=perm)


def _scaled(ctx: LoweringContext, qk: str, dim: int) -> str:
    scale = np.float32(1.0 / math.sqrt(np.float32(dim)))
    return ctx.make("Mul", [qk, _f(ctx, scale, ctx.dtype, "scale")])


def _qk_onnx(parts: int, k_input: int):
    """``q @ k^T / sqrt(dim)``: q is block 0 of input 0, k the first block after the queries."""
    def handler(ctx: LoweringContext) -> None:
        q = _split_heads(ctx, 0, parts, 0, [1, 0, 2])                          # (BH, Sq, D)
        k_parts, k_part = (parts, 1) if k_input == 0 else (2, 0)
        k = _split_heads(ctx, k_input, k_parts, k_part, [1, 2, 0])             # (BH, D, Sk)
        deliver(ctx, _scaled(ctx, ctx.make("MatMul", [q, k]), _head_dim(ctx, 0, parts)))
    return handler


def _valatt_onnx(parts: int):
    """``att @ v`` back to ``(seq, batch, heads * dim)``: v is the last block of input 0."""
    def handler(ctx: LoweringContext) -> None:
        v = _split_heads(ctx, 0, parts, parts - 1, [1, 0, 2])                  # (BH, Sk, D)
        out = ctx.make("Transpose", [ctx.make("MatMul", [ctx.inputs[1], v])], perm=[1, 0, 2])
        width = _head_dim(ctx, 0, parts) * ctx.params.heads
        deliver(ctx, ctx.make("Reshape", [out, ctx.ints([0, -1, width], "merged")]))
    return handler


# --- grids and bilinear sampling -------------------------------------------------------------
def _grid_sample(ctx: LoweringContext, data: str, grid_nchw: str, dtype) -> str:
    """MXNet's bilinear sampler on a ``(N, 2, Ho, Wo)`` normalized grid."""
    dt = np.dtype(dtype)
    # onnxruntime runs GridSample on float64 from opset 20 only, and never on float16
    wide = dt == np.float32 or (dt == np.float64 and ctx.opset >= 20)
    work = dt if wide else np.dtype(np.float32)
    if dt != work:
        data, grid_nchw = ctx.cast_to(data, work), ctx.cast_to(grid_nchw, work)
    grid = ctx.make("Transpose", [grid_nchw], perm=[0, 2, 3, 1])
    mode = "linear" if ctx.opset >= 20 else "bilinear"
    y = ctx.make("GridSample", [data, grid], mode=mode, padding_mode="zeros", align_corners=1)
    return y if dt == work else ctx.cast_to(y, dt)


def _sampler_onnx(ctx: LoweringContext) -> None:
    deliver(ctx, _grid_sample(ctx, ctx.inputs[0], ctx.inputs[1], ctx.dtype))
    if ctx.wants(1):
        deliver(ctx, ctx.make("Transpose", [ctx.inputs[1]], perm=[0, 2, 3, 1]), 1)


def _grid_generator_onnx(ctx: LoweringContext) -> None:
    from .contrib import _target, affine_grid_dst

    p, dt = ctx.params, np.dtype(ctx.dtype)
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        dst = ctx.const(affine_grid_dst(h, w, dt), "grid_dst")
        rows = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1, 3], "rows")])
        out = ctx.make("MatMul", [rows, dst])
        deliver(ctx, ctx.make("Reshape", [out, ctx.ints([-1, 2, h, w], "grid")]))
        if ctx.wants(1):
            deliver(ctx, ctx.make("Identity", [dst]), 1)
        return
    dst, half = _warp_grid(ctx, dt)
    out = ctx.make("Sub", [ctx.make("Div", [ctx.make("Add", [ctx.inputs[0], dst]), half]),
                           _f(ctx, 1, dt, "one")])
    deliver(ctx, out)
    if ctx.wants(1):
        deliver(ctx, ctx.make("Identity", [dst]), 1)


def _warp_grid(ctx: LoweringContext, dt) -> tuple[str, str]:
    """(pixel grid ``(2, H, W)`` of x and y indices, ``[(W-1)/2, (H-1)/2]`` as ``(2, 1, 1)``),
    from ``Shape`` when the flow's height or width varies."""
    dims = Dims(ctx)
    if not (dims.dyn[2] or dims.dyn[3]):
        h, w = dims.static[2], dims.static[3]
        grid = np.stack(np.meshgrid(np.arange(w, dtype=dt), np.arange(h, dtype=dt)))
        half = np.array([(dt.type(w) - 1.0) / 2.0, (dt.type(h) - 1.0) / 2.0]).astype(dt)
        return ctx.const(grid, "grid_dst"), ctx.const(half.reshape(2, 1, 1), "half")
    hf, wf = (ctx.cast_to(dims.scalar(a), dt) for a in (2, 3))
    zero, one, two = (_f(ctx, v, dt, "k") for v in (0, 1, 2))
    ys = ctx.make("Reshape", [ctx.make("Range", [zero, hf, one]), ctx.ints([-1, 1], "col")])
    xs = ctx.make("Reshape", [ctx.make("Range", [zero, wf, one]), ctx.ints([1, -1], "row")])
    full = ctx.make("Concat", [ctx.ints([1], "one"), dims.get([2, 3])], axis=0)
    grid = ctx.make("Concat", [ctx.make("Expand", [xs, full]), ctx.make("Expand", [ys, full])],
                    axis=0)
    size = ctx.cast_to(dims.get([3, 2]), dt)                                      # (W, H)
    half = ctx.make("Div", [ctx.make("Sub", [size, one]), two])
    return grid, ctx.make("Reshape", [half, ctx.ints([2, 1, 1], "half")])


def _stn_onnx(ctx: LoweringContext) -> None:
    from .contrib import _stn_dst, _target

    h, w = _target(ctx.params, "SpatialTransformer")
    dt = np.dtype(ctx.dtype)
    dst = ctx.const(_stn_dst(h, w, dt), "grid_dst")
    loc = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([-1, 2, 3], "loc")])
    src = ctx.make("MatMul", [loc, dst])                                      # (N, 2, H*W)
    grid = ctx.make("Reshape", [src, ctx.ints([-1, 2, h, w], "grid")])
    deliver(ctx, _grid_sample(ctx, ctx.inputs[0], grid, dt))
    for k, t in ((1, dst), (2, src)):
        if ctx.wants(k):
            deliver(ctx, ctx.make("Identity", [t]), k)


# --- deformable convolution ------------------------------------------------------------------
def _dcn_onnx(modulated: bool):
    def handler(ctx: LoweringContext) -> None:
        from .contrib import _dcn_geometry

        p = ctx.params
        (kh, kw), stride, dilate, pad = _dcn_geometry(p, ctx.node.op.name)
        weight = ctx.inputs[3 if modulated else 2]
        bias = "" if p.no_bias else ctx.inputs[-1]
        offset, mask = ctx.inputs[1], ctx.inputs[2] if modulated else None
        if not modulated:
            offset, mask = _dcnv1_sampling(ctx, (kh, kw), stride, dilate, pad)
        ctx.make("DeformConv", [ctx.inputs[0], weight, offset, bias, mask],
                 outputs=[ctx.outputs[0]], kernel_shape=[kh, kw], strides=list(stride),
                 dilations=list(dilate), pads=list(pad) * 2, group=p.num_group,
                 offset_group=p.num_deformable_group)
    return handler


def _dcnv1_sampling(ctx: LoweringContext, kernel, stride, dilate, pad) -> tuple[str, str]:
    """(offsets, mask) making DeformConv's DCNv2 sampling equal MXNet's DCNv1: samples outside
    ``[0, H) x [0, W)`` masked out, samples in ``[H - 1, H)`` moved onto ``H - 1`` exactly (MXNet
    clamps the far corner there, DeformConv would blend in a zero row)."""
    dt = np.dtype(ctx.dtype)
    groups = ctx.params.num_deformable_group
    big = np.iinfo(np.int64).max
    data, odims = Dims(ctx, 0), Dims(ctx, 1)
    size = [ctx.cast_to(data.scalar(a), dt) for a in (2, 3)]
    new, inside = [], []
    for axis in (0, 1):
        base = _tap_base(ctx, odims, axis, kernel, (stride[axis], dilate[axis], pad[axis]),
                         groups, dt)
        off = ctx.make("Slice", [ctx.inputs[1], ctx.ints([axis], "s"), ctx.ints([big], "e"),
                                 ctx.ints([1], "ax"), ctx.ints([2], "step")])    # (N, G*K, Ho, Wo)
        pos = ctx.make("Add", [base, off])
        top = ctx.make("Sub", [size[axis], _f(ctx, 1, dt, "one")])
        inside.append(ctx.make("And", [ctx.make("GreaterOrEqual", [pos, _f(ctx, 0, dt, "zero")]),
                                       ctx.make("Less", [pos, size[axis]])]))
        clamp = ctx.make("Sub", [top, base])
        new.append(ctx.make("Where", [ctx.make("GreaterOrEqual", [pos, top]), clamp, off]))
    stacked = ctx.make("Concat", [ctx.make("Unsqueeze", [t, ctx.ints([2], "axes")]) for t in new],
                       axis=2)
    offset = ctx.make("Reshape", [stacked, ctx.make("Shape", [ctx.inputs[1]])])
    mask = ctx.cast_to(ctx.make("And", inside), dt)
    return offset, mask


def _tap_base(ctx: LoweringContext, odims, axis: int, kernel, step: tuple[int, int, int],
              groups: int,
              dt) -> str:
    """Integer sample position ``o * stride - pad + tap * dilate`` as ``(1, G*K, Ho, 1)`` (y) or
    ``(1, G*K, 1, Wo)`` (x), in ``dt``."""
    kh, kw = kernel
    stride, dilate, pad = step
    tap = np.arange(kh * kw)
    along = (tap // kw) if axis == 0 else (tap % kw)
    per_tap = np.tile(along * dilate - pad, groups).astype(dt)
    out_len = odims.scalar(2 + axis)
    o = ctx.make("Range", [ctx.const(np.asarray(0, np.int64), "zero"), out_len,
                           ctx.const(np.asarray(1, np.int64), "one")])
    o = ctx.make("Mul", [ctx.cast_to(o, dt), _f(ctx, stride, dt, "stride")])
    o = ctx.make("Reshape", [o, ctx.ints([1, 1, -1, 1] if axis == 0 else [1, 1, 1, -1], "o")])
    shape = [1, -1, 1, 1]
    return ctx.make("Add", [o, ctx.const(per_tap.reshape(shape), "taps")])


# --- Correlation -----------------------------------------------------------------------------
def _correlation_onnx(ctx: LoweringContext) -> None:
    """Per displacement: ``sum_c ref * shifted`` (or ``|ref - shifted|``), then the mean over the
    ``kernel_size`` window at ``stride1`` divided by the channel count."""
    from .contrib import _corr_geometry

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
    deliver(ctx, ctx.make("Div", [out, _f(ctx, k * k * c, dt, "count")]))
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


lowering("_contrib_div_sqrt_dim")(_div_sqrt_dim_onnx)
lowering("_contrib_quadratic")(_quadratic_onnx)
lowering("_contrib_gradientmultiplier")(simple("Identity"))
lowering("_contrib_interleaved_matmul_selfatt_qk")(_qk_onnx(3, 0))
lowering("_contrib_interleaved_matmul_selfatt_valatt")(_valatt_onnx(3))
lowering("_contrib_interleaved_matmul_encdec_qk")(_qk_onnx(1, 1))
lowering("_contrib_interleaved_matmul_encdec_valatt")(_valatt_onnx(2))
lowering("BilinearSampler", since=16)(_sampler_onnx)  # GridSample is opset 16+
lowering("GridGenerator")(_grid_generator_onnx)
lowering("SpatialTransformer", since=16)(_stn_onnx)
lowering("_contrib_DeformableConvolution", since=19)(_dcn_onnx(False))  # DeformConv is 19+
lowering("_contrib_ModulatedDeformableConvolution", since=19)(_dcn_onnx(True))
lowering("Correlation")(_correlation_onnx)


def _khatri_rao_onnx(ctx: LoweringContext) -> None:
    """Outer products of matching rows by broadcasting ``(r, 1, k) * (1, s, k)``, flattened
    to ``(r * s, k)`` one input at a time."""
    from .math.reduce import onnx_dims, onnx_shape

    y = ctx.inputs[0]
    shape = onnx_shape(ctx, [[-1], onnx_dims(ctx, 0, 1, 2)])
    for x in ctx.inputs[1:]:
        y = ctx.make("Mul", [ctx.make("Unsqueeze", [y, ctx.ints([1], "axes")]),
                             ctx.make("Unsqueeze", [x, ctx.ints([0], "axes")])])
        y = ctx.make("Reshape", [y, shape])
    deliver(ctx, y)


lowering("khatri_rao")(_khatri_rao_onnx)

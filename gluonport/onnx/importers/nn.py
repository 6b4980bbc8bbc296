"""Import handlers: convolutions, pooling, dense layers, normalisation, softmax, dropout.

ONNX pads are ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``; MXNet pads symmetrically.
Asymmetric pads become the symmetric part plus an explicit pad of the remainder, and
``auto_pad=SAME_UPPER/SAME_LOWER`` becomes explicit pads computed from the static input size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._import_build import cast, int_attr_list, norm_axes, norm_axis, reshape
from .._import_context import ImportContext, Value, importer
from .shape import pad_sym

__all__: list[str] = []


def _spatial(ctx: ImportContext, x: Value, n: int) -> list:
    shape = x.shape or (None,) * (n + 2)
    return list(shape[2:])


def explicit_pads(ctx: ImportContext, x: Value, kernel: Sequence[int], strides: Sequence[int],
                  dilations: Sequence[int], pads: Sequence[int] | None, auto_pad: str
                  ) -> tuple[list[int], list[int]]:
    """(begin, end) pads per spatial axis, resolving ``auto_pad``."""
    n = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        sizes = _spatial(ctx, x, n)
        if not all(isinstance(s, int) for s in sizes):
            raise ctx.fail(f"auto_pad={auto_pad} needs the static input size")
        begin, end = [], []
        for size, k, s, d in zip(sizes, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small = total // 2
            b = small if auto_pad == "SAME_UPPER" else total - small
            begin.append(b)
            end.append(total - b)
        return begin, end
    if auto_pad == "VALID" or not pads:
        return [0] * n, [0] * n
    return [int(p) for p in pads[:n]], [int(p) for p in pads[n:]]


def _pre_pad(ctx: ImportContext, x: Value, begin: list[int], end: list[int], value: float
             ) -> tuple[Value, tuple[int, ...]]:
    """Split pads into MXNet's symmetric ``pad`` and an explicit pad of what is left."""
    sym = tuple(min(b, e) for b, e in zip(begin, end))
    if list(sym) == begin and list(sym) == end:
        return x, sym
    rank = x.rank or len(begin) + 2
    extra_b = [0, 0] + [b - s for b, s in zip(begin, sym)]
    extra_e = [0, 0] + [e - s for e, s in zip(end, sym)]
    padded = pad_sym(ctx, x, extra_b[:rank], extra_e[:rank], "constant", value)
    return Value(ctx, x.name, sym=padded, shape=None, dtype=x.dtype), sym


@importer("Conv", since=1)
def conv(ctx: ImportContext, x: Value, w: Value, b: Value | None = None, *,
         auto_pad: str = "NOTSET", dilations: Sequence[int] | None = None, group: int = 1,
         kernel_shape: Sequence[int] | None = None, pads: Sequence[int] | None = None,
         strides: Sequence[int] | None = None) -> object:
    wshape = w.static_shape
    if wshape is None:
        raise ctx.fail("the weight shape is unknown")
    kernel = list(kernel_shape) if kernel_shape else list(wshape[2:])
    n = len(kernel)
    stride, dilate = int_attr_list(strides, n, 1), int_attr_list(dilations, n, 1)
    begin, end = explicit_pads(ctx, x, kernel, stride, dilate, pads, auto_pad)
    data, pad = _pre_pad(ctx, x, begin, end, 0.0)
    args = [data.sym, w.sym] + ([b.sym] if b is not None else [])
    return ctx.op("Convolution", *args, kernel=tuple(kernel), stride=tuple(stride),
                  dilate=tuple(dilate), pad=pad, num_filter=wshape[0], num_group=group,
                  no_bias=b is None)


def _deconv_pads(ctx: ImportContext, x: Value, kernel, stride, dilate, out_pad, pads,
                 auto_pad: str, output_shape) -> tuple[list[int], list[int]]:
    n = len(kernel)
    if output_shape is None and auto_pad in ("NOTSET", "VALID"):
        if auto_pad == "VALID" or not pads:
            return [0] * n, [0] * n
        return [int(p) for p in pads[:n]], [int(p) for p in pads[n:]]
    sizes = _spatial(ctx, x, n)
    if not all(isinstance(s, int) for s in sizes):
        raise ctx.fail("output_shape / auto_pad need the static input size")
    want = list(output_shape)[-n:] if output_shape is not None else [s * st for s, st in
                                                                      zip(sizes, stride)]
    begin, end = [], []
    for size, k, s, d, op, o in zip(sizes, kernel, stride, dilate, out_pad, want):
        total = s * (size - 1) + op + (k - 1) * d + 1 - o
        half = total // 2
        if auto_pad == "SAME_UPPER":
            begin.append(half)
            end.append(total - half)
        else:
            begin.append(total - half)
            end.append(half)
    return begin, end


@importer("ConvTranspose", since=1)
def conv_transpose(ctx: ImportContext, x: Value, w: Value, b: Value | None = None, *,
                   auto_pad: str = "NOTSET", dilations: Sequence[int] | None = None,
                   group: int = 1, kernel_shape: Sequence[int] | None = None,
                   output_padding: Sequence[int] | None = None,
                   output_shape: Sequence[int] | None = None, pads: Sequence[int] | None = None,
                   strides: Sequence[int] | None = None) -> object:
    """MXNet's Deconvolution; its weight layout (C_in, C_out/group, k...) is ONNX's.
    Asymmetric or negative pads: MXNet pads the smaller amount, the rest is cropped."""
    wshape = w.static_shape
    if wshape is None:
        raise ctx.fail("the weight shape is unknown")
    kernel = list(kernel_shape) if kernel_shape else list(wshape[2:])
    n = len(kernel)
    stride, dilate = int_attr_list(strides, n, 1), int_attr_list(dilations, n, 1)
    adj = int_attr_list(output_padding, n, 0)
    begin, end = _deconv_pads(ctx, x, kernel, stride, dilate, adj, pads, auto_pad,
                              output_shape)
    sym_pad = [max(min(bb, e), 0) for bb, e in zip(begin, end)]
    extra_b = [bb - p for bb, p in zip(begin, sym_pad)]
    extra_e = [e - p for e, p in zip(end, sym_pad)]
    args = [x.sym, w.sym] + ([b.sym] if b is not None else [])
    out = ctx.op("Deconvolution", *args, kernel=tuple(kernel), stride=tuple(stride),
                 dilate=tuple(dilate), pad=tuple(sym_pad), adj=tuple(adj),
                 num_filter=wshape[1] * group, num_group=group, no_bias=b is None)
    if any(extra_b) or any(extra_e):
        rank = n + 2
        v = Value(ctx, x.name, sym=out, shape=(None,) * rank, dtype=x.dtype)
        out = pad_sym(ctx, v, [0, 0] + [-e for e in extra_b], [0, 0] + [-e for e in extra_e])
    return out


# --- pooling ----------------------------------------------------------------------------------
def _pool(ctx: ImportContext, x: Value, pool_type: str, kernel_shape, strides, pads,
          auto_pad: str, ceil_mode: int, dilations, count_include_pad: int = 0,
          p_value: int | None = None) -> object:
    n = len(kernel_shape)
    stride, dilate = int_attr_list(strides, n, 1), int_attr_list(dilations, n, 1)
    begin, end = explicit_pads(ctx, x, kernel_shape, stride, dilate, pads, auto_pad)
    if any(d != 1 for d in dilate):
        return _dilated_pool(ctx, x, pool_type, list(kernel_shape), stride, dilate, begin, end,
                             bool(ceil_mode), bool(count_include_pad), p_value)
    kw = {"kernel": tuple(kernel_shape), "stride": tuple(stride), "pool_type": pool_type,
          "pooling_convention": _convention(ctx, x, kernel_shape, stride, begin, end,
                                            bool(ceil_mode))}
    if pool_type == "lp":
        return _lp_pool(ctx, x, begin, end, kw, p_value)
    if pool_type == "avg":
        kw["count_include_pad"] = bool(count_include_pad)
    if begin != end and pool_type == "avg" and not count_include_pad:
        return _avg_exclude_pad(ctx, x, begin, end, kw)
    small_int = x.dtype is not None and np.dtype(x.dtype).kind in "iu" and \
        np.dtype(x.dtype).itemsize <= 2
    if small_int:  # MXNet pools floats only; 8/16-bit integers are exact in float32
        x = Value(ctx, x.name, sym=cast(ctx, x.sym, np.dtype(np.float32)), shape=x.shape,
                  dtype=np.dtype(np.float32))
    fill = _lowest(x.dtype) if pool_type == "max" else 0.0
    data, pad = _pre_pad(ctx, x, begin, end, fill)
    out = ctx.op("Pooling", data.sym, pad=pad, **kw)
    return cast(ctx, out, ctx.out_dtype()) if small_int else out


def _dilated_pool(ctx: ImportContext, x: Value, pool_type: str, kernel: list[int], stride,
                  dilate, begin: list[int], end: list[int], ceil: bool, include_pad: bool,
                  p: int | None) -> object:
    """Pooling with dilations, which MXNet's Pooling lacks. Max and sum over a window grid are
    separable, so one spatial axis at a time: one strided ``slice`` per kernel tap along that
    axis (tap ``j`` of output ``i`` reads ``i * stride + j * dilation``), combined by
    ``broadcast_maximum`` (max) or ``add_n`` (avg, lp) -- sum(kernel) slices, not
    prod(kernel). ONNX's output size (ceil mode drops a window that starts in the end padding)
    needs the static input size; windows running past the end in ceil mode read a fill that
    never wins (max) or counts (avg)."""
    sizes = _spatial(ctx, x, len(kernel))
    if not all(isinstance(s, int) for s in sizes):
        raise ctx.fail(f"dilations {list(dilate)}: pooling with dilations needs the static "
                       "input size")
    outs, over = [], []
    for size, k, s, d, b, e in zip(sizes, kernel, stride, dilate, begin, end):
        span = size + b + e - ((k - 1) * d + 1)
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= size + b:
            o -= 1
        if o < 1:
            raise ctx.fail(f"dilated window {(k - 1) * d + 1} is larger than the padded input")
        outs.append(o)
        over.append(max((o - 1) * s + (k - 1) * d + 1 - (size + b + e), 0))
    zeros = [0, 0]
    fill = _lowest(x.dtype) if pool_type == "max" else 0.0
    src = x
    if pool_type == "lp":
        src = Value(ctx, x.name, sym=ctx.op("_power_scalar", ctx.op("abs", x.sym),
                                            scalar=float(p)), shape=x.shape, dtype=x.dtype)
    padded = pad_sym(ctx, src, zeros + begin, zeros + [e + o for e, o in zip(end, over)],
                     "constant", fill)
    windows = (kernel, stride, dilate, outs)
    if pool_type == "max":
        return _window_reduce(ctx, padded, *windows, "max")
    total = _window_reduce(ctx, padded, *windows, "sum")
    if pool_type == "lp":
        return ctx.op("_power_scalar", total, scalar=1.0 / p)
    if include_pad and not any(over):
        return ctx.op("_div_scalar", total, scalar=float(np.prod(kernel)))
    ones = Value(ctx, x.name, sym=ctx.op("ones_like", x.sym), shape=x.shape, dtype=x.dtype)
    if include_pad:  # the pads count, the ceil-mode overhang does not
        ones = Value(ctx, x.name, sym=pad_sym(ctx, ones, zeros + begin, zeros + end,
                                              "constant", 1.0), shape=None, dtype=x.dtype)
        mask = pad_sym(ctx, ones, [0] * (len(kernel) + 2), zeros + over, "constant", 0.0)
    else:
        mask = pad_sym(ctx, ones, zeros + begin, zeros + [e + o for e, o in zip(end, over)],
                       "constant", 0.0)
    return ctx.op("broadcast_div", total, _window_reduce(ctx, mask, *windows, "sum"))


def _window_reduce(ctx: ImportContext, s, kernel, stride, dilate, outs, how: str):
    """Max or sum over each dilated window, one spatial axis after the other: along axis
    ``a``, tap ``j`` is the slice ``j * d, j * d + s, ...`` of ``outs[a]`` elements."""
    n = len(kernel)
    for a, (k, st, d, o) in enumerate(zip(kernel, stride, dilate, outs)):
        taps = []
        for j in range(k):
            begin, end, step = [None] * (n + 2), [None] * (n + 2), [None] * (n + 2)
            begin[2 + a], end[2 + a], step[2 + a] = j * d, j * d + (o - 1) * st + 1, st
            taps.append(ctx.op("slice", s, begin=tuple(begin), end=tuple(end),
                               step=tuple(step)))
        if how == "sum":
            s = ctx.op("add_n", *taps, num_args=len(taps)) if len(taps) > 1 else taps[0]
        else:
            s = taps[0]
            for t in taps[1:]:
                s = ctx.op("broadcast_maximum", s, t)
    return s


def _convention(ctx: ImportContext, x: Value, kernel, stride, begin, end, ceil: bool) -> str:
    """'full' (ceil) or 'valid' (floor). ONNX's ceil mode drops a last window that would
    start in the right padding, which MXNet's 'full' keeps: when that happens on every
    axis where ceil and floor differ, the floor convention gives ONNX's size."""
    if not ceil:
        return "valid"
    sizes = _spatial(ctx, x, len(kernel))
    if not all(isinstance(s, int) for s in sizes):
        return "full"
    wants = set()
    for size, k, s, b, e in zip(sizes, kernel, stride, begin, end):
        span = size + b + e - k
        up, down = -(-span // s) + 1, span // s + 1
        onnx = up - 1 if (up - 1) * s >= size + b else up
        if up != down:
            wants.add("full" if onnx == up else "valid")
    if len(wants) > 1:
        raise ctx.fail("ceil_mode drops the last window on some axes only; MXNet's "
                       "pooling_convention applies to all axes")
    return wants.pop() if wants else "valid"


def _lp_pool(ctx: ImportContext, x: Value, begin, end, kw, p: int) -> object:
    """``(sum |x|^p)^(1/p)`` over each window: an include-pad average times the window size
    (MXNet's own lp pooling takes p in 1..3 only)."""
    powered = ctx.op("_power_scalar", ctx.op("abs", x.sym), scalar=float(p))
    v = Value(ctx, x.name, sym=powered, shape=x.shape, dtype=x.dtype)
    data, pad = _pre_pad(ctx, v, begin, end, 0.0)
    kw = {**kw, "pool_type": "avg", "count_include_pad": True}
    avg = ctx.op("Pooling", data.sym, pad=pad, **kw)
    total = ctx.op("_mul_scalar", avg, scalar=float(np.prod(kw["kernel"])))
    return ctx.op("_power_scalar", total, scalar=1.0 / p)


def _lowest(dtype) -> float:
    if dtype is not None and np.dtype(dtype).kind in "iu":
        return float(np.iinfo(dtype).min)
    return -math.inf


def _avg_exclude_pad(ctx: ImportContext, x: Value, begin, end, kw) -> object:
    """Average over the real elements with asymmetric pads: the average of x padded with 0
    divided by the average of a ones mask padded the same way."""
    data, pad = _pre_pad(ctx, x, begin, end, 0.0)
    ones = Value(ctx, x.name, sym=ctx.op("ones_like", x.sym), shape=x.shape, dtype=x.dtype)
    mask, _ = _pre_pad(ctx, ones, begin, end, 0.0)
    kw = {**kw, "count_include_pad": True}
    num = ctx.op("Pooling", data.sym, pad=pad, **kw)
    den = ctx.op("Pooling", mask.sym, pad=pad, **kw)
    return ctx.op("broadcast_div", num, den)


@importer("MaxPool", since=1)
def max_pool(ctx: ImportContext, x: Value, *, auto_pad: str = "NOTSET", ceil_mode: int = 0,
             dilations: Sequence[int] | None = None, kernel_shape: Sequence[int] = (),
             pads: Sequence[int] | None = None, storage_order: int = 0,
             strides: Sequence[int] | None = None) -> object:
    return [_pool(ctx, x, "max", kernel_shape, strides, pads, auto_pad, ceil_mode, dilations),
            None]


@importer("AveragePool", since=1)
def avg_pool(ctx: ImportContext, x: Value, *, auto_pad: str = "NOTSET", ceil_mode: int = 0,
             count_include_pad: int = 0, dilations: Sequence[int] | None = None,
             kernel_shape: Sequence[int] = (), pads: Sequence[int] | None = None,
             strides: Sequence[int] | None = None) -> object:
    return _pool(ctx, x, "avg", kernel_shape, strides, pads, auto_pad, ceil_mode, dilations,
                 count_include_pad)


@importer("LpPool", since=1)
def lp_pool(ctx: ImportContext, x: Value, *, auto_pad: str = "NOTSET", ceil_mode: int = 0,
            dilations: Sequence[int] | None = None, kernel_shape: Sequence[int] = (),
            p: int = 2, pads: Sequence[int] | None = None,
            strides: Sequence[int] | None = None) -> object:
    return _pool(ctx, x, "lp", kernel_shape, strides, pads, auto_pad, ceil_mode, dilations,
                 p_value=int(p))


def _global(pool_type: str):
    def handler(ctx: ImportContext, x: Value, *, p: int = 2) -> object:
        n = max((x.rank or 4) - 2, 1)
        if pool_type != "lp":
            return ctx.op("Pooling", x.sym, kernel=(1,) * n, global_pool=True,
                          pool_type=pool_type)
        powered = ctx.op("_power_scalar", ctx.op("abs", x.sym), scalar=float(p))
        axes = tuple(range(2, 2 + n))
        total = ctx.op("sum", powered, axis=axes, keepdims=True)
        return ctx.op("_power_scalar", total, scalar=1.0 / p)

    return handler


importer("GlobalMaxPool", since=1)(_global("max"))
importer("GlobalAveragePool", since=1)(_global("avg"))
importer("GlobalLpPool", since=2)(_global("lp"))


# --- dense ------------------------------------------------------------------------------------
def _fc_bias(c: Value | None, beta: float, n: int) -> np.ndarray | None:
    """C as a (N,) bias when it only varies along N (or not at all)."""
    if c is None or c.const is None:
        return None
    v = c.const
    if v.ndim == 2 and v.shape[0] != 1:
        return None
    try:
        return np.broadcast_to(v.reshape(-1) * np.asarray(beta, v.dtype), (n,)).copy()
    except ValueError:
        return None


@importer("Gemm", since=1)
def gemm(ctx: ImportContext, a: Value, b: Value, c: Value | None = None, *,
         alpha: float = 1.0, beta: float = 1.0, transA: int = 0, transB: int = 0,  # noqa: N803
         broadcast: int = 0) -> object:
    """``alpha * A' B' + beta * C``: FullyConnected when B is a constant weight."""
    if b.const is not None and b.const.ndim == 2 and not transA:
        weight = b.const if transB else b.const.T
        n = weight.shape[0]
        if alpha != 1.0:
            weight = weight * np.asarray(alpha, weight.dtype)
        w = b.sym if (transB and alpha == 1.0) else ctx.new_param(f"{ctx.node_name}_weight",
                                                                  np.ascontiguousarray(weight))
        bias = _fc_bias(c, beta, n)
        args = [a.sym, w] + ([ctx.new_param(f"{ctx.node_name}_bias", bias)]
                             if bias is not None else [])
        out = ctx.op("FullyConnected", *args, num_hidden=n, no_bias=bias is None, flatten=True)
        if c is not None and bias is None:
            out = _add_c(ctx, out, c, beta)
        return out
    out = ctx.op("dot", a.sym, b.sym, transpose_a=bool(transA), transpose_b=bool(transB))
    if alpha != 1.0:
        out = ctx.op("_mul_scalar", out, scalar=alpha)
    return out if c is None else _add_c(ctx, out, c, beta)


def _add_c(ctx: ImportContext, out, c: Value, beta: float):
    cs = c.sym if beta == 1.0 else ctx.op("_mul_scalar", c.sym, scalar=beta)
    return ctx.op("broadcast_add", out, cs)


@importer("MatMul", since=1)
def matmul(ctx: ImportContext, a: Value, b: Value) -> object:
    """numpy matmul: FullyConnected for a constant 2-D right side, ``dot`` for a 2-D right
    side, ``batch_dot`` (over flattened batch dims) when both have batch dims."""
    ra, rb = a.rank, b.rank
    out = ctx.out_shape()
    if ra is None and rb == 2 and out is not None:
        ra = len(out)  # (..., K) @ (K, N) keeps the rank
    if ra is None or rb is None:
        raise ctx.fail("MatMul needs the ranks of both inputs")
    if b.const is not None and rb == 2 and ra >= 2 and a.const is None:
        w = ctx.new_param(f"{ctx.node_name}_weight", np.ascontiguousarray(b.const.T))
        return ctx.op("FullyConnected", a.sym, w, num_hidden=b.const.shape[1], no_bias=True,
                      flatten=False)
    if rb <= 2:
        return ctx.op("dot", a.sym, b.sym)
    if ra == 1:  # (K,) @ (..., K, N): the vector against every matrix, summed over K
        return ctx.op("sum", ctx.op("broadcast_mul", reshape(ctx, a.sym, (-1, 1)), b.sym),
                      axis=-2)
    return _batched_matmul(ctx, a, b)


def _batched_matmul(ctx: ImportContext, a: Value, b: Value) -> object:
    out = ctx.out_shape()
    if out is None:
        raise ctx.fail("batched MatMul needs the output shape")
    rank = len(out)
    batch = list(out[:-2])
    sa = _to_batch(ctx, a, batch)
    sb = _to_batch(ctx, b, batch)
    if rank == 3:
        return ctx.op("batch_dot", sa, sb)
    a3 = reshape(ctx, sa, (-1, 0, 0), reverse=True)
    b3 = reshape(ctx, sb, (-1, 0, 0), reverse=True)
    y = ctx.op("batch_dot", a3, b3)
    static = ctx.static_out_shape()
    if static is not None:
        return reshape(ctx, y, static)
    return ctx.op("reshape_like", y, sa, lhs_begin=0, lhs_end=1, rhs_begin=0,
                  rhs_end=rank - 2)


def _to_batch(ctx: ImportContext, v: Value, batch: list) -> object:
    """``v`` broadcast to ``batch + its own matrix dims`` (a 1-D side becomes a matrix)."""
    shape = list(v.shape)
    if len(shape) == 1:
        raise ctx.fail("MatMul of a 1-D tensor with a batched one is not supported")
    target = batch + shape[-2:]
    from .._import_build import broadcast_to

    return broadcast_to(ctx, v, target)


# --- normalisation ----------------------------------------------------------------------------
@importer("BatchNormalization", since=1)
def batch_norm(ctx: ImportContext, x: Value, scale: Value, bias: Value, mean: Value,
               var: Value, *, epsilon: float = 1e-5, momentum: float = 0.9, spatial: int = 1,
               is_test: int = 0, consumed_inputs=None, training_mode: int = 0) -> object:
    """Inference BatchNorm (``use_global_stats``); mean/var become MXNet aux states."""
    if training_mode:
        raise ctx.fail("training_mode=1 (batch statistics, updated running stats) is a "
                       "training op; export the model in eval mode")
    if not spatial:
        raise ctx.fail("spatial=0 (per-element statistics) has no MXNet equivalent")
    out = ctx.op("BatchNorm", x.sym, scale.sym, bias.sym, mean.sym, var.sym, eps=epsilon,
                 momentum=momentum, fix_gamma=False, use_global_stats=True)
    return [out, None, None, None, None]


@importer("InstanceNormalization", since=1)
def instance_norm(ctx: ImportContext, x: Value, scale: Value, bias: Value, *,
                  epsilon: float = 1e-5) -> object:
    return ctx.op("InstanceNorm", x.sym, scale.sym, bias.sym, eps=epsilon)


def _vector(ctx: ImportContext, v: Value | None, n, fill: float, dtype, hint: str):
    """A (n,) parameter from a constant of any broadcastable shape (or ``fill``)."""
    if v is None:
        return ctx.const(np.full(n, fill), dtype or np.float32, hint)
    if v.const is not None:
        return ctx.new_param(f"{v.name}_flat", np.broadcast_to(v.const, (n,) if v.const.ndim
                                                               <= 1 else v.const.shape
                                                               ).reshape(-1).copy())
    return reshape(ctx, v.sym, (-1,))


@importer("LayerNormalization", since=17)
def layer_norm(ctx: ImportContext, x: Value, scale: Value, bias: Value | None = None, *,
               axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1) -> object:
    """MXNet's LayerNorm normalises one axis: the axes from ``axis`` on are merged first."""
    rank = x.rank
    if rank is None:
        raise ctx.fail("LayerNormalization needs the input rank")
    axis = norm_axis(axis, rank, ctx)
    tail = x.shape[axis:]
    n = int(np.prod(tail)) if all(isinstance(d, int) for d in tail) else None
    stats = _ln_stats(ctx, x, axis, epsilon) if len(ctx.out_types) > 1 else [None, None]
    if axis == rank - 1:
        gamma = scale.sym if scale.rank == 1 else _vector(ctx, scale, n, 1.0, x.dtype, "gamma")
        beta = _vector(ctx, bias, n, 0.0, x.dtype, "beta") if bias is None or bias.rank != 1 \
            else bias.sym
        return [ctx.op("LayerNorm", x.sym, gamma, beta, axis=-1, eps=epsilon), *stats]
    if n is None:
        raise ctx.fail("LayerNormalization over several axes needs their static sizes")
    flat = reshape(ctx, x.sym, (0,) * axis + (-1,))
    gamma = _vector(ctx, scale, n, 1.0, x.dtype, "gamma")
    beta = _vector(ctx, bias, n, 0.0, x.dtype, "beta")
    y = ctx.op("LayerNorm", flat, gamma, beta, axis=-1, eps=epsilon)
    return [ctx.op("reshape_like", y, x.sym), *stats]


def _ln_stats(ctx: ImportContext, x: Value, axis: int, eps: float) -> list:
    """LayerNormalization's optional Mean and InvStdDev outputs (kept dims)."""
    axes = tuple(range(axis, x.rank))
    mean = ctx.op("mean", x.sym, axis=axes, keepdims=True)
    centered = ctx.op("broadcast_sub", x.sym, mean)
    var = ctx.op("mean", ctx.op("square", centered), axis=axes, keepdims=True)
    return [mean, ctx.op("rsqrt", ctx.op("_plus_scalar", var, scalar=eps))]


@importer("GroupNormalization", since=18)
def group_norm(ctx: ImportContext, x: Value, scale: Value, bias: Value, *, epsilon: float = 1e-5,
               num_groups: int = 1, stash_type: int = 1) -> object:
    """MXNet's GroupNorm has one gamma/beta per group (ONNX 18); ONNX 21 has one per
    channel: normalise with unit gamma, then scale and shift per channel."""
    if ctx.version < 21:
        return ctx.op("GroupNorm", x.sym, scale.sym, bias.sym, num_groups=num_groups,
                      eps=epsilon)
    ones = ctx.const(np.ones(num_groups), x.dtype or np.float32, "gamma")
    zeros = ctx.const(np.zeros(num_groups), x.dtype or np.float32, "beta")
    y = ctx.op("GroupNorm", x.sym, ones, zeros, num_groups=num_groups, eps=epsilon)
    rank = x.rank or 4
    per_c = (-1,) + (1,) * (rank - 2)
    if scale.const is not None and bias.const is not None:
        g = ctx.new_param(f"{scale.name}_c", scale.const.reshape(per_c))
        bt = ctx.new_param(f"{bias.name}_c", bias.const.reshape(per_c))
    else:
        g, bt = reshape(ctx, scale.sym, per_c), reshape(ctx, bias.sym, per_c)
    return ctx.op("broadcast_add", ctx.op("broadcast_mul", y, g), bt)


@importer("LRN", since=1)
def lrn(ctx: ImportContext, x: Value, *, alpha: float = 1e-4, beta: float = 0.75,
        bias: float = 1.0, size: int = 1) -> object:
    return ctx.op("LRN", x.sym, alpha=alpha, beta=beta, knorm=bias, nsize=size)


@importer("LpNormalization", since=1)
def lp_normalization(ctx: ImportContext, x: Value, *, axis: int = -1, p: int = 2) -> object:
    if p not in (1, 2):
        raise ctx.fail(f"p={p}: MXNet's norm has ord 1 and 2")
    norm = ctx.op("norm", x.sym, ord=p, axis=(norm_axis(axis, x.rank, ctx),), keepdims=True)
    # a zero vector stays zero (x / (norm + [norm == 0]))
    safe = ctx.op("broadcast_add", norm, ctx.op("_equal_scalar", norm, scalar=0.0))
    return ctx.op("broadcast_div", x.sym, safe)


@importer("MeanVarianceNormalization", since=9)
def mvn(ctx: ImportContext, x: Value, *, axes: Sequence[int] = (0, 2, 3)) -> object:
    """ONNX's function body: ``(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)``."""
    ax = tuple(norm_axes(axes, x.rank, ctx))
    m = ctx.op("mean", x.sym, axis=ax, keepdims=True)
    m2 = ctx.op("mean", ctx.op("square", x.sym), axis=ax, keepdims=True)
    std = ctx.op("sqrt", ctx.op("broadcast_sub", m2, ctx.op("square", m)))
    return ctx.op("broadcast_div", ctx.op("broadcast_sub", x.sym, m),
                  ctx.op("_plus_scalar", std, scalar=1e-9))


# --- softmax ----------------------------------------------------------------------------------
def _flat2d(ctx: ImportContext, x: Value, axis: int):
    """``x`` as 2-D ``(prod(dims[:axis]), prod(dims[axis:]))``."""
    if axis == 1:
        return ctx.op("Flatten", x.sym) if x.rank != 2 else x.sym
    if axis == 0:
        return reshape(ctx, x.sym, (1, -1))
    head = x.shape[:axis]
    if all(isinstance(d, int) for d in head):
        return reshape(ctx, x.sym, (int(np.prod(head)), -1))
    tail = x.shape[axis:]
    if all(isinstance(d, int) for d in tail):
        return reshape(ctx, x.sym, (-1, int(np.prod(tail))))
    raise ctx.fail("softmax over flattened axes needs static dims on one side of the axis")


def _softmax_like(mx_op: str):
    def handler(ctx: ImportContext, x: Value, *, axis: int | None = None) -> object:
        """Opset >= 13: over one axis (default -1); before: over the input flattened to 2-D
        at ``axis`` (default 1)."""
        rank = x.rank
        if rank is None:
            raise ctx.fail("softmax needs the input rank")
        if ctx.version >= 13:
            return _over_axis(ctx, mx_op, x, norm_axis(-1 if axis is None else axis, rank, ctx))
        a = norm_axis(1 if axis is None else axis, rank, ctx)
        if a == rank - 1:
            return _over_axis(ctx, mx_op, x, a)
        y = _over_last(ctx, mx_op, _flat2d(ctx, x, a), _tail(ctx, x, a), x.dtype)
        return ctx.op("reshape_like", y, x.sym)

    return handler


def _over_axis(ctx: ImportContext, mx_op: str, x: Value, a: int) -> object:
    if mx_op != "hardmax":
        return ctx.op(mx_op, x.sym, axis=a)
    last = x.rank - 1
    s = x.sym if a == last else ctx.op("swapaxes", x.sym, dim1=a, dim2=last)
    y = _over_last(ctx, mx_op, s, _tail(ctx, x, a, a + 1), x.dtype)
    return y if a == last else ctx.op("swapaxes", y, dim1=a, dim2=last)


def _over_last(ctx: ImportContext, mx_op: str, s, depth: int | None, dtype) -> object:
    if mx_op != "hardmax":
        return ctx.op(mx_op, s, axis=-1)
    if depth is None:
        raise ctx.fail("Hardmax needs the static size of the reduced axes")
    idx = ctx.op("argmax", s, axis=-1)
    return ctx.op("one_hot", idx, depth=depth, dtype=_name(ctx, dtype))


def _tail(ctx: ImportContext, x: Value, start: int, stop: int | None = None) -> int | None:
    dims = x.shape[start:stop]
    if not all(isinstance(d, int) for d in dims):
        return None
    return int(np.prod(dims))


def _name(ctx: ImportContext, dtype) -> str:
    from .._import_build import mx_dtype

    return mx_dtype(ctx, dtype if dtype is not None else np.float32)


importer("Softmax", since=1)(_softmax_like("softmax"))
importer("LogSoftmax", since=1)(_softmax_like("log_softmax"))
importer("Hardmax", since=1)(_softmax_like("hardmax"))


# --- dropout ----------------------------------------------------------------------------------
@importer("Dropout", since=1)
def dropout(ctx: ImportContext, x: Value, ratio_in: Value | None = None,
            training: Value | None = None, *, ratio: float = 0.5, seed: int | None = None,
            is_test: int = 0, consumed_inputs=None) -> object:
    """Inference: the identity (and an all-true mask)."""
    if training is not None:
        if training.const is None or bool(training.const.reshape(-1)[0]):
            raise ctx.fail("training_mode is on (or not a constant): dropout in training is "
                           "a training op")
    mask = cast(ctx, ctx.op("ones_like", x.sym), np.dtype(np.bool_)) \
        if len(ctx.out_types) > 1 else None
    return [x.sym, mask]


@importer("MaxUnpool", since=9)
def max_unpool(ctx: ImportContext, x: Value, indices: Value, output_shape: Value | None = None,
               *, kernel_shape: Sequence[int] = (), pads: Sequence[int] | None = None,
               strides: Sequence[int] | None = None) -> object:
    """Each value of ``x`` written at its index into zeros: MXNet's ``scatter_nd`` over the
    flattened default output ``(in - 1) * stride + kernel - pads`` (indices count over the
    whole tensor, as MaxPool's Indices output), then reshaped; a larger ``output_shape`` pads
    the end of each spatial axis (the indices keep the default layout, as onnx's reference)."""
    shape = x.static_shape
    if shape is None:
        raise ctx.fail("MaxUnpool needs the static input shape")
    n = len(kernel_shape)
    stride, pad = int_attr_list(strides, n, 1), int_attr_list(pads, 2 * n, 0)
    default = list(shape[:2]) + [(s - 1) * st + k - pad[i] - pad[n + i] for i, (s, st, k) in
                                 enumerate(zip(shape[2:], stride, kernel_shape))]
    total = int(np.prod(default))
    flat_x = reshape(ctx, x.sym, (-1,))
    flat_i = reshape(ctx, cast(ctx, indices.sym, np.dtype(np.int64)), (1, -1))
    y = reshape(ctx, ctx.op("scatter_nd", flat_x, flat_i, shape=(total,)), default)
    if output_shape is None:
        return y
    want = output_shape.ints()
    if len(want) != len(default) or any(w < d for w, d in zip(want, default)):
        raise ctx.fail(f"output_shape {want} is smaller than the unpooled shape {default}")
    if want == default:
        return y
    v = Value(ctx, x.name, sym=y, shape=tuple(default), dtype=x.dtype)
    return pad_sym(ctx, v, [0] * len(want), [w - d for w, d in zip(want, default)])

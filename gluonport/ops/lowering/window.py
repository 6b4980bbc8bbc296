"""ONNX building blocks shared by the windowed op families (conv.py, pool.py).

* dtypes: float16 data is computed in float32 and rounded once at the end, as MXNet's CPU
  kernels accumulate float16 in float32 (:func:`work_dtype`, :func:`as_dtype`, :func:`finish`).
* layouts: channels-last data is transposed to channels-first and back (:func:`to_first`).
* windows: onnxruntime has no float64 kernel for Conv, ConvTranspose or AveragePool (1.16 to
  1.31), so float64 convolution and window sums are lowered exactly: one ``Slice`` per kernel
  tap of the padded input, then ``Concat`` + ``MatMul`` (im2col) or ``Sum``
  (:func:`conv_by_taps`, :func:`deconv_by_taps`, :func:`window_sum`).
* im2col/col2im: the window taps stacked (:func:`im2col`), or spread back with zeros
  interleaved and summed (:func:`col2im`), exact in every dtype.
* sizes: integers that are Python ints while known and int64 tensors (``Shape`` arithmetic)
  when they vary with the dynamic input dims (:func:`dim`, :func:`arith`, :func:`vec`).
* pooling windows: MXNet's windows made explicit for ONNX pools (end padding instead of
  ``ceil_mode``, whose last window differs; MXNet's divisors), and the onnxruntime quirks
  around them: pads must be smaller than the kernel, and its PadFusion folds a zero ``Pad``
  into a following MaxPool, which changes the max (:func:`window_mean`,
  :func:`fed_by_zero_pad`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence

import numpy as np

from . import LoweringContext, deliver

__all__ = ["work_dtype", "as_dtype", "finish", "to_first", "first_perm", "last_perm",
           "pad", "window_taps", "im2col", "col2im", "window_sum", "taps_weight", "conv_by_taps",
           "deconv_by_taps", "deconv_as_conv_weight",
           "dim", "arith", "vec", "reduce", "end_pads", "data_counts", "pool_node",
           "window_mean", "power", "root", "fed_by_zero_pad", "global_pool", "touches_padding"]

Dim = int | str  # a known size, or the name of an int64 tensor of shape (1,)


# --- dtypes and outputs -----------------------------------------------------------------------
def work_dtype(dtype) -> np.dtype:
    """The dtype a windowed op is computed in: float32 for float16 data, else the data's own."""
    dt = np.dtype(dtype)
    return np.dtype(np.float32) if dt == np.float16 else dt


def as_dtype(ctx: LoweringContext, i: int, dtype) -> str:
    """Input ``i`` in ``dtype``: itself, a converted initializer (parameters), or a ``Cast``."""
    dtype = np.dtype(dtype)
    if np.dtype(ctx.in_dtypes[i]) == dtype:
        return ctx.inputs[i]
    value = ctx.param(i)
    if value is not None:
        return ctx.const(value.astype(dtype), f"in{i}_{dtype.name}")
    return ctx.cast_to(ctx.inputs[i], dtype)


def finish(ctx: LoweringContext, y: str, work, perm: Sequence[int] | None = None,
           out_dtype=None) -> None:
    """Transpose ``y`` by ``perm`` (if any), cast it from ``work`` to the output dtype, and
    make it output 0."""
    target = np.dtype(out_dtype if out_dtype is not None else ctx.out_dtypes[0] or ctx.dtype)
    if perm is not None:
        y = ctx.make("Transpose", [y], perm=list(perm))
    if np.dtype(work) != target:
        y = ctx.cast_to(y, target)
    deliver(ctx, y)


# --- layouts ----------------------------------------------------------------------------------
def first_perm(rank: int) -> list[int]:
    """(N, *S, C) -> (N, C, *S)."""
    return [0, rank - 1, *range(1, rank - 1)]


def last_perm(rank: int) -> list[int]:
    """(N, C, *S) -> (N, *S, C)."""
    return [0, *range(2, rank), 1]


def to_first(ctx: LoweringContext, x: str, rank: int, channels_last: bool) -> str:
    return ctx.make("Transpose", [x], perm=first_perm(rank)) if channels_last else x


# --- windows ----------------------------------------------------------------------------------
def pad(ctx: LoweringContext, x: str, before: Sequence[int], after: Sequence[int],
        value=None, first: int = 2) -> str:
    """Constant-pad the spatial axes of ``x`` -- axes 2, 3, ... of (N, C, *S), or with
    ``first=1`` axes 1, 2, ... of a channels-last (N, *S, C) tensor; a negative amount crops
    (``Slice``)."""
    nd = len(before)
    grow_b, grow_a = [max(b, 0) for b in before], [max(a, 0) for a in after]
    if any(grow_b) or any(grow_a):
        lead, trail = [0] * first, [0] * (2 - first)
        ins = [x, ctx.ints([*lead, *grow_b, *trail, *lead, *grow_a, *trail], "pads")]
        if value is not None:
            ins.append(ctx.const(value, "pad_value"))
        x = ctx.make("Pad", ins, mode="constant")
    if min(*before, *after) < 0:
        big = np.iinfo(np.int64).max
        starts = [max(-b, 0) for b in before]
        ends = [a if a < 0 else big for a in after]
        x = ctx.make("Slice", [x, ctx.ints(starts, "starts"), ctx.ints(ends, "ends"),
                               ctx.ints(range(first, first + nd), "axes")])
    return x


def window_taps(ctx: LoweringContext, x: str, kernel: Sequence[int], stride: Sequence[int],
                dilate: Sequence[int], out_sp: Sequence[int]) -> list[str]:
    """One ``Slice`` per kernel tap (C order): tap ``t`` of every output window, reading
    ``x[o*s + t*d]`` (``x`` is padded so that every window lies inside it)."""
    nd = len(kernel)
    axes, steps = ctx.ints(range(2, 2 + nd), "axes"), ctx.ints(stride, "steps")
    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        starts = [t * d for t, d in zip(tap, dilate)]
        ends = [b + (o - 1) * s + 1 for b, o, s in zip(starts, out_sp, stride)]
        taps.append(ctx.make("Slice", [x, ctx.ints(starts, "starts"), ctx.ints(ends, "ends"),
                                       axes, steps]))
    return taps


def window_sum(ctx: LoweringContext, x: str, kernel, stride, before, after, out_sp) -> str:
    """Zero-padded window sums, one ``Slice`` per tap added by ``Sum`` (exact in float64)."""
    xp = pad(ctx, x, before, after)
    taps = window_taps(ctx, xp, kernel, stride, (1,) * len(kernel), out_sp)
    return taps[0] if len(taps) == 1 else ctx.make("Sum", taps)


def taps_weight(ctx: LoweringContext, w: np.ndarray | str, groups: int, w_shape: Sequence[int],
                dtype) -> str:
    """A (F, C/G, *k) convolution weight as (G, F/G, T*C/G) with columns in (tap, channel)
    order, matching the im2col rows of :func:`conv_by_taps`."""
    f, cg, *kernel = (int(v) for v in w_shape)
    t = int(np.prod(kernel))
    if not isinstance(w, str):
        arr = np.asarray(w, dtype).reshape(groups, f // groups, cg, t).transpose(0, 1, 3, 2)
        return ctx.const(np.ascontiguousarray(arr).reshape(groups, f // groups, t * cg),
                         "weight_cols")
    w = ctx.make("Reshape", [w, ctx.ints([groups, f // groups, cg, t], "shape")])
    w = ctx.make("Transpose", [w], perm=[0, 1, 3, 2])
    return ctx.make("Reshape", [w, ctx.ints([groups, f // groups, t * cg], "shape")])


def conv_by_taps(ctx: LoweringContext, x: str, w_cols: str, bias: str | None, kernel, stride,
                 dilate,
                 before, after, groups: int, channels: int, n_filter: int, out_sp) -> str:
    """Convolution of channels-first ``x`` as im2col + ``MatMul``: taps concatenated on the
    channel axis, regrouped to (N, G, T*C/G, P) and multiplied by :func:`taps_weight`."""
    xp = pad(ctx, x, before, after)
    taps = window_taps(ctx, xp, kernel, stride, dilate, out_sp)
    t, cg, n_out = len(taps), channels // groups, int(np.prod(out_sp))
    cols = taps[0] if t == 1 else ctx.make("Concat", taps, axis=1)  # (N, T*C, *O)
    cols = ctx.make("Reshape", [cols, ctx.ints([0, t, groups, cg, n_out], "shape")])
    cols = ctx.make("Transpose", [cols], perm=[0, 2, 1, 3, 4])
    cols = ctx.make("Reshape", [cols, ctx.ints([0, groups, t * cg, n_out], "shape")])
    y = ctx.make("MatMul", [w_cols, cols])  # (N, G, F/G, P)
    y = ctx.make("Reshape", [y, ctx.ints([0, n_filter, *out_sp], "shape")])
    if bias is not None:
        b = ctx.make("Reshape", [bias, ctx.ints([-1] + [1] * len(kernel), "bias_shape")])
        y = ctx.make("Add", [y, b])
    return y


def _interleave(ctx: LoweringContext, x: str, stride: Sequence[int], sp: Sequence[int]) -> str:
    """``s - 1`` zeros between neighbours along each spatial axis: (x-1)*s + 1 long."""
    if all(s == 1 for s in stride):
        return x
    nd = len(stride)
    x = ctx.make("Unsqueeze", [x, ctx.ints([3 + 2 * i for i in range(nd)], "axes")])
    after = [0, 0] + list(itertools.chain(*((0, s - 1) for s in stride)))
    x = ctx.make("Pad", [x, ctx.ints([0] * (2 + 2 * nd) + after, "pads")], mode="constant")
    x = ctx.make("Reshape", [x, ctx.ints([0, 0, *(v * s for v, s in zip(sp, stride))],
                                         "shape")])
    ends = [(v - 1) * s + 1 for v, s in zip(sp, stride)]
    return ctx.make("Slice", [x, ctx.ints([0] * nd, "starts"), ctx.ints(ends, "ends"),
                              ctx.ints(range(2, 2 + nd), "axes")])


def im2col(ctx: LoweringContext, x: str, kernel, stride, dilate, pad_: Sequence[int],
           out_sp) -> str:
    """MXNet's im2col of channels-first ``x``: (N, C * taps, prod(out_sp)), rows channel-major
    then tap (C order), one ``Slice`` per tap of the zero-padded input."""
    taps = window_taps(ctx, pad(ctx, x, pad_, pad_), kernel, stride, dilate, out_sp)
    stacked = [ctx.make("Unsqueeze", [t, ctx.ints([2], "axes")]) for t in taps]
    cols = stacked[0] if len(stacked) == 1 else ctx.make("Concat", stacked, axis=2)
    return ctx.make("Reshape", [cols, ctx.ints([0, -1, int(np.prod(out_sp))], "shape")])


def col2im(ctx: LoweringContext, cols: str, kernel, stride, dilate, pad_: Sequence[int], out_sp,
           size: Sequence[int]) -> str:
    """MXNet's col2im: each tap's (N, C, *out_sp) slab spread over its strided positions of
    the padded image (zeros interleaved, then padded into place), summed, and cropped."""
    t = int(np.prod(kernel))
    cols = ctx.make("Reshape", [cols, ctx.ints([0, -1, t, *out_sp], "shape")])
    full = [v + 2 * p for v, p in zip(size, pad_)]
    parts = []
    for i, tap in enumerate(itertools.product(*(range(k) for k in kernel))):
        slab = ctx.make("Gather", [cols, ctx.const(np.asarray(i, np.int64), "tap")], axis=2)
        z = _interleave(ctx, slab, stride, out_sp)
        before = [k * d for k, d in zip(tap, dilate)]
        after = [f - b - (o - 1) * s - 1 for f, b, o, s in zip(full, before, out_sp, stride)]
        parts.append(pad(ctx, z, before, after))
    y = parts[0] if len(parts) == 1 else ctx.make("Sum", parts)
    return pad(ctx, y, [-p for p in pad_], [-p for p in pad_]) if any(pad_) else y


def deconv_as_conv_weight(ctx: LoweringContext, w: np.ndarray | str, groups: int, w_shape, dtype):
    """(C, F/G, *k) transposed-convolution weight -> (F, C/G, *k) flipped convolution weight
    (also a convolution's (F, C/G, *k) weight -> the (C, F/G, *k) one of its data gradient)."""
    c, fg, *kernel = (int(v) for v in w_shape)
    nd, cg = len(kernel), c // groups
    if not isinstance(w, str):
        arr = np.asarray(w, dtype).reshape(groups, cg, fg, *kernel).swapaxes(1, 2)
        arr = arr.reshape(groups * fg, cg, *kernel)[(Ellipsis,) + (slice(None, None, -1),) * nd]
        return np.ascontiguousarray(arr)
    w = ctx.make("Reshape", [w, ctx.ints([groups, cg, fg, *kernel], "shape")])
    w = ctx.make("Transpose", [w], perm=[0, 2, 1, *range(3, 3 + nd)])
    w = ctx.make("Reshape", [w, ctx.ints([groups * fg, cg, *kernel], "shape")])
    low = np.iinfo(np.int64).min
    return ctx.make("Slice", [w, ctx.ints([-1] * nd, "starts"), ctx.ints([low] * nd, "ends"),
                              ctx.ints(range(2, 2 + nd), "axes"), ctx.ints([-1] * nd, "steps")])


def deconv_by_taps(ctx: LoweringContext, x: str, w: np.ndarray | str, bias: str | None, geom, pads,
                   adj,
                   groups: int, w_shape, in_sp, out_sp, dtype) -> str:
    """Transposed convolution as a stride-1 convolution (:func:`conv_by_taps`) of the
    zero-interleaved input with the flipped, regrouped weight: ``y[o] = sum x[i] w[k]`` over
    ``i*s + k*d - p = o``, the definition MXNet's Deconvolution computes."""
    z = _interleave(ctx, x, geom.stride, in_sp)
    reach = [d * (k - 1) for k, d in zip(geom.kernel, geom.dilate)]
    before = [r - p for r, p in zip(reach, pads)]
    after = [r - p + a for r, p, a in zip(reach, pads, adj)]
    cw = deconv_as_conv_weight(ctx, w, groups, w_shape, dtype)
    c, fg = int(w_shape[0]), int(w_shape[1])
    conv_shape = (groups * fg, c // groups, *geom.kernel)
    cols = taps_weight(ctx, cw, groups, conv_shape, dtype)
    return conv_by_taps(ctx, z, cols, bias, geom.kernel, (1,) * geom.nd, geom.dilate, before,
                        after, groups, c, groups * fg, out_sp)


# --- sizes known now or at run time ----------------------------------------------------------
def dim(ctx: LoweringContext, i: int, axis: int) -> Dim:
    """Dim ``axis`` of input ``i``: an int, or a (1,) int64 tensor read with ``Shape`` when it
    varies with the dynamic input dims."""
    if not ctx.is_dynamic(i, axis):
        return int(ctx.in_shapes[i][axis])
    shape = ctx.make("Shape", [ctx.inputs[i]])
    return ctx.make("Slice", [shape, ctx.ints([axis], "start"), ctx.ints([axis + 1], "end")])


_ARITH: dict[str, Callable[[int, int], int]] = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": operator.floordiv,
    "Mod": operator.mod}


def arith(ctx: LoweringContext, op: str, a: Dim, b: Dim) -> Dim:
    """``a <op> b`` (Add, Sub, Mul, Div, Mod on non-negative ints): folded when both are known."""
    if isinstance(a, int) and isinstance(b, int):
        return _ARITH[op](a, b)
    ta = a if isinstance(a, str) else ctx.ints([a], "n")
    tb = b if isinstance(b, str) else ctx.ints([b], "n")
    return ctx.make(op, [ta, tb])


def vec(ctx: LoweringContext, parts: Sequence[Dim | str]) -> str:
    """An int64 1-D tensor of ``parts`` (ints, (1,) tensors, or longer int64 tensors)."""
    if all(isinstance(v, int) for v in parts):
        return ctx.ints(list(parts), "sizes")
    ins = [v if isinstance(v, str) else ctx.ints([v], "n") for v in parts]
    return ins[0] if len(ins) == 1 else ctx.make("Concat", ins, axis=0)


def reduce(ctx: LoweringContext, op_type: str, x: str, axes: Sequence[int],
           keepdims: bool = True) -> str:
    """``Reduce*`` over ``axes``: an attribute before opset 18 (ReduceSum: before 13), an input
    from then on."""
    axes = [int(a) for a in axes]
    if op_type == "ReduceSum" or ctx.opset >= 18:
        return ctx.make(op_type, [x, ctx.ints(axes, "axes")], keepdims=int(keepdims))
    return ctx.make(op_type, [x], axes=axes, keepdims=int(keepdims))


# --- pooling windows ------------------------------------------------------------------------
def end_pads(sp, kernel, stride, pad, out_sp) -> list[int]:
    """Padding behind each axis that makes ONNX's floor formula give MXNet's output size:
    the last window ``[(o-1)s - p, (o-1)s - p + k)`` must end inside it."""
    return [max(0, (o - 1) * s + k - x - p) for x, k, s, p, o in
            zip(sp, kernel, stride, pad, out_sp)]


def data_counts(sp, kernel, stride, pad, out_sp) -> np.ndarray:
    """Per-window count of data elements (ONNX AveragePool's count_include_pad=0 divisor)."""
    div = np.ones((1,) * (2 + len(sp)), np.int64)
    for i, (x, k, s, p, o) in enumerate(zip(sp, kernel, stride, pad, out_sp)):
        start = np.arange(o) * s - p
        cnt = np.minimum(start + k, x) - np.maximum(start, 0)
        div = div * np.maximum(cnt, 0).reshape([o if a == 2 + i else 1 for a in range(div.ndim)])
    return div


def pool_node(ctx: LoweringContext, op_type: str, x: str, kernel, stride, before, after, fill,
              **attrs) -> str:
    """``op_type`` over the windows ``[o*s - before, o*s - before + k)``: ONNX pads when they
    are smaller than the kernel (onnxruntime refuses others), else an explicit ``Pad`` with
    ``fill`` (for ops where padding and explicit fill agree)."""
    geo = {"kernel_shape": list(kernel), "strides": list(stride)}
    if all(b < k and a < k for b, a, k in zip(before, after, kernel)):
        pads = list(before) + list(after)
        return ctx.make(op_type, [x], pads=pads if any(pads) else None, **geo, **attrs)
    return ctx.make(op_type, [pad(ctx, x, before, after, fill)], **geo, **attrs)


def window_mean(ctx: LoweringContext, x: str, geo: tuple, divisor: np.ndarray, work: np.dtype,
                 taps: bool = False) -> str:
    """Window sums over ``divisor`` (MXNet's per-window count, 1 for sums, as an array over
    the output positions). One AveragePool when ONNX's own divisor equals it; else the mean
    over the whole (padded) window scaled by ``k / divisor``; float64 (no onnxruntime kernel)
    as exact tap sums, as are windows reaching past a pad of the kernel's size and ``taps``."""
    sp, kernel, stride, front, out_sp = geo
    after = end_pads(sp, kernel, stride, front, out_sp)
    size = int(np.prod(kernel))
    # Pad + AveragePool is not an option for pads >= kernel: onnxruntime's PadFusion moves
    # the Pad into the pool's pads, which its AveragePool then refuses.
    if taps or work == np.float64 or any(b >= k or a >= k for b, a, k in
                                         zip(front, after, kernel)):
        y = window_sum(ctx, x, kernel, stride, front, after, out_sp)
        return y if np.all(divisor == 1) else ctx.make("Div", [y, ctx.const(
            divisor.astype(work), "divisor")])
    counts = data_counts(*geo)
    geom = {"kernel_shape": list(kernel), "strides": list(stride),
            "pads": list(front) + after if any(front) or any(after) else None}
    if np.array_equal(np.broadcast_to(divisor, counts.shape), counts):
        return ctx.make("AveragePool", [x], count_include_pad=0, **geom)
    y = ctx.make("AveragePool", [x], count_include_pad=1, **geom)
    scale = (size / divisor).astype(work)
    if np.all(scale == 1):
        return y
    uniform = np.all(scale == scale.flat[0])
    return ctx.make("Mul", [y, ctx.const(work.type(scale.flat[0]) if uniform else scale,
                                         "scale")])


def power(ctx: LoweringContext, x: str, p_value: int) -> str:
    """``x ** p`` as repeated ``Mul`` (exact for the small integer p of Lp pooling)."""
    y = x
    for _ in range(p_value - 1):
        y = ctx.make("Mul", [y, x])
    return y


def root(ctx: LoweringContext, s: str, p_value: int, work: np.dtype) -> str:
    """``s ** (1/p)`` for p = 1, 2, 3; the cube root keeps the sign, as MXNet's cbrt does."""
    if p_value == 1:
        return s
    if p_value == 2:
        return ctx.make("Sqrt", [s])
    mag = ctx.make("Pow", [ctx.make("Abs", [s]), ctx.const(work.type(1.0 / 3.0), "third")])
    return ctx.make("Mul", [ctx.make("Sign", [s]), mag])


def fed_by_zero_pad(ctx: LoweringContext, x: str) -> bool:
    """Whether ``x`` comes from a zero constant ``Pad`` (through a Cast at most).

    onnxruntime >= 1.17 (PadFusion) folds such a Pad into a following MaxPool/AveragePool as
    pads: wrong for MaxPool (its pads never win the max; a zero pad does), and refused at
    session start when the pads reach the kernel size. Those pools are lowered to Slice taps.
    """
    producer = {o: n for n in ctx.nodes for o in n.output}
    node = producer.get(x)
    if node is not None and node.op_type == "Cast":
        node = producer.get(node.input[0])
    if node is None or node.op_type != "Pad":
        return False
    mode = next((a.s.decode() for a in node.attribute if a.name == "mode"), "constant")
    if mode != "constant":
        return False
    value = ctx.initializers.get(node.input[2]) if len(node.input) > 2 and node.input[2] \
        else 0
    return value is None or float(np.asarray(value).reshape(-1)[0]) == 0


def global_pool(ctx: LoweringContext, x: str, kind: str, p_value: int, rank: int,
                work: np.dtype) -> str:
    """Global*Pool for float32 work, Reduce* for float64 (no onnxruntime double kernel), sums
    and L2; Lp 1 and 3 as a power sum and root."""
    axes = list(range(2, rank))
    native = work != np.float64
    if kind == "max":
        return ctx.make("GlobalMaxPool", [x]) if native else reduce(ctx, "ReduceMax", x, axes)
    if kind == "avg":
        return (ctx.make("GlobalAveragePool", [x]) if native
                else reduce(ctx, "ReduceMean", x, axes))
    if kind == "lp" and p_value == 2:  # GlobalLpPool-22 has no onnxruntime kernel
        return reduce(ctx, "ReduceL2", x, axes)
    if kind == "sum":
        return reduce(ctx, "ReduceSum", x, axes)
    s = reduce(ctx, "ReduceSum", power(ctx, x, p_value), axes)
    return root(ctx, s, p_value, work)


def touches_padding(sp, kernel, stride, pad, out_sp) -> np.ndarray:
    """Per output window (1, 1, *O): whether it overlaps the ``pad`` zeros around the data
    (a zero-filled ``Pad`` before MaxPool would do, but onnxruntime's PadFusion turns it into
    MaxPool pads, which MaxPool ignores)."""
    touch = np.zeros((1, 1) + tuple(out_sp), bool)
    for i, (x, k, s, p, o) in enumerate(zip(sp, kernel, stride, pad, out_sp)):
        start = np.arange(o) * s - p
        hit = (start < 0) | ((start + k > x) & (start < x + p))
        touch |= hit.reshape([o if a == 2 + i else 1 for a in range(touch.ndim)])
    return touch

"""Import handlers: newer ONNX ops composed from MXNet ops (Trilu, Det, RMSNormalization,
Swish, CumSum, Compress, CenterCropPad) and the loss functions NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss (``pick`` of the target class, ``take`` of its weight)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._import_build import cast, norm_axes, norm_axis, reshape
from .._import_context import ImportContext, Value, importer
from .shape import pad_sym

__all__: list[str] = []


@importer("Trilu", since=14)
def trilu(ctx: ImportContext, x: Value, k: Value | None = None, *, upper: int = 1) -> object:
    """``x`` where a constant triangle mask is set, else 0 (the last two dims static)."""
    shape = x.shape
    if shape is None or len(shape) < 2 or not all(isinstance(d, int) for d in shape[-2:]):
        raise ctx.fail("Trilu needs the static size of the last two dims")
    kk = k.ints()[0] if k is not None else 0
    ones = np.ones(shape[-2:], dtype=np.float32)
    mask = np.triu(ones, kk) if upper else np.tril(ones, kk)
    mask = mask.reshape((1,) * (len(shape) - 2) + mask.shape).astype(x.dtype or np.float32)
    m = ctx.op("broadcast_like", ctx.new_param(f"{ctx.node_name}_mask", mask), x.sym)
    return ctx.op("where", m, x.sym, ctx.op("zeros_like", x.sym))


@importer("Det", since=11)
def det(ctx: ImportContext, x: Value) -> object:
    return ctx.op("_linalg_det", x.sym)


@importer("RMSNormalization", since=23)
def rms_norm(ctx: ImportContext, x: Value, scale: Value, *, axis: int = -1,
             epsilon: float = 1e-5, stash_type: int = 1) -> object:
    """``x / sqrt(mean(x^2 over axes >= axis) + eps) * scale``."""
    a = norm_axis(axis, x.rank, ctx)
    ms = ctx.op("mean", ctx.op("square", x.sym), axis=tuple(range(a, x.rank)), keepdims=True)
    inv = ctx.op("rsqrt", ctx.op("_plus_scalar", ms, scalar=epsilon))
    return ctx.op("broadcast_mul", ctx.op("broadcast_mul", x.sym, inv), scale.sym)


@importer("Swish", since=24)
def swish(ctx: ImportContext, x: Value, *, alpha: float = 1.0) -> object:
    gate = ctx.op("sigmoid", ctx.op("_mul_scalar", x.sym, scalar=alpha))
    return ctx.op("broadcast_mul", x.sym, gate)


@importer("CumSum", since=11)
def cumsum(ctx: ImportContext, x: Value, axis_in: Value, *, exclusive: int = 0,
           reverse: int = 0) -> object:
    """A product with a constant triangular matrix along the axis (MXNet 1.x has no
    cumsum); integers go through float64 (exact below 2**53)."""
    a = norm_axis(axis_in.ints()[0], x.rank, ctx)
    n = x.shape[a] if x.shape is not None else None
    if not isinstance(n, int):
        raise ctx.fail("CumSum needs the static size of the axis")
    j, i = np.indices((n, n))
    keep = (j > i if exclusive else j >= i) if reverse else (j < i if exclusive else j <= i)
    s, dtype = x.sym, x.dtype or np.dtype(np.float32)
    work = dtype if dtype.kind == "f" else np.dtype(np.float64)
    if work != dtype:
        s = cast(ctx, s, work)
    last = x.rank - 1
    if a != last:
        s = ctx.op("swapaxes", s, dim1=a, dim2=last)
    y = ctx.op("dot", s, ctx.new_param(f"{ctx.node_name}_tri", keep.astype(work)))
    if a != last:
        y = ctx.op("swapaxes", y, dim1=a, dim2=last)
    return y if work == dtype else cast(ctx, y, dtype)


@importer("Compress", since=9)
def compress(ctx: ImportContext, x: Value, condition: Value, *, axis: int | None = None
             ) -> object:
    """A constant condition becomes a ``take`` of the selected indices."""
    cond = np.asarray(condition.ints(), dtype=bool)
    idx = np.nonzero(cond)[0].astype(np.int64)
    if idx.size == 0:
        raise ctx.fail("the condition selects nothing; MXNet 1.x has no empty tensors")
    s, a = x.sym, 0
    if axis is None:
        s = reshape(ctx, s, (-1,))
    else:
        a = norm_axis(axis, x.rank, ctx)
    return ctx.op("take", s, ctx.new_param(f"{ctx.node_name}_idx", idx), axis=a)


@importer("CenterCropPad", since=18)
def center_crop_pad(ctx: ImportContext, x: Value, shape: Value, *,
                    axes: Sequence[int] | None = None) -> object:
    want = shape.ints()
    ax = norm_axes(axes if axes is not None else range(len(want)), x.rank, ctx)
    begin, end = [0] * x.rank, [0] * x.rank
    for a, w in zip(ax, want):
        n = x.shape[a]
        if not isinstance(n, int):
            raise ctx.fail("CenterCropPad needs static sizes of the axes it changes")
        if w < n:
            begin[a] = -((n - w) // 2)
            end[a] = -(n - w - (n - w) // 2)
        else:
            begin[a] = (w - n) // 2
            end[a] = w - n - (w - n) // 2
    return pad_sym(ctx, x, begin, end)


# --- losses -----------------------------------------------------------------------------------
def _nll(ctx: ImportContext, logp, target: Value, weight: Value | None, ignore_index,
         reduction: str, dtype) -> object:
    """``-logp[n, t[n, ...], ...] * w[t]``, 0 where ``t == ignore_index``, then reduced."""
    t = target.sym
    picked = ctx.op("pick", logp, cast(ctx, t, dtype), axis=1, mode="clip")
    w = None
    if weight is not None:
        w = ctx.op("take", weight.sym, t, axis=0, mode="clip")
    if ignore_index is not None:
        keep = cast(ctx, ctx.op("_not_equal_scalar", t, scalar=float(ignore_index)), dtype)
        w = keep if w is None else ctx.op("broadcast_mul", w, keep)
    loss = ctx.op("negative", picked)
    if w is not None:
        loss = ctx.op("broadcast_mul", loss, w)
    if reduction == "none":
        return loss
    total = ctx.op("sum", loss)
    if reduction == "sum":
        return total
    if w is None:
        return ctx.op("mean", loss)
    return ctx.op("broadcast_div", total, ctx.op("sum", w))


@importer("NegativeLogLikelihoodLoss", since=12)
def nll_loss(ctx: ImportContext, x: Value, target: Value, weight: Value | None = None, *,
             ignore_index: int | None = None, reduction: str = "mean") -> object:
    return _nll(ctx, x.sym, target, weight, ignore_index, reduction, x.dtype)


@importer("SoftmaxCrossEntropyLoss", since=12)
def softmax_ce_loss(ctx: ImportContext, scores: Value, labels: Value,
                    weights: Value | None = None, *, ignore_index: int | None = None,
                    reduction: str = "mean") -> object:
    logp = ctx.op("log_softmax", scores.sym, axis=1)
    loss = _nll(ctx, logp, labels, weights, ignore_index, reduction, scores.dtype)
    return [loss, logp]

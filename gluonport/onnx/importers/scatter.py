"""Import handlers for the scatter family: ScatterND, ScatterElements (and the older Scatter),
TensorScatter.

MXNet 1.x has no op that writes into a copy of a tensor, but its ``scatter_nd`` (zeros of a
shape with values written at indices) and ``where`` compose one. Every form is brought to one
shape: the data viewed as ``(P, R)`` rows, a row number per update (``lin``, ``(N,)``) and the
updates as ``(N, R)``:

* ``reduction='none'``: ``where(scatter_nd(1), scatter_nd(updates), data)`` (for duplicate
  indices ONNX leaves the result undefined; the last write wins here);
* ``'add'``: ``data + dot(one_hot(lin, P), updates, transpose_a)`` (duplicates accumulate);
* ``'mul'``/``'max'``/``'min'`` (and ``'add'`` on integers, which MXNet's dot refuses): the
  updates spread over an ``(N, P, R)`` grid by the one-hot
  (the reduction's neutral value elsewhere), reduced over ``N`` and combined with the data.
  The grid is refused past ``_GRID_LIMIT`` elements.

Indices may be computed at run time (negative ones count from the end); shapes must be static.
"""

from __future__ import annotations

import numpy as np

from .._import_build import mx_dtype, norm_axis, reshape
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_GRID_LIMIT = 1 << 26  # elements of the (N, P, R) grid of a mul/max/min reduction
_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _static(ctx: ImportContext, v: Value, what: str) -> tuple[int, ...]:
    shape = v.static_shape
    if shape is None:
        raise ctx.fail(f"{what} {v.name!r} needs a static shape (got {v.shape})")
    if 0 in shape:
        raise ctx.fail(f"{what} {v.name!r} is empty; MXNet 1.x has no empty tensors")
    return shape


def _neutral(dtype: np.dtype, reduction: str) -> float | int:
    if reduction == "add":
        return 0
    if reduction == "mul":
        return 1
    if np.issubdtype(dtype, np.floating):
        return -np.inf if reduction == "max" else np.inf
    info = np.iinfo(dtype)
    return int(info.min if reduction == "max" else info.max)


def _scatter_rows(ctx: ImportContext, data: Value, lin, upd, n: int, p: int, r: int,
                  reduction: str) -> object:
    """``data`` viewed as ``(p, r)`` with row ``lin[i]`` combined with ``upd[i]``."""
    if reduction not in _REDUCTIONS:
        raise ctx.fail(f"reduction={reduction!r} is not one of {list(_REDUCTIONS)}")
    shape = _static(ctx, data, "data")
    dtype = np.dtype(data.dtype or np.float32)
    flat = reshape(ctx, data.sym, (p, r))
    if reduction == "none":
        rows = reshape(ctx, lin, (1, n))
        vals = ctx.op("scatter_nd", upd, rows, shape=(p, r))
        hit = ctx.op("scatter_nd", ctx.op("ones_like", upd), rows, shape=(p, r))
        return reshape(ctx, ctx.op("where", hit, vals, flat), shape)
    hot = ctx.op("one_hot", lin, depth=p, dtype=mx_dtype(ctx, dtype))  # (N, P)
    if reduction == "add" and dtype in (np.float16, np.float32, np.float64):
        summed = ctx.op("dot", hot, upd, transpose_a=True)
        return reshape(ctx, ctx.op("elemwise_add", flat, summed), shape)
    if n * p * r > _GRID_LIMIT:
        raise ctx.fail(f"reduction={reduction!r} over {n} updates of a {p}x{r} tensor needs "
                       f"an {n}x{p}x{r} grid, over the {_GRID_LIMIT} elements composed here")
    hit3 = ctx.op("broadcast_to", reshape(ctx, hot, (n, p, 1)), shape=(n, p, r))
    upd3 = ctx.op("broadcast_to", reshape(ctx, upd, (n, 1, r)), shape=(n, p, r))
    fill = ctx.op("broadcast_to", ctx.const(np.full((1, 1, 1), _neutral(dtype, reduction)),
                                            dtype, "neutral"), shape=(n, p, r))
    grid = ctx.op("where", hit3, upd3, fill)
    op, combine = {"add": ("sum", "elemwise_add"), "mul": ("prod", "elemwise_mul"),
                   "max": ("max", "_maximum"), "min": ("min", "_minimum")}[reduction]
    return reshape(ctx, ctx.op(combine, flat, ctx.op(op, grid, axis=0)), shape)


def _wrap(ctx: ImportContext, idx, dims: np.ndarray):
    """Negative indices + dim (``dims`` broadcasts against ``idx``)."""
    neg = ctx.op("_lesser_scalar", idx, scalar=0)
    return ctx.op("broadcast_add", idx, ctx.op("broadcast_mul", neg, ctx.new_param(
        f"{ctx.node_name}_dims", dims)))


def _as_int64(ctx: ImportContext, v: Value):
    return v.sym if np.dtype(v.dtype or np.int64) == np.int64 else \
        ctx.op("Cast", v.sym, dtype="int64")


@importer("ScatterND", since=11)
def scatter_nd(ctx: ImportContext, data: Value, indices: Value, updates: Value, *,
               reduction: str = "none") -> object:
    shape = _static(ctx, data, "data")
    ishape = _static(ctx, indices, "indices")
    k = ishape[-1]
    if k > len(shape):
        raise ctx.fail(f"indices of depth {k} for {len(shape)}-d data")
    n = int(np.prod(ishape[:-1], dtype=np.int64))
    p = int(np.prod(shape[:k], dtype=np.int64))
    r = int(np.prod(shape[k:], dtype=np.int64))
    dims = np.array(shape[:k], np.int64)
    idx = _wrap(ctx, reshape(ctx, _as_int64(ctx, indices), (n, k)), dims.reshape(1, k))
    strides = np.array([int(np.prod(shape[j + 1:k], dtype=np.int64)) for j in range(k)],
                       np.int64)
    lin = ctx.op("sum", ctx.op("broadcast_mul", idx, ctx.new_param(
        f"{ctx.node_name}_strides", strides.reshape(1, k))), axis=1)
    upd = reshape(ctx, updates.sym, (n, r))
    return _scatter_rows(ctx, data, lin, upd, n, p, r, reduction)


def _elements(ctx: ImportContext, data: Value, idx, ishape: tuple[int, ...], updates,
              axis: int, reduction: str) -> object:
    """ScatterElements on an int64 index Symbol of static shape ``ishape``."""
    shape = _static(ctx, data, "data")
    if len(ishape) != len(shape):
        raise ctx.fail(f"indices of rank {len(ishape)} for data of rank {len(shape)}")
    axis = norm_axis(axis, len(shape), ctx)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    grids = np.indices(ishape, dtype=np.int64)
    base = sum(grids[d] * strides[d] for d in range(len(shape)) if d != axis)
    idx = _wrap(ctx, idx, np.array(shape[axis], np.int64).reshape((1,) * len(shape)))
    n = int(np.prod(ishape, dtype=np.int64))
    lin = ctx.op("broadcast_add", ctx.op("_mul_scalar", idx, scalar=strides[axis]),
                 ctx.new_param(f"{ctx.node_name}_base", np.asarray(base, np.int64)))
    p = int(np.prod(shape, dtype=np.int64))
    return _scatter_rows(ctx, data, reshape(ctx, lin, (n,)), reshape(ctx, updates, (n, 1)),
                         n, p, 1, reduction)


@importer("ScatterElements", since=11)
def scatter_elements(ctx: ImportContext, data: Value, indices: Value, updates: Value, *,
                     axis: int = 0, reduction: str = "none") -> object:
    ishape = _static(ctx, indices, "indices")
    return _elements(ctx, data, _as_int64(ctx, indices), ishape, updates.sym, axis, reduction)


@importer("Scatter", since=9)
def scatter(ctx: ImportContext, data: Value, indices: Value, updates: Value, *,
            axis: int = 0) -> object:
    """The deprecated Scatter (opsets 9-10): ScatterElements without a reduction."""
    return scatter_elements(ctx, data, indices, updates, axis=axis)


@importer("TensorScatter", since=24)
def tensor_scatter(ctx: ImportContext, past: Value, update: Value,
                   write_indices: Value | None = None, *, axis: int = -2,
                   mode: str = "linear") -> object:
    """A KV-cache update: ``update`` written along ``axis`` at each batch row's write index
    (modulo the cache length when ``mode='circular'``)."""
    if mode not in ("linear", "circular"):
        raise ctx.fail(f"mode={mode!r} is not 'linear' or 'circular'")
    shape = _static(ctx, past, "past_cache")
    ushape = _static(ctx, update, "update")
    rank = len(shape)
    axis = norm_axis(axis, rank, ctx)
    if axis == 0:
        raise ctx.fail("axis=0 is the batch axis")
    seq = np.arange(ushape[axis], dtype=np.int64).reshape(
        tuple(-1 if d == axis else 1 for d in range(rank)))
    pos = ctx.new_param(f"{ctx.node_name}_seq", seq)
    if write_indices is not None:
        start = reshape(ctx, _as_int64(ctx, write_indices), (-1,) + (1,) * (rank - 1))
        pos = ctx.op("broadcast_add", start, pos)
    if mode == "circular":
        pos = ctx.op("_mod_scalar", pos, scalar=shape[axis])
    idx = ctx.op("broadcast_to", pos, shape=ushape)
    return _elements(ctx, past, idx, ushape, update.sym, axis, "none")

"""Import handlers: shapes and indexing (Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
Expand, Concat, Split, Slice, Gather*, Tile, Pad, DepthToSpace, SpaceToDepth, Shape, Size,
ConstantOfShape, Constant, Range, EyeLike, OneHot).

Shape-like inputs (Reshape's shape, Slice's starts...) are MXNet attributes: they must be
constants after folding; a Reshape whose shape is computed at run time uses shape inference's
output shape instead, with ``-1`` for its one unknown dim (PyTorch's ``x.view(x.size(0), -1)``
with a dynamic batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._import_build import (
    broadcast_named,
    broadcast_to,
    named_dims,
    norm_axes,
    norm_axis,
    reshape,
)
from .._import_context import ImportContext, Value, importer

__all__ = ["pad_sym", "slice_args"]

_INT_MAX = 2 ** 31 - 1


# --- Reshape family ---------------------------------------------------------------------------
def _runtime_target(ctx: ImportContext, x: Value, shape: Value | None) -> tuple[int, ...]:
    """An MXNet Reshape spec from the shape vector's named dims (or else the inferred output
    shape): 0 where a named dim stays in place, -1 for one unknown dim."""
    out = ctx.symbolic.get(shape.name) if shape is not None else None
    if out is None or not all(isinstance(d, (int, str)) for d in out):
        out = ctx.out_shape()
    if out is None:
        raise ctx.fail("the target shape is computed at run time and shape inference could "
                       "not tell the output shape; give the model static input shapes")
    spec = []
    for i, d in enumerate(out):
        if isinstance(d, int):
            spec.append(d)
        elif x.shape is not None and i < len(x.shape) and x.shape[i] == d and d is not None:
            spec.append(0)
        else:
            spec.append(-1)
    if spec.count(-1) > 1:  # dims the fold solved (they do not depend on the batch) are ints
        solved = ctx.out_shape() or ()
        spec = [solved[i] if d == -1 and i < len(solved) and isinstance(solved[i], int) else d
                for i, d in enumerate(spec)]
    unknown = spec.count(-1)
    if unknown > 1:
        raise ctx.fail(f"the target shape is computed at run time and {unknown} of its dims "
                       "are unknown (MXNet's Reshape infers at most one)")
    return tuple(spec)


@importer("Reshape", since=1)
def reshape_(ctx: ImportContext, x: Value, shape: Value | None = None, *,
             allowzero: int = 0, consumed_inputs=None) -> object:
    attr_shape = None
    if ctx.version < 5:
        raise ctx.fail("Reshape-1 (shape attribute) is not supported; use opset >= 5")
    if shape is not None and shape.const is not None:
        attr_shape = shape.ints()
    elif shape is not None and shape.name not in ctx.symbolic and ctx.out_shape() is None:
        shape.ints()  # records that the backend may specialize on it, and fails
        if allowzero and 0 in attr_shape:
            raise ctx.fail("allowzero=1 with a 0 in the shape makes an empty tensor, which "
                           "MXNet 1.x cannot hold")
    spec = tuple(attr_shape) if attr_shape is not None else _runtime_target(ctx, x, shape)
    if x.const is not None:
        return np.reshape(x.const, _onnx_reshape(x.const.shape, spec))
    return reshape(ctx, x.sym, spec)


def _onnx_reshape(src: tuple, spec: Sequence[int]) -> tuple[int, ...]:
    return tuple(src[i] if d == 0 else d for i, d in enumerate(spec))


@importer("Flatten", since=1)
def flatten(ctx: ImportContext, x: Value, *, axis: int = 1) -> object:
    """MXNet's Flatten keeps axis 0 only; other axes reshape with the known dims."""
    axis = norm_axis(axis, x.rank, ctx)
    if axis == 1:
        return ctx.op("Flatten", x.sym)
    if axis == 0:
        return reshape(ctx, x.sym, (1, -1))
    shape = x.shape
    if shape is not None and all(isinstance(d, int) for d in shape[:axis]):
        return reshape(ctx, x.sym, (int(np.prod(shape[:axis])), -1))
    if shape is not None and all(isinstance(d, int) for d in shape[axis:]):
        return reshape(ctx, x.sym, (-1, int(np.prod(shape[axis:]))))
    raise ctx.fail(f"Flatten at axis {axis} needs the input dims on one side of the axis")


@importer("Transpose", since=1)
def transpose(ctx: ImportContext, x: Value, *, perm: Sequence[int] | None = None) -> object:
    if perm is None:
        if x.rank is None:
            raise ctx.fail("Transpose without perm needs the input rank")
        perm = list(range(x.rank))[::-1]
    return ctx.op("transpose", x.sym, axes=tuple(int(p) for p in perm))


def _axes(ctx: ImportContext, attr: Sequence[int] | None, inp: Value | None) -> list | None:
    """Axes from the attribute (older opsets) or the constant input (newer)."""
    if inp is not None:
        return inp.ints()
    return None if attr is None else [int(a) for a in attr]


@importer("Squeeze", since=1)
def squeeze(ctx: ImportContext, x: Value, axes_in: Value | None = None, *,
            axes: Sequence[int] | None = None) -> object:
    ax = _axes(ctx, axes, axes_in)
    if not ax:
        if x.shape is None or not all(isinstance(d, int) or d is None for d in x.shape):
            return ctx.op("squeeze", x.sym)
        ax = [i for i, d in enumerate(x.shape) if d == 1]
        if not ax:
            return ctx.op("_copy", x.sym)
    ax = norm_axes(ax, x.rank, ctx)
    return ctx.op("squeeze", x.sym, axis=tuple(sorted(ax)))


@importer("Unsqueeze", since=1)
def unsqueeze(ctx: ImportContext, x: Value, axes_in: Value | None = None, *,
              axes: Sequence[int] | None = None) -> object:
    ax = _axes(ctx, axes, axes_in) or []
    out_rank = (x.rank or 0) + len(ax)
    if x.rank is None and any(a < 0 for a in ax):
        raise ctx.fail("negative axes need the input rank")
    s = x.sym
    for a in sorted(norm_axis(a, out_rank) for a in ax):
        s = ctx.op("expand_dims", s, axis=a)
    return s


@importer("Expand", since=8)
def expand(ctx: ImportContext, x: Value, shape: Value) -> object:
    """Bidirectional broadcast to ``shape``: MXNet's ``broadcast_to`` (0 keeps a dim); dims of
    the shape named at run time (``zeros_like``: ``Expand(0, Shape(x))``) where ``x`` has size
    1 take their size from a graph input with ``broadcast_like``."""
    want = named_dims(ctx, shape)
    if want is None:
        want = shape.ints()  # fails: records that the backend may specialize on it
    rank = max(len(want), x.rank or 0)
    if x.rank is None:
        raise ctx.fail("Expand needs the input rank")
    want = [1] * (rank - len(want)) + want
    have = [1] * (rank - x.rank) + list(x.shape)
    named = {i: w for i, (h, w) in enumerate(zip(have, want)) if isinstance(w, str) and h == 1}
    target = [h if w == 1 or i in named else w for i, (h, w) in enumerate(zip(have, want))]
    out = broadcast_to(ctx, x, target)
    return broadcast_named(ctx, out, named) if named else out


@importer("Concat", since=1)
def concat(ctx: ImportContext, *xs: Value, axis: int = 1) -> object:
    rank = next((v.rank for v in xs if v.rank is not None), None)
    dim = norm_axis(axis, rank, ctx)
    if all(v.const is not None for v in xs):
        return np.concatenate([v.const for v in xs], axis=dim)
    if len(xs) == 1:
        return xs[0].sym
    return ctx.op("Concat", *[v.sym for v in xs], dim=dim)


def _split_sizes(ctx: ImportContext, x: Value, axis: int, split: list[int] | None,
                 n_out: int, num_outputs: int | None) -> list[int] | None:
    if split:
        return split
    if num_outputs is None:
        return None  # equal parts: SliceChannel
    size = None if x.shape is None else x.shape[axis]
    if not isinstance(size, int):
        raise ctx.fail("Split with num_outputs needs the size of the split axis")
    part = -(-size // num_outputs)
    sizes = [part] * (num_outputs - 1)
    return sizes + [size - part * (num_outputs - 1)]


@importer("Split", since=1)
def split(ctx: ImportContext, x: Value, split_in: Value | None = None, *, axis: int = 0,
          split: Sequence[int] | None = None, num_outputs: int | None = None) -> object:
    axis = norm_axis(axis, x.rank, ctx)
    sizes = split_in.ints() if split_in is not None else (list(split) if split else None)
    n_out = len(ctx.out_types)
    sizes = _split_sizes(ctx, x, axis, sizes, n_out, num_outputs)
    if sizes is None or len(set(sizes)) == 1 and (x.shape is None or x.shape[axis] ==
                                                    sum(sizes) or sizes is None):
        parts = ctx.op("SliceChannel", x.sym, num_outputs=n_out, axis=axis)
        return [parts[i] for i in range(n_out)] if n_out > 1 else [parts]
    starts = tuple(int(s) for s in np.cumsum([0] + list(sizes[:-1])))
    parts = ctx.op("_split_v2", x.sym, indices=starts, axis=axis)
    return [parts[i] for i in range(len(sizes))] if len(sizes) > 1 else [parts]


# --- Slice ------------------------------------------------------------------------------------
def _clamp(dim: int | None, start: int, end: int, step: int) -> tuple[int | None, int | None]:
    """ONNX's clamping of one axis, written as MXNet ``slice`` begin/end (None = the edge)."""
    if dim is None or not isinstance(dim, int):
        big = end >= _INT_MAX or end <= -_INT_MAX
        return start, (None if big else end)
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        return start, end
    start = min(max(start, -1), dim - 1)
    end = min(max(end, -1), dim - 1)
    return start, (None if end < 0 else end)


def slice_args(ctx: ImportContext, x: Value, starts: list[int], ends: list[int],
               axes: list[int] | None, steps: list[int] | None) -> tuple:
    rank = x.rank
    if rank is None:
        raise ctx.fail("Slice needs the input rank")
    axes = norm_axes(axes if axes is not None else range(len(starts)), rank, ctx)
    steps = steps or [1] * len(starts)
    begin: list = [None] * rank
    end: list = [None] * rank
    step: list = [1] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        begin[a], end[a] = _clamp(x.shape[a], s, e, st)
        step[a] = st
    return tuple(begin), tuple(end), tuple(step)


@importer("Slice", since=1)
def slice_(ctx: ImportContext, x: Value, starts_in: Value | None = None,
           ends_in: Value | None = None, axes_in: Value | None = None,
           steps_in: Value | None = None, *, starts: Sequence[int] | None = None,
           ends: Sequence[int] | None = None, axes: Sequence[int] | None = None) -> object:
    if starts_in is not None:
        st, en = starts_in.ints(), ends_in.ints()
        ax = axes_in.ints() if axes_in is not None else None
        sp = steps_in.ints() if steps_in is not None else None
    else:
        st, en, ax, sp = list(starts), list(ends), (list(axes) if axes else None), None
    begin, end, step = slice_args(ctx, x, st, en, ax, sp)
    if any(b is not None and e is not None and s > 0 and b >= e for b, e, s in
           zip(begin, end, step)):
        raise ctx.fail("the slice is empty; MXNet 1.x has no empty tensors")
    cut = [a for a, (b, e, s) in enumerate(zip(begin, end, step))
           if b is not None or e is not None or s != 1]
    if len(begin) > 5 and all(step[a] == 1 for a in cut):
        # MXNet 1.9.1's slice runs on at most 5 dims ("ndim=6 too large"); slice_axis works
        # on any rank (it sees (before, axis, after))
        out = x.sym
        for a in cut:
            out = ctx.op("slice_axis", out, axis=a, begin=begin[a] or 0, end=end[a])
        return out
    return ctx.op("slice", x.sym, begin=begin, end=end, step=step)


# --- Gather family ----------------------------------------------------------------------------
@importer("Gather", since=1)
def gather(ctx: ImportContext, data: Value, indices: Value, *, axis: int = 0) -> object:
    axis = norm_axis(axis, data.rank, ctx)
    if indices.const is not None:
        idx = indices.const.astype(np.int64)
        dim = data.shape[axis] if data.shape is not None else None
        if isinstance(dim, int):
            idx = np.where(idx < 0, idx + dim, idx)
        if idx.ndim == 0:
            i = int(idx)
            s = ctx.op("slice_axis", data.sym, axis=axis, begin=i, end=i + 1)
            return ctx.op("squeeze", s, axis=(axis,)) if (data.rank or 0) > 1 else s
        return ctx.op("take", data.sym, ctx.new_param(f"{indices.name}_idx", idx),
                      axis=axis, mode="clip")
    return ctx.op("take", data.sym, indices.sym, axis=axis, mode="wrap")


def _grids(shape: tuple[int, ...], skip: int) -> list[np.ndarray]:
    """Index grids of every axis but ``skip``, for gather_nd."""
    grids = np.indices(shape, dtype=np.int64)
    return [g for i, g in enumerate(grids) if i != skip]


@importer("GatherElements", since=11)
def gather_elements(ctx: ImportContext, data: Value, indices: Value, *, axis: int = 0
                    ) -> object:
    """MXNet's ``gather_nd`` with index grids for the other axes: constants for a static
    index shape, else ``_contrib_arange_like`` of the indices (a dynamic batch)."""
    axis = norm_axis(axis, data.rank, ctx)
    shape = indices.static_shape
    dim = data.shape[axis] if data.shape is not None else None
    if not isinstance(dim, int):
        raise ctx.fail("GatherElements needs the size of the gathered axis")
    if shape is None:
        return _gather_elements_dynamic(ctx, data, indices, axis, dim)
    grids = _grids(shape, axis)
    if indices.const is not None:
        idx = np.where(indices.const < 0, indices.const + dim, indices.const).astype(np.int64)
        full = grids[:axis] + [idx] + grids[axis:]
        return ctx.op("gather_nd", data.sym, ctx.new_param(f"{indices.name}_nd",
                                                           np.stack(full)))
    idx = _wrap_negative(ctx, indices.sym, dim)
    parts = [ctx.new_param(f"{ctx.node_name}_grid{i}", g[None]) for i, g in enumerate(grids)]
    parts.insert(axis, ctx.op("expand_dims", idx, axis=0))
    return ctx.op("gather_nd", data.sym, ctx.op("Concat", *parts, dim=0))


def _wrap_negative(ctx: ImportContext, idx, dim: int):
    return ctx.op("broadcast_add", idx, ctx.op(
        "_mul_scalar", ctx.op("_lesser_scalar", idx, scalar=0), scalar=dim))


def _gather_elements_dynamic(ctx: ImportContext, data: Value, indices: Value, axis: int,
                             dim: int) -> object:
    rank = indices.rank
    if rank is None or rank != data.rank:
        raise ctx.fail("GatherElements needs the rank of the indices")
    parts = []
    for d in range(rank):
        if d == axis:
            part = _wrap_negative(ctx, indices.sym, dim)
        else:  # the position along axis d, broadcast over the index shape
            line = ctx.op("_contrib_arange_like", indices.sym, axis=d)
            line = reshape(ctx, line, tuple(-1 if k == d else 1 for k in range(rank)))
            part = ctx.op("broadcast_like", line, indices.sym)
        parts.append(ctx.op("expand_dims", part, axis=0))
    return ctx.op("gather_nd", data.sym, ctx.op("Concat", *parts, dim=0))


@importer("GatherND", since=11)
def gather_nd(ctx: ImportContext, data: Value, indices: Value, *, batch_dims: int = 0
              ) -> object:
    """ONNX keeps the index tuple on the last axis, MXNet on the first: transpose it.
    ``batch_dims`` become leading index rows of positions (constants of the static index
    shape)."""
    if indices.rank is None:
        raise ctx.fail("GatherND needs the rank of the indices")
    perm = (indices.rank - 1,) + tuple(range(indices.rank - 1))
    if batch_dims:
        shape = indices.static_shape
        if shape is None:
            raise ctx.fail("GatherND with batch_dims needs the static shape of the indices")
        grids = np.indices(shape[:-1], dtype=np.dtype(indices.dtype or np.int64))[:batch_dims]
        rows = ctx.op("transpose", indices.sym, axes=perm)
        full = ctx.op("Concat", ctx.new_param(f"{ctx.node_name}_batch", grids), rows, dim=0)
        return ctx.op("gather_nd", data.sym, full)
    if indices.const is not None:
        return ctx.op("gather_nd", data.sym, ctx.new_param(
            f"{indices.name}_nd", np.transpose(indices.const, perm)))
    return ctx.op("gather_nd", data.sym, ctx.op("transpose", indices.sym, axes=perm))


@importer("Tile", since=6)
def tile(ctx: ImportContext, x: Value, repeats: Value) -> object:
    """MXNet's ``tile``, one per two repeated axes: MXNet 1.9.1 tiles by broadcasting the data
    reshaped to ``(1, d0, 1, d1, ...)`` onto ``(r0, d0, r1, d1, ...)``, and its broadcast takes
    at most 5 dims once runs of repeated / kept axes merge -- three repeated axes already
    fail ("Too many reduction axes"). Tiles compose: tiling by ``r`` then by ``s`` is tiling
    by ``r * s``."""
    reps = [int(r) for r in repeats.ints()]
    moved = [i for i, r in enumerate(reps) if r != 1]
    if len(moved) <= 2:
        return ctx.op("tile", x.sym, reps=tuple(reps))
    out = x.sym
    for k in range(0, len(moved), 2):
        part = [r if i in moved[k:k + 2] else 1 for i, r in enumerate(reps)]
        out = ctx.op("tile", out, reps=tuple(part))
    return out


# --- Pad --------------------------------------------------------------------------------------
def _piece(ctx: ImportContext, s, axis: int, n: int, side: str, mode: str, value: float):
    first = side == "begin"
    if mode == "constant":
        one = ctx.op("slice_axis", s, axis=axis, begin=0, end=1)
        block = ctx.op("_plus_scalar", ctx.op("zeros_like", one), scalar=value)
        return ctx.op("repeat", block, repeats=n, axis=axis)
    if mode == "edge":
        one = ctx.op("slice_axis", s, axis=axis, begin=0 if first else -1, end=1 if first else None)
        return ctx.op("repeat", one, repeats=n, axis=axis)
    if mode == "reflect":
        part = ctx.op("slice_axis", s, axis=axis, begin=1 if first else -n - 1,
                      end=n + 1 if first else -1)
        return ctx.op("reverse", part, axis=(axis,))
    if mode == "wrap":
        return ctx.op("slice_axis", s, axis=axis, begin=-n if first else 0,
                      end=None if first else n)
    raise ctx.fail(f"pad mode {mode!r} is not supported")


def pad_sym(ctx: ImportContext, x: Value, begin: Sequence[int], end: Sequence[int],
            mode: str = "constant", value: float = 0.0):
    """``x`` padded per axis (negative pads crop). MXNet's ``Pad`` where it applies (4-D/5-D,
    spatial axes only, non-negative), else slices and concatenations along each axis."""
    rank = len(begin)
    shape = x.shape or (None,) * rank
    floating = x.dtype is not None and np.dtype(x.dtype).kind == "f"
    mx_ok = (floating and rank in (4, 5) and not any(begin[:2]) and not any(end[:2])
             and min(list(begin) + list(end)) >= 0 and mode in ("constant", "edge", "reflect"))
    if mx_ok and mode == "reflect":
        mx_ok = all(isinstance(shape[i], int) and max(begin[i], end[i]) < shape[i]
                    for i in range(2, rank))
    if mx_ok:
        widths = tuple(int(v) for pair in zip(begin, end) for v in pair)
        return ctx.op("Pad", x.sym, mode=mode, pad_width=widths, constant_value=value)
    s = x.sym
    for axis, (b, e) in enumerate(zip(begin, end)):
        if b < 0 or e < 0:
            s = ctx.op("slice_axis", s, axis=axis, begin=max(-b, 0), end=e if e < 0 else None)
        parts = []
        if b > 0:
            parts.append(_piece(ctx, s, axis, b, "begin", mode, value))
        parts.append(s)
        if e > 0:
            parts.append(_piece(ctx, s, axis, e, "end", mode, value))
        if len(parts) > 1:
            s = ctx.op("Concat", *parts, dim=axis)
    return s


@importer("Pad", since=1)
def pad(ctx: ImportContext, x: Value, pads_in: Value | None = None,
        value_in: Value | None = None, axes_in: Value | None = None, *,
        mode: str = "constant", pads: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None, value: float = 0.0) -> object:
    """Pads as an attribute before opset 11, inputs after (``axes`` since 18)."""
    rank = x.rank
    if rank is None:
        raise ctx.fail("Pad needs the input rank")
    p = pads_in.ints() if pads_in is not None else list(pads if pads is not None else paddings)
    fill = float(value_in.floats()[0]) if value_in is not None else float(value)
    axes = norm_axes(axes_in.ints(), rank, ctx) if axes_in is not None else list(range(rank))
    n = len(axes)
    begin, end = [0] * rank, [0] * rank
    for k, a in enumerate(axes):
        begin[a], end[a] = p[k], p[k + n]
    if x.const is not None and mode == "constant":
        return np.pad(x.const, list(zip(begin, end)), constant_values=fill) \
            if min(begin + end) >= 0 else pad_sym(ctx, x, begin, end, mode, fill)
    return pad_sym(ctx, x, begin, end, mode, fill)


# --- depth/space ------------------------------------------------------------------------------
@importer("DepthToSpace", since=1)
def depth_to_space(ctx: ImportContext, x: Value, *, blocksize: int = 1,
                   mode: str = "DCR") -> object:
    """MXNet's depth_to_space is ONNX's DCR mode; CRD first permutes the channels."""
    s = x.sym
    if mode == "CRD":
        channels = x.shape[1] if x.shape is not None else None
        if not isinstance(channels, int):
            raise ctx.fail("CRD mode needs the channel count")
        c = channels // (blocksize * blocksize)
        perm = np.arange(channels).reshape(c, blocksize * blocksize).T.reshape(-1)
        s = ctx.op("take", s, ctx.new_param(f"{ctx.node_name}_crd", perm.astype(np.int64)),
                   axis=1)
    return ctx.op("depth_to_space", s, block_size=blocksize)


@importer("SpaceToDepth", since=1)
def space_to_depth(ctx: ImportContext, x: Value, *, blocksize: int = 1,
                   mode: str = "DCR") -> object:
    """MXNet's space_to_depth orders the output channels as ONNX's DCR; CRD permutes them."""
    out = ctx.op("space_to_depth", x.sym, block_size=blocksize)
    if mode != "CRD":
        return out
    channels = x.shape[1] if x.shape is not None else None
    if not isinstance(channels, int):
        raise ctx.fail("CRD mode needs the channel count")
    bb = blocksize * blocksize
    perm = np.arange(channels * bb).reshape(bb, channels).T.reshape(-1)
    return ctx.op("take", out, ctx.new_param(f"{ctx.node_name}_crd", perm.astype(np.int64)),
                  axis=1)


# --- shapes and constants ---------------------------------------------------------------------
@importer("Shape", since=1)
def shape(ctx: ImportContext, x: Value, *, start: int = 0, end: int | None = None) -> object:
    s = ctx.op("shape_array", x.sym)
    if start == 0 and end is None:
        return s
    return ctx.op("slice_axis", s, axis=0, begin=start, end=end)


@importer("Size", since=1)
def size(ctx: ImportContext, x: Value) -> object:
    return ctx.op("size_array", x.sym)


@importer("ConstantOfShape", since=9)
def constant_of_shape(ctx: ImportContext, shape_in: Value, *, value=None) -> object:
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    out = ctx.static_out_shape()
    if out is not None:
        return np.full(out, fill[0], fill.dtype)
    dims = named_dims(ctx, shape_in)
    if dims is None or not dims:
        raise ctx.fail("the shape is computed at run time and not known statically")
    # named dims (a dynamic batch): a constant of size 1 there, broadcast at run time
    base = np.full([d if isinstance(d, int) else 1 for d in dims], fill[0], fill.dtype)
    named = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
    return broadcast_named(ctx, ctx.const(base, fill.dtype, "fill"), named)


@importer("EyeLike", since=9)
def eye_like(ctx: ImportContext, x: Value, *, dtype: int | None = None, k: int = 0) -> object:
    from onnx import helper

    shp = x.static_shape
    if shp is None or len(shp) != 2:
        raise ctx.fail("EyeLike needs a static 2-D input shape")
    dt = x.dtype if dtype is None else helper.tensor_dtype_to_np_dtype(dtype)
    return np.eye(shp[0], shp[1], k=k, dtype=dt)


@importer("Range", since=11)
def range_(ctx: ImportContext, start: Value, limit: Value, delta: Value) -> object:
    for v in (start, limit, delta):
        if v.const is None:
            ctx.needs_const.add(v.name)  # (the backend may specialize on them)
    raise ctx.fail("Range with bounds computed at run time has no static MXNet equivalent "
                   "(constant bounds are folded)")


@importer("OneHot", since=9)
def one_hot(ctx: ImportContext, indices: Value, depth: Value, values: Value, *,
            axis: int = -1) -> object:
    d = int(depth.floats()[0])
    off, on = values.floats()[:2]
    out_dtype = values.dtype
    from .._import_build import mx_dtype

    idx = indices.sym
    if indices.const is not None:
        idx = ctx.new_param(f"{indices.name}_w", np.where(indices.const < 0,
                                                          indices.const + d, indices.const))
    else:
        neg = ctx.op("_mul_scalar", ctx.op("_lesser_scalar", idx, scalar=0), scalar=d)
        idx = ctx.op("broadcast_add", idx, neg)
    out = ctx.op("one_hot", idx, depth=d, on_value=on, off_value=off,
                 dtype=mx_dtype(ctx, out_dtype))
    rank = (indices.rank or 0) + 1
    a = norm_axis(axis, rank, ctx)
    if a != rank - 1:
        perm = list(range(rank - 1))
        perm.insert(a, rank - 1)
        out = ctx.op("transpose", out, axes=tuple(perm))
    return out


@importer("Constant", since=1)
def constant(ctx: ImportContext, **attrs) -> object:
    raise ctx.fail("this Constant's value could not be read (sparse or string tensor)")


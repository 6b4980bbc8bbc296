"""ONNX export of the shape family (gluonport/ops/shape.py), and the dynamic-shape helpers the
indexing family shares.

The rule every handler here follows: a dim that varies with the exported model's dynamic axes
(``ctx.in_dynamic``) is never written into the graph as its example value. It is read at run time
from ``Shape(x)``; fixed dims stay constants, so a model without dynamic axes gets plain constant
shapes. Reshape-like ops (the output holds the input's elements) leave a single varying dim as
``-1`` and need no ``Shape`` node at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._reshape import eval_plan, legacy_plan, reshape_plan
from ._shape import norm_axis
from .lowering import LoweringContext, deliver, lowering
from .lowering.dims import INT64_MAX, INT64_MIN, Dims, Entry, build_shape, reshape_to
from .shape import (
    _diag_shape,
    _perm,
    _slice_like_axes,
    _slices,
    _swap_perm,
    _v2_bounds,
    _v2_count,
)


def _out(ctx: LoweringContext, k: int = 0) -> list[str]:
    return [ctx.outputs[k]]


# --- Reshape ---------------------------------------------------------------------------------
def _plan_entry(ctx: LoweringContext, dims: Dims, piece: tuple, value: int,
                infer_varies: bool) -> Entry:
    kind, dyn = piece[0], dims.dyn
    if kind == "const":
        return value
    if kind == "infer":
        return (lambda: ctx.ints([-1], "infer")) if infer_varies else value
    k = piece[1]
    if kind == "dim":
        return dims.entry(k)
    if kind == "prod":
        if not (dyn[k] or dyn[k + 1]):
            return value
        return lambda: ctx.make("Mul", [dims.get([k]), dims.get([k + 1])])
    if not dyn[k]:  # "div"
        return value
    return lambda: ctx.make("Div", [dims.get([k]), ctx.ints([piece[2]], "split")])


def _infer_varies(plan: list, dyn: tuple) -> bool:
    """The -1 dim is fixed when every varying input dim reappears once among the other dims."""
    seen = {k: 0 for k, d in enumerate(dyn) if d}
    for piece in plan:
        if piece[0] in ("dim", "div") and piece[1] in seen:
            seen[piece[1]] += 1
        elif piece[0] == "prod":
            for k in (piece[1], piece[1] + 1):
                if k in seen:
                    seen[k] += 1
    return any(n != 1 for n in seen.values())


def _reshape_onnx(ctx: LoweringContext) -> None:
    """MXNet's Reshape codes lowered to a shape built at run time from ``Shape(x)`` pieces
    where dims vary (0 and -2 copy dims, -3 multiplies two, -4 divides one), constants where
    they do not, and ONNX's ``-1`` for MXNet's ``-1``."""
    p, dims = ctx.params, Dims(ctx)
    if p.shape:
        plan = reshape_plan(dims.static, p.shape, p.reverse)
    else:
        plan = legacy_plan(p.target_shape, p.keep_highest)
    values = eval_plan(plan, dims.static)
    varies = _infer_varies(plan, dims.dyn)
    entries = [_plan_entry(ctx, dims, pc, v, varies) for pc, v in zip(plan, values)]
    reshape_to(ctx, ctx.inputs[0], entries, ctx.outputs[0])


def _reshape_like_onnx(ctx: LoweringContext) -> None:
    from .shape import _like_range

    p, lhs, rhs = ctx.params, Dims(ctx, 0), Dims(ctx, 1)
    lb, le = _like_range(len(lhs.static), p.lhs_begin, p.lhs_end, "lhs")
    rb, re = _like_range(len(rhs.static), p.rhs_begin, p.rhs_end, "rhs")
    entries = ([lhs.entry(k) for k in range(lb)] + [rhs.entry(k) for k in range(rb, re)]
               + [lhs.entry(k) for k in range(le, len(lhs.static))])
    reshape_to(ctx, ctx.inputs[0], entries, ctx.outputs[0])


# --- axis permutations -----------------------------------------------------------------------
def _transpose_onnx(ctx: LoweringContext) -> None:
    perm = _perm(ctx.params, len(ctx.shape)) if ctx.node.op.name == "transpose" else \
        _swap_perm(ctx.params, len(ctx.shape))
    ctx.make("Transpose", ctx.inputs[:1], outputs=_out(ctx), perm=list(perm))


def _expand_dims_onnx(ctx: LoweringContext) -> None:
    axis = ctx.params.axis
    axis = axis + len(ctx.shape) + 1 if axis < 0 else axis
    ctx.make("Unsqueeze", [ctx.inputs[0], ctx.ints([axis], "axes")], outputs=_out(ctx))


def _squeeze_onnx(ctx: LoweringContext) -> None:
    """Explicit axes when the example fixes them. With no ``axis`` and a varying dim, ONNX's
    axis-less Squeeze decides at run time, as MXNet does (a batch of 1 is squeezed too)."""
    p, dims = ctx.params, Dims(ctx)
    ndim = len(dims.static)
    if p.axis is None and any(dims.dyn):
        ctx.make("Squeeze", ctx.inputs[:1], outputs=_out(ctx))
        return
    if p.axis is None:
        axes = [k for k, d in enumerate(dims.static) if d == 1]
    else:
        axes = sorted(norm_axis(a, ndim) for a in p.axis)
    if len(axes) == ndim:  # MXNet keeps one dim when everything goes
        reshape_to(ctx, ctx.inputs[0], [1], ctx.outputs[0])
    elif not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=_out(ctx))
    else:
        ctx.make("Squeeze", [ctx.inputs[0], ctx.ints(axes, "axes")], outputs=_out(ctx))


def _flip_onnx(ctx: LoweringContext) -> None:
    """A Slice with step -1 per flipped axis (an axis given twice flips back, as in MXNet)."""
    axes = sorted(a for a in set(ctx.params.axis) if list(ctx.params.axis).count(a) % 2)
    if not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=_out(ctx))
        return
    n = len(axes)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([-1] * n, "starts"),
                       ctx.ints([INT64_MIN] * n, "ends"), ctx.ints(axes, "axes"),
                       ctx.ints([-1] * n, "steps")], outputs=_out(ctx))


# --- joining and splitting -------------------------------------------------------------------
def _concat_onnx(ctx: LoweringContext) -> None:
    axis = norm_axis(ctx.params.dim, len(ctx.shape), "dim")
    ctx.make("Concat", ctx.inputs, outputs=_out(ctx), axis=axis)


def _stack_onnx(ctx: LoweringContext) -> None:
    axis = norm_axis(ctx.params.axis, len(ctx.shape) + 1)
    axes = ctx.ints([axis], "axes")
    parts = [ctx.make("Unsqueeze", [x, axes]) for x in ctx.inputs]
    ctx.make("Concat", parts, outputs=_out(ctx), axis=axis)


def _split(ctx: LoweringContext, axis: int, n: int, sizes: str | None, squeeze: bool) -> None:
    """``Split`` into ``n`` outputs (equal parts when ``sizes`` is None), squeezing ``axis``."""
    if n == 1:
        parts = [ctx.inputs[0]]
    elif sizes is None and ctx.opset >= 18:  # Split-18 needs num_outputs or sizes
        parts = ctx.make("Split", ctx.inputs[:1], outputs=n, axis=axis, num_outputs=n)
    else:
        ins = ctx.inputs[:1] + ([sizes] if sizes else [])
        parts = ctx.make("Split", ins, outputs=n, axis=axis)
    parts = parts if isinstance(parts, list) else [parts]
    axes = ctx.ints([axis], "axes")
    for k, part in enumerate(parts):
        op, ins = ("Squeeze", [part, axes]) if squeeze else ("Identity", [part])
        ctx.make(op, ins, outputs=_out(ctx, k))


def _slice_channel_onnx(ctx: LoweringContext) -> None:
    p, dims = ctx.params, Dims(ctx)
    axis = norm_axis(p.axis, len(dims.static))
    n = p.num_outputs
    sizes = None if dims.dyn[axis] else ctx.ints([dims.static[axis] // n] * n, "split")
    _split(ctx, axis, n, sizes, p.squeeze_axis)


def _split_v2_onnx(ctx: LoweringContext) -> None:
    """Split sizes from the start indices, or from ``sections`` (the first ``size % n`` parts
    one longer); computed at run time when the split axis varies."""
    p, dims = ctx.params, Dims(ctx)
    axis, bounds = _v2_bounds(p, dims.static)
    n = _v2_count(p)
    if not dims.dyn[axis]:
        sizes = ctx.ints([e - b for b, e in bounds], "split")
    elif p.sections > 0:
        d = dims.get([axis])
        small = ctx.make("Div", [d, ctx.ints([n], "n")])
        extra = ctx.make("Mod", [d, ctx.ints([n], "n")])
        longer = ctx.make("Less", [ctx.ints(range(n), "part"), extra])
        sizes = ctx.make("Add", [small, ctx.cast_to(longer, np.int64)])
    else:
        starts = list(p.indices)
        rest = ctx.make("Sub", [dims.get([axis]), ctx.ints([starts[-1]], "last")])
        head = [b - a for a, b in zip(starts, starts[1:])]
        sizes = ctx.make("Concat", [ctx.ints(head, "split"), rest], axis=0) if head else rest
    _split(ctx, axis, n, sizes, p.squeeze_axis)


# --- slicing ---------------------------------------------------------------------------------
def _slice(ctx: LoweringContext, x: str, rows: list[tuple[int, int, int, int]], out: str) -> None:
    """``Slice`` with rows of (axis, start, end, step); Identity when there are none."""
    if not rows:
        ctx.make("Identity", [x], outputs=[out])
        return
    cols = list(zip(*rows))
    ins = [x] + [ctx.ints(c, h) for c, h in zip(cols[1:3], ("starts", "ends"))]
    ins += [ctx.ints(cols[0], "axes"), ctx.ints(cols[3], "steps")]
    ctx.make("Slice", ins, outputs=[out])


def _slice_onnx(ctx: LoweringContext) -> None:
    """MXNet's None entries become the ends of the axis: INT64_MAX/INT64_MIN, as ONNX asks,
    so a varying axis needs no ``Shape``."""
    rows = []
    for axis, sl in enumerate(_slices(ctx.params, ctx.shape)):
        step = 1 if sl.step is None else sl.step
        if sl.start is None and sl.stop is None and step == 1:
            continue
        start = sl.start if sl.start is not None else (0 if step > 0 else INT64_MAX)
        end = sl.stop if sl.stop is not None else (INT64_MAX if step > 0 else INT64_MIN)
        rows.append((axis, start, end, step))
    _slice(ctx, ctx.inputs[0], rows, ctx.outputs[0])


def _slice_axis_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    axis = norm_axis(p.axis, len(ctx.shape))
    end = INT64_MAX if p.end is None else p.end
    _slice(ctx, ctx.inputs[0], [(axis, p.begin, end, 1)], ctx.outputs[0])


def _slice_like_onnx(ctx: LoweringContext) -> None:
    """Ends read from ``Shape(shape_like)`` when its dims vary."""
    axes = _slice_like_axes(ctx.params, ctx.in_shapes[0], ctx.in_shapes[1])
    if not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=_out(ctx))
        return
    ends = Dims(ctx, 1).get(axes)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([0] * len(axes), "starts"), ends,
                       ctx.ints(axes, "axes")], outputs=_out(ctx))


# --- repetition and broadcasting -------------------------------------------------------------
def _tile_onnx(ctx: LoweringContext) -> None:
    reps, ndim = list(ctx.params.reps), len(ctx.shape)
    x = ctx.inputs[0]
    if len(reps) > ndim:  # numpy.tile prepends dims to the input
        x = ctx.make("Unsqueeze", [x, ctx.ints(range(len(reps) - ndim), "axes")])
    reps = [1] * (ndim - len(reps)) + reps
    if not reps:
        ctx.make("Identity", [x], outputs=_out(ctx))
        return
    ctx.make("Tile", [x, ctx.ints(reps, "reps")], outputs=_out(ctx))


def _repeat_onnx(ctx: LoweringContext) -> None:
    """Each element ``r`` times: Unsqueeze after the axis, Tile that new axis, merge the two."""
    p, dims = ctx.params, Dims(ctx)
    x, r = ctx.inputs[0], p.repeats
    flat = p.axis is None or r == 0
    if flat:
        x = reshape_to(ctx, x, [-1])
    if r == 0:  # MXNet returns an empty 1-d array
        _slice(ctx, x, [(0, 0, 0, 1)], ctx.outputs[0])
        return
    ndim = 1 if flat else len(dims.static)
    axis = 0 if flat else norm_axis(p.axis, ndim)
    y = ctx.make("Unsqueeze", [x, ctx.ints([axis + 1], "axes")])
    y = ctx.make("Tile", [y, ctx.ints([1] * (axis + 1) + [r] + [1] * (ndim - axis - 1), "reps")])
    if flat:
        entries: list[Entry] = [-1]
    else:
        entries = [dims.entry(k) for k in range(ndim)]
        d = entries[axis]
        entries[axis] = (lambda: ctx.make("Mul", [dims.get([axis]), ctx.ints([r], "r")])) \
            if callable(d) else d * r
    reshape_to(ctx, y, entries, ctx.outputs[0])


def _expand(ctx: LoweringContext, entries: Sequence[Entry]) -> None:
    ctx.make("Expand", [ctx.inputs[0], build_shape(ctx, entries)], outputs=_out(ctx))


def _broadcast_to_onnx(ctx: LoweringContext) -> None:
    """MXNet's 0 (keep the input dim) is Expand's 1, which broadcasting leaves as the input's
    dim at run time."""
    _expand(ctx, [t or 1 for t in ctx.params.shape])


def _broadcast_like_onnx(ctx: LoweringContext) -> None:
    p, rhs = ctx.params, Dims(ctx, 1)
    if p.lhs_axes is None or p.rhs_axes is None:
        ctx.make("Expand", [ctx.inputs[0], rhs.shape()], outputs=_out(ctx))
        return
    entries: list[Entry] = [1] * len(ctx.shape)
    for a, b in zip(p.lhs_axes, p.rhs_axes):
        entries[norm_axis(a, len(ctx.shape))] = rhs.entry(norm_axis(b, len(rhs.static)))
    _expand(ctx, entries)


def _broadcast_axis_onnx(ctx: LoweringContext) -> None:
    entries = [1] * len(ctx.shape)
    for a, n in zip(ctx.params.axis, ctx.params.size):
        entries[a] = n
    _expand(ctx, entries)


# --- layout ----------------------------------------------------------------------------------
# onnxruntime implements DepthToSpace/SpaceToDepth for these dtypes; others take the
# Reshape/Transpose form of the same permutation (exact for every dtype)
_SPACE_NATIVE = ("float16", "float32", "float64")


def _space_onnx(to_space: bool) -> Callable:
    """MXNet's depth_to_space is ONNX's DepthToSpace in DCR mode: the depth splits as
    (block_row, block_col, channel); space_to_depth is its inverse."""
    op_type = "DepthToSpace" if to_space else "SpaceToDepth"

    def handler(ctx: LoweringContext) -> None:
        b = ctx.params.block_size
        if np.dtype(ctx.dtype).name in _SPACE_NATIVE:
            mode = "DCR" if to_space else None
            ctx.make(op_type, ctx.inputs[:1], outputs=_out(ctx), blocksize=b, mode=mode)
            return
        dims = Dims(ctx)
        if any(dims.dyn[1:]):
            raise ctx.fail(f"{op_type} of a {np.dtype(ctx.dtype).name} input with dynamic "
                           "C/H/W has no ONNX lowering here; export with them fixed")
        n, (c, h, w) = dims.entry(0), dims.static[1:]
        if to_space:
            mid, perm, out = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2], \
                [n, c // (b * b), h * b, w * b]
        else:
            mid, perm, out = [n, c, h // b, b, w // b, b], [0, 3, 5, 1, 2, 4], \
                [n, c * b * b, h // b, w // b]
        y = ctx.make("Transpose", [reshape_to(ctx, ctx.inputs[0], mid)], perm=perm)
        reshape_to(ctx, y, out, ctx.outputs[0])

    handler.__name__ = f"to_{op_type}"
    return handler


# --- shape queries and generators ------------------------------------------------------------
def _shape_array_onnx(ctx: LoweringContext) -> None:
    ctx.make("Shape", ctx.inputs[:1], outputs=_out(ctx))


def _size_array_onnx(ctx: LoweringContext) -> None:
    size = ctx.make("Size", ctx.inputs[:1])
    ctx.make("Reshape", [size, ctx.ints([1], "one")], outputs=_out(ctx))


def _arange_like_onnx(ctx: LoweringContext) -> None:
    """``start + (i // repeat) * step`` over a run-time ``Range``; float32/64 compute in their
    dtype, other dtypes in int64 with start and step truncated (as MXNet's kernel)."""
    p, dims, dtype = ctx.params, Dims(ctx), np.dtype(ctx.dtype)
    if p.axis is None:
        n = ctx.make("Size", ctx.inputs[:1]) if any(dims.dyn) else \
            ctx.const(np.asarray(int(np.prod(dims.static)), np.int64), "n")
    else:
        n = dims.scalar(norm_axis(p.axis, len(dims.static)))
    zero, one = (ctx.const(np.asarray(v, np.int64), "i") for v in (0, 1))
    k = ctx.make("Range", [zero, n, one])
    if p.repeat != 1:
        k = ctx.make("Div", [k, ctx.const(np.asarray(p.repeat, np.int64), "repeat")])
    work = dtype if dtype in (np.float32, np.float64) else np.dtype(np.int64)
    cast = float if work.kind == "f" else int
    y = ctx.make("Mul", [ctx.cast_to(k, work) if work != np.int64 else k,
                         ctx.const(np.asarray(cast(p.step), work), "step")])
    y = ctx.make("Add", [y, ctx.const(np.asarray(cast(p.start), work), "start")])
    if work != dtype:
        y = ctx.cast_to(y, dtype)
    if p.axis is None and len(dims.static) != 1:
        reshape_to(ctx, y, [dims.entry(a) for a in range(len(dims.static))], ctx.outputs[0])
    else:
        deliver(ctx, y)


def _diag_onnx(ctx: LoweringContext) -> None:
    """1-d: Gather from ``[x, 0]`` at a fixed index map; n-d: move ``axis1``/``axis2`` last,
    flatten them, Gather the diagonal's flat positions. The diagonal's dims must be fixed."""
    p, dims = ctx.params, Dims(ctx)
    ndim = len(dims.static)
    if ndim == 1:
        return _diag_matrix(ctx, dims, p.k)
    a1, a2 = norm_axis(p.axis1, ndim), norm_axis(p.axis2, ndim)
    if dims.dyn[a1] or dims.dyn[a2]:
        raise ctx.fail("diag over a dynamic axis has no ONNX lowering; export with those "
                       "axes fixed")
    h, w = dims.static[a1], dims.static[a2]
    n = _diag_shape(p, dims.static)[-1]
    rows = np.arange(n) + max(-p.k, 0)
    flat = rows * w + rows + p.k
    rest = [a for a in range(ndim) if a not in (a1, a2)]
    x = ctx.make("Transpose", ctx.inputs[:1], perm=rest + [a1, a2])
    x = reshape_to(ctx, x, [dims.entry(a) for a in rest] + [h * w])
    ctx.make("Gather", [x, ctx.ints(flat, "diag")], outputs=_out(ctx), axis=len(rest))


def _diag_matrix(ctx: LoweringContext, dims: Dims, k: int) -> None:
    if dims.dyn[0]:
        raise ctx.fail("diag of a dynamic-length vector has no ONNX lowering")
    n = dims.static[0]
    m = n + abs(k)
    index = np.full((m, m), n, np.int64)  # position n of [x, 0] is the zero
    i = np.arange(n)
    index[i + max(-k, 0), i + max(k, 0)] = i
    zero = ctx.const(np.zeros(1, ctx.dtype), "zero")
    padded = ctx.make("Concat", [ctx.inputs[0], zero], axis=0)
    ctx.make("Gather", [padded, ctx.const(index, "diag")], outputs=_out(ctx), axis=0)


def _flatten_onnx(ctx: LoweringContext) -> None:
    ctx.make("Flatten", ctx.inputs[:1], outputs=_out(ctx), axis=1)


for _name, _handler in (
            ("Reshape", _reshape_onnx), ("reshape_like", _reshape_like_onnx),
            ("Flatten", _flatten_onnx), ("transpose", _transpose_onnx),
            ("SwapAxis", _transpose_onnx), ("expand_dims", _expand_dims_onnx),
            ("squeeze", _squeeze_onnx), ("reverse", _flip_onnx), ("Concat", _concat_onnx),
            ("stack", _stack_onnx), ("SliceChannel", _slice_channel_onnx),
            ("_split_v2", _split_v2_onnx), ("slice", _slice_onnx),
            ("slice_axis", _slice_axis_onnx), ("slice_like", _slice_like_onnx),
            ("tile", _tile_onnx), ("repeat", _repeat_onnx),
            ("broadcast_to", _broadcast_to_onnx), ("broadcast_like", _broadcast_like_onnx),
            ("broadcast_axis", _broadcast_axis_onnx),
            ("depth_to_space", _space_onnx(True)), ("space_to_depth", _space_onnx(False)),
            ("shape_array", _shape_array_onnx), ("size_array", _size_array_onnx),
            ("_contrib_arange_like", _arange_like_onnx), ("diag", _diag_onnx)):
    lowering(_name)(_handler)

"""Repetition and broadcasting: tile, repeat, broadcast_to, broadcast_like, broadcast_axis,
with their ONNX lowerings (``broadcast_axis`` refuses negative axes, as MXNet does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..._core.attr_fields import Int, Optional, Shape
from ..infer import fmt, known, norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import Dims, Entry, build_shape, reshape_to
from ..registry import define
from .reshape import (
    prod,
)
from .rules import LIKE_TYPES, check, grad_attrs, one_output, out_list
from .slicing import slice_rows

__all__ = []


# --- repetition and broadcasting -------------------------------------------------------------
def _tile_shape(p, s):
    reps = tuple(p.reps)
    check(all(r > 0 for r in reps), f"reps={reps} must be positive (MXNet 1.x legacy shapes "
                                     "cannot hold a zero-size result)")
    n = max(len(s), len(reps))
    s2 = (1,) * (n - len(s)) + s
    r2 = (1,) * (n - len(reps)) + reps
    return tuple(a * b for a, b in zip(s2, r2))


def _tile(p, x):
    _tile_shape(p, x.shape)
    return np.tile(x, tuple(p.reps)) if p.reps else x.copy()


# --- gradients (MXNet's FGradient): one backward kernel each (shape/grad.py) -------------------
def _grad_tile(F, p, inputs, outputs, ograds):
    return [F._internal._backward_tile(ograds[0], inputs[0], **grad_attrs(p))]


def _grad_repeat(F, p, inputs, outputs, ograds):
    return [F._internal._backward_repeat(ograds[0], inputs[0], **grad_attrs(p))]


def _grad_broadcast(F, p, inputs, outputs, ograds):
    """``_broadcast_backward``: the output gradient summed to the data's shape."""
    return [F._internal._broadcast_backward(ograds[0], inputs[0])] + [None] * (len(inputs) - 1)


define("tile", _tile, one_output(_tile_shape), params={"reps": Shape()}, sized_by_attrs=True,
    doc="Repeat the whole array ``reps`` times per dim (numpy.tile).", name_errors=True,
    gradient=_grad_tile)


def _repeat_axis(p, ndim: int) -> int | None:
    check(p.repeats >= 0, f"repeats={p.repeats} cannot be negative")
    return None if p.axis is None else norm_axis(p.axis, ndim)


def _repeat_shape(p, s):
    axis = _repeat_axis(p, len(s))
    if p.repeats == 0:
        return (0,)
    if axis is None:
        return (prod(s) * p.repeats,) if known(s) else (0,)
    return s[:axis] + (s[axis] * p.repeats,) + s[axis + 1:]


def _repeat(p, x):
    axis = _repeat_axis(p, x.ndim)
    if p.repeats == 0:  # MXNet returns an empty 1-d array whatever the axis
        return np.zeros((0,), x.dtype)
    return np.repeat(x, p.repeats, axis=axis)


define("repeat", _repeat, one_output(_repeat_shape),
       params={"repeats": Int(), "axis": Optional(Int())}, sized_by_attrs=True,
    doc="Repeat each element ``repeats`` times along ``axis`` (None: of the flattened array).",
    name_errors=True, gradient=_grad_repeat)


def _broadcast_to_shape(p, s):
    target = tuple(p.shape)
    check(len(s) == len(target), f"cannot broadcast {fmt(s)} to {fmt(target)}")
    out = []
    for d, t in zip(s, target):
        check(t == 0 or d in (0, 1, t), f"cannot broadcast {fmt(s)} to {fmt(target)}")
        out.append(t or d)
    return tuple(out)


def _broadcast(shape_fn: Callable) -> Callable:
    def run(p, x, *like):
        shape = shape_fn(p, x.shape, *(y.shape for y in like))
        return np.broadcast_to(x, shape).copy()

    return run


define("broadcast_to", _broadcast(_broadcast_to_shape), one_output(_broadcast_to_shape),
    params={"shape": Shape(())}, sized_by_attrs=True,
    doc="Broadcast size-1 dims to ``shape`` (a 0 keeps the input's dim).", name_errors=True,
    lists_input_names=False, gradient=_grad_broadcast)


def _broadcast_like_shape(p, ls: tuple, rs: tuple) -> tuple:
    if p.lhs_axes is None or p.rhs_axes is None:
        check(len(ls) == len(rs), f"cannot broadcast {fmt(ls)} to {fmt(rs)}")
        for a, b in zip(ls, rs):
            check(not (a and b) or a in (1, b), f"cannot broadcast {fmt(ls)} to {fmt(rs)}")
        return tuple(b or a for a, b in zip(ls, rs))
    la, ra = tuple(p.lhs_axes), tuple(p.rhs_axes)
    check(len(la) == len(ra) and la, f"lhs_axes={la} and rhs_axes={ra} must be non-empty and "
                                     "of equal length")
    out = list(ls)
    for a, b in zip(la, ra):
        src, dst = norm_axis(a, len(ls), "lhs_axes"), norm_axis(b, len(rs), "rhs_axes")
        check(ls[src] in (0, 1), f"lhs axis {a} of {fmt(ls)} has size {ls[src]}, not 1")
        out[src] = rs[dst]
    return tuple(out)


def _broadcast_like_rule(p, ins):
    if ins[0] is None or ins[1] is None:
        return ins, [None]
    return ins, [_broadcast_like_shape(p, tuple(ins[0]), tuple(ins[1]))]


define("broadcast_like", _broadcast(_broadcast_like_shape), _broadcast_like_rule,
    inputs=("lhs", "rhs"), infer_type=LIKE_TYPES,
    params={"lhs_axes": Optional(Shape()), "rhs_axes": Optional(Shape())},
    doc="Broadcast ``lhs`` to ``rhs``'s shape, or only ``lhs_axes`` to the sizes of "
        "``rhs_axes``.", name_errors=True, gradient=_grad_broadcast)


def _broadcast_axis_shape(p, s):
    axes, sizes = tuple(p.axis), tuple(p.size)
    check(len(axes) == len(sizes), f"axis={axes} and size={sizes} must have the same length")
    out = list(s)
    for a, n in zip(axes, sizes):
        check(0 <= a < len(s), f"axis {a} must be in [0, {len(s)}) (MXNet takes no negative "
                               "axes)")
        check(s[a] in (0, 1), f"axis {a} of {fmt(s)} has size {s[a]}, not 1")
        out[a] = n
    return tuple(out)


define("broadcast_axis", _broadcast(_broadcast_axis_shape), one_output(_broadcast_axis_shape),
    params={"axis": Shape(()), "size": Shape(())}, aliases=("broadcast_axes",),
    sized_by_attrs=True,
    doc="Broadcast the size-1 dims ``axis`` to ``size``.", name_errors=True,
    lists_input_names=False, gradient=_grad_broadcast)




# --- repetition and broadcasting -------------------------------------------------------------
def _tile_onnx(ctx: LoweringContext) -> None:
    reps, ndim = list(ctx.params.reps), len(ctx.shape)
    x = ctx.inputs[0]
    if len(reps) > ndim:  # numpy.tile prepends dims to the input
        x = ctx.make("Unsqueeze", [x, ctx.ints(range(len(reps) - ndim), "axes")])
    reps = [1] * (ndim - len(reps)) + reps
    if not reps:
        ctx.make("Identity", [x], outputs=out_list(ctx))
        return
    ctx.make("Tile", [x, ctx.ints(reps, "reps")], outputs=out_list(ctx))


def _repeat_onnx(ctx: LoweringContext) -> None:
    """Each element ``r`` times: Unsqueeze after the axis, Tile that new axis, merge the two."""
    p, dims = ctx.params, Dims(ctx)
    x, r = ctx.inputs[0], p.repeats
    flat = p.axis is None or r == 0
    if flat:
        x = reshape_to(ctx, x, [-1])
    if r == 0:  # MXNet returns an empty 1-d array
        slice_rows(ctx, x, [(0, 0, 0, 1)], ctx.outputs[0])
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
    ctx.make("Expand", [ctx.inputs[0], build_shape(ctx, entries)], outputs=out_list(ctx))


def _broadcast_to_onnx(ctx: LoweringContext) -> None:
    """MXNet's 0 (keep the input dim) is Expand's 1, which broadcasting leaves as the input's
    dim at run time."""
    _expand(ctx, [t or 1 for t in ctx.params.shape])


def _broadcast_like_onnx(ctx: LoweringContext) -> None:
    p, rhs = ctx.params, Dims(ctx, 1)
    if p.lhs_axes is None or p.rhs_axes is None:
        ctx.make("Expand", [ctx.inputs[0], rhs.shape()], outputs=out_list(ctx))
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




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("tile")(_tile_onnx)
lowering("repeat")(_repeat_onnx)
lowering("broadcast_to")(_broadcast_to_onnx)
lowering("broadcast_like")(_broadcast_like_onnx)
lowering("broadcast_axis")(_broadcast_axis_onnx)

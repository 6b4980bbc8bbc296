"""Slicing: slice, slice_axis, slice_like, with their ONNX lowerings.
"""

from __future__ import annotations

from ..._core.attr_fields import REQUIRED, Int, Optional, Shape
from ..infer import fmt, norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import INT64_MAX, INT64_MIN, Dims
from ..registry import define
from .rules import LIKE_TYPES, check, grad_attrs, one_output, out_list

__all__ = ["slice_rows"]


# --- slicing ---------------------------------------------------------------------------------
def _slices(p, s: tuple) -> list[slice]:
    begin, end, step = tuple(p.begin), tuple(p.end), tuple(p.step)
    if all(st is None for st in step):  # step=None ("None" in files): every step 1, as MXNet
        step = ()
    check(len(begin) <= len(s), f"begin={begin} has more axes than the {len(s)}-d input")
    check(len(begin) == len(end), f"begin={begin} and end={end} must have the same length")
    check(not step or len(step) == len(begin), f"step={step} and begin={begin} must have the "
                                               "same length")
    out = []
    for i, (b, e) in enumerate(zip(begin, end)):
        st = step[i] if step else None
        check(st != 0, f"step[{i}] cannot be 0")
        out.append(slice(b, e, st))
    return out


def _slice_shape(p, s):
    dims = list(s)
    for i, sl in enumerate(_slices(p, s)):
        dims[i] = len(range(*sl.indices(s[i]))) if s[i] else 0
    return tuple(dims)


_SLICE_PARAMS = {"begin": Shape(allow_none=True), "end": Shape(allow_none=True),
                 "step": Shape((), allow_none=True)}
# --- gradients (MXNet's FGradient): one _backward_* kernel each (shape/grad.py) ---------------
def _grad_slice(F, p, inputs, outputs, ograds):
    return [F._internal._backward_slice(ograds[0], inputs[0], **grad_attrs(p))]


def _grad_slice_axis(F, p, inputs, outputs, ograds):
    return [F._internal._backward_slice_axis(ograds[0], inputs[0], axis=p.axis, begin=p.begin,
                                             end=p.end)]


def _grad_slice_like(F, p, inputs, outputs, ograds):
    return [F._internal._backward_slice_like(ograds[0], *inputs, **grad_attrs(p)), None]


define("slice", lambda p, x: x[tuple(_slices(p, x.shape))].copy(), one_output(_slice_shape),
    params=_SLICE_PARAMS, aliases=("crop", "_sparse_slice"),
    doc="Slice ``data[begin:end:step]`` per axis (None entries take Python's defaults; "
        "negative steps allowed); axes past ``len(begin)`` are kept whole.", name_errors=True,
        lists_input_names=False, gradient=_grad_slice)


def _axis_range(p, s: tuple) -> tuple[int, int, int]:
    axis = norm_axis(p.axis, len(s))
    size = s[axis]
    if not size:
        return axis, 0, -1
    b = p.begin + size if p.begin < 0 else p.begin
    e = size if p.end is None else (p.end + size if p.end < 0 else p.end)
    check(e <= size, f"end={p.end} is past axis {axis} of size {size}")
    check(b < e, f"begin={p.begin} must be before end={p.end} on axis {axis} of size {size}")
    check(b >= 0 and e >= 0, f"invalid begin={p.begin}, end={p.end} for size {size}")
    return axis, b, e


def _slice_axis_shape(p, s):
    axis, b, e = _axis_range(p, s)
    return s[:axis] + (max(e - b, 0),) + s[axis + 1:]


def _slice_axis(p, x):
    axis, b, e = _axis_range(p, x.shape)
    return x[(slice(None),) * axis + (slice(b, e),)].copy()


define("slice_axis", _slice_axis, one_output(_slice_axis_shape),
    params={"axis": Int(), "begin": Int(), "end": Optional(Int(), default=REQUIRED)},
    doc="Slice ``[begin, end)`` along one ``axis`` (negative indices count from the end, "
        "``end=None`` is the end); MXNet refuses an empty result.", name_errors=True,
        lists_input_names=False, gradient=_grad_slice_axis)


def _slice_like_axes(p, ls: tuple, rs: tuple) -> list[int]:
    if not p.axes:
        check(len(ls) == len(rs), f"slice_like on all axes needs equal ranks: {fmt(ls)} vs "
                                  f"{fmt(rs)}")
        return list(range(len(ls)))
    axes = []
    for a in p.axes:
        ax = a + len(ls) if a < 0 else a
        check(0 <= ax < len(ls) and ax < len(rs),
              f"axis {a} is out of range for shapes {fmt(ls)} and {fmt(rs)}")
        axes.append(ax)
    return axes


def _slice_like_shape(p, ls: tuple, rs: tuple) -> tuple:
    out = list(ls)
    for ax in _slice_like_axes(p, ls, rs):
        check(not (ls[ax] and rs[ax]) or ls[ax] >= rs[ax],
              f"axis {ax}: size {rs[ax]} of shape_like {fmt(rs)} exceeds {fmt(ls)}")
        out[ax] = rs[ax]
    return tuple(out)


def _slice_like(p, x, like):
    shape = _slice_like_shape(p, x.shape, like.shape)
    return x[tuple(slice(0, d) for d in shape)].copy()


define("slice_like", _slice_like,
    lambda p, ins: (ins, [None if None in ins[:2] else
                          _slice_like_shape(p, tuple(ins[0]), tuple(ins[1]))]),
    inputs=("data", "shape_like"), params={"axes": Shape(())}, infer_type=LIKE_TYPES,
    doc="Slice ``data[0:n]`` on ``axes`` (all axes when empty) to the sizes of "
        "``shape_like``.", name_errors=True, gradient=_grad_slice_like)




# --- slicing ---------------------------------------------------------------------------------
def slice_rows(ctx: LoweringContext, x: str, rows: list[tuple[int, int, int, int]],
               out: str) -> None:
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
    slice_rows(ctx, ctx.inputs[0], rows, ctx.outputs[0])


def _slice_axis_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    axis = norm_axis(p.axis, len(ctx.shape))
    end = INT64_MAX if p.end is None else p.end
    slice_rows(ctx, ctx.inputs[0], [(axis, p.begin, end, 1)], ctx.outputs[0])


def _slice_like_onnx(ctx: LoweringContext) -> None:
    """Ends read from ``Shape(shape_like)`` when its dims vary."""
    axes = _slice_like_axes(ctx.params, ctx.in_shapes[0], ctx.in_shapes[1])
    if not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=out_list(ctx))
        return
    ends = Dims(ctx, 1).get(axes)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([0] * len(axes), "starts"), ends,
                       ctx.ints(axes, "axes")], outputs=out_list(ctx))




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("slice")(_slice_onnx)
lowering("slice_axis")(_slice_axis_onnx)
lowering("slice_like")(_slice_like_onnx)

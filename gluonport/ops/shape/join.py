"""Joining and splitting: Concat, stack, SliceChannel (split), _split_v2, with their ONNX
lowerings.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Int, Shape
from ...errors import ShapeError
from ..infer import fmt, merge, norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import Dims
from ..registry import define
from .rules import check, out_list

__all__ = []


# --- joining and splitting -------------------------------------------------------------------
def _concat_rule(p, ins):
    ndims = {len(s) for s in ins if s is not None}
    if not ndims:
        return ins, [None]
    check(len(ndims) == 1, f"inputs have different ranks: {[fmt(s) for s in ins]}")
    ndim = ndims.pop()
    check(ndim > 0, "zero-dimensional arrays cannot be concatenated")
    axis = norm_axis(p.dim, ndim, "dim")
    common: tuple | None = None
    for s in ins:
        if s is not None:
            try:
                common = merge(common, s[:axis] + (0,) + s[axis + 1:])
            except ShapeError:
                raise ShapeError(f"inputs must agree on every dim but dim {axis}: "
                                 + ", ".join(fmt(x) for x in ins)) from None
    new_ins = [merge(s, common) for s in ins]
    sizes = [s[axis] for s in new_ins]
    out = common[:axis] + (sum(sizes) if all(sizes) else 0,) + common[axis + 1:]
    return new_ins, [out]


def _concat(p, *xs):
    _concat_rule(p, [x.shape for x in xs])
    return np.concatenate(xs, axis=norm_axis(p.dim, xs[0].ndim, "dim"))


# --- gradients (MXNet's FGradient) ------------------------------------------------------------
def _outs(y, n: int) -> list:
    """The ``n`` outputs of a call (one NDArray/Symbol when ``n`` is 1)."""
    return [y] if n == 1 else [y[i] for i in range(n)]


def _grad_concat(F, p, inputs, outputs, ograds):
    """``_backward_Concat``: the output gradient split into the inputs' sizes (shape/grad.py)."""
    back = F._internal._backward_Concat(ograds[0], *inputs, num_args=len(inputs), dim=p.dim)
    return _outs(back, len(inputs))


def _grad_stack(F, p, inputs, outputs, ograds):
    back = F.split(ograds[0], axis=p.axis, num_outputs=len(inputs), squeeze_axis=True)
    return _outs(back, len(inputs))


def _grad_split(F, p, inputs, outputs, ograds):
    """The output gradients joined back along ``axis`` (a squeezed axis restored first)."""
    parts = [F.expand_dims(g, axis=p.axis) if p.squeeze_axis else g for g in ograds]
    return [F.concat(*parts, dim=p.axis, num_args=len(parts))]


define("Concat", _concat, _concat_rule, variadic="num_args", aliases=("concat", "_sparse_concat"),
    params={"num_args": Int(), "dim": Int(1)},
    doc="Join the inputs along ``dim``; every other dim must agree.", name_errors=True,
    lists_output_names=True, gradient=_grad_concat)


def _stack_rule(p, ins):
    common = None
    for i, s in enumerate(ins):
        common = merge(common, s, f"input {i}: ")
    if common is None:
        return ins, [None]
    axis = norm_axis(p.axis, len(common) + 1)
    return [common] * len(ins), [common[:axis] + (len(ins),) + common[axis:]]


def _stack(p, *xs):
    _stack_rule(p, [x.shape for x in xs])
    return np.stack(xs, axis=norm_axis(p.axis, xs[0].ndim + 1))


define("stack", _stack, _stack_rule, variadic="num_args",
    params={"axis": Int(0), "num_args": Int()},
    doc="Join same-shape inputs along a new ``axis``.", name_errors=True, gradient=_grad_stack)


def _sections(p, s: tuple) -> tuple[int, list[tuple[int, int]]]:
    """(axis, [(start, end) per output]) for SliceChannel; end-start is 0 when unknown."""
    n = p.num_outputs
    check(n >= 1, f"num_outputs={n} must be >= 1")
    axis = norm_axis(p.axis, len(s))
    d = s[axis]
    if d:
        check(d % n == 0, f"cannot split axis {axis} of size {d} into {n} equal parts "
                          f"(input {fmt(s)})")
        check(not p.squeeze_axis or d == n,
              f"squeeze_axis=True needs axis {axis} of size num_outputs={n}, got {d}")
    step = d // n
    return axis, [(i * step, (i + 1) * step) for i in range(n)]


def _split_outputs(p, s: tuple, axis: int, bounds) -> list[tuple]:
    outs = []
    for b, e in bounds:
        if p.squeeze_axis:
            outs.append(s[:axis] + s[axis + 1:])
        else:
            outs.append(s[:axis] + (e - b if e >= 0 else 0,) + s[axis + 1:])
    return outs


def _slice_channel_rule(p, ins):
    if ins[0] is None:
        return ins, [None] * p.num_outputs
    s = tuple(ins[0])
    axis, bounds = _sections(p, s)
    return ins, _split_outputs(p, s, axis, bounds)


def _take_parts(x, axis: int, bounds, squeeze: bool) -> list[np.ndarray]:
    lead = (slice(None),) * axis
    outs = []
    for b, e in bounds:
        part = x[lead + (slice(b, e),)]
        outs.append((part.squeeze(axis) if squeeze else part).copy())
    return outs


def _slice_channel(p, x):
    axis, bounds = _sections(p, x.shape)
    return _take_parts(x, axis, bounds, p.squeeze_axis)


define("SliceChannel", _slice_channel, _slice_channel_rule, aliases=("split",),
    params={"num_outputs": Int(), "axis": Int(1), "squeeze_axis": Bool(False)},
    num_outputs=lambda p: p.num_outputs,
    output_names=lambda p: [f"output{i}" for i in range(p.num_outputs)],
    doc="Split ``data`` along ``axis`` into ``num_outputs`` equal parts; ``squeeze_axis`` "
        "drops the split axis (its size must then equal ``num_outputs``).", name_errors=True,
        lists_output_names=True, gradient=_grad_split)


def _v2_count(p) -> int:
    return p.sections if p.sections > 0 else len(p.indices)


def _v2_bounds(p, s: tuple) -> tuple[int, list[tuple[int, int]]]:
    """(axis, [(start, end)]) for _split_v2; end is -1 when the axis size is unknown."""
    axis = norm_axis(p.axis, len(s))
    d = s[axis] if s[axis] else -1
    n = _v2_count(p)
    check(n >= 1, "_split_v2 needs indices or sections > 0")
    if p.sections > 0:
        if d < 0:
            return axis, [(0, -1)] * n
        small, extra = divmod(d, n)  # the first `extra` parts get one more, as numpy
        starts = [i * small + min(i, extra) for i in range(n)]
    else:
        starts = list(p.indices)
    ends = starts[1:] + [d]
    for i, (b, e) in enumerate(zip(starts, ends)):
        inside = e < 0 or (b <= e and (d < 0 or e <= d))
        check(inside, f"section {i} [{b}, {e}) is not inside axis {axis} of size {d} "
                      f"(indices={tuple(p.indices)})")
    if d >= 0:
        total = n if p.squeeze_axis else d - starts[0]
        check(total == d, f"the sections {tuple(starts)} do not cover axis {axis} of size {d} "
                          "(the first index must be 0)")
    return axis, list(zip(starts, ends))


def _split_v2_rule(p, ins):
    if ins[0] is None:
        return ins, [None] * _v2_count(p)
    s = tuple(ins[0])
    axis, bounds = _v2_bounds(p, s)
    for b, e in bounds:
        check(not p.squeeze_axis or e < 0 or e - b == 1,
              f"squeeze_axis=True needs sections of size 1, got [{b}, {e})")
    return ins, _split_outputs(p, s, axis, bounds)


def _split_v2(p, x):
    _split_v2_rule(p, [x.shape])
    axis, bounds = _v2_bounds(p, x.shape)
    return _take_parts(x, axis, bounds, p.squeeze_axis)


define("_split_v2", _split_v2, _split_v2_rule,
    params={"indices": Shape(), "axis": Int(1), "squeeze_axis": Bool(False),
            "sections": Int(0)},
    num_outputs=_v2_count,
    doc="Split along ``axis`` at the start ``indices`` (first one 0), or into ``sections`` "
        "parts, the first ``size % sections`` one element longer (``mx.nd.split_v2``).",
        name_errors=True, gradient=_grad_split)




# --- joining and splitting -------------------------------------------------------------------
def _concat_onnx(ctx: LoweringContext) -> None:
    axis = norm_axis(ctx.params.dim, len(ctx.shape), "dim")
    ctx.make("Concat", ctx.inputs, outputs=out_list(ctx), axis=axis)


def _stack_onnx(ctx: LoweringContext) -> None:
    axis = norm_axis(ctx.params.axis, len(ctx.shape) + 1)
    axes = ctx.ints([axis], "axes")
    parts = [ctx.make("Unsqueeze", [x, axes]) for x in ctx.inputs]
    ctx.make("Concat", parts, outputs=out_list(ctx), axis=axis)


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
        ctx.make(op, ins, outputs=out_list(ctx, k))


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




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("Concat")(_concat_onnx)
lowering("stack")(_stack_onnx)
lowering("SliceChannel")(_slice_channel_onnx)
lowering("_split_v2")(_split_v2_onnx)

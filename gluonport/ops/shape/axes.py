"""Axis permutations: transpose, SwapAxis, expand_dims, squeeze, reverse (flip), with their
ONNX lowerings. Negative axes MXNet refuses (``transpose``, ``flip``) are refused here too.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Int, Optional, Shape
from ..infer import known, norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import INT64_MIN, Dims, reshape_to
from ..registry import define
from .rules import check, one_output, out_list

__all__ = []


# --- axis permutations -----------------------------------------------------------------------
def _perm(p, ndim: int) -> tuple[int, ...]:
    if not p.axes:
        return tuple(range(ndim - 1, -1, -1))
    axes = tuple(p.axes)
    check(len(axes) == ndim, f"axes={axes} must name each of the {ndim} dims once")
    check(sorted(axes) == list(range(ndim)),
          f"axes={axes} must be a permutation of 0..{ndim - 1} (MXNet takes no negative axes)")
    return axes


# --- gradients (MXNet's FGradient): the inverse layout change of the output gradient -------------
def _grad_transpose(F, p, inputs, outputs, ograds):
    if not p.axes:
        return [F.transpose(ograds[0])]
    inverse = sorted(range(len(p.axes)), key=lambda i: p.axes[i])
    return [F.transpose(ograds[0], axes=tuple(inverse))]


def _grad_swapaxis(F, p, inputs, outputs, ograds):
    return [F.SwapAxis(ograds[0], dim1=p.dim1, dim2=p.dim2)]


def _grad_reshape_like(F, p, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0])]


def _grad_reverse(F, p, inputs, outputs, ograds):
    return [F.reverse(ograds[0], axis=p.axis)]


define("transpose", lambda p, x: x.transpose(_perm(p, x.ndim)).copy(),
    one_output(lambda p, s: tuple(s[a] for a in _perm(p, len(s)))), params={"axes": Shape(())},
    doc="Permute the dims by ``axes`` (empty: reverse them).", name_errors=True,
    lists_input_names=False, gradient=_grad_transpose)


def _swap_perm(p, ndim: int) -> list[int]:
    a = norm_axis(p.dim1, ndim, "dim1")
    b = norm_axis(p.dim2, ndim, "dim2")
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


define("SwapAxis", lambda p, x: x.transpose(_swap_perm(p, x.ndim)).copy(),
    one_output(lambda p, s: tuple(s[a] for a in _swap_perm(p, len(s)))),
    params={"dim1": Int(0), "dim2": Int(0)}, aliases=("swapaxes",),
    doc="Swap dims ``dim1`` and ``dim2``.", name_errors=True, lists_output_names=True,
    gradient=_grad_swapaxis)


def _expand_shape(p, s):
    axis = p.axis + len(s) + 1 if p.axis < 0 else p.axis
    check(0 <= axis <= len(s), f"axis {p.axis} is out of range [{-len(s) - 1}, {len(s)}]")
    return s[:axis] + (1,) + s[axis:]


define("expand_dims", lambda p, x: x.reshape(_expand_shape(p, x.shape)).copy(),
    one_output(_expand_shape), params={"axis": Int()}, doc="Insert a dim of size 1 at ``axis``.",
    name_errors=True, lists_input_names=False, gradient=_grad_reshape_like)


def _squeeze_shape(p, s, exact: bool = False):
    if p.axis is None:
        if not exact and not known(s):
            return None
        keep = [d for d in s if d != 1]
    else:
        drop = set()
        for a in p.axis:
            ax = norm_axis(a, len(s))
            check(ax not in drop, f"axis {a} is given twice")
            check(s[ax] in (0, 1), f"cannot squeeze axis {a} of size {s[ax]} (not 1)")
            drop.add(ax)
        keep = [d for i, d in enumerate(s) if i not in drop]
    return tuple(keep) or (1,)  # MXNet keeps one dim when everything is squeezed


define("squeeze", lambda p, x: x.reshape(_squeeze_shape(p, x.shape, True)).copy(),
    one_output(_squeeze_shape),
    params={"axis": Optional(Shape())},
    doc="Remove dims of size 1 (all of them, or those in ``axis``); an all-ones shape "
        "becomes ``(1,)``.", name_errors=True, gradient=_grad_reshape_like)


def _flip(p, x):
    out = x
    for a in p.axis:
        check(0 <= a < x.ndim, f"axis {a} must be in [0, {x.ndim}) (MXNet takes no negative "
                               "axes)")
        out = np.flip(out, a)  # a repeated axis flips twice, as in MXNet
    return out.copy()


def _flip_shape(p, s):
    for a in p.axis:
        check(0 <= a < len(s), f"axis {a} must be in [0, {len(s)})")
    return s


define("reverse", _flip, one_output(_flip_shape), params={"axis": Shape()}, aliases=("flip",),
    doc="Reverse the order of elements along each axis in ``axis``.", name_errors=True,
    gradient=_grad_reverse)




# --- axis permutations -----------------------------------------------------------------------
def _transpose_onnx(ctx: LoweringContext) -> None:
    perm = _perm(ctx.params, len(ctx.shape)) if ctx.node.op.name == "transpose" else \
        _swap_perm(ctx.params, len(ctx.shape))
    ctx.make("Transpose", ctx.inputs[:1], outputs=out_list(ctx), perm=list(perm))


def _expand_dims_onnx(ctx: LoweringContext) -> None:
    axis = ctx.params.axis
    axis = axis + len(ctx.shape) + 1 if axis < 0 else axis
    ctx.make("Unsqueeze", [ctx.inputs[0], ctx.ints([axis], "axes")], outputs=out_list(ctx))


def _squeeze_onnx(ctx: LoweringContext) -> None:
    """Explicit axes when the example fixes them. With no ``axis`` and a varying dim, ONNX's
    axis-less Squeeze decides at run time, as MXNet does (a batch of 1 is squeezed too)."""
    p, dims = ctx.params, Dims(ctx)
    ndim = len(dims.static)
    if p.axis is None and any(dims.dyn):
        ctx.make("Squeeze", ctx.inputs[:1], outputs=out_list(ctx))
        return
    if p.axis is None:
        axes = [k for k, d in enumerate(dims.static) if d == 1]
    else:
        axes = sorted(norm_axis(a, ndim) for a in p.axis)
    if len(axes) == ndim:  # MXNet keeps one dim when everything goes
        reshape_to(ctx, ctx.inputs[0], [1], ctx.outputs[0])
    elif not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=out_list(ctx))
    else:
        ctx.make("Squeeze", [ctx.inputs[0], ctx.ints(axes, "axes")], outputs=out_list(ctx))


def _flip_onnx(ctx: LoweringContext) -> None:
    """A Slice with step -1 per flipped axis (an axis given twice flips back, as in MXNet)."""
    axes = sorted(a for a in set(ctx.params.axis) if list(ctx.params.axis).count(a) % 2)
    if not axes:
        ctx.make("Identity", ctx.inputs[:1], outputs=out_list(ctx))
        return
    n = len(axes)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([-1] * n, "starts"),
                       ctx.ints([INT64_MIN] * n, "ends"), ctx.ints(axes, "axes"),
                       ctx.ints([-1] * n, "steps")], outputs=out_list(ctx))




# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("transpose")(_transpose_onnx)
lowering("SwapAxis")(_transpose_onnx)
lowering("expand_dims")(_expand_dims_onnx)
lowering("squeeze")(_squeeze_onnx)
lowering("reverse")(_flip_onnx)

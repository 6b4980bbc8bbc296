"""Backward kernels of the shape ops (MXNet 1.9.1's ``_backward_*`` names), and the one recipe
most of them share.

A gathering op (``slice``, ``tile``, ``repeat``, ``diag``, ``Pad``, ``Crop``...) copies each
output element from one data element (or a fill value). Its gradient adds every output
gradient into the element it came from: :func:`gather_backward` registers such an op as
``(ograd, data, *shape donors) -> data gradient``, finding where each output element came from
by running the forward compute on ``1..data.size`` (fills become 0 and are dropped), then one
``bincount``. Its ONNX lowering is the same map computed at export time (static shapes), a
``ScatterElements`` with ``reduction='add'`` (opset 16+) into zeros.

Also here: ``_broadcast_backward`` (the broadcast ops' gradient: the output gradient summed
down to the data's shape; ONNX ``ReduceSum``) and ``_backward_Concat`` (the output gradient
split back into the inputs' sizes; ONNX ``Split``).

Inputs differ from MXNet's (whose backward nodes read shapes from the forward node): the
output gradient, then the forward inputs whose shapes are needed. Gradients have the data's
dtype; float16 is summed in float64 and rounded once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Int, Params
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..registry import OpDef, get, register

__all__ = ["gather_backward"]

_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"


def _sources(forward: str, p: Params, shape: Sequence[int], rest: Sequence) -> np.ndarray:
    """For each output element of ``forward``, the flat index of the data element it copies
    (-1 for a fill value)."""
    op = get(forward)
    q = Params({**p.as_dict(), "constant_value": 0.0}) if "constant_value" in p.as_dict() else p
    size = int(np.prod(shape))
    ids = np.arange(1, size + 1, dtype=np.float64).reshape(tuple(shape))
    out = op.compute(q, ids, *rest)
    out = out[0] if isinstance(out, (tuple, list)) else out
    return np.asarray(out).astype(np.int64).ravel() - 1


def gather_backward(name: str, forward: str,
                    donors: Sequence[str] | Callable[[Params], Sequence[str]] = (),
                    onnx: Callable[[LoweringContext], None] | None = None) -> OpDef:
    """Register ``name``: the gradient of the gathering op ``forward`` (same parameters), with
    inputs ``ograd, data`` and ``donors``: the forward's other inputs (shape donors, or index
    arrays the forward reads by value); a function of the params when their number varies.
    ``onnx`` replaces the default lowering (which needs every input's value fixed by its
    shape, so not index inputs)."""
    def names(p):
        return ("ograd", "data", *(donors(p) if callable(donors) else donors))

    def compute(p, og, data, *rest):
        src = _sources(forward, p, data.shape, rest)
        keep = src >= 0
        g = og.astype(np.float64, copy=False).ravel()
        if not keep.all():
            src, g = src[keep], g[keep]
        total = np.bincount(src, weights=g, minlength=data.size)
        return total.reshape(data.shape).astype(data.dtype, copy=False)

    compute.__name__ = name
    op = register(OpDef(
        name, params=get(forward).params, inputs=names,
        compute=compute, infer_shape=lambda p, s: (list(s), [s[1]]),
        infer_type=lambda p, t: (list(t), [t[1]]), no_gradient=_NO_GRAD,
        doc=f"{forward}'s data gradient: each output gradient added into the data element it "
            "was copied from. Inputs: the output gradient, data, then the forward's other "
            "inputs (shape donors, indices)."))
    lowering(op, since=16)(onnx or _gather_onnx(forward))
    return op


def _static(ctx: LoweringContext, i: int) -> tuple[int, ...]:
    shape = tuple(ctx.in_shapes[i])
    if any(ctx.is_dynamic(i, a) for a in range(len(shape))):
        raise ctx.fail(f"the gradient of {ctx.node.op.name[10:]} needs the shapes fixed at "
                       "export time (where each output element comes from is computed then)")
    return shape


def _work(ctx: LoweringContext) -> np.dtype:
    dt = np.dtype(ctx.in_dtypes[1])
    return np.dtype(np.float32) if dt == np.float16 else dt


def _gather_onnx(forward: str):
    def handler(ctx: LoweringContext) -> None:
        shape = _static(ctx, 1)
        rest = [np.zeros(_static(ctx, i), ctx.in_dtypes[i]) for i in range(2, len(ctx.inputs))]
        src = _sources(forward, ctx.params, shape, rest)
        work = _work(ctx)
        og = ctx.inputs[0]
        if np.dtype(ctx.in_dtypes[0]) != work:
            og = ctx.cast_to(og, work)
        upd = ctx.make("Reshape", [og, ctx.ints([-1], "flat")])
        keep = np.flatnonzero(src >= 0)
        if keep.size != src.size:
            upd = ctx.make("Gather", [upd, ctx.const(keep.astype(np.int64), "kept")], axis=0)
        size = int(np.prod(shape))
        zeros = ctx.const(np.zeros(size, work), "zeros")
        y = ctx.make("ScatterElements", [zeros, ctx.const(src[keep], "sources"), upd],
                     axis=0, reduction="add")
        y = ctx.make("Reshape", [y, ctx.ints(list(shape), "shape")])
        _finish(ctx, y, work)

    return handler


def _finish(ctx: LoweringContext, y: str, work, k: int = 0) -> None:
    target = np.dtype(ctx.out_dtypes[k] or ctx.in_dtypes[1])
    if target != work:
        y = ctx.make("Cast", [y], to=dtypes.onnx_of(target))
    ctx.make("Identity", [y], outputs=[ctx.outputs[k]])


for _name, _fwd, _donors in (("_backward_slice", "slice", ()),
                             ("_backward_slice_axis", "slice_axis", ()),
                             ("_backward_slice_like", "slice_like", ("shape_like",)),
                             ("_backward_tile", "tile", ()),
                             ("_backward_repeat", "repeat", ()),
                             ("_backward_diag", "diag", ())):
    gather_backward(_name, _fwd, _donors)


# --- broadcast ops -------------------------------------------------------------------------------
def _broadcast_backward(p, og, data):
    """Sum ``og`` over the axes ``data`` was broadcast along (its size-1 axes)."""
    axes = tuple(i for i, (a, b) in enumerate(zip(data.shape, og.shape)) if a == 1 and b != 1)
    acc = np.float32 if og.dtype == np.float16 else og.dtype
    total = og.sum(axis=axes, keepdims=True, dtype=acc) if axes else og
    return total.reshape(data.shape).astype(data.dtype, copy=False)


register(OpDef(
    "_broadcast_backward", inputs=("ograd", "data"), compute=_broadcast_backward,
    infer_shape=lambda p, s: (list(s), [s[1]]), infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient=_NO_GRAD,
    doc="The broadcast ops' data gradient: the output gradient (input 0) summed over the axes "
        "where data (input 1, read for its shape) has size 1."))


@lowering("_broadcast_backward")
def _broadcast_backward_onnx(ctx: LoweringContext) -> None:
    """``ReduceSum`` over the broadcast axes (known from the example shapes), then a
    ``Reshape`` to the data's shape (read at run time)."""
    data, og = tuple(ctx.in_shapes[1]), tuple(ctx.in_shapes[0])
    axes = [i for i, (a, b) in enumerate(zip(data, og)) if a == 1 and b != 1]
    work = _work(ctx)
    y = ctx.inputs[0] if np.dtype(ctx.in_dtypes[0]) == work else ctx.cast_to(ctx.inputs[0], work)
    if axes:
        y = onnx_reduce(ctx, "ReduceSum", y, axes)
    y = ctx.make("Reshape", [y, ctx.make("Shape", [ctx.inputs[1]])])
    _finish(ctx, y, work)


# --- Concat --------------------------------------------------------------------------------------
def _concat_backward(p, og, *inputs):
    axis = p.dim if p.dim >= 0 else p.dim + og.ndim
    cuts = np.cumsum([x.shape[axis] for x in inputs])[:-1]
    return tuple(part.astype(x.dtype, copy=True)
                 for part, x in zip(np.split(og, cuts, axis=axis), inputs))


register(OpDef(
    "_backward_Concat", params={"num_args": Int(), "dim": Int(1)},
    inputs=lambda p: ["ograd"] + [f"arg{i}" for i in range(p.num_args)],
    num_outputs=lambda p: p.num_args, compute=_concat_backward,
    infer_shape=lambda p, s: (list(s), [None if v is None else tuple(v) for v in s[1:]]),
    infer_type=lambda p, t: (list(t), list(t[1:])), no_gradient=_NO_GRAD,
    doc="Concat's gradients: the output gradient split back into the inputs' sizes along "
        "dim. Inputs: the output gradient, then the forward inputs (read for their sizes)."))


@lowering("_backward_Concat")
def _concat_backward_onnx(ctx: LoweringContext) -> None:
    """``Split`` at the inputs' sizes along ``dim`` (read at run time)."""
    rank = len(ctx.in_shapes[0])
    axis = ctx.params.dim if ctx.params.dim >= 0 else ctx.params.dim + rank
    ax = ctx.ints([axis], "axis")
    sizes = [ctx.make("Gather", [ctx.make("Shape", [x]), ax], axis=0) for x in ctx.inputs[1:]]
    split = ctx.make("Concat", sizes, axis=0) if len(sizes) > 1 else sizes[0]
    ctx.make("Split", [ctx.inputs[0], split], outputs=list(ctx.outputs), axis=axis)

"""Backward kernels of the indexing ops in :mod:`.indexing` (MXNet 1.9.1's names):
``_backward_take``, ``_backward_pick``, ``_backward_gather_nd``,
``_backward_contrib_boolean_mask`` (each output gradient added into the data element it was
read from: :func:`~gluonport.ops.shape.grad.gather_backward`, which runs the forward on
``1..size`` with the real indices), ``_backward_Embedding`` (rows of the output gradient summed
per index: one sort and ``add.reduceat``, no vocabulary-sized scratch) and
``_contrib_backward_index_copy``.

ONNX export (opset 16+: scatters with ``reduction='add'``, duplicates accumulate): the indices
are normalised as the forward's lowering does (int64, clipped/wrapped, gather_nd's negatives
wrapped), then ``ScatterND``/``ScatterElements`` into zeros of the data's shape (read at run
time); boolean_mask scatters at ``NonZero`` of the mask; index_copy zeroes the copied rows of
the output gradient (old) and gathers them (new).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, DType, Int
from ..infer import norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import Dims
from ..registry import OpDef, register
from ..shape.grad import gather_backward
from .indexing import as_index, nd_indices, onnx_bounded, onnx_index

__all__: list[str] = []

_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"


def _work(ctx: LoweringContext) -> np.dtype:
    """float16 scatters in float32 (onnxruntime has no float16 ScatterND/Elements with add)."""
    dt = np.dtype(ctx.in_dtypes[0])
    return np.dtype(np.float32) if dt == np.float16 else dt


def _og(ctx: LoweringContext) -> str:
    work = _work(ctx)
    og = ctx.inputs[0]
    return og if np.dtype(ctx.in_dtypes[0]) == work else ctx.cast_to(og, work)


def _zeros_like(ctx: LoweringContext, i: int) -> str:
    zero = ctx.const(np.zeros((), _work(ctx)), "zero")
    return ctx.make("Expand", [zero, ctx.make("Shape", [ctx.inputs[i]])])


def _deliver(ctx: LoweringContext, y: str, k: int = 0) -> None:
    target = np.dtype(ctx.out_dtypes[k] or ctx.in_dtypes[0])
    if target != _work(ctx):
        y = ctx.cast_to(y, target)
    ctx.make("Identity", [y], outputs=[ctx.outputs[k]])


def _take_onnx(ctx: LoweringContext) -> None:
    """ScatterND along the taken axis (moved to the front of the zeros and of the output
    gradient, then back)."""
    p = ctx.params
    rank, k = len(ctx.in_shapes[1]), len(ctx.in_shapes[2])
    axis = norm_axis(p.axis, rank)
    idx = onnx_bounded(ctx, onnx_index(ctx, 2), Dims(ctx, 1).scalar(axis), p.mode)
    idx = ctx.make("Unsqueeze", [idx, ctx.ints([k], "last")])
    perm = [axis] + [a for a in range(rank) if a != axis]
    zeros = ctx.make("Transpose", [_zeros_like(ctx, 1)], perm=perm)
    og_perm = (list(range(axis, axis + k)) + list(range(axis))
               + list(range(axis + k, rank + k - 1)))
    og = ctx.make("Transpose", [_og(ctx)], perm=og_perm)
    y = ctx.make("ScatterND", [zeros, idx, og], reduction="add")
    _deliver(ctx, ctx.make("Transpose", [y], perm=list(np.argsort(perm))))


def _pick_onnx(ctx: LoweringContext) -> None:
    """ScatterElements along ``axis`` with the index (and, unless keepdims, the output
    gradient) given that axis back."""
    p = ctx.params
    rank = len(ctx.in_shapes[1])
    axis = norm_axis(p.axis, rank)
    axes = ctx.ints([axis], "axes")
    idx = onnx_bounded(ctx, onnx_index(ctx, 2), Dims(ctx, 1).scalar(axis), p.mode)
    if len(ctx.in_shapes[2]) < rank:
        idx = ctx.make("Unsqueeze", [idx, axes])
    og = _og(ctx) if p.keepdims else ctx.make("Unsqueeze", [_og(ctx), axes])
    _deliver(ctx, ctx.make("ScatterElements", [_zeros_like(ctx, 1), idx, og], axis=axis,
                           reduction="add"))


def _gather_nd_onnx(ctx: LoweringContext) -> None:
    """ScatterND at the indices wrapped as the forward reads them (``(i + dim) % dim``)."""
    m = int(ctx.in_shapes[2][0])
    idx = nd_indices(ctx, 2, floor=True)
    dims = ctx.make("Slice", [ctx.make("Shape", [ctx.inputs[1]]), ctx.ints([0], "s0"),
                              ctx.ints([m], "m")])
    idx = ctx.make("Mod", [ctx.make("Add", [idx, dims]), dims])
    _deliver(ctx, ctx.make("ScatterND", [_zeros_like(ctx, 1), idx, _og(ctx)],
                           reduction="add"))


def _boolean_mask_onnx(ctx: LoweringContext) -> None:
    mask = ctx.inputs[2]
    if np.dtype(ctx.in_dtypes[2]) != np.bool_:
        mask = ctx.cast_to(mask, np.bool_)
    rows = ctx.make("Transpose", [ctx.make("NonZero", [mask])], perm=[1, 0])
    _deliver(ctx, ctx.make("ScatterND", [_zeros_like(ctx, 1), rows, _og(ctx)]))


gather_backward("_backward_take", "take", ("indices",), _take_onnx)
gather_backward("_backward_pick", "pick", ("index",), _pick_onnx)
gather_backward("_backward_gather_nd", "gather_nd", ("indices",), _gather_nd_onnx)
gather_backward("_backward_contrib_boolean_mask", "_contrib_boolean_mask", ("index",),
                _boolean_mask_onnx)


# --- Embedding -----------------------------------------------------------------------------------
def _embedding_backward(p, og, data, weight):
    """Weight gradient: the output gradient's rows summed per (clipped) index."""
    idx = np.clip(as_index(data), 0, p.input_dim - 1).ravel()
    acc = np.float32 if weight.dtype == np.float16 else weight.dtype
    rows = og.reshape(idx.size, -1).astype(acc, copy=False)
    grad = np.zeros(weight.shape, acc)
    if idx.size:
        order = np.argsort(idx, kind="stable")
        ids, starts = np.unique(idx[order], return_index=True)
        grad[ids] = np.add.reduceat(rows[order], starts, axis=0)
    return grad.astype(weight.dtype, copy=False)


register(OpDef(
    "_backward_Embedding",
    params={"input_dim": Int(), "output_dim": Int(),
            "dtype": DType("float32", choices=("bfloat16", "float16", "float32", "float64",
                                               "int32", "int64", "int8", "uint8")),
            "sparse_grad": Bool(False)},
    inputs=("ograd", "data", "weight"), compute=_embedding_backward,
    infer_shape=lambda p, s: (list(s), [s[2]]), infer_type=lambda p, t: (list(t), [t[2]]),
    no_gradient=_NO_GRAD,
    doc="Embedding's weight gradient. Inputs: the output gradient, data (the indices), weight "
        "(read for its shape)."))


@lowering("_backward_Embedding", since=16)
def _embedding_onnx(ctx: LoweringContext) -> None:
    top = ctx.const(np.asarray(ctx.params.input_dim - 1, np.int64), "top")
    idx = ctx.make("Clip", [onnx_index(ctx, 1), ctx.const(np.asarray(0, np.int64), "zero"), top])
    idx = ctx.make("Unsqueeze", [idx, ctx.ints([len(ctx.in_shapes[1])], "last")])
    zeros = _zeros_like(ctx, 2)
    _deliver(ctx, ctx.make("ScatterND", [zeros, idx, _og(ctx)], reduction="add"))


# --- index_copy ----------------------------------------------------------------------------------
def _index_copy_backward(p, og, old, index, new):
    """old: the output gradient with the copied rows zeroed; new: those rows."""
    idx = as_index(index)
    d_old = og.astype(old.dtype, copy=True)
    d_old[idx] = 0
    return d_old, og[idx].astype(new.dtype, copy=False)


register(OpDef(
    "_contrib_backward_index_copy", inputs=("ograd", "old_tensor", "index_vector", "new_tensor"),
    num_outputs=2, compute=_index_copy_backward,
    infer_shape=lambda p, s: (list(s), [s[1], s[3]]),
    infer_type=lambda p, t: (list(t), [t[1], t[3]]), no_gradient=_NO_GRAD,
    doc="index_copy's gradients of old_tensor and new_tensor. Inputs: the output gradient and "
        "the forward inputs."))


@lowering("_contrib_backward_index_copy")
def _index_copy_onnx(ctx: LoweringContext) -> None:
    idx = ctx.make("Unsqueeze", [onnx_index(ctx, 2), ctx.ints([1], "axes")])
    zero = ctx.const(np.zeros((), ctx.in_dtypes[0]), "zero")
    rows = ctx.make("Expand", [zero, ctx.make("Shape", [ctx.inputs[3]])])
    ctx.make("ScatterND", [ctx.inputs[0], idx, rows], outputs=[ctx.outputs[0]])
    ctx.make("GatherND", [ctx.inputs[0], idx], outputs=[ctx.outputs[1]])


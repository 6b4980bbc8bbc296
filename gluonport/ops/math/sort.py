"""Sorting: ``topk``, ``sort``, ``argsort``.

MXNet 1.9.1 semantics kept here:

* ``axis=None`` works on the flattened array; ``k < 1`` in ``topk`` means the whole axis.
* ``topk`` returns indices (``ret_typ='indices'``, in ``dtype``, float32 by default), values,
  a 0/1 mask in the input dtype, or ``[values, indices]`` (``'both'``). With ``'value'`` MXNet
  keeps the indices as a hidden second output (int32), and ``sort`` likewise: both count two
  outputs in symbol JSON and show one.
* Order among equal values: MXNet's CPU kernel uses ``std::sort``/``std::partial_sort``, whose
  order among ties is unspecified (stable for short rows in practice). gluonport is always
  *stable*: ties keep their original order, in ascending and descending sorts alike.
"""

from __future__ import annotations

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, DType, Enum, Int, Optional
from ...errors import DTypeError, ShapeError
from ..infer import norm_axis
from ..lowering import LoweringContext, deliver, lowering
from ..lowering.dims import onnx_dims
from ..registry import OpDef, register, zero_gradient

__all__ = ["stable_order"]

_INDEX_DTYPES = ("uint8", "int32", "int64", "float16", "float32", "float64")
_HIDDEN_INDEX = np.dtype(np.int32)  # MXNet built without INT64_TENSOR_SIZE (the pip wheels)


def stable_order(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """Indices sorting ``x`` along ``axis``; ties keep their original order both ways.

    >>> stable_order(np.array([1, 1, 1, 2, 2, 0]), 0, ascend=False).tolist()
    [3, 4, 0, 1, 2, 5]
    """
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    idx = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(idx, axis)


def _layout(shape: tuple, axis: int | None) -> tuple[int | None, int]:
    """(normalised axis or None for flattened, number of elements sorted per row)."""
    if axis is None:
        return None, 0 if any(d == 0 for d in shape) else int(np.prod(shape, dtype=np.int64))
    ax = norm_axis(axis, len(shape))
    return ax, shape[ax]


def _k_of(p, n: int) -> int:
    k = p.k if p.k >= 1 else n
    if n and not 0 <= k <= n:
        raise ShapeError(f"topk: k={p.k} is larger than the {n} elements along the axis; "
                         f"use k <= {n} (or k=0 for all)")
    return k


def _target_shape(p, shape: tuple, mask: bool) -> tuple:
    ax, n = _layout(shape, p.axis)
    k = _k_of(p, n)
    if mask:
        return tuple(shape)
    if ax is None:
        return (k,)
    return tuple(k if i == ax else d for i, d in enumerate(shape))


def _n_outputs(p) -> int:
    return 1 if p.ret_typ in ("indices", "mask") else 2


def _topk_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None] * _n_outputs(p)
    target = _target_shape(p, tuple(shape), p.ret_typ == "mask")
    return in_shapes, [target] * _n_outputs(p)


def _topk_type(p, in_types):
    dt = in_types[0]
    index = np.dtype(p.dtype)
    table = {"indices": [index], "mask": [dt], "value": [dt, _HIDDEN_INDEX], "both": [dt, index]}
    return in_types, table[p.ret_typ]


def _check_index_dtype(dtype: np.dtype, n: int) -> None:
    limit = 2 ** np.finfo(dtype).nmant if dtype.kind == "f" else np.iinfo(dtype).max
    if n - 1 > limit:
        raise DTypeError(f"topk/argsort: index dtype {dtype.name} cannot represent indices up "
                         f"to {n - 1}; choose a wider dtype (int32, int64, float64)")


def _sorted(x: np.ndarray, axis: int | None, k: int, ascend: bool):
    """(values, indices, working array, working axis) of the first ``k`` after sorting."""
    work, ax = (x.reshape(-1), 0) if axis is None else (x, norm_axis(axis, x.ndim))
    idx = np.take(stable_order(work, ax, ascend), np.arange(k), axis=ax)
    return np.take_along_axis(work, idx, axis=ax), idx, work, ax


def _topk(p, x: np.ndarray):
    _, n = _layout(x.shape, p.axis)
    k = _k_of(p, n)
    index = np.dtype(p.dtype)
    _check_index_dtype(index, n)
    values, idx, work, ax = _sorted(x, p.axis, k, p.is_ascend)
    if p.ret_typ == "mask":
        mask = np.zeros_like(work)
        np.put_along_axis(mask, idx, 1, axis=ax)
        return mask.reshape(x.shape)
    if p.ret_typ == "indices":
        return idx.astype(index)
    second = idx.astype(index if p.ret_typ == "both" else _HIDDEN_INDEX)
    return values, second


_TOPK_PARAMS = {"axis": Optional(Int(), default=-1), "k": Int(1),
                "ret_typ": Enum(("value", "indices", "mask", "both"), default="indices"),
                "is_ascend": Bool(False), "dtype": DType("float32", choices=_INDEX_DTYPES)}


def _topk_grad(F, p, inputs, outputs, ograds):
    """MXNet's FGradient: ``_backward_topk`` scatters the values' gradient back to where they
    came from (ret_typ ``value``/``both``; the indices' gradient is dropped); ``indices`` and
    ``mask`` give zero."""
    if p.ret_typ in ("indices", "mask"):
        return [None]
    return [F._internal._backward_topk(ograds[0], inputs[0], outputs[1], axis=p.axis, k=p.k,
                                       ret_typ="value", is_ascend=p.is_ascend)]


register(OpDef(
    "topk", params=_TOPK_PARAMS,
    compute=_topk, infer_shape=_topk_rule, infer_type=_topk_type, num_outputs=_n_outputs,
    num_visible_outputs=lambda p: 2 if p.ret_typ == "both" else 1,
    doc="The k largest (or smallest) elements along an axis: values, indices, mask or both.",
    lists_input_names=False, gradient=_topk_grad))


def _topk_backward(p, og: np.ndarray, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``ograd`` scattered into zeros shaped like ``data`` at the positions ``indices`` name
    (along ``axis``, or in the flattened data)."""
    out = np.zeros(x.size if p.axis is None else x.shape, dtype=x.dtype)
    ax = 0 if p.axis is None else norm_axis(p.axis, x.ndim)
    np.put_along_axis(out, idx.astype(np.int64), og.astype(x.dtype, copy=False), axis=ax)
    return out.reshape(x.shape)


register(OpDef(
    "_backward_topk", params=_TOPK_PARAMS, inputs=("ograd", "data", "indices"),
    compute=_topk_backward, infer_shape=lambda p, s: (s, [s[1]]),
    infer_type=lambda p, t: (t, [t[1]]),
    no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
    doc="topk's and sort's gradient: inputs (ograd of the values, data, the indices output); "
        "``ograd`` scattered back to the positions the values came from."))


def _sort_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None, None]
    ax, _ = _layout(tuple(shape), p.axis)
    out = tuple(shape) if ax is not None else (_layout(tuple(shape), None)[1],)
    return in_shapes, [out, out]


def _sort(p, x: np.ndarray):
    n = _layout(x.shape, p.axis)[1]
    values, idx, _, _ = _sorted(x, p.axis, n, p.is_ascend)
    return values, idx.astype(_HIDDEN_INDEX)


def _sort_grad(F, p, inputs, outputs, ograds):
    """``_backward_topk`` with ``k=0, ret_typ='value'``, as MXNet builds it. (MXNet copies
    ``axis`` from the node's attribute strings, so its backward fails when ``axis`` was left at
    its default; gluonport, which cannot tell an omitted axis from ``axis=-1``, differentiates
    both.)"""
    return [F._internal._backward_topk(ograds[0], inputs[0], outputs[1], axis=p.axis, k=0,
                                       ret_typ="value", is_ascend=p.is_ascend)]


register(OpDef(
    "sort", params={"axis": Optional(Int(), default=-1), "is_ascend": Bool(True)},
    compute=_sort, infer_shape=_sort_rule,
    infer_type=lambda p, t: (t, [t[0], _HIDDEN_INDEX]), num_outputs=2, num_visible_outputs=1,
    doc="Sorted copy along an axis (flattened when axis is None).", lists_input_names=False,
    gradient=_sort_grad))


def _argsort(p, x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float16:
        raise DTypeError("argsort: MXNet does not support float16 data; cast it with "
                         ".astype('float32') first")
    n = _layout(x.shape, p.axis)[1]
    index = np.dtype(p.dtype)
    _check_index_dtype(index, n)
    return _sorted(x, p.axis, n, p.is_ascend)[1].astype(index)


def _argsort_rule(p, in_shapes):
    ins, outs = _sort_rule(p, in_shapes)
    return ins, outs[:1]


register(OpDef(
    "argsort",
    params={"axis": Optional(Int(), default=-1), "is_ascend": Bool(True),
            "dtype": DType("float32", choices=_INDEX_DTYPES)},
    compute=_argsort, infer_shape=_argsort_rule,
    infer_type=lambda p, t: (t, [np.dtype(p.dtype)]),
    doc="Indices that sort an array along an axis, in ``dtype`` (float32 by default).",
    lists_input_names=False, gradient=zero_gradient))



# --- ONNX export -----------------------------------------------------------------------------
# TopK (sorted=1) orders equal values by index, as gluonport's stable sort does. Its indices
# are int64; MXNet's come in ``dtype`` (topk/argsort) or int32 (the hidden ones).
def _topk_input(ctx: LoweringContext, axis: int | None) -> tuple[str, int]:
    """(tensor to sort, axis): the input flattened when ``axis`` is None."""
    if axis is None:
        return ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1], "flat")]), 0
    return ctx.inputs[0], norm_axis(axis, len(ctx.shape))


def _axis_len(ctx: LoweringContext, x: str, axis: int | None) -> str:
    """``K`` for the whole axis (a 1-element int64 tensor), from Shape when it is dynamic."""
    if axis is None:
        if not ctx.is_dynamic(0):
            return ctx.ints([_layout(ctx.shape, None)[1]], "k")
        return ctx.make("Shape", [x])
    ax = norm_axis(axis, len(ctx.shape))
    dims = onnx_dims(ctx, 0, ax, ax + 1)
    return ctx.ints(dims, "k") if isinstance(dims, list) else dims


def _top(ctx: LoweringContext, k: int, axis: int | None, ascend: bool,
         values: str | None = None) -> tuple[str, str, str, int]:
    """(values, int64 indices, sorted tensor, axis) of one TopK node; ``values`` names its
    first output."""
    x, ax = _topk_input(ctx, axis)
    kk = ctx.ints([k], "k") if k >= 1 else _axis_len(ctx, x, axis)
    outs = [values or ctx.fresh("values"), ctx.fresh("indices")]
    ctx.make("TopK", [x, kk], outputs=outs, axis=ax, largest=int(not ascend), sorted=1)
    return outs[0], outs[1], x, ax


def _mask(ctx: LoweringContext, x: str, idx: str, ax: int, flat: bool) -> str:
    """0/1 in the input dtype, 1 where TopK picked an element."""
    from onnx import helper

    onnx_type = dtypes.onnx_of(ctx.dtype)
    zeros = ctx.make("ConstantOfShape", [ctx.make("Shape", [x])],
                     value=helper.make_tensor("value", onnx_type, [1], [0]))
    ones = ctx.make("ConstantOfShape", [ctx.make("Shape", [idx])],
                    value=helper.make_tensor("value", onnx_type, [1], [1]))
    mask = ctx.make("ScatterElements", [zeros, idx, ones], axis=ax)
    if flat:
        mask = ctx.make("Reshape", [mask, ctx.make("Shape", [ctx.inputs[0]])])
    return mask


def _topk_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    with_values = p.ret_typ in ("value", "both")
    _, idx, x, ax = _top(ctx, p.k, p.axis, p.is_ascend, ctx.outputs[0] if with_values else None)
    if p.ret_typ == "mask":
        return deliver(ctx, _mask(ctx, x, idx, ax, p.axis is None))
    k = 1 if with_values else 0
    if ctx.wants(k):  # 'value' keeps its int32 indices as a hidden output
        deliver(ctx, idx, k, np.int64)


def _sort_onnx(ctx: LoweringContext) -> None:
    """sort: TopK over the whole axis; values out, int32 indices as the hidden output."""
    p = ctx.params
    _, idx, _, _ = _top(ctx, 0, p.axis, p.is_ascend, ctx.outputs[0])
    if ctx.wants(1):
        deliver(ctx, idx, 1, np.int64)


def _argsort_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    _, idx, _, _ = _top(ctx, 0, p.axis, p.is_ascend)
    deliver(ctx, idx, 0, np.int64)


lowering("topk")(_topk_onnx)
lowering("sort")(_sort_onnx)
lowering("argsort")(_argsort_onnx)


def _topk_backward_onnx(ctx: LoweringContext) -> None:
    """``ScatterElements`` of ograd into zeros shaped like ``data`` (flattened when axis is
    None)."""
    p, dt = ctx.params, np.dtype(ctx.in_dtypes[1])
    shape = ctx.make("Shape", [ctx.inputs[1]])
    flat = p.axis is None
    zeros = ctx.make("ConstantOfShape", [shape], value=_onnx_zero(dt))
    if flat:
        zeros = ctx.make("Reshape", [zeros, ctx.ints([-1], "flat")])
    idx = ctx.cast_to(ctx.inputs[2], np.int64)
    og = ctx.inputs[0] if np.dtype(ctx.in_dtypes[0]) == dt else ctx.cast_to(ctx.inputs[0], dt)
    axis = 0 if flat else norm_axis(p.axis, len(ctx.in_shapes[1]))
    y = ctx.make("ScatterElements", [zeros, idx, og], axis=axis)
    if flat:
        y = ctx.make("Reshape", [y, shape])
    deliver(ctx, y)


def _onnx_zero(dtype: np.dtype):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.zeros((1,), dtype=dtype), "zero")


lowering("_backward_topk")(_topk_backward_onnx)

"""Helpers the bounding-box, SSD and ROI op files share (a documented interface, see
``__all__``; they register with ``registry.define(...,
check_shapes=True)``): greedy NMS, the float32-only rule,
and the ONNX builders of the NMS lowering (:func:`nms_keep`, :func:`selected_mask`,
:func:`top_scores`, :func:`gather_rows`...).

Greedy suppression loops over the boxes it *keeps* (each step vectorized over the rest), never
over every pair.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core import dtypes
from ...errors import DTypeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext

__all__ = ["as_f32", "corner_boxes", "float32_only", "greedy_nms", "last_dim",
           "require_float32", "box_area", "intersection", "min_ndim", "FORMATS",
           "nms_keep", "selected_mask", "order_kept", "top_scores", "gather_rows", "take_rows",
           "work_dtype", "scalar", "column", "columns", "cast", "unsqueeze", "as_tensor",
           "onnx_type", "LOWEST"]


FORMATS = ("corner", "center")


# --- shared helpers --------------------------------------------------------------------------
def greedy_nms(n: int, suppress: Callable[[int, np.ndarray], np.ndarray],
               max_keep: int | None = None) -> np.ndarray:
    """Greedy non-maximum suppression over ``n`` boxes already in priority order.

    ``suppress(i, js)`` returns a boolean mask over the still-alive later boxes ``js`` that box
    ``i`` removes. Returns the kept indices in order; stops after ``max_keep`` of them.
    """
    rest = np.arange(n)
    keep: list[int] = []
    while rest.size and (max_keep is None or len(keep) < max_keep):
        i, rest = int(rest[0]), rest[1:]
        keep.append(i)
        if rest.size:
            rest = rest[~suppress(i, rest)]
    return np.asarray(keep, dtype=np.int64)


def corner_boxes(boxes: np.ndarray, fmt_name: str) -> tuple[np.ndarray, ...]:
    """``(x1, y1, x2, y2)`` of ``[..., 4]`` boxes in ``corner`` or ``center`` encoding,
    computed in the boxes' dtype as MXNet's ``Intersect`` does."""
    a, b, c, d = (boxes[..., k] for k in range(4))
    if fmt_name == "corner":
        return a, b, c, d
    hw, hh = c / 2, d / 2
    return a - hw, b - hh, a + hw, b + hh


def box_area(boxes: np.ndarray, fmt_name: str) -> np.ndarray:
    """MXNet's ``BoxArea``: width * height, 0 when either is negative."""
    if fmt_name == "corner":
        w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    else:
        w, h = boxes[..., 2], boxes[..., 3]
    return np.where((w < 0) | (h < 0), np.zeros_like(w), w * h)


def intersection(a: np.ndarray, b: np.ndarray, fmt_name: str) -> np.ndarray:
    """Broadcast intersection area of boxes ``a`` and ``b`` (MXNet's ``Intersect`` twice)."""
    ax1, ay1, ax2, ay2 = corner_boxes(a, fmt_name)
    bx1, by1, bx2, by2 = corner_boxes(b, fmt_name)
    w = np.minimum(ax2, bx2) - np.maximum(ax1, bx1)
    h = np.minimum(ay2, by2) - np.maximum(ay1, by1)
    zero = np.zeros((), dtype=w.dtype)
    return np.maximum(w, zero) * np.maximum(h, zero)


def require_float32(op: str, *arrays: np.ndarray) -> None:
    """MXNet's legacy ``OperatorProperty`` ops without a type rule accept float32 only."""
    for a in arrays:
        if a.dtype != np.float32:
            raise DTypeError(f"{op}: MXNet implements this operator for float32 only, got "
                             f"{a.dtype}; cast the inputs to float32")


def float32_only(op: str, n_out: int = 1) -> Callable:
    """A type rule refusing anything but float32 (MXNet's default ``InferType``)."""
    def rule(p, in_types):
        for t in in_types:
            if t is not None and np.dtype(t) != np.float32:
                raise DTypeError(f"{op}: MXNet implements this operator for float32 only, got "
                                 f"{np.dtype(t)}; cast the inputs to float32")
        return [np.dtype(np.float32)] * len(in_types), [np.dtype(np.float32)] * n_out
    return rule


def as_f32(value: float) -> np.float32:
    """An attribute stored as C++ ``float`` (thresholds compare at float precision)."""
    return np.float32(value)


def last_dim(shape, n: int, what: str, op: str) -> None:
    if shape is not None and len(shape) >= 1 and shape[-1] not in (0, n):
        raise ShapeError(f"{op}: last dimension of {what} must be {n}, got shape {fmt(shape)}")


def min_ndim(shape, ndim: int, what: str, op: str) -> None:
    if shape is not None and len(shape) < ndim:
        raise ShapeError(f"{op}: {what} must have at least {ndim} dims, got shape {fmt(shape)}")


LOWEST = np.float32(np.finfo(np.float32).min)


# --- small builders --------------------------------------------------------------------------
def work_dtype(dtype) -> np.dtype:
    """float16 computes in float32 (exact for the copies and halvings done here; onnxruntime's
    CPU kernels lack half support for several ops used), others in their own dtype."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def scalar(ctx: LoweringContext, value, dtype, hint: str = "scalar") -> str:
    """A 0-d constant of ``value`` rounded to ``dtype`` (MXNet compares at the data's precision)."""
    return ctx.const(np.asarray(value, dtype=dtype), hint)


def column(ctx: LoweringContext, x: str, index: int) -> str:
    """``x[..., index]`` of a rank-3 tensor -> rank 2."""
    return ctx.make("Gather", [x, ctx.const(np.asarray(index, np.int64), "col")], axis=2)


def columns(ctx: LoweringContext, x: str, start: int, stop: int, axis: int = 2) -> str:
    """``x[..., start:stop]`` along ``axis``."""
    return ctx.make("Slice", [x, ctx.ints([start], "start"), ctx.ints([stop], "stop"),
                              ctx.ints([axis], "axis")])


def unsqueeze(ctx: LoweringContext, x: str, axis: int) -> str:
    return ctx.make("Unsqueeze", [x, ctx.ints([axis], "axes")])


def cast(ctx: LoweringContext, x: str, dtype, current) -> str:
    return x if np.dtype(dtype) == np.dtype(current) else ctx.cast_to(x, dtype)


# --- the NMS lowering ------------------------------------------------------------------------
def nms_keep(ctx: LoweringContext, boxes: str, scores: str, iou: float, max_out: str,
             ids: str | None = None,
             center: bool = False) -> str:
    """Boolean ``(B, N)`` mask of the rows greedy NMS keeps.

    ``boxes (B, N, 4)`` and ``scores (B, N)`` are float32, scores ``-inf`` for rows that take no
    part; ``ids (B, N)`` int64 makes suppression class-aware; ``max_out`` is a 1-element int64
    tensor (at least N); ``center``: boxes are ``(cx, cy, w, h)``.
    """
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    s3 = unsqueeze(ctx, scores, 1)                                            # (B, 1, N)
    if ids is not None:
        flat = ctx.make("Reshape", [ids, ctx.ints([-1], "flat")])
        classes = ctx.make("Unique", [flat], outputs=4, sorted=1)[0]          # (K,)
        classes = ctx.make("Reshape", [classes, ctx.ints([1, -1, 1], "kshape")])
        same = ctx.make("Equal", [unsqueeze(ctx, ids, 1), classes])          # (B, K, N)
        s3 = ctx.make("Where", [same, s3, neg])
    iou_t = ctx.const(np.asarray([iou], np.float32), "iou")
    low = ctx.const(np.asarray([LOWEST], np.float32), "score_min")
    sel = ctx.make("NonMaxSuppression", [boxes, s3, max_out, iou_t, low],
                   center_point_box=int(center))                            # (M, 3)
    return selected_mask(ctx, sel, scores)


def selected_mask(ctx: LoweringContext, selected: str, scores: str) -> str:
    """Boolean mask shaped like ``scores (B, N)``, true at the (batch, box) pairs of
    ``NonMaxSuppression``'s ``selected (M, 3)`` output (whatever their class)."""
    pairs = ctx.make("Gather", [selected, ctx.ints([0, 2], "batch_box")], axis=1)
    zeros = ctx.make("ConstantOfShape", [ctx.make("Shape", [scores])])
    count = ctx.make("Slice", [ctx.make("Shape", [selected]), ctx.ints([0], "s"),
                               ctx.ints([1], "e")])
    ones = ctx.make("ConstantOfShape", [count], value=as_tensor(np.float32(1)))
    mask = ctx.make("ScatterND", [zeros, pairs, ones])
    return ctx.make("Cast", [mask], to=onnx_type(np.bool_))


def order_kept(ctx: LoweringContext, keep: str, scores: str, n: str) -> tuple[str, str]:
    """(order, kept in that order): a ``TopK`` over all ``N`` rows ordering the kept rows by
    score (descending, ties by index) ahead of the others; ``n`` is N as a 1-element tensor."""
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    key = ctx.make("Where", [keep, scores, neg])
    _, order = ctx.make("TopK", [key, n], outputs=2, axis=1, largest=1, sorted=1)
    return order, ctx.make("GatherElements", [keep, order], axis=1)


def top_scores(ctx: LoweringContext, scores: str, k: int, n: str) -> str:
    """``scores (B, N)`` with ``-inf`` outside each row's ``k`` largest (``TopK`` takes the lower
    index among equals, as MXNet's stable sort); ``n`` is N as a 1-element tensor."""
    kk = ctx.make("Min", [ctx.ints([k], "topk"), n])
    _, best = ctx.make("TopK", [scores, kk], outputs=2, axis=1, largest=1, sorted=1)
    zeros = ctx.make("ConstantOfShape", [ctx.make("Shape", [scores])])
    ones = ctx.make("ConstantOfShape", [ctx.make("Shape", [best])], value=as_tensor(np.float32(1)))
    top = ctx.make("ScatterElements", [zeros, best, ones], axis=1)
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    return ctx.make("Where", [ctx.cast_to(top, np.bool_), scores, neg])


def gather_rows(ctx: LoweringContext, rows: str, order: str) -> str:
    """``rows (B, N, W)`` reordered by ``order (B, N)`` along N."""
    return ctx.make("GatherND", [rows, unsqueeze(ctx, order, 2)], batch_dims=1)


def take_rows(ctx: LoweringContext, rows: str, order: str, kept: str, fill) -> str:
    """``rows (B, N, W)`` in ``order``, rows not ``kept`` all ``fill``."""
    return ctx.make("Where", [unsqueeze(ctx, kept, 2), gather_rows(ctx, rows, order), fill])


def as_tensor(value: np.generic):
    from onnx import helper

    arr = np.asarray(value).reshape(1)
    return helper.make_tensor("value", onnx_type(arr.dtype), [1], arr.tolist())


def onnx_type(dtype) -> int:
    return dtypes.onnx_of(np.dtype(dtype))

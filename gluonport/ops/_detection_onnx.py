"""ONNX export of the bounding-box family (gluonport/ops/detection.py) and the NMS lowering the
SSD ops share.

``box_nms`` becomes ``NonMaxSuppression`` plus the bookkeeping that gives MXNet's layout back:

1. the rows MXNet would consider are masked in (``score > valid_thresh``, ``id !=
   background_id``, the ``topk`` best of those by a ``TopK``); every other row gets the score
   ``-inf``, which ``NonMaxSuppression``'s ``score_threshold`` (the lowest float) drops, so it
   can neither be kept nor suppress anything;
2. class-aware suppression runs ``NonMaxSuppression`` over one score row per class present in
   the data (``Unique`` of the ids, scores ``-inf`` outside the class) — exact, unlike the usual
   trick of shifting each class's boxes apart, which rounds the coordinates;
3. the selected (batch, box) pairs scatter into a keep mask; a full ``TopK`` on the kept scores
   orders the rows as MXNet writes them (score descending, ties by index) and rows past the kept
   ones become ``-1``.

Greedy NMS over score-sorted candidates is what both MXNet and onnxruntime run, with the same
strict ``iou > overlap_thresh`` test; onnxruntime breaks score ties by the lower index, as
MXNet's stable sort does (the ONNX spec leaves ties open, so other runtimes may differ). One
known difference: onnxruntime treats a corner box with ``x2 < x1`` (or a negative center-format
size) as its mirror image, MXNet gives it zero area.
"""

from __future__ import annotations

import numpy as np

from .lowering import LoweringContext, deliver, lowering
from .lowering.dims import Dims

__all__ = ["nms_keep", "selected_mask", "order_kept", "top_scores", "gather_rows", "take_rows",
           "work_dtype", "scalar", "column", "columns", "unsqueeze", "corners", "center_size"]

_LOWEST = np.float32(np.finfo(np.float32).min)


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
    low = ctx.const(np.asarray([_LOWEST], np.float32), "score_min")
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
    ones = ctx.make("ConstantOfShape", [count], value=_tensor(np.float32(1)))
    mask = ctx.make("ScatterND", [zeros, pairs, ones])
    return ctx.make("Cast", [mask], to=_onnx_type(np.bool_))


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
    ones = ctx.make("ConstantOfShape", [ctx.make("Shape", [best])], value=_tensor(np.float32(1)))
    top = ctx.make("ScatterElements", [zeros, best, ones], axis=1)
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    return ctx.make("Where", [ctx.cast_to(top, np.bool_), scores, neg])


def gather_rows(ctx: LoweringContext, rows: str, order: str) -> str:
    """``rows (B, N, W)`` reordered by ``order (B, N)`` along N."""
    return ctx.make("GatherND", [rows, unsqueeze(ctx, order, 2)], batch_dims=1)


def take_rows(ctx: LoweringContext, rows: str, order: str, kept: str, fill) -> str:
    """``rows (B, N, W)`` in ``order``, rows not ``kept`` all ``fill``."""
    return ctx.make("Where", [unsqueeze(ctx, kept, 2), gather_rows(ctx, rows, order), fill])


def _tensor(value: np.generic):
    from onnx import helper

    arr = np.asarray(value).reshape(1)
    return helper.make_tensor("value", _onnx_type(arr.dtype), [1], arr.tolist())


def _onnx_type(dtype) -> int:
    from .. import dtypes

    return dtypes.onnx_of(np.dtype(dtype))


# --- box_nms ---------------------------------------------------------------------------------
class _Rows:
    """``data [..., N, W]`` of a box_nms node seen as ``(B, N, W)`` in the work dtype."""

    def __init__(self, ctx: LoweringContext):
        self.dims = Dims(ctx)
        shape = self.dims.static
        self.rank = len(shape)
        if self.dims.dyn[-1]:
            raise ctx.fail("the last (row width) dimension of data must be fixed, not dynamic")
        self.width = shape[-1]
        self.dtype = np.dtype(ctx.dtype)
        self.work = work_dtype(self.dtype)
        self.n = self.dims.get([self.rank - 2])                   # N as a 1-element tensor
        if self.dims.dyn[-2]:
            target = ctx.make("Concat", [ctx.ints([-1], "b"), self.n,
                                         ctx.ints([self.width], "w")], axis=0)
        else:
            target = ctx.ints([-1, shape[-2], self.width], "bnw")
        x = ctx.make("Reshape", [ctx.inputs[0], target])
        self.x = cast(ctx, x, self.work, self.dtype)


def _candidates(ctx: LoweringContext, p, rows: _Rows) -> tuple[str, str]:
    """(float32 scores with -inf outside MXNet's candidates, their validity mask)."""
    x, work = rows.x, rows.work
    score = column(ctx, x, p.score_index)
    valid = ctx.make("Greater", [score, scalar(ctx, np.asarray(p.valid_thresh, rows.dtype),
                                                   work, "valid_thresh")])
    if p.id_index >= 0:
        bg = scalar(ctx, np.asarray(p.background_id, rows.dtype), work, "background")
        other = ctx.make("Not", [ctx.make("Equal", [column(ctx, x, p.id_index), bg])])
        valid = ctx.make("And", [valid, other])
    s32 = cast(ctx, score, np.float32, work)
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    masked = ctx.make("Where", [valid, s32, neg])
    limits = p.topk > 0 and (rows.dims.dyn[-2] or p.topk < rows.dims.static[-2])
    if limits:   # MXNet keeps the topk best candidates before suppressing
        masked = top_scores(ctx, masked, p.topk, rows.n)
    return masked, valid


def _convert_format(ctx: LoweringContext, out: str, start: int, width: int, to_center: bool,
                    work) -> str:
    """MXNet's output format change, applied to rows whose first coordinate is not < 0."""
    box = columns(ctx, out, start, start + 4)
    a, b, c, d = (columns(ctx, box, k, k + 1) for k in range(4))
    two = scalar(ctx, 2, work, "two")
    if to_center:
        new = [ctx.make("Div", [ctx.make("Add", [a, c]), two]),
               ctx.make("Div", [ctx.make("Add", [b, d]), two]),
               ctx.make("Sub", [c, a]), ctx.make("Sub", [d, b])]
    else:
        hw, hh = ctx.make("Div", [c, two]), ctx.make("Div", [d, two])
        new = [ctx.make("Sub", [a, hw]), ctx.make("Sub", [b, hh]),
               ctx.make("Add", [a, hw]), ctx.make("Add", [b, hh])]
    keep_old = ctx.make("Less", [a, scalar(ctx, 0, work, "zero")])
    box = ctx.make("Where", [keep_old, box, ctx.make("Concat", new, axis=2)])
    parts = ([columns(ctx, out, 0, start)] if start else []) + [box]
    if start + 4 < width:
        parts.append(columns(ctx, out, start + 4, width))
    return ctx.make("Concat", parts, axis=2) if len(parts) > 1 else box


def _nms_record(ctx: LoweringContext, rows: _Rows, order: str, kept: str) -> str:
    """The hidden output: flat input row index ``b * N + i`` of each output row, -1 past them."""
    n64 = rows.n
    batch = ctx.make("Gather", [ctx.make("Shape", [order]), ctx.const(np.asarray(0, np.int64))],
                     axis=0)
    base = ctx.make("Range", [ctx.const(np.asarray(0, np.int64)), batch,
                              ctx.const(np.asarray(1, np.int64))])
    base = ctx.make("Mul", [unsqueeze(ctx, base, 1), n64])
    flat = ctx.make("Add", [order, base])
    rec = ctx.make("Where", [kept, flat, ctx.const(np.asarray(-1, np.int64))])
    return ctx.cast_to(rec, rows.dtype)


def _reshape_back(ctx: LoweringContext, rows: _Rows, y: str, last: int | None = None) -> str:
    """``y (B, N, W')`` back to the input's leading dims, last dim ``last`` (default W)."""
    if last is None and any(rows.dims.dyn):
        return ctx.make("Reshape", [y, rows.dims.shape()])
    lead = [rows.dims.entry(k) for k in range(rows.rank - 1)]
    lead.append(rows.width if last is None else last)
    if not any(callable(e) for e in lead):
        return ctx.make("Reshape", [y, ctx.ints(lead, "shape")])
    parts = [e() if callable(e) else ctx.ints([e], "dim") for e in lead]
    return ctx.make("Reshape", [y, ctx.make("Concat", parts, axis=0)])


def _box_nms_identity(ctx: LoweringContext, rows: _Rows) -> None:
    """``topk=0``: MXNet returns the data unchanged (no format change) and ``arange`` records."""
    deliver(ctx, ctx.make("Identity", [ctx.inputs[0]]))
    if ctx.wants(1):
        total = ctx.make("ReduceProd", [rows.dims.get(range(rows.rank - 1))], keepdims=0)
        idx = ctx.make("Range", [ctx.const(np.asarray(0, np.int64)), total,
                                 ctx.const(np.asarray(1, np.int64))])
        deliver(ctx, _reshape_back(ctx, rows, ctx.cast_to(idx, rows.dtype), 1), 1)


def _box_nms_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    rows = _Rows(ctx)
    if p.topk == 0:
        return _box_nms_identity(ctx, rows)
    masked, _ = _candidates(ctx, p, rows)
    boxes = cast(ctx, columns(ctx, rows.x, p.coord_start, p.coord_start + 4), np.float32,
                 rows.work)
    ids = None
    if p.id_index >= 0 and not p.force_suppress:
        ids = ctx.make("Cast", [column(ctx, rows.x, p.id_index)], to=_onnx_type(np.int64))
    keep = nms_keep(ctx, boxes, masked, float(np.float32(p.overlap_thresh)), rows.n, ids,
                    center=p.in_format == "center")
    order, kept = order_kept(ctx, keep, masked, rows.n)
    out = take_rows(ctx, rows.x, order, kept, scalar(ctx, -1, rows.work, "minus_one"))
    if p.in_format != p.out_format:
        out = _convert_format(ctx, out, p.coord_start, rows.width, p.out_format == "center",
                              rows.work)
    out = _reshape_back(ctx, rows, cast(ctx, out, rows.dtype, rows.work))
    deliver(ctx, out)
    if ctx.wants(1):
        deliver(ctx, _reshape_back(ctx, rows, _nms_record(ctx, rows, order, kept), 1), 1)




# --- box_iou ---------------------------------------------------------------------------------
def corners(ctx: LoweringContext, box: str, fmt_name: str, work) -> list[str]:
    """``[x1, y1, x2, y2]`` (each ``[..., 1]``) of ``[..., 4]`` boxes, MXNet's arithmetic."""
    a, b, c, d = (columns(ctx, box, k, k + 1, axis=-1) for k in range(4))
    if fmt_name == "corner":
        return [a, b, c, d]
    two = scalar(ctx, 2, work, "two")
    hw, hh = ctx.make("Div", [c, two]), ctx.make("Div", [d, two])
    return [ctx.make("Sub", [a, hw]), ctx.make("Sub", [b, hh]),
            ctx.make("Add", [a, hw]), ctx.make("Add", [b, hh])]


def _area(ctx: LoweringContext, box: str, fmt_name: str, work) -> str:
    """MXNet's ``BoxArea``: width * height, 0 when either is negative."""
    if fmt_name == "corner":
        x1, y1, x2, y2 = (columns(ctx, box, k, k + 1, axis=-1) for k in range(4))
        w, h = ctx.make("Sub", [x2, x1]), ctx.make("Sub", [y2, y1])
    else:
        w, h = (columns(ctx, box, k, k + 1, axis=-1) for k in (2, 3))
    zero = scalar(ctx, 0, work, "zero")
    neg = ctx.make("Or", [ctx.make("Less", [w, zero]), ctx.make("Less", [h, zero])])
    return ctx.make("Where", [neg, zero, ctx.make("Mul", [w, h])])


def _box_iou_onnx(ctx: LoweringContext) -> None:
    """Pairwise IoU by broadcasting ``(L, 1, 4)`` against ``(1, R, 4)``."""
    fmt_name = ctx.params.format
    dtype = np.dtype(ctx.dtype)
    work = work_dtype(dtype)
    lhs = cast(ctx, ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1, 1, 4], "l")]), work,
               dtype)
    rhs = cast(ctx, ctx.make("Reshape", [ctx.inputs[1], ctx.ints([1, -1, 4], "r")]), work,
               dtype)
    a, b = corners(ctx, lhs, fmt_name, work), corners(ctx, rhs, fmt_name, work)
    zero = scalar(ctx, 0, work, "zero")
    side = []
    for lo, hi in ((0, 2), (1, 3)):
        span = ctx.make("Sub", [ctx.make("Min", [a[hi], b[hi]]), ctx.make("Max", [a[lo], b[lo]])])
        side.append(ctx.make("Max", [span, zero]))
    inter = ctx.make("Mul", side)
    union = ctx.make("Sub", [ctx.make("Add", [_area(ctx, lhs, fmt_name, work),
                                              _area(ctx, rhs, fmt_name, work)]), inter])
    iou = ctx.make("Where", [ctx.make("Greater", [inter, zero]),
                             ctx.make("Div", [inter, union]), zero])
    left, right = Dims(ctx, 0), Dims(ctx, 1)
    entries = ([left.entry(k) for k in range(len(left.static) - 1)]
               + [right.entry(k) for k in range(len(right.static) - 1)])
    out = cast(ctx, iou, dtype, work)
    deliver(ctx, ctx.make("Reshape", [out, _shape_of(ctx, entries)]))


def _shape_of(ctx: LoweringContext, entries: list) -> str:
    if not any(callable(e) for e in entries):
        return ctx.ints(entries, "shape")
    return ctx.make("Concat", [e() if callable(e) else ctx.ints([e], "dim") for e in entries],
                    axis=0)


# --- box_decode / box_encode -----------------------------------------------------------------
def center_size(ctx: LoweringContext, box: str, work) -> list[str]:
    """Corner boxes -> ``[cx, cy, w, h]`` (each ``[..., 1]``); ``x1 + w * 0.5`` rounds once,
    as MXNet's double product does."""
    x1, y1, x2, y2 = (columns(ctx, box, k, k + 1, axis=-1) for k in range(4))
    w, h = ctx.make("Sub", [x2, x1]), ctx.make("Sub", [y2, y1])
    half = scalar(ctx, 0.5, work, "half")
    return [ctx.make("Add", [x1, ctx.make("Mul", [w, half])]),
            ctx.make("Add", [y1, ctx.make("Mul", [h, half])]), w, h]


def _box_decode_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    dtype = np.dtype(ctx.dtype)
    work = work_dtype(dtype)
    data = cast(ctx, ctx.inputs[0], work, dtype)
    anc = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([1, -1, 4], "anchors")])
    anc = cast(ctx, anc, work, ctx.in_dtypes[1])
    if p.format == "corner":
        ax, ay, aw, ah = center_size(ctx, anc, work)
    else:
        ax, ay, aw, ah = (columns(ctx, anc, k, k + 1) for k in range(4))
    d = [columns(ctx, data, k, k + 1) for k in range(4)]
    std = [scalar(ctx, np.asarray(s, dtype), work, "std") for s in (p.std0, p.std1, p.std2,
                                                                     p.std3)]
    ox = ctx.make("Add", [ctx.make("Mul", [ctx.make("Mul", [d[0], std[0]]), aw]), ax])
    oy = ctx.make("Add", [ctx.make("Mul", [ctx.make("Mul", [d[1], std[1]]), ah]), ay])
    dw, dh = ctx.make("Mul", [d[2], std[2]]), ctx.make("Mul", [d[3], std[3]])
    if p.clip > 0:
        clip = scalar(ctx, np.asarray(p.clip, dtype), work, "clip")
        dw, dh = ctx.make("Min", [dw, clip]), ctx.make("Min", [dh, clip])
    half = scalar(ctx, 0.5, work, "half")
    ow = ctx.make("Mul", [ctx.make("Mul", [ctx.make("Exp", [dw]), aw]), half])
    oh = ctx.make("Mul", [ctx.make("Mul", [ctx.make("Exp", [dh]), ah]), half])
    out = ctx.make("Concat", [ctx.make("Sub", [ox, ow]), ctx.make("Sub", [oy, oh]),
                              ctx.make("Add", [ox, ow]), ctx.make("Add", [oy, oh])], axis=2)
    deliver(ctx, cast(ctx, out, dtype, work))


def _box_encode_onnx(ctx: LoweringContext) -> None:
    dtype = np.dtype(ctx.in_dtypes[2])
    work = work_dtype(dtype)
    samples, matches, anchors, refs, means, stds = (
        cast(ctx, name, work, ctx.in_dtypes[k]) for k, name in enumerate(ctx.inputs[:6]))
    valid = ctx.make("Greater", [samples, scalar(ctx, 0.5, work, "half")])          # (B, N)
    idx = ctx.make("Where", [valid, matches, scalar(ctx, 0, work, "zero")])
    idx = ctx.make("Cast", [idx], to=_onnx_type(np.int64))
    top = ctx.make("Sub", [Dims(ctx, 3).scalar(1), ctx.const(np.asarray(1, np.int64), "one")])
    top = ctx.make("Max", [top, ctx.const(np.asarray(0, np.int64), "zero")])
    idx = ctx.make("Clip", [idx, ctx.const(np.asarray(0, np.int64), "zero"), top])
    ref = ctx.make("GatherND", [refs, unsqueeze(ctx, idx, 2)], batch_dims=1)    # (B, N, 4)
    rx, ry, rw, rh = center_size(ctx, ref, work)
    ax, ay, aw, ah = center_size(ctx, anchors, work)
    raw = ctx.make("Concat", [ctx.make("Div", [ctx.make("Sub", [rx, ax]), aw]),
                              ctx.make("Div", [ctx.make("Sub", [ry, ay]), ah]),
                              ctx.make("Log", [ctx.make("Div", [rw, aw])]),
                              ctx.make("Log", [ctx.make("Div", [rh, ah])])], axis=2)
    target = ctx.make("Div", [ctx.make("Sub", [raw, means]), stds])
    mask = ctx.make("Expand", [unsqueeze(ctx, valid, 2), ctx.make("Shape", [target])])
    target = ctx.make("Where", [mask, target, scalar(ctx, 0, work, "zero")])
    deliver(ctx, cast(ctx, target, dtype, work), 0)
    if ctx.wants(1):
        deliver(ctx, ctx.make("Cast", [mask], to=_onnx_type(dtype)), 1)


lowering("_contrib_box_nms")(_box_nms_onnx)
lowering("_contrib_box_iou")(_box_iou_onnx)
lowering("_contrib_box_decode")(_box_decode_onnx)
lowering("_contrib_box_encode")(_box_encode_onnx)

"""Bounding-box operators of MXNet's contrib namespace: NMS, IoU, matching, box coding.

Semantics are MXNet 1.9.1's CPU kernels (``src/operator/contrib/bounding_box-inl.h``), quirks
included, because exported GluonCV detectors (YOLOv3, SSD, CenterNet, Faster R-CNN) depend on
them:

* every sort is *stable* (ties keep input order), as MXNet's ``std::stable_sort``;
* ``box_nms`` keeps the input row layout, writes suppressed rows as ``-1`` (whole row), applies
  ``valid_thresh``/``background_id`` before ``topk``, and converts the output format only for
  rows whose first coordinate is ``>= 0``;
* ``bipartite_matching`` with ``topk=k`` keeps ``k + 1`` matches (it checks after assigning).

The SSD ops (``MultiBox*``) live in ``multibox.py``, the helpers these files share in
``boxes.py``.

ONNX lowerings (below in this file):

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

from ..._core.attr_fields import Bool, Enum, Float, Int
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, deliver, lowering
from ..lowering.dims import Dims
from ..registry import define, zero_gradient
from .boxes import (
    FORMATS,
    as_f32,
    box_area,
    cast,
    column,
    columns,
    corner_boxes,
    greedy_nms,
    intersection,
    last_dim,
    min_ndim,
    nms_keep,
    onnx_type,
    order_kept,
    scalar,
    take_rows,
    top_scores,
    unsqueeze,
    work_dtype,
)

__all__ = ["corners", "center_size"]


# --- box_nms ---------------------------------------------------------------------------------
def _nms_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None]
    min_ndim(data, 2, "data", "box_nms")
    width = data[-1]
    need = 5 + (p.id_index >= 0)
    if width and width < need:
        raise ShapeError(f"box_nms: the last dimension of data {fmt(data)} must have at least "
                         f"{need} elements (score, 4 coordinates{', class id' * (need > 5)})")
    _check_nms_indices(p, width)
    return [data], [data, tuple(data[:-1]) + (1,)]


def _check_nms_indices(p, width: int) -> None:
    cs, ce = p.coord_start, p.coord_start + 3
    problems = []
    if width and not 0 <= p.score_index < width:
        problems.append(f"score_index={p.score_index} is out of range [0, {width})")
    if cs <= p.score_index <= ce:
        problems.append(f"score_index={p.score_index} overlaps coordinates [{cs}, {ce}]")
    if cs < 0 or (width and ce >= width):
        problems.append(f"coordinates [{cs}, {ce}] are out of range [0, {width})")
    if p.id_index >= 0:
        if width and p.id_index >= width:
            problems.append(f"id_index={p.id_index} is out of range [0, {width})")
        if cs <= p.id_index <= ce or p.id_index == p.score_index:
            problems.append(f"id_index={p.id_index} overlaps the score or coordinates")
    if problems:
        raise OpAttributeError("box_nms: " + "; ".join(problems))


def _convert_rows(out: np.ndarray, start: int, to_center: bool) -> None:
    """In-place format change of rows whose first coordinate is >= 0 (MXNet skips others)."""
    box = out[:, start:start + 4]
    rows = ~(box[:, 0] < 0)
    a, b, c, d = (box[rows, k] for k in range(4))
    if to_center:
        new = ((a + c) / 2, (b + d) / 2, c - a, d - b)
    else:
        new = (a - c / 2, b - d / 2, a + c / 2, b + d / 2)
    box[rows] = np.stack(new, axis=-1)


def _nms_one(p, x: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Greedy NMS of one batch item's candidates (sorted); returns the kept rows of ``x``."""
    boxes = x[cand, p.coord_start:p.coord_start + 4]
    areas = box_area(boxes, p.in_format)
    x1, y1, x2, y2 = corner_boxes(boxes, p.in_format)
    ids = x[cand, p.id_index].astype(np.int64) if p.id_index >= 0 else None
    thresh = as_f32(p.overlap_thresh)
    zero = np.zeros((), dtype=boxes.dtype)

    def suppress(i, js):
        w = np.minimum(x2[i], x2[js]) - np.maximum(x1[i], x1[js])
        h = np.minimum(y2[i], y2[js]) - np.maximum(y1[i], y1[js])
        inter = np.maximum(w, zero) * np.maximum(h, zero)
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[i] + areas[js] - inter)
        hit = iou > thresh
        if ids is not None and not p.force_suppress:
            hit &= ids[js] == ids[i]
        return hit

    return cand[greedy_nms(len(cand), suppress)]


def _box_nms(p, data):
    shape = data.shape
    n, width = shape[-2], shape[-1]
    x = data.reshape(-1, n, width)
    batch = x.shape[0]
    topk = n if p.topk < 0 else min(n, p.topk)
    if topk < 1:
        return data.copy(), np.arange(batch * n, dtype=data.dtype).reshape(shape[:-1] + (1,))
    out = np.full_like(x, -1)
    record = np.full((batch, n), -1, dtype=data.dtype)
    scores = x[..., p.score_index]
    valid = scores > np.asarray(p.valid_thresh, dtype=data.dtype)
    if p.id_index >= 0:
        valid &= x[..., p.id_index] != np.asarray(p.background_id, dtype=data.dtype)
    if valid.any():
        for b in range(batch):
            idx = np.flatnonzero(valid[b])
            cand = idx[np.argsort(-scores[b, idx], kind="stable")][:topk]
            keep = _nms_one(p, x[b], cand)
            out[b, :len(keep)] = x[b, keep]
            record[b, :len(keep)] = keep + b * n
        if p.in_format != p.out_format:
            _convert_rows(out.reshape(-1, width), p.coord_start, p.out_format == "center")
    return out.reshape(shape), record.reshape(shape[:-1] + (1,))


define(
    "_contrib_box_nms",
    params={"overlap_thresh": Float(0.5), "valid_thresh": Float(0.0), "topk": Int(-1),
            "coord_start": Int(2), "score_index": Int(1), "id_index": Int(-1),
            "background_id": Int(-1), "force_suppress": Bool(False),
            "in_format": Enum(FORMATS, "corner"), "out_format": Enum(FORMATS, "corner")},
    compute=_box_nms, infer_shape=_nms_shape, num_outputs=2, num_visible_outputs=1,
    aliases=("_contrib_box_non_maximum_suppression",),
    doc="Non-maximum suppression of ``[..., N, W]`` box rows; suppressed rows become -1.",
    check_shapes=True, lists_input_names=False,
    gradient=lambda F, p, ins, outs, ogs: [
        F._internal._backward_contrib_box_nms(ogs[0], outs[1])])


def _box_nms_backward(p, og: np.ndarray, record: np.ndarray) -> np.ndarray:
    """Each output row's gradient copied back to the input row it came from (``record``, the
    flat row index; -1 for none), zeros elsewhere: MXNet's ``nms_backward``. Like MXNet, the
    gradient is not converted back when ``out_format`` differs from ``in_format``."""
    rows = og.reshape(-1, og.shape[-1])
    src = record.reshape(-1).astype(np.int64)
    grad = np.zeros_like(rows)
    kept = src >= 0
    grad[src[kept]] = rows[kept]
    return grad.reshape(og.shape)


define(
    "_backward_contrib_box_nms", params={}, inputs=("ograd", "record"),
    compute=_box_nms_backward, infer_shape=lambda p, s: (s, [s[0]]),
    infer_type=lambda p, t: (t, [t[0]]),
    no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
    doc="box_nms's gradient: inputs (ograd of the output, the hidden record output); each "
        "kept row's gradient goes back to its input row.")


# --- box_iou ---------------------------------------------------------------------------------
def _iou_shape(p, in_shapes):
    lhs, rhs = in_shapes
    for s, what in ((lhs, "lhs"), (rhs, "rhs")):
        min_ndim(s, 2, what, "box_iou")
        last_dim(s, 4, what, "box_iou")
    if lhs is None or rhs is None:
        return in_shapes, [None]
    return in_shapes, [tuple(lhs[:-1]) + tuple(rhs[:-1])]


def _box_iou(p, lhs, rhs):
    a = lhs.reshape(-1, 1, 4)
    b = rhs.reshape(1, -1, 4)
    inter = intersection(a, b, p.format)
    union = box_area(a, p.format) + box_area(b, p.format) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(inter > 0, inter / union, np.zeros_like(inter))
    return iou.astype(lhs.dtype, copy=False).reshape(lhs.shape[:-1] + rhs.shape[:-1])


define(
    "_contrib_box_iou", params={"format": Enum(FORMATS, "corner")},
    compute=_box_iou, inputs=("lhs", "rhs"), infer_shape=_iou_shape,
    doc="Pairwise IoU of ``lhs [..., 4]`` and ``rhs [..., 4]`` boxes.", check_shapes=True,
    gradient=zero_gradient)  # MXNet's _backward_contrib_box_iou writes zeros


# --- bipartite_matching ----------------------------------------------------------------------
def _matching_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None]
    min_ndim(data, 2, "data", "bipartite_matching")
    return in_shapes, [tuple(data[:-1]), tuple(data[:-2]) + (data[-1],)]


def _match_one(p, scores: np.ndarray, rows: int, cols: int):
    """Greedy matching of one score matrix, MXNet's ``bipartite_matching`` kernel."""
    flat = scores.reshape(-1)
    order = np.argsort(flat if p.is_ascend else -flat, kind="stable")
    r_of, c_of, s = order // cols, order % cols, flat[order]
    thresh = as_f32(p.threshold)
    row_mark = np.full(rows, -1, dtype=scores.dtype)
    col_mark = np.full(cols, -1, dtype=scores.dtype)
    free = np.ones(order.size, dtype=bool)
    count = 0
    while True:
        nxt = np.flatnonzero(free)
        if not nxt.size:
            break
        k = int(nxt[0])
        ok = s[k] < thresh if p.is_ascend else s[k] > thresh
        if not ok:
            break  # MXNet stops at the first available pair that fails the threshold
        r, c = r_of[k], c_of[k]
        row_mark[r], col_mark[c] = c, r
        count += 1
        if 0 < p.topk < count:
            break  # MXNet checks after assigning, so topk=k keeps k + 1 matches
        free &= (r_of != r) & (c_of != c)
    return row_mark, col_mark


def _bipartite_matching(p, data):
    rows, cols = data.shape[-2], data.shape[-1]
    x = data.reshape(-1, rows, cols)
    row_out = np.empty((x.shape[0], rows), dtype=data.dtype)
    col_out = np.empty((x.shape[0], cols), dtype=data.dtype)
    for b in range(x.shape[0]):
        row_out[b], col_out[b] = _match_one(p, x[b], rows, cols)
    return (row_out.reshape(data.shape[:-1]),
            col_out.reshape(data.shape[:-2] + (cols,)))


define(
    "_contrib_bipartite_matching",
    params={"is_ascend": Bool(False), "threshold": Float(), "topk": Int(-1)},
    compute=_bipartite_matching, infer_shape=_matching_shape, num_outputs=2,
    no_onnx="a sequential greedy matching (each accepted pair removes its row and column "
            "before the next pick) with no ONNX operator to express it short of a Loop; it "
            "builds training targets (SSD), not inference outputs",
    doc="Greedy bipartite matching of a ``[..., R, C]`` score matrix.", check_shapes=True,
    lists_input_names=False,
    gradient=zero_gradient)  # MXNet's _backward_contrib_bipartite_matching writes zeros


# --- box_encode / box_decode -----------------------------------------------------------------
def _encode_shape(p, in_shapes):
    samples, matches, anchors, refs = in_shapes[:4]
    if samples is not None and len(samples) != 2:
        raise ShapeError(f"box_encode: samples must be 2-d, got shape {fmt(samples)}")
    min_ndim(matches, 2, "matches", "box_encode")
    for s, what in ((anchors, "anchors"), (refs, "refs")):
        min_ndim(s, 3, what, "box_encode")
        last_dim(s, 4, what, "box_encode")
    if anchors is not None and samples is not None:
        merge(samples, tuple(anchors[:2]), "box_encode samples vs anchors: ")
        if matches is not None:
            merge(matches, tuple(anchors[:2]), "box_encode matches vs anchors: ")
    means = merge(in_shapes[4], (4,), "box_encode means: ")
    stds = merge(in_shapes[5], (4,), "box_encode stds: ")
    ins = [samples, matches, anchors, refs, means, stds]
    out = None if anchors is None else tuple(anchors)
    return ins, [out, out]


def _center_size(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Corner boxes -> (cx, cy, w, h); the half-width product is double in MXNet's kernel."""
    w = boxes[..., 2] - boxes[..., 0]
    h = boxes[..., 3] - boxes[..., 1]
    cx = (boxes[..., 0] + w.astype(np.float64) * 0.5).astype(boxes.dtype)
    cy = (boxes[..., 1] + h.astype(np.float64) * 0.5).astype(boxes.dtype)
    return cx, cy, w, h


def _box_encode(p, samples, matches, anchors, refs, means, stds):
    b, n = anchors.shape[0], anchors.shape[1]
    m = refs.shape[1]
    dt = anchors.dtype
    samples, matches = samples.reshape(b, n), matches.reshape(b, n)
    valid = samples > 0.5
    idx = np.clip(np.where(valid, matches, 0).astype(np.int64), 0, max(m - 1, 0))
    ref = np.take_along_axis(refs.reshape(b, m, 4), idx[..., None], axis=1)
    rx, ry, rw, rh = _center_size(ref)
    ax, ay, aw, ah = _center_size(anchors.reshape(b, n, 4))
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.stack([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw), np.log(rh / ah)], -1)
        target = (raw - means.astype(dt)) / stds.astype(dt)
    mask = np.broadcast_to(valid[..., None], target.shape)
    return (np.where(mask, target, np.zeros((), dt)).astype(dt),
            mask.astype(dt))


define(
    "_contrib_box_encode", params={}, compute=_box_encode,
    inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    infer_shape=_encode_shape, num_outputs=2,
    doc="Encode matched reference boxes against anchors: (targets, masks).", check_shapes=True,
    gradient=zero_gradient)  # MXNet: MakeZeroGradNodes


def _decode_shape(p, in_shapes):
    data, anchors = in_shapes
    if data is not None and len(data) != 3:
        raise ShapeError(f"box_decode: data must be 3-d (batch, N, 4), got shape {fmt(data)}")
    last_dim(data, 4, "data", "box_decode")
    min_ndim(anchors, 3, "anchors", "box_decode")
    last_dim(anchors, 4, "anchors", "box_decode")
    return in_shapes, [None if data is None else tuple(data)]


def _box_decode(p, data, anchors):
    dt = data.dtype
    n = data.shape[1]
    if anchors.size != n * 4:
        raise ShapeError(f"box_decode: anchors {fmt(anchors.shape)} must hold exactly N={n} "
                         "boxes (1, N, 4)")
    anc = anchors.reshape(1, n, 4)
    if p.format == "corner":
        ax, ay, aw, ah = _center_size(anc)
    else:
        ax, ay, aw, ah = (anc[..., k] for k in range(4))
    std = [np.asarray(s, dtype=dt) for s in (p.std0, p.std1, p.std2, p.std3)]
    ox = data[..., 0] * std[0] * aw + ax
    oy = data[..., 1] * std[1] * ah + ay
    dw, dh = data[..., 2] * std[2], data[..., 3] * std[3]
    if p.clip > 0:
        clip = np.asarray(p.clip, dtype=dt)
        dw, dh = np.minimum(dw, clip), np.minimum(dh, clip)
    half_w = (np.exp(dw) * aw).astype(np.float64) * 0.5
    half_h = (np.exp(dh) * ah).astype(np.float64) * 0.5
    ow, oh = half_w.astype(dt), half_h.astype(dt)
    return np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1).astype(dt)


define(
    "_contrib_box_decode",
    params={"std0": Float(1.0), "std1": Float(1.0), "std2": Float(1.0), "std3": Float(1.0),
            "clip": Float(-1.0), "format": Enum(FORMATS, "center")},
    compute=_box_decode, inputs=("data", "anchors"), infer_shape=_decode_shape,
    doc="Decode ``(B, N, 4)`` box regressions against anchors into corner boxes.",
    check_shapes=True, gradient=zero_gradient)  # MXNet: MakeZeroGradNodes


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
        ids = ctx.make("Cast", [column(ctx, rows.x, p.id_index)], to=onnx_type(np.int64))
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
    idx = ctx.make("Cast", [idx], to=onnx_type(np.int64))
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
        deliver(ctx, ctx.make("Cast", [mask], to=onnx_type(dtype)), 1)


def _box_nms_backward_onnx(ctx: LoweringContext) -> None:
    """``ScatterND`` of the ``(M, W)`` gradient rows to their recorded input rows; rows without
    a record (-1) go to an extra last row, dropped after."""
    width = int(ctx.in_shapes[0][-1])
    rows = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1, width], "rows")])
    count = ctx.make("Slice", [ctx.make("Shape", [rows]), ctx.ints([0], "s"), ctx.ints([1], "e")])
    src = ctx.cast_to(ctx.make("Reshape", [ctx.inputs[1], ctx.ints([-1, 1], "col")]), np.int64)
    src = ctx.make("Where", [ctx.make("Less", [src, ctx.const(np.asarray(0, np.int64), "zero")]),
                             count, src])
    from onnx import numpy_helper

    zero = numpy_helper.from_array(np.zeros(1, np.dtype(ctx.in_dtypes[0])), "value")
    size = ctx.make("Concat", [ctx.make("Add", [count, ctx.ints([1], "one")]),
                               ctx.ints([width], "width")], axis=0)
    zeros = ctx.make("ConstantOfShape", [size], value=zero)
    grad = ctx.make("ScatterND", [zeros, src, rows])
    grad = ctx.make("Slice", [grad, ctx.ints([0], "s0"), count, ctx.ints([0], "ax")])
    ctx.make("Reshape", [grad, ctx.make("Shape", [ctx.inputs[0]])], outputs=[ctx.outputs[0]])


lowering("_contrib_box_nms")(_box_nms_onnx)
lowering("_backward_contrib_box_nms")(_box_nms_backward_onnx)
lowering("_contrib_box_iou")(_box_iou_onnx)
lowering("_contrib_box_decode")(_box_decode_onnx)
lowering("_contrib_box_encode")(_box_encode_onnx)

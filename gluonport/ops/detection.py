"""Bounding-box operators of MXNet's contrib namespace: NMS, IoU, matching, box coding.

Semantics are MXNet 1.9.1's CPU kernels (``src/operator/contrib/bounding_box-inl.h``), quirks
included, because exported GluonCV detectors (YOLOv3, SSD, CenterNet, Faster R-CNN) depend on
them:

* every sort is *stable* (ties keep input order), as MXNet's ``std::stable_sort``;
* ``box_nms`` keeps the input row layout, writes suppressed rows as ``-1`` (whole row), applies
  ``valid_thresh``/``background_id`` before ``topk``, and converts the output format only for
  rows whose first coordinate is ``>= 0``;
* ``bipartite_matching`` with ``topk=k`` keeps ``k + 1`` matches (it checks after assigning).

The SSD ops (``MultiBox*``) live in ``multibox.py``; this module also holds the helpers the
detection-family modules share (greedy NMS, shape-checked registration, float32-only rule).

Greedy suppression loops over the boxes it *keeps* (each step vectorized over the rest), never
over every pair.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..attrs import Bool, Enum, Float, Int
from ..errors import DTypeError, OpAttributeError, ShapeError
from ._shape import fmt, merge
from .registry import OpDef, register

__all__ = ["as_f32", "corner_boxes", "float32_only", "greedy_nms", "last_dim", "op_def",
           "require_float32", "shape_checked"]

_FORMATS = ("corner", "center")


# --- shared helpers --------------------------------------------------------------------------
def op_def(name: str, *, compute: Callable, infer_shape: Callable, **kwargs) -> OpDef:
    """Register an op whose compute first runs its shape rule (see :func:`shape_checked`)."""
    return register(OpDef(name, compute=shape_checked(infer_shape, compute),
                          infer_shape=infer_shape, **kwargs))


def shape_checked(rule: Callable, fn: Callable) -> Callable:
    """``fn`` after the op's shape rule has vetted the actual input shapes, so an imperative
    call fails with the same :class:`ShapeError`/:class:`OpAttributeError` as inference
    (MXNet infers shapes before every imperative call) instead of deep inside numpy."""
    @functools.wraps(fn)
    def compute(p, *arrays):
        rule(p, [a.shape for a in arrays])
        return fn(p, *arrays)
    return compute


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


def _box_area(boxes: np.ndarray, fmt_name: str) -> np.ndarray:
    """MXNet's ``BoxArea``: width * height, 0 when either is negative."""
    if fmt_name == "corner":
        w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    else:
        w, h = boxes[..., 2], boxes[..., 3]
    return np.where((w < 0) | (h < 0), np.zeros_like(w), w * h)


def _intersection(a: np.ndarray, b: np.ndarray, fmt_name: str) -> np.ndarray:
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


def _min_ndim(shape, ndim: int, what: str, op: str) -> None:
    if shape is not None and len(shape) < ndim:
        raise ShapeError(f"{op}: {what} must have at least {ndim} dims, got shape {fmt(shape)}")


# --- box_nms ---------------------------------------------------------------------------------
def _nms_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None]
    _min_ndim(data, 2, "data", "box_nms")
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
    areas = _box_area(boxes, p.in_format)
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


op_def(
    "_contrib_box_nms",
    params={"overlap_thresh": Float(0.5), "valid_thresh": Float(0.0), "topk": Int(-1),
            "coord_start": Int(2), "score_index": Int(1), "id_index": Int(-1),
            "background_id": Int(-1), "force_suppress": Bool(False),
            "in_format": Enum(_FORMATS, "corner"), "out_format": Enum(_FORMATS, "corner")},
    compute=_box_nms, infer_shape=_nms_shape, num_outputs=2, num_visible_outputs=1,
    aliases=("_contrib_box_non_maximum_suppression",),
    doc="Non-maximum suppression of ``[..., N, W]`` box rows; suppressed rows become -1.")


# --- box_iou ---------------------------------------------------------------------------------
def _iou_shape(p, in_shapes):
    lhs, rhs = in_shapes
    for s, what in ((lhs, "lhs"), (rhs, "rhs")):
        _min_ndim(s, 2, what, "box_iou")
        last_dim(s, 4, what, "box_iou")
    if lhs is None or rhs is None:
        return in_shapes, [None]
    return in_shapes, [tuple(lhs[:-1]) + tuple(rhs[:-1])]


def _box_iou(p, lhs, rhs):
    a = lhs.reshape(-1, 1, 4)
    b = rhs.reshape(1, -1, 4)
    inter = _intersection(a, b, p.format)
    union = _box_area(a, p.format) + _box_area(b, p.format) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(inter > 0, inter / union, np.zeros_like(inter))
    return iou.astype(lhs.dtype, copy=False).reshape(lhs.shape[:-1] + rhs.shape[:-1])


op_def(
    "_contrib_box_iou", params={"format": Enum(_FORMATS, "corner")},
    compute=_box_iou, inputs=("lhs", "rhs"), infer_shape=_iou_shape,
    doc="Pairwise IoU of ``lhs [..., 4]`` and ``rhs [..., 4]`` boxes.")


# --- bipartite_matching ----------------------------------------------------------------------
def _matching_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None]
    _min_ndim(data, 2, "data", "bipartite_matching")
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


op_def(
    "_contrib_bipartite_matching",
    params={"is_ascend": Bool(False), "threshold": Float(), "topk": Int(-1)},
    compute=_bipartite_matching, infer_shape=_matching_shape, num_outputs=2,
    no_onnx="a sequential greedy matching (each accepted pair removes its row and column "
            "before the next pick) with no ONNX operator to express it short of a Loop; it "
            "builds training targets (SSD), not inference outputs",
    doc="Greedy bipartite matching of a ``[..., R, C]`` score matrix.")


# --- box_encode / box_decode -----------------------------------------------------------------
def _encode_shape(p, in_shapes):
    samples, matches, anchors, refs = in_shapes[:4]
    if samples is not None and len(samples) != 2:
        raise ShapeError(f"box_encode: samples must be 2-d, got shape {fmt(samples)}")
    _min_ndim(matches, 2, "matches", "box_encode")
    for s, what in ((anchors, "anchors"), (refs, "refs")):
        _min_ndim(s, 3, what, "box_encode")
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


op_def(
    "_contrib_box_encode", params={}, compute=_box_encode,
    inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    infer_shape=_encode_shape, num_outputs=2,
    doc="Encode matched reference boxes against anchors: (targets, masks).")


def _decode_shape(p, in_shapes):
    data, anchors = in_shapes
    if data is not None and len(data) != 3:
        raise ShapeError(f"box_decode: data must be 3-d (batch, N, 4), got shape {fmt(data)}")
    last_dim(data, 4, "data", "box_decode")
    _min_ndim(anchors, 3, "anchors", "box_decode")
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


op_def(
    "_contrib_box_decode",
    params={"std0": Float(1.0), "std1": Float(1.0), "std2": Float(1.0), "std3": Float(1.0),
            "clip": Float(-1.0), "format": Enum(_FORMATS, "center")},
    compute=_box_decode, inputs=("data", "anchors"), infer_shape=_decode_shape,
    doc="Decode ``(B, N, 4)`` box regressions against anchors into corner boxes.")


from . import _detection_onnx  # noqa: E402,F401  (attaches the ONNX export handlers)

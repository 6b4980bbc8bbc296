"""Region-of-interest operators: ROIPooling, ROIAlign, PSROIPooling, Proposal, MultiProposal.

MXNet 1.9.1's CPU semantics (``src/operator/roi_pooling.cc``, ``contrib/roi_align.cc``,
``contrib/psroi_pooling.cc``, ``contrib/proposal.cc``, ``contrib/multi_proposal.cc``), used by
GluonCV's Faster/Mask R-CNN and R-FCN. Bins and weights are computed for all ROIs at once:

* ROIPooling takes per-bin maxima one ROI at a time: a row pass then a column pass, each a
  ``fmax.reduce`` per bin over the window the ROI covers;
* ROIAlign's bilinear samples are separable, so a ROI's output is ``Ay @ window @ Ax.T`` with
  interpolation matrices built for all ROIs at once by ``np.bincount`` (two small BLAS
  products per ROI);
* PSROIPooling's bin averages come from an integral image;
* the proposal ops run greedy NMS over the boxes they keep.

ROIPooling's hidden ``maxidx`` output (backward bookkeeping) is returned as -1. A ROI whose batch
index names no image gives zeros (MXNet zeroes negative indices and reads out of bounds for
too-large ones).
"""

from __future__ import annotations

import numpy as np

from ..attrs import Bool, Float, FloatTuple, Int, Shape
from ..errors import OpAttributeError, ShapeError
from ._shape import fmt, merge
from .detection import float32_only, greedy_nms, op_def, require_float32

__all__: list[str] = []

_FLT_MAX = np.finfo(np.float32).max


def _round_away(x: np.ndarray) -> np.ndarray:
    """C's ``round``: halves go away from zero (numpy rounds them to even)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _calc_dtype(dtype: np.dtype) -> type:
    """float64 data computes in double; float32/float16 in float, as MXNet's kernels."""
    return np.float64 if dtype == np.float64 else np.float32


def _roi_shape(op: str, p, in_shapes, channels_out=None):
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise ShapeError(f"{op}: data must be 4-d (batch, channel, height, width), got shape "
                         f"{fmt(data)}")
    if rois is not None and (len(rois) != 2 or rois[1] not in (0, 5)):
        raise ShapeError(f"{op}: rois must be 2-d (num_rois, 5) rows [batch_index, x1, y1, x2, "
                         f"y2], got shape {fmt(rois)}")
    if data is None or rois is None:
        return in_shapes, None
    ph, pw = _pooled(p)
    chan = data[1] if channels_out is None else channels_out(data[1])
    return in_shapes, (rois[0], chan, ph, pw)


def _pooled(p) -> tuple[int, int]:
    size = p.pooled_size
    if isinstance(size, int):
        return size, size
    if len(size) != 2 or min(size) < 1:
        raise OpAttributeError(f"pooled_size={size} must be two positive ints (height, width)")
    return size[0], size[1]


def _batch_index(rois: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Each ROI's image (C's float-to-int truncation) and whether it names a real image."""
    index = rois[:, 0].astype(np.int64)
    return index, (index >= 0) & (index < batch)


def _window(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last True along the last axis of ``(R, N)`` masks (0, 0 if none)."""
    size = mask.shape[-1]
    lo = np.argmax(mask, axis=-1)
    hi = size - np.argmax(mask[..., ::-1], axis=-1)
    empty = ~mask.any(axis=-1)
    return np.where(empty, 0, lo), np.where(empty, 0, hi)


# --- ROIPooling ------------------------------------------------------------------------------
def _bin_max(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """NaN-ignoring max over rows ``[lo, hi)`` (-inf when empty), as MXNet's ``>`` scan skips
    NaN. Reducing leading rows keeps the inner loop long; a slice and ``fmax.reduce`` per bin
    is much faster than ``fmax.reduceat`` here."""
    if hi <= lo:
        return np.full(a.shape[1:], -np.inf, dtype=a.dtype)
    return np.fmax.reduce(a[lo:hi], axis=0)


def _pool_bins(start: np.ndarray, length: np.ndarray, pooled: int, limit: int, dt):
    """Integer bin bounds ``(R, pooled)`` of ROIPooling: floor/ceil of bin multiples."""
    bin_size = length.astype(dt) / dt(pooled)
    k = np.arange(pooled, dtype=dt)
    lo = np.floor(k * bin_size[:, None]).astype(np.int64) + start[:, None]
    hi = np.ceil((k + 1) * bin_size[:, None]).astype(np.int64) + start[:, None]
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def _pool_one(img: np.ndarray, hs, he, ws, we) -> np.ndarray:
    """Bin maxima ``(C, PH, PW)`` of one ROI over its window of ``img (C, H, W)``."""
    y0, x0 = hs.min(), ws.min()
    crop = np.ascontiguousarray(img[:, y0:he.max(), x0:we.max()].transpose(1, 2, 0))
    rows = np.stack([_bin_max(crop, a, b) for a, b in zip(hs - y0, he - y0)])   # (PH, w, C)
    rows = np.ascontiguousarray(rows.transpose(1, 0, 2))                         # (w, PH, C)
    out = np.stack([_bin_max(rows, a, b) for a, b in zip(ws - x0, we - x0)])    # (PW, PH, C)
    out = out.transpose(2, 1, 0)
    empty = (he <= hs)[:, None] | (we <= ws)[None, :]
    return np.where(empty, 0, np.fmax(out, -_FLT_MAX))


def _roi_pooling(p, data, rois):
    """One iteration per ROI, each a few vectorized calls over the ROI's window."""
    ph, pw = _pooled(p)
    batch, chans, height, width = data.shape
    dt = _calc_dtype(data.dtype)
    out = np.zeros((rois.shape[0], chans, ph, pw), dtype=data.dtype)
    corner = _round_away(rois[:, 1:5].astype(dt) * dt(p.spatial_scale)).astype(np.int64)
    x1, y1, x2, y2 = corner.T
    hs, he = _pool_bins(y1, np.maximum(y2 - y1 + 1, 1), ph, height, dt)
    ws, we = _pool_bins(x1, np.maximum(x2 - x1 + 1, 1), pw, width, dt)
    index, ok = _batch_index(rois, batch)
    ok &= (he > hs).any(axis=1) & (we > ws).any(axis=1)
    for r in np.flatnonzero(ok):
        out[r] = _pool_one(data[index[r]], hs[r], he[r], ws[r], we[r])
    return out, np.full(out.shape, -1, dtype=np.int32)


def _roi_pooling_shape(p, in_shapes):
    ins, out = _roi_shape("ROIPooling", p, in_shapes)
    return ins, [out, out]


def _roi_pooling_type(p, in_types):
    dt = next((t for t in in_types if t is not None), None)
    return [dt, dt], [dt, np.dtype(np.int32)]


op_def(
    "ROIPooling", params={"pooled_size": Shape(), "spatial_scale": Float()},
    compute=_roi_pooling, inputs=("data", "rois"), infer_shape=_roi_pooling_shape,
    infer_type=_roi_pooling_type, num_outputs=2, num_visible_outputs=1,
    output_names=("output", "maxidx"), aliases=("_npx_roi_pooling",),
    doc="Max pooling of each ROI ``[batch, x1, y1, x2, y2]`` into ``pooled_size`` bins.")


# --- ROIAlign --------------------------------------------------------------------------------
def _interp_matrix(start, bin_size, grid, pooled: int, size: int, dt) -> np.ndarray:
    """Summed bilinear weights ``(R, pooled, size)`` of ROIAlign's samples along one axis.

    Sample ``i`` of bin ``k`` sits at ``start + k*bin + (i + .5)*bin/grid``; samples outside
    ``[-1, size]`` weigh nothing, others clamp to the border as MXNet's pre-calculation does.
    """
    n, gmax = len(start), int(grid.max()) if len(grid) else 1
    k = np.arange(pooled, dtype=dt)[None, :, None]
    i = np.arange(gmax, dtype=dt)[None, None, :]
    pos = (start[:, None, None] + k * bin_size[:, None, None]
           + (i + dt(0.5)) * bin_size[:, None, None] / grid[:, None, None].astype(dt))
    used = (np.arange(gmax)[None, None, :] < grid[:, None, None]) & (pos >= -1) & (pos <= size)
    pos = np.maximum(pos, dt(0))
    low = np.floor(pos).astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, dt(0), pos - low.astype(dt))
    rows = (np.arange(n)[:, None, None] * pooled + np.arange(pooled)[None, :, None]) * size
    weights = np.where(used, 1, 0).astype(dt)
    flat = np.concatenate([(rows + low).ravel(), (rows + high).ravel()])
    vals = np.concatenate([((1 - frac) * weights).ravel(), (frac * weights).ravel()])
    return np.bincount(flat, vals, minlength=n * pooled * size).reshape(n, pooled, size)


def _align_geometry(p, rois: np.ndarray, valid: np.ndarray, dt):
    """Start, bin size and sampling grid per ROI and axis (x first), MXNet's arithmetic."""
    ph, pw = _pooled(p)
    offset = dt(0.5) if p.aligned else dt(0)
    box = rois[:, 1:5].astype(dt) * dt(p.spatial_scale) - offset
    size = np.stack([box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]], axis=1)   # (R, 2) w, h
    if p.aligned:
        if np.any(~(size[valid] > 0)):
            raise ShapeError("ROIAlign: with aligned=True every ROI needs positive width and "
                             "height; check the rois input")
    else:
        size = np.maximum(size, dt(1))
    pooled = np.array([pw, ph], dtype=dt)
    bins = size / pooled
    if p.sample_ratio > 0:
        grid = np.full(size.shape, p.sample_ratio, dtype=np.int64)
    else:
        grid = np.maximum(np.ceil(size / pooled), 1).astype(np.int64)
    return box[:, :2], bins, grid


def _align_one(img: np.ndarray, ay: np.ndarray, ax: np.ndarray, ps: bool) -> np.ndarray:
    """``Ay @ img @ Ax.T`` per channel over the window ``img`` of one ROI -> ``(C, PH, PW)``;
    position-sensitive pooling takes bin ``(p, q)`` from its own channel group."""
    ph, pw = ay.shape[0], ax.shape[0]
    if ps:
        parts = img.reshape(-1, ph, pw, img.shape[1], img.shape[2])
        cols = np.einsum("cpqhw,qw->cpqh", parts, ax)
        return np.einsum("cpqh,ph->cpq", cols, ay)
    chans, h, w = img.shape
    cols = np.ascontiguousarray(img).reshape(-1, w) @ ax.T                    # (C*h, PW)
    cols = cols.reshape(chans, h, pw).transpose(1, 0, 2).reshape(h, -1)
    return (ay @ cols).reshape(ph, chans, pw).transpose(1, 0, 2)


def _roi_align(p, data, rois):
    """Separable bilinear weights per ROI (vectorized), then one iteration per ROI: two small
    BLAS products over the window the ROI's samples touch."""
    ph, pw = _pooled(p)
    batch, chans, height, width = data.shape
    dt = data.dtype.type
    out_chans = chans // (ph * pw) if p.position_sensitive else chans
    out = np.zeros((rois.shape[0], out_chans, ph, pw), dtype=data.dtype)
    index, ok = _batch_index(rois, batch)
    start, bins, grid = _align_geometry(p, rois, ok, dt)
    ax = _interp_matrix(start[:, 0], bins[:, 0], grid[:, 0], pw, width, dt)   # (R, PW, W)
    ay = _interp_matrix(start[:, 1], bins[:, 1], grid[:, 1], ph, height, dt)  # (R, PH, H)
    count = (grid[:, 0] * grid[:, 1]).astype(dt)
    (x0, x1), (y0, y1) = _window(ax.any(axis=1)), _window(ay.any(axis=1))
    for r in np.flatnonzero(ok & (x1 > x0) & (y1 > y0)):
        img = data[index[r], :, y0[r]:y1[r], x0[r]:x1[r]]
        res = _align_one(img, ay[r, :, y0[r]:y1[r]], ax[r, :, x0[r]:x1[r]],
                         p.position_sensitive)
        out[r] = res / count[r]
    return out


def _roi_align_shape(p, in_shapes):
    ph, pw = _pooled(p)

    def channels(c):
        if not p.position_sensitive:
            return c
        if c % (ph * pw):
            raise ShapeError(f"ROIAlign: with position_sensitive=True the data channels ({c}) "
                             f"must be a multiple of pooled_size[0]*pooled_size[1] ({ph * pw})")
        return c // (ph * pw)

    ins, out = _roi_shape("ROIAlign", p, in_shapes, channels)
    return ins, [out]


op_def(
    "_contrib_ROIAlign",
    params={"pooled_size": Shape(), "spatial_scale": Float(), "sample_ratio": Int(-1),
            "position_sensitive": Bool(False), "aligned": Bool(False)},
    compute=_roi_align, inputs=("data", "rois"), infer_shape=_roi_align_shape,
    doc="ROIAlign (Mask R-CNN): bilinear average pooling of each ROI into ``pooled_size``.")


# --- PSROIPooling ----------------------------------------------------------------------------
def _psroi_bins(start, end, pooled: int, limit: int, dt):
    size = np.maximum(end - start, dt(0.1))
    bin_size = size / dt(pooled)
    k = np.arange(pooled, dtype=dt)
    lo = np.floor(k * bin_size[:, None] + start[:, None]).astype(np.int64)
    hi = np.ceil((k + 1) * bin_size[:, None] + start[:, None]).astype(np.int64)
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def _psroi_image(img: np.ndarray, rois: np.ndarray, p, group: int) -> np.ndarray:
    dt = _calc_dtype(img.dtype)
    size = p.pooled_size
    height, width = img.shape[1:]
    scale = dt(p.spatial_scale)
    corner = _round_away(rois[:, 1:5]).astype(dt)
    ws, we = _psroi_bins(corner[:, 0] * scale, (corner[:, 2] + 1) * scale, size, width, dt)
    hs, he = _psroi_bins(corner[:, 1] * scale, (corner[:, 3] + 1) * scale, size, height, dt)
    cell = np.clip(np.floor(np.arange(size, dtype=dt) * group / size).astype(np.int64), 0,
                   group - 1)
    chan = ((np.arange(p.output_dim)[:, None, None] * group + cell[None, :, None]) * group
            + cell[None, None, :])                                           # (D, PH, PW)
    integral = np.zeros((img.shape[0], height + 1, width + 1), dtype=np.float64)
    integral[:, 1:, 1:] = img.astype(np.float64).cumsum(1).cumsum(2)
    c, y0, y1 = chan[None], hs[:, None, :, None], he[:, None, :, None]
    x0, x1 = ws[:, None, None, :], we[:, None, None, :]
    total = (integral[c, y1, x1] - integral[c, y0, x1] - integral[c, y1, x0]
             + integral[c, y0, x0])
    area = (y1 - y0) * (x1 - x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(area > 0, total / area, 0)


def _psroi_group(p) -> int:
    return p.group_size if p.group_size > 0 else p.pooled_size


def _psroi_pooling(p, data, rois):
    group = _psroi_group(p)
    if data.shape[1] < p.output_dim * group * group:
        raise ShapeError(f"PSROIPooling: data has {data.shape[1]} channels; output_dim * "
                         f"group_size^2 = {p.output_dim * group * group} are needed")
    size = p.pooled_size
    out = np.zeros((rois.shape[0], p.output_dim, size, size), dtype=data.dtype)
    index, ok = _batch_index(rois, data.shape[0])
    for b in np.unique(index[ok]):   # one integral image per image
        idx = np.flatnonzero(ok & (index == b))
        out[idx] = _psroi_image(data[b], rois[idx], p, group)
    return out


def _psroi_shape(p, in_shapes):
    ins, out = _roi_shape("PSROIPooling", p, in_shapes, lambda c: p.output_dim)
    return ins, [out]


op_def(
    "_contrib_PSROIPooling",
    params={"spatial_scale": Float(), "output_dim": Int(), "pooled_size": Int(),
            "group_size": Int(0)},
    compute=_psroi_pooling, inputs=("data", "rois"), infer_shape=_psroi_shape,
    doc="Position-sensitive ROI average pooling (R-FCN).")


# --- Proposal / MultiProposal ----------------------------------------------------------------
_PROPOSAL_PARAMS = {
    "rpn_pre_nms_top_n": Int(6000), "rpn_post_nms_top_n": Int(300), "threshold": Float(0.7),
    "rpn_min_size": Int(16), "scales": FloatTuple((4.0, 8.0, 16.0, 32.0)),
    "ratios": FloatTuple((0.5, 1.0, 2.0)), "feature_stride": Int(16),
    "output_score": Bool(False), "iou_loss": Bool(False)}

_f32 = np.float32


def _f(x) -> np.ndarray:
    """Round a double-precision intermediate to float, as assigning to C++ float does."""
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def _base_anchors(p) -> np.ndarray:
    """Faster R-CNN's ``GenerateAnchors``: ``(len(ratios)*len(scales), 4)`` float32 boxes
    around a ``feature_stride`` cell, ratio-major."""
    w = h = _f32(p.feature_stride - 1.0) + _f32(1)
    ctr = _f(0.5 * (np.float64(w) - 1.0))
    out = []
    for ratio in p.ratios:
        size_ratio = np.floor(w * h / _f32(ratio))
        for scale in p.scales:
            new_w = np.floor(np.sqrt(size_ratio) + _f32(0.5)) * _f32(scale)
            new_h = np.floor(new_w / _f32(scale) * _f32(ratio) + _f32(0.5)) * _f32(scale)
            half_w, half_h = _f32(0.5) * (new_w - _f32(1)), _f32(0.5) * (new_h - _f32(1))
            out.append([ctr - half_w, ctr - half_h, ctr + half_w, ctr + half_h])
    return np.asarray(out, dtype=np.float32)


def _transform(p, boxes: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> np.ndarray:
    """Apply RPN deltas (``BBoxTransformInv``/``IoUTransformInv``) and clip to the image."""
    x1, y1, x2, y2 = (boxes[..., k] for k in range(4))
    dx, dy, dw, dh = (deltas[..., k] for k in range(4))
    if p.iou_loss:
        pred = [x1 + dx, y1 + dy, x2 + dw, y2 + dh]
    else:  # float variables, double literals: the C++ mixes both, so do we
        d = np.float64
        width, height = _f(d(1) * (x2 - x1) + 1.0), _f(d(1) * (y2 - y1) + 1.0)
        cx = _f(x1.astype(d) + 0.5 * (width.astype(d) - 1.0))
        cy = _f(y1.astype(d) + 0.5 * (height.astype(d) - 1.0))
        pcx, pcy = (dx * width + cx).astype(d), (dy * height + cy).astype(d)
        pw, ph = (np.exp(dw) * width).astype(d), (np.exp(dh) * height).astype(d)
        pred = [_f(pcx - 0.5 * (pw - 1.0)), _f(pcy - 0.5 * (ph - 1.0)),
                _f(pcx + 0.5 * (pw - 1.0)), _f(pcy + 0.5 * (ph - 1.0))]
    lim_w, lim_h = info[1] - _f32(1), info[0] - _f32(1)
    lims = (lim_w, lim_h, lim_w, lim_h)
    return np.stack([np.maximum(np.minimum(v, lim), _f32(0)) for v, lim in zip(pred, lims)], -1)


def _rpn_nms(dets: np.ndarray, thresh: float, max_keep: int) -> np.ndarray:
    """Faster R-CNN's NMS with +1 pixel areas; ``ovr > thresh`` suppresses."""
    x1, y1, x2, y2 = (dets[:, k] for k in range(4))
    area = (x2 - x1 + _f32(1)) * (y2 - y1 + _f32(1))
    thresh = _f32(thresh)

    def suppress(i, js):
        w = np.maximum(_f32(0), np.minimum(x2[i], x2[js]) - np.maximum(x1[i], x1[js]) + _f32(1))
        h = np.maximum(_f32(0), np.minimum(y2[i], y2[js]) - np.maximum(y1[i], y1[js]) + _f32(1))
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            return inter / (area[i] + area[js] - inter) > thresh

    return greedy_nms(len(dets), suppress, max_keep)


def _proposals_one(p, anchors, scores, deltas, info):
    """Proposals of one image: ``(post, 4)`` boxes and ``(post,)`` scores."""
    num, height, width = scores.shape
    shift_x = np.arange(width, dtype=np.float32) * _f32(p.feature_stride)
    shift_y = np.arange(height, dtype=np.float32) * _f32(p.feature_stride)
    shifts = np.stack(np.broadcast_arrays(shift_x[None, :], shift_y[:, None],
                                          shift_x[None, :], shift_y[:, None]), -1)
    boxes = (anchors[None, None] + shifts[:, :, None]).reshape(-1, 4)           # (H*W*A, 4)
    score = scores.transpose(1, 2, 0).reshape(-1).copy()
    delta = deltas.reshape(num, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
    real_h = int(info[0] / _f32(p.feature_stride))
    real_w = int(info[1] / _f32(p.feature_stride))
    if real_h > height or real_w > width:
        raise ShapeError(f"Proposal: im_info {info[:2].tolist()} / feature_stride "
                         f"{p.feature_stride} exceeds the score map ({height}, {width})")
    boxes = _transform(p, boxes, delta, info)
    hh, ww = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    padded = np.repeat(((hh >= real_h) | (ww >= real_w)).reshape(-1), num)
    score[padded] = -1
    min_size = _f32(p.rpn_min_size) * info[2]
    small = ((boxes[:, 2] - boxes[:, 0] + _f32(1) < min_size)
             | (boxes[:, 3] - boxes[:, 1] + _f32(1) < min_size))
    boxes[small] += np.array([-1, -1, 1, 1], np.float32) * (min_size / _f32(2))
    score[small] = -1
    count = score.size
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    order = np.argsort(-score, kind="stable")[:pre]
    boxes, score = boxes[order], score[order]
    keep = _rpn_nms(boxes, p.threshold, min(p.rpn_post_nms_top_n, pre))
    pick = keep[np.arange(p.rpn_post_nms_top_n) % len(keep)]
    return boxes[pick], score[pick]


def _proposal_inputs(p, cls_prob, bbox_pred):
    anchors = _base_anchors(p)
    num = cls_prob.shape[1] // 2
    if num != len(anchors):
        raise OpAttributeError(f"Proposal: cls_prob has {num} anchors per position (channels / "
                               f"2) but ratios x scales gives {len(anchors)}")
    return anchors, cls_prob[:, num:], bbox_pred


def _multi_proposal(p, cls_prob, bbox_pred, im_info):
    require_float32("Proposal", cls_prob, bbox_pred, im_info)
    anchors, scores, deltas = _proposal_inputs(p, cls_prob, bbox_pred)
    info = im_info
    rois, outs = [], []
    for b in range(cls_prob.shape[0]):
        boxes, score = _proposals_one(p, anchors, scores[b], deltas[b], info[b])
        index = np.full((len(boxes), 1), b, dtype=np.float32)
        rois.append(np.concatenate([index, boxes], axis=1))
        outs.append(score[:, None])
    return np.concatenate(rois), np.concatenate(outs)


def _proposal(p, cls_prob, bbox_pred, im_info):
    if cls_prob.shape[0] != 1:
        raise ShapeError(f"Proposal: takes one image per call, got cls_prob "
                         f"{fmt(cls_prob.shape)}; use MultiProposal for a batch")
    return _multi_proposal(p, cls_prob, bbox_pred, im_info)


def _proposal_shape_rule(per_image: bool):
    def rule(p, in_shapes):
        cls = in_shapes[0]
        if cls is None:
            return in_shapes, [None, None]
        if len(cls) != 4:
            raise ShapeError(f"Proposal: cls_prob must be 4-d (batch, 2*anchors, height, "
                             f"width), got shape {fmt(cls)}")
        bbox = merge(in_shapes[1], (cls[0], cls[1] * 2, cls[2], cls[3]), "bbox_pred: ")
        info = merge(in_shapes[2], (cls[0], 3), "im_info: ")
        rows = p.rpn_post_nms_top_n * (cls[0] if per_image else 1)
        return [cls, bbox, info], [(rows, 5), (rows, 1)]
    return rule


for _name, _fn, _per_image in (("_contrib_Proposal", _proposal, False),
                               ("_contrib_MultiProposal", _multi_proposal, True)):
    op_def(
        _name, params=_PROPOSAL_PARAMS, compute=_fn,
        inputs=("cls_prob", "bbox_pred", "im_info"),
        infer_shape=_proposal_shape_rule(_per_image), num_outputs=2,
        infer_type=float32_only(_name[len("_contrib_"):], 2),
        num_visible_outputs=lambda p: 2 if p.output_score else 1,
        output_names=("output", "score"),
        doc="RPN region proposals: rows ``[batch_index, x1, y1, x2, y2]`` (+ scores).")


from . import _roi_onnx  # noqa: E402,F401  (attaches the ONNX export handlers)

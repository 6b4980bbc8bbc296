"""Region-of-interest pooling: ROIPooling, ROIAlign, PSROIPooling, with their ONNX lowerings.

MXNet 1.9.1's CPU semantics (``src/operator/roi_pooling.cc``, ``contrib/roi_align.cc``,
``contrib/psroi_pooling.cc``), used by GluonCV's Faster/Mask R-CNN and R-FCN. Bins and weights
are computed for all ROIs at once:

* ROIPooling takes per-bin maxima one ROI at a time: a row pass then a column pass, each a
  ``fmax.reduce`` per bin over the window the ROI covers;
* ROIAlign's bilinear samples are separable, so a ROI's output is ``Ay @ window @ Ax.T`` with
  interpolation matrices built for all ROIs at once by ``np.bincount`` (two small BLAS
  products per ROI);
* PSROIPooling's bin averages come from an integral image.

ROIPooling's hidden ``maxidx`` output (backward bookkeeping) is returned as -1. A ROI whose batch
index names no image gives zeros (MXNet zeroes negative indices and reads out of bounds for
too-large ones).

Gradients (MXNet 1.9.1's backward kernels, inputs ``(ograd, data, rois)``; the ROIs get zero):
``_backward_ROIPooling`` adds each bin's gradient at the bin's first maximum in row-major
order (MXNet's argmax bookkeeping, recomputed), ``_backward_ROIAlign`` is the transpose of the
separable bilinear weights, ``_backward__contrib_PSROIPooling`` spreads each bin's gradient over
its area. ROIs naming no image add nothing. ROIAlign's lowers to ONNX (weights from one-hot
comparisons, one MatMul per ROI and one over all ROIs); the other two state ``no_onnx``.

ONNX lowerings (below in this file):

* ``ROIPooling`` is ``MaxRoiPool`` (Caffe's bins, as MXNet's) and ``ROIAlign`` is ``RoiAlign``
  (avg; MXNet's sampling grid and border rules; ``aligned`` is ``half_pixel``, opset 16+;
  ``position_sensitive`` takes the per-bin channel diagonal). onnxruntime refuses a batch
  index naming no image, MXNet gives zeros: the index is clamped and those rows zeroed.
  onnxruntime has kernels for these two up to opset 21 only (the opset 22 versions only add
  bfloat16), so newer-opset models are valid ONNX that onnxruntime cannot run yet.
* ``PSROIPooling`` (R-FCN) is composed exactly as gluonport computes it: integer bins, one
  float64 integral image (``CumSum``), four ``Gather`` s per bin.
"""

from __future__ import annotations

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, Float, Int, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext, deliver, lowering
from ..lowering.dims import Dims
from ..registry import define

__all__ = ["i64"]


_FLT_MAX = np.finfo(np.float32).max


def _round_away(x: np.ndarray) -> np.ndarray:
    """C's ``round``: halves go away from zero (numpy rounds them to even)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _calc_dtype(dtype: np.dtype) -> type:
    """float64 data computes in double; float32/float16 in float, as MXNet's kernels."""
    return np.float64 if dtype == np.float64 else np.float32


def _attrs(p) -> dict:
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _roi_grad(backward: str):
    """The forward op's rule: ``backward(ograd, data, rois)``; the ROIs get no gradient (MXNet
    writes zeros to them)."""
    def rule(F, p, ins, outs, ogs):
        return [getattr(F._internal, backward)(ogs[0], ins[0], ins[1], **_attrs(p)), None]

    rule.__name__ = f"grad_via{backward}"
    return rule


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


define(
    "ROIPooling", params={"pooled_size": Shape(), "spatial_scale": Float()},
    compute=_roi_pooling, inputs=("data", "rois"), infer_shape=_roi_pooling_shape,
    infer_type=_roi_pooling_type, num_outputs=2, num_visible_outputs=1,
    output_names=("output", "maxidx"), aliases=("_npx_roi_pooling",),
    doc="Max pooling of each ROI ``[batch, x1, y1, x2, y2]`` into ``pooled_size`` bins.",
    check_shapes=True, lists_output_names=True, gradient=_roi_grad("_backward_ROIPooling"))


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


define(
    "_contrib_ROIAlign",
    params={"pooled_size": Shape(), "spatial_scale": Float(), "sample_ratio": Int(-1),
            "position_sensitive": Bool(False), "aligned": Bool(False)},
    compute=_roi_align, inputs=("data", "rois"), infer_shape=_roi_align_shape,
    doc="ROIAlign (Mask R-CNN): bilinear average pooling of each ROI into ``pooled_size``.",
    check_shapes=True, lists_output_names=True, gradient=_roi_grad("_backward_ROIAlign"))


# --- PSROIPooling ----------------------------------------------------------------------------
def _psroi_bins(start, end, pooled: int, limit: int, dt):
    size = np.maximum(end - start, dt(0.1))
    bin_size = size / dt(pooled)
    k = np.arange(pooled, dtype=dt)
    lo = np.floor(k * bin_size[:, None] + start[:, None]).astype(np.int64)
    hi = np.ceil((k + 1) * bin_size[:, None] + start[:, None]).astype(np.int64)
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def _psroi_geometry(img: np.ndarray, rois: np.ndarray, p, group: int):
    """Bin bounds ``hs, he (R, P)``, ``ws, we (R, P)`` and the input channel of each output
    channel and bin ``(D, P, P)``, MXNet's arithmetic."""
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
    return hs, he, ws, we, chan


def _psroi_image(img: np.ndarray, rois: np.ndarray, p, group: int) -> np.ndarray:
    height, width = img.shape[1:]
    hs, he, ws, we, chan = _psroi_geometry(img, rois, p, group)
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


define(
    "_contrib_PSROIPooling",
    params={"spatial_scale": Float(), "output_dim": Int(), "pooled_size": Int(),
            "group_size": Int(0)},
    compute=_psroi_pooling, inputs=("data", "rois"), infer_shape=_psroi_shape,
    doc="Position-sensitive ROI average pooling (R-FCN).", check_shapes=True,
    lists_output_names=True, gradient=_roi_grad("_backward__contrib_PSROIPooling"))


# --- backward kernels (MXNet's _backward_ROIPooling, _backward_ROIAlign,
# _backward__contrib_PSROIPooling); inputs (ograd, data, rois): the data gives the shape -------
_NO_GRAD = "a backward kernel: MXNet 1.9.1 registers no gradient for it"
_NO_ONNX_GRAD = ("ONNX has no ROI pooling gradient operator, and the scatter-add over each "
                 "ROI's data-dependent window would need a Loop")


def _first_at(seg: np.ndarray, top: np.ndarray, axis: int) -> np.ndarray:
    """Index of the first position along ``axis`` (a short one) where ``seg`` equals ``top``:
    one comparison per position, last to first."""
    n = seg.shape[axis]
    k = np.full(top.shape, n - 1, dtype=np.int64)
    for q in range(n - 2, -1, -1):
        k = np.where(np.take(seg, q, axis=axis) == top, q, k)
    return k


def _roi_pooling_backward(p, og, data, rois):
    """Each bin's gradient added at its maximum (the first in row-major order, NaN skipped, none
    if no value exceeds -FLT_MAX), as MXNet's ROIPoolBackwardAcc with the forward's argmax.
    Per ROI two passes find it: the first maximum of every row within each bin column, then
    the first row holding the bin's maximum (so ties go where MXNet's scan puts them)."""
    ph, pw = _pooled(p)
    batch, chans, height, width = data.shape
    dt = _calc_dtype(data.dtype)
    where: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    with np.errstate(over="ignore"):  # -FLT_MAX is -inf in float16, as MXNet's cast gives
        floor = np.asarray(-_FLT_MAX).astype(data.dtype)
    corner = _round_away(rois[:, 1:5].astype(dt) * dt(p.spatial_scale)).astype(np.int64)
    x1, y1, x2, y2 = corner.T
    hs, he = _pool_bins(y1, np.maximum(y2 - y1 + 1, 1), ph, height, dt)
    ws, we = _pool_bins(x1, np.maximum(x2 - x1 + 1, 1), pw, width, dt)
    index, ok = _batch_index(rois, batch)
    ok &= (he > hs).any(axis=1) & (we > ws).any(axis=1)
    plane = np.arange(chans) * (height * width)
    for r in np.flatnonzero(ok):
        y0, x0 = hs[r].min(), ws[r].min()
        crop = data[index[r], :, y0:he[r].max(), x0:we[r].max()].transpose(1, 2, 0)  # (h, w, C)
        crop = np.ascontiguousarray(np.where(np.isnan(crop), -np.inf, crop))
        row_max = np.full((crop.shape[0], pw, chans), -np.inf, dtype=crop.dtype)
        row_arg = np.zeros(row_max.shape, dtype=np.int64)
        for j in np.flatnonzero(we[r] > ws[r]):
            seg = crop[:, ws[r, j] - x0:we[r, j] - x0]                        # (h, bw, C)
            row_max[:, j] = top = seg.max(axis=1)
            row_arg[:, j] = _first_at(seg, top, axis=1) + ws[r, j]
        for i in np.flatnonzero(he[r] > hs[r]):
            seg = row_max[hs[r, i] - y0:he[r, i] - y0]                        # (bh, PW, C)
            top = seg.max(axis=0)
            k = _first_at(seg, top, axis=0)                                   # (PW, C)
            hit = top > floor
            cols = np.take_along_axis(row_arg[hs[r, i] - y0:he[r, i] - y0], k[None], 0)[0]
            pos = index[r] * chans * height * width + plane + (k + hs[r, i]) * width + cols
            where.append(pos[hit])
            vals.append(og[r, :, i].T[hit])
    if not where:
        return np.zeros(data.shape, dtype=data.dtype)
    total = np.bincount(np.concatenate(where), np.concatenate(vals).astype(np.float64),
                        minlength=data.size)
    return total.reshape(data.shape).astype(data.dtype)


def _roi_align_backward(p, og, data, rois):
    """``Ay.T @ ograd @ Ax / count`` per ROI over the window its samples touch (the transpose
    of the forward's separable bilinear weights), as MXNet's ROIAlignBackward; ROIs naming no
    image add nothing."""
    ph, pw = _pooled(p)
    batch, chans, height, width = data.shape
    dt = data.dtype.type
    grad = np.zeros(data.shape, dtype=data.dtype)
    index, ok = _batch_index(rois, batch)
    start, bins, grid = _align_geometry(p, rois, ok, dt)
    ax = _interp_matrix(start[:, 0], bins[:, 0], grid[:, 0], pw, width, dt)   # (R, PW, W)
    ay = _interp_matrix(start[:, 1], bins[:, 1], grid[:, 1], ph, height, dt)  # (R, PH, H)
    count = (grid[:, 0] * grid[:, 1]).astype(dt)
    (x0, x1), (y0, y1) = _window(ax.any(axis=1)), _window(ay.any(axis=1))
    for r in np.flatnonzero(ok & (x1 > x0) & (y1 > y0)):
        wy, wx = ay[r, :, y0[r]:y1[r]], ax[r, :, x0[r]:x1[r]]
        g = og[r] / count[r]
        if p.position_sensitive:
            part = np.einsum("cpq,ph,qw->cpqhw", g, wy, wx)
            part = part.reshape(-1, wy.shape[1], wx.shape[1])
        else:
            part = np.matmul(wy.T, g @ wx)                                  # (C, h, w)
        grad[index[r], :, y0[r]:y1[r], x0[r]:x1[r]] += part.astype(data.dtype)
    return grad


def _psroi_backward(p, og, data, rois):
    """Each bin's gradient over its area spread evenly on the bin's pixels of its channel
    (MXNet's PSROIPoolBackwardAccCPU), through corner deltas and a 2-D running sum (float64)
    per image."""
    group = _psroi_group(p)
    batch, chans, height, width = data.shape
    grad = np.zeros(data.shape, dtype=data.dtype)
    index, ok = _batch_index(rois, batch)
    for b in np.unique(index[ok]):
        idx = np.flatnonzero(ok & (index == b))
        hs, he, ws, we, chan = _psroi_geometry(data[b], rois[idx], p, group)
        y0, y1 = hs[:, None, :, None], he[:, None, :, None]
        x0, x1 = ws[:, None, None, :], we[:, None, None, :]
        area = (y1 - y0) * (x1 - x0)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(area > 0, og[idx].astype(np.float64) / area, 0.0)
        c = np.broadcast_to(chan[None], val.shape)
        delta = np.zeros((chans, height + 1, width + 1), dtype=np.float64)
        for ys, xs, sign in ((y0, x0, 1), (y0, x1, -1), (y1, x0, -1), (y1, x1, 1)):
            np.add.at(delta, (c, np.broadcast_to(ys, val.shape), np.broadcast_to(xs, val.shape)),
                      sign * val)
        grad[b] = delta.cumsum(1).cumsum(2)[:, :height, :width]
    return grad


def _define_backward(name: str, forward: str, compute, params: dict,
                     no_onnx: str | None = _NO_ONNX_GRAD) -> None:
    define(name, compute, lambda p, s: (s, [s[1]]), params=params,
           inputs=("ograd", "data", "rois"), infer_type=lambda p, t: (t, [t[1]]),
           no_gradient=_NO_GRAD, no_onnx=no_onnx,
           doc=f"{forward}'s data gradient: inputs (ograd, data, rois).")


_define_backward("_backward_ROIPooling", "ROIPooling", _roi_pooling_backward,
                 {"pooled_size": Shape(), "spatial_scale": Float()})
_define_backward("_backward_ROIAlign", "ROIAlign", _roi_align_backward,
                 {"pooled_size": Shape(), "spatial_scale": Float(), "sample_ratio": Int(-1),
                  "position_sensitive": Bool(False), "aligned": Bool(False)}, no_onnx=None)
_define_backward("_backward__contrib_PSROIPooling", "PSROIPooling", _psroi_backward,
                 {"spatial_scale": Float(), "output_dim": Int(), "pooled_size": Int(),
                  "group_size": Int(0)})


def i64(ctx: LoweringContext, value, hint: str = "i") -> str:
    return ctx.const(np.asarray(value, np.int64), hint)


def _onnx_rois(ctx: LoweringContext, work, data_at: int = 0) -> tuple[str, str, str]:
    """(int64 batch index ``(R,)`` clamped into range, bool ``(R,)`` mask of the ROIs that name a
    real image, boxes ``(R, 4)`` in ``work``): MXNet gives zeros for the others, onnxruntime
    refuses them. The ROIs are the input after the data (input ``data_at``)."""
    rois = ctx.inputs[data_at + 1]
    if np.dtype(ctx.in_dtypes[data_at + 1]) != work:
        rois = ctx.cast_to(rois, work)
    index = ctx.make("Gather", [rois, ctx.const(np.asarray(0, np.int64), "col")], axis=1)
    index = ctx.cast_to(index, np.int64)          # C's truncation, as MXNet's (int) cast
    zero = ctx.const(np.asarray(0, np.int64), "zero")
    batch = Dims(ctx, data_at).scalar(0)
    ok = ctx.make("And", [ctx.make("GreaterOrEqual", [index, zero]),
                          ctx.make("Less", [index, batch])])
    index = ctx.make("Where", [ok, index, zero])
    boxes = ctx.make("Slice", [rois, ctx.ints([1], "s"), ctx.ints([5], "e"), ctx.ints([1], "ax")])
    return index, ok, boxes


def _finish_rois(ctx: LoweringContext, y: str, ok: str, work) -> None:
    """Zero the ``(R, C, PH, PW)`` rows of ROIs that name no image; cast back; deliver."""
    ok4 = ctx.make("Reshape", [ok, ctx.ints([-1, 1, 1, 1], "r1")])
    y = ctx.make("Where", [ok4, y, ctx.const(np.zeros((), work), "zero_f")])
    if np.dtype(ctx.dtype) != work:
        y = ctx.cast_to(y, ctx.dtype)
    deliver(ctx, y)


def _roi_work(ctx: LoweringContext, double_ok: bool) -> tuple[object, str]:
    """(work dtype, data in it): onnxruntime's ROI kernels take float32 (RoiAlign also
    float64); float16 widens exactly, float64 rounds where only float32 exists."""
    dt = np.dtype(ctx.dtype)
    work = dt if dt == np.float32 or (double_ok and dt == np.float64) else np.dtype(np.float32)
    x = ctx.inputs[0]
    return work, x if dt == work else ctx.cast_to(x, work)


def _roi_pooling_onnx(ctx: LoweringContext) -> None:
    """``MaxRoiPool``: the same Caffe bins (rounded corners, floor/ceil bin edges, empty bins
    0); the hidden ``maxidx`` is -1 as in gluonport's compute."""
    p = ctx.params
    ph, pw = _pooled(p)
    work, x = _roi_work(ctx, double_ok=False)
    index, ok, boxes = _onnx_rois(ctx, work)
    rois = ctx.make("Concat", [ctx.make("Unsqueeze", [ctx.cast_to(index, work),
                                                      ctx.ints([1], "axes")]), boxes], axis=1)
    y = ctx.make("MaxRoiPool", [x, rois], pooled_shape=[ph, pw],
                 spatial_scale=float(np.float32(p.spatial_scale)))
    _finish_rois(ctx, y, ok, work)
    if ctx.wants(1):
        from onnx import helper

        minus = helper.make_tensor("value", dtypes.onnx_of(np.int32), [1], [-1])
        ctx.make("ConstantOfShape", [ctx.make("Shape", [ctx.outputs[0]])],
                 outputs=[ctx.outputs[1]], value=minus)


def _position_sensitive(ctx: LoweringContext, y: str, ph: int, pw: int) -> str:
    """Bin ``(i, j)`` of output channel ``c`` from input channel ``c*K + i*PW + j``
    (``K = PH*PW``): RoiAlign over all channels seen as ``(R, C/K, K channels, K bins)``, and
    its diagonal."""
    k = ph * pw
    y = ctx.make("Reshape", [y, ctx.ints([0, -1, k, k], "groups")])            # (R, C', K, K)
    idx = ctx.const(np.arange(k, dtype=np.int64).reshape(1, 1, 1, k), "diag")
    shape = ctx.make("Concat", [ctx.make("Slice", [ctx.make("Shape", [y]), ctx.ints([0], "s"),
                                                   ctx.ints([2], "e")]),
                                ctx.ints([1, k], "one_k")], axis=0)
    y = ctx.make("GatherElements", [y, ctx.make("Expand", [idx, shape])], axis=2)
    return ctx.make("Reshape", [y, ctx.ints([0, -1, ph, pw], "pooled")])


def _roi_align_onnx(ctx: LoweringContext) -> None:
    """``RoiAlign`` (avg): MXNet's sampling grid, border rules and averaging. ``aligned`` is
    the -0.5 pixel shift of ``coordinate_transformation_mode='half_pixel'`` (opset 16+; before
    it RoiAlign always works as ``output_half_pixel``, MXNet's ``aligned=False``)."""
    p = ctx.params
    ph, pw = _pooled(p)
    mode = None
    if ctx.opset >= 16:
        mode = "half_pixel" if p.aligned else "output_half_pixel"
    elif p.aligned:
        raise ctx.fail("ROIAlign with aligned=True needs RoiAlign's coordinate_transformation_"
                       "mode='half_pixel', which ONNX has from opset 16: export with "
                       "opset_version=16 or newer")
    work, x = _roi_work(ctx, double_ok=True)
    index, ok, boxes = _onnx_rois(ctx, work)
    y = ctx.make("RoiAlign", [x, boxes, index], mode="avg", output_height=ph, output_width=pw,
                 sampling_ratio=max(p.sample_ratio, 0),
                 spatial_scale=float(np.float32(p.spatial_scale)),
                 coordinate_transformation_mode=mode)
    if p.position_sensitive:
        y = _position_sensitive(ctx, y, ph, pw)
    _finish_rois(ctx, y, ok, work)


# --- PSROIPooling ----------------------------------------------------------------------------
def _round_away_onnx(ctx: LoweringContext, x: str) -> str:
    """C's ``round`` (halves away from zero) in double: ONNX ``Round`` rounds halves to even."""
    half = ctx.const(np.float64(0.5), "half")
    mag = ctx.make("Floor", [ctx.make("Add", [ctx.make("Abs", [x]), half])])
    return ctx.make("Mul", [ctx.make("Sign", [x]), mag])


def _psroi_bins_onnx(ctx: LoweringContext, start: str, end: str, pooled: int, limit: str,
                dt) -> tuple[str, str]:
    """Integer bin bounds ``(R, pooled)``: floor/ceil of ``start + k * bin``, clipped."""
    size = ctx.make("Max", [ctx.make("Sub", [end, start]), ctx.const(dt(0.1), "min_size")])
    bin_size = ctx.make("Div", [size, ctx.const(dt(pooled), "pooled")])
    k = ctx.const(np.arange(pooled, dtype=dt).reshape(1, -1), "k")
    k1 = ctx.const(np.arange(1, pooled + 1, dtype=dt).reshape(1, -1), "k1")
    out = []
    for steps, fn in ((k, "Floor"), (k1, "Ceil")):
        edge = ctx.make(fn, [ctx.make("Add", [ctx.make("Mul", [steps, bin_size]), start])])
        out.append(ctx.make("Clip", [ctx.cast_to(edge, np.int64), i64(ctx, 0, "zero"), limit]))
    return out[0], out[1]


def _integral(ctx: LoweringContext) -> str:
    """Flat float64 integral image of ``data``, ``(N, C, H + 1, W + 1)`` before flattening."""
    x = ctx.cast_to(ctx.inputs[0], np.float64)
    for axis in (2, 3):
        x = ctx.make("CumSum", [x, i64(ctx, axis, "axis")])
    x = ctx.make("Pad", [x, ctx.ints([0, 0, 1, 1, 0, 0, 0, 0], "pads")])
    return ctx.make("Reshape", [x, ctx.ints([-1], "flat")])


def _psroi_pooling_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    group, size = _psroi_group(p), p.pooled_size
    dt = np.float64 if np.dtype(ctx.dtype) == np.float64 else np.float32
    dims = Dims(ctx)
    index, ok, boxes = _onnx_rois(ctx, np.dtype(dt))
    corner = ctx.cast_to(_round_away_onnx(ctx, ctx.cast_to(boxes, np.float64)), dt)
    scale = ctx.const(dt(p.spatial_scale), "scale")
    one = ctx.const(dt(1), "one")
    col = [ctx.make("Slice", [corner, ctx.ints([k], "s"), ctx.ints([k + 1], "e"),
                              ctx.ints([1], "ax")]) for k in range(4)]              # (R, 1)
    height, width = dims.scalar(2), dims.scalar(3)
    bounds = []
    for lo, hi, limit in ((col[1], col[3], height), (col[0], col[2], width)):
        start = ctx.make("Mul", [lo, scale])
        end = ctx.make("Mul", [ctx.make("Add", [hi, one]), scale])
        bounds.append(_psroi_bins_onnx(ctx, start, end, size, limit, dt))
    (hs, he), (ws, we) = bounds
    cell = np.clip(np.floor(np.arange(size, dtype=dt) * group / size).astype(np.int64), 0,
                   group - 1)
    chan = ((np.arange(p.output_dim)[:, None, None] * group + cell[None, :, None]) * group
            + cell[None, None, :])
    total = _box_sums(ctx, dims, index, ctx.const(chan[None], "chan"), (hs, he), (ws, we))
    ys = [ctx.make("Reshape", [t, ctx.ints([0, 1, -1, 1], "y")]) for t in (hs, he)]
    xs = [ctx.make("Reshape", [t, ctx.ints([0, 1, 1, -1], "x")]) for t in (ws, we)]
    area = ctx.make("Mul", [ctx.make("Sub", [ys[1], ys[0]]), ctx.make("Sub", [xs[1], xs[0]])])
    zero = ctx.const(np.float64(0), "zero")
    mean = ctx.make("Div", [total, ctx.make("Max", [ctx.cast_to(area, np.float64),
                                                    ctx.const(np.float64(1), "one")])])
    out = ctx.make("Where", [ctx.make("Greater", [area, i64(ctx, 0, "zero")]), mean, zero])
    _finish_rois(ctx, out, ok, np.dtype(np.float64))


def _box_sums(ctx: LoweringContext, dims, index: str, chan: str, rows, cols) -> str:
    """``I[c, y1, x1] - I[c, y0, x1] - I[c, y1, x0] + I[c, y0, x0]`` per ROI, output channel
    and bin, from the flat integral image ``I`` of each ROI's image."""
    integral = _integral(ctx)
    hp = ctx.make("Add", [dims.scalar(2), i64(ctx, 1, "one")])
    wp = ctx.make("Add", [dims.scalar(3), i64(ctx, 1, "one")])
    b = ctx.make("Reshape", [index, ctx.ints([-1, 1, 1, 1], "b")])
    plane = ctx.make("Add", [ctx.make("Mul", [b, dims.scalar(1)]), chan])           # (R,D,P,P)
    ys = [ctx.make("Reshape", [t, ctx.ints([0, 1, -1, 1], "y")]) for t in rows]
    xs = [ctx.make("Reshape", [t, ctx.ints([0, 1, 1, -1], "x")]) for t in cols]

    def at(y: str, x: str) -> str:
        flat = ctx.make("Add", [ctx.make("Mul", [ctx.make("Add", [ctx.make(
            "Mul", [plane, hp]), y]), wp]), x])
        return ctx.make("Gather", [integral, flat], axis=0)

    total = ctx.make("Sub", [at(ys[1], xs[1]), at(ys[0], xs[1])])
    total = ctx.make("Sub", [total, at(ys[1], xs[0])])
    return ctx.make("Add", [total, at(ys[0], xs[0])])


lowering("ROIPooling")(_roi_pooling_onnx)
lowering("_contrib_ROIAlign")(_roi_align_onnx)
lowering("_contrib_PSROIPooling")(_psroi_pooling_onnx)


# --- ROIAlign's backward ----------------------------------------------------------------------
def _align_weights_onnx(ctx: LoweringContext, start: str, size: str, grid: str, samples: str,
                        pooled: int, limit: int, dt) -> str:
    """:func:`_interp_matrix` in ONNX: ``(R, pooled, limit)`` summed bilinear weights of each
    bin's samples along one axis (``samples``: ``0..max grid`` as ``(1, 1, G)``)."""
    col = [ctx.make("Unsqueeze", [t, ctx.ints([2], "ax2")]) for t in (start, size, grid)]
    start, size, grid = col                                                       # (R, 1, 1)
    bin_size = ctx.make("Div", [size, ctx.const(dt(pooled), "pooled")])
    k = ctx.const(np.arange(pooled, dtype=dt).reshape(1, -1, 1), "k")
    half = ctx.make("Add", [samples, ctx.const(dt(0.5), "half")])
    pos = ctx.make("Add", [ctx.make("Add", [start, ctx.make("Mul", [k, bin_size])]),
                           ctx.make("Div", [ctx.make("Mul", [half, bin_size]), grid])])
    used = ctx.make("And", [ctx.make("Less", [samples, grid]), ctx.make("And", [
        ctx.make("GreaterOrEqual", [pos, ctx.const(dt(-1), "m1")]),
        ctx.make("LessOrEqual", [pos, ctx.const(dt(limit), "lim")])])])
    pos = ctx.make("Max", [pos, ctx.const(dt(0), "zero")])
    last = ctx.const(dt(limit - 1), "last")
    low = ctx.make("Floor", [pos])
    edge = ctx.make("GreaterOrEqual", [low, last])
    low = ctx.make("Where", [edge, last, low])
    high = ctx.make("Where", [edge, last, ctx.make("Add", [low, ctx.const(dt(1), "one")])])
    frac = ctx.make("Where", [edge, ctx.const(dt(0), "zero"), ctx.make("Sub", [pos, low])])
    frac = ctx.make("Mul", [frac, ctx.cast_to(used, dt)])
    keep = ctx.make("Sub", [ctx.cast_to(used, dt), frac])
    cols = ctx.const(np.arange(limit, dtype=dt).reshape(1, 1, 1, -1), "cols")
    total = None
    for at, weight in ((low, keep), (high, frac)):
        hit = ctx.make("Equal", [ctx.make("Unsqueeze", [at, ctx.ints([3], "ax3")]), cols])
        part = ctx.make("Mul", [ctx.cast_to(hit, dt),
                                ctx.make("Unsqueeze", [weight, ctx.ints([3], "ax3")])])
        total = part if total is None else ctx.make("Add", [total, part])
    return ctx.make("ReduceSum", [total, ctx.ints([2], "g")], keepdims=0)        # (R, P, S)


def _roi_align_backward_onnx(ctx: LoweringContext) -> None:
    """The transpose of the forward's separable weights, summed per image: ``Ay.T @ og`` per
    ROI, then one ``MatMul`` over (ROI, bin column) pairs with ``Ax`` masked by each ROI's
    image (a one-hot of the batch index)."""
    p = ctx.params
    ph, pw = _pooled(p)
    dims = Dims(ctx, 1)
    if any(dims.dyn[1:]):
        raise ctx.fail("ROIAlign's gradient needs the data's channel and spatial dims fixed")
    _, chans, height, width = dims.static
    dt = np.dtype(ctx.in_dtypes[1])
    work = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)
    index, ok, boxes = _onnx_rois(ctx, work, data_at=1)
    w = work.type
    box = ctx.make("Mul", [boxes, ctx.const(w(p.spatial_scale), "scale")])
    if p.aligned:
        box = ctx.make("Sub", [box, ctx.const(w(0.5), "offset")])
    cols = [ctx.make("Slice", [box, ctx.ints([k], "s"), ctx.ints([k + 1], "e"),
                               ctx.ints([1], "ax")]) for k in range(4)]            # (R, 1)
    geo = []
    for lo, hi, pooled in ((cols[0], cols[2], pw), (cols[1], cols[3], ph)):
        size = ctx.make("Sub", [hi, lo])
        if not p.aligned:
            size = ctx.make("Max", [size, ctx.const(w(1), "one")])
        if p.sample_ratio > 0:
            grid = ctx.make("Expand", [ctx.const(w(p.sample_ratio), "ratio"),
                                       ctx.make("Shape", [size])])
        else:
            grid = ctx.make("Max", [ctx.make("Ceil", [ctx.make(
                "Div", [size, ctx.const(w(pooled), "pooled")])]), ctx.const(w(1), "one")])
        geo.append((lo, size, grid))
    most = ctx.make("ReduceMax", [ctx.make("Concat", [geo[0][2], geo[1][2]], axis=1)],
                    keepdims=0)
    samples = ctx.make("Reshape", [ctx.make("Range", [ctx.const(w(0), "zero"), most,
                                                      ctx.const(w(1), "one")]),
                                   ctx.ints([1, 1, -1], "g")])
    ax = _align_weights_onnx(ctx, *geo[0], samples, pw, width, w)                 # (R, PW, W)
    ay = _align_weights_onnx(ctx, *geo[1], samples, ph, height, w)                # (R, PH, H)
    count = ctx.make("Mul", [geo[0][2], geo[1][2]])                              # (R, 1)
    og = ctx.inputs[0] if dt == work else ctx.cast_to(ctx.inputs[0], work)
    if p.position_sensitive:  # output channel c, bin (i, j) <- input channel c*K + i*PW + j
        k = ph * pw
        og = ctx.make("Unsqueeze", [og, ctx.ints([2], "ax2")])                   # (R,C',1,PH,PW)
        og = ctx.make("Mul", [og, ctx.const(np.eye(k, dtype=work).reshape(1, 1, k, ph, pw),
                                            "diag")])
        og = ctx.make("Reshape", [og, ctx.ints([0, chans, ph, pw], "full")])
    scale = ctx.make("Where", [ok, ctx.make("Reciprocal", [ctx.make("Reshape", [
        count, ctx.ints([-1], "flat")])]), ctx.const(w(0), "zero")])
    og = ctx.make("Mul", [og, ctx.make("Reshape", [scale, ctx.ints([-1, 1, 1, 1], "r4")])])
    ayt = ctx.make("Unsqueeze", [ctx.make("Transpose", [ay], perm=[0, 2, 1]), ctx.ints([1], "a")])
    u = ctx.make("MatMul", [ayt, og])                                            # (R, C, H, PW)
    u = ctx.make("Transpose", [u], perm=[1, 2, 0, 3])
    u = ctx.make("Reshape", [u, ctx.ints([1, chans * height, -1], "u")])         # (1, C*H, R*PW)
    batch = ctx.make("Range", [ctx.const(np.asarray(0, np.int64), "z"), dims.scalar(0),
                               ctx.const(np.asarray(1, np.int64), "o")])
    onehot = ctx.make("Equal", [ctx.make("Unsqueeze", [index, ctx.ints([0], "a0")]),
                                ctx.make("Unsqueeze", [batch, ctx.ints([1], "a1")])])  # (N, R)
    onehot = ctx.make("Reshape", [ctx.cast_to(onehot, work), ctx.ints([0, -1, 1, 1], "oh")])
    v = ctx.make("Mul", [onehot, ctx.make("Unsqueeze", [ax, ctx.ints([0], "a0")])])
    v = ctx.make("Reshape", [v, ctx.ints([0, -1, width], "v")])                  # (N, R*PW, W)
    grad = ctx.make("Reshape", [ctx.make("MatMul", [u, v]),
                                ctx.ints([-1, chans, height, width], "nchw")])
    deliver(ctx, grad if dt == work else ctx.cast_to(grad, dt))


lowering("_backward_ROIAlign")(_roi_align_backward_onnx)

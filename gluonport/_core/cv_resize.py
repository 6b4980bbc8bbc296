"""OpenCV's ``cv::resize`` as MXNet 1.9.1 runs it, re-done in numpy.

MXNet resizes images (``mx.image.imresize``, ``nd.image.resize``, every ``interp=`` argument of
``mx.image`` and ``gluon.data.vision.transforms``) by calling ``cv::resize`` of the OpenCV it was
built with: the 1.9.1 wheels link OpenCV 3.4.2 statically (x86-64, SSE2 baseline, no IPP). This
module reproduces that function's arithmetic so pre-processing gives MXNet's pixels:

* ``uint8`` images are bit-exact for every interpolation (0 nearest, 1 bilinear, 2 bicubic,
  3 area, 4 Lanczos-4): OpenCV works in fixed point there (coefficients scaled by 2**11 and
  rounded) and rounds in ways of its own, which are followed step by step below;
* ``float32``/``float64`` images agree to float rounding (the same coefficients and the same
  order of operations, in numpy's float arithmetic).

The facts reproduced (OpenCV 3.4.2 ``modules/imgproc/src/resize.cpp``):

* scale factors are ``inv = dst/src`` and ``scale = 1/inv`` in double precision;
* nearest: ``sx = floor(dx * scale)``, capped at ``src - 1``;
* bilinear/bicubic/Lanczos map ``dx`` to ``(dx + 0.5) * scale - 0.5`` (rounded to float32);
  columns outside the image are clamped to the border pixel (bilinear also zeroes the weight
  there), rows are clamped but keep their weights;
* uint8 bilinear combines the two rows as ``((r0 >> 4) * b0 >> 16) + ((r1 >> 4) * b1 >> 16)``
  then ``(v + 2) >> 2``; bicubic rounds in float32 (``rint``) over runs of 8 values and in
  integers (``(v + 2**21) >> 22``) over the rest of a row;
* bilinear halving in both directions is done as area averaging;
* area: whole-number factors average blocks; other shrinking factors weight pixels by overlap
  (float32 sums, rounded at the end); enlarging uses bilinear with area-style offsets.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, GluonportError, ShapeError

__all__ = ["resize", "INTERP_NAMES", "SUPPORTED_DTYPES"]

INTERP_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4"}
SUPPORTED_DTYPES = (np.dtype(np.uint8), np.dtype(np.float32), np.dtype(np.float64))

_COEF_SCALE = 2048  # OpenCV's INTER_RESIZE_COEF_SCALE (1 << 11)
_F32 = np.float32
_DBL_EPSILON = 2.220446049250313e-16


def resize(src: np.ndarray, w: int, h: int, interp: int = 1) -> np.ndarray:
    """Resize an ``(H, W, C)`` image to ``(h, w, C)`` as OpenCV 3.4.2's ``cv::resize``.

    Parameters
    ----------
    src:
        ``uint8``, ``float32`` or ``float64`` image, height x width x channels.
    w, h:
        Output width and height (positive).
    interp:
        OpenCV interpolation code: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4.
    """
    _check(src, w, h, interp)
    H, W = src.shape[:2]
    if (H, W) == (h, w):
        return src.copy()
    if interp == 0:
        return src[_nearest_index(H, h)][:, _nearest_index(W, w)]
    sx, sy = 1.0 / (w / W), 1.0 / (h / H)
    ix, iy = round(sx), round(sy)
    fast = abs(sx - ix) < _DBL_EPSILON and abs(sy - iy) < _DBL_EPSILON
    if interp == 1 and fast and ix == 2 and iy == 2:
        interp = 3
    if interp == 3 and sx >= 1 and sy >= 1:
        if fast:
            return _area_fast(src, ix, iy, w, h)
        return _area(src, w, h, sx, sy)
    return _separable(src, w, h, interp)


def _check(src: np.ndarray, w: int, h: int, interp: int) -> None:
    if src.ndim != 3 or src.shape[0] == 0 or src.shape[1] == 0:
        raise ShapeError(f"resize: expected a non-empty (height, width, channels) image, got shape "
                         f"{src.shape}")
    if src.dtype not in SUPPORTED_DTYPES:
        raise DTypeError(f"resize: image dtype {src.dtype} is not supported (MXNet's OpenCV "
                         "resize takes uint8, float32 or float64); cast the image first, e.g. "
                         "img.astype('float32')")
    if int(w) <= 0 or int(h) <= 0:
        raise GluonportError(f"resize: output size w={w}, h={h} must be positive")
    if interp not in INTERP_NAMES:
        known = ", ".join(f"{k} ({v})" for k, v in INTERP_NAMES.items())
        raise GluonportError(f"resize: unknown interpolation code interp={interp!r}; OpenCV's "
                             f"resize (and gluonport) support {known}")


def _nearest_index(src: int, dst: int) -> np.ndarray:
    step = 1.0 / (dst / src)
    return np.minimum(np.floor(np.arange(dst) * step).astype(np.int64), src - 1)


# --- separable filters: bilinear, bicubic, Lanczos-4, area when enlarging ------------------------
def _positions(src: int, dst: int, area: bool) -> tuple[np.ndarray, np.ndarray]:
    """Source index (floor) and float32 fraction for every destination index."""
    inv = dst / src
    scale = 1.0 / inv
    d = np.arange(dst, dtype=np.float64)
    if area:
        s = np.floor(d * scale).astype(np.int64)
        f = ((d + 1) - (s + 1) * inv).astype(_F32)
        f = np.where(f <= 0, _F32(0), f - np.floor(f)).astype(_F32)
        return s, f
    f = ((d + 0.5) * scale - 0.5).astype(_F32)
    s = np.floor(f).astype(np.int64)
    return s, (f - s.astype(_F32)).astype(_F32)


def _cubic(f: np.ndarray) -> np.ndarray:
    a, one = _F32(-0.75), _F32(1)
    g = f + one
    c0 = ((a * g - _F32(5) * a) * g + _F32(8) * a) * g - _F32(4) * a
    c1 = ((a + _F32(2)) * f - (a + _F32(3))) * f * f + one
    e = one - f
    c2 = ((a + _F32(2)) * e - (a + _F32(3))) * e * e + one
    c3 = one - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], axis=-1).astype(_F32)


def _lanczos4(f: np.ndarray) -> np.ndarray:
    s45 = 0.70710678118654752440084436210485
    cs = [(1, 0), (-s45, -s45), (0, 1), (s45, -s45), (-1, 0), (s45, s45), (0, -1), (-s45, s45)]
    out = np.zeros((len(f), 8), dtype=_F32)
    for n, x in enumerate(f):
        if x < np.finfo(np.float32).eps:
            out[n, 3] = 1
            continue
        # OpenCV adds the offsets in float (x is a float there), then goes to double
        ys = [-np.float64(_F32(_F32(x + _F32(3)) - _F32(i))) * math.pi * 0.25 for i in range(8)]
        s0, c0 = math.sin(ys[0]), math.cos(ys[0])
        with np.errstate(divide="ignore", invalid="ignore"):  # x == 2**-23: OpenCV divides by 0
            coeffs = [_F32((cs[i][0] * s0 + cs[i][1] * c0) / (ys[i] * ys[i])) for i in range(8)]
        total = _F32(0)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for c in coeffs:
                total = _F32(total + c)
            inv = _F32(_F32(1) / total)
            out[n] = [_F32(c * inv) for c in coeffs]
    return out


def _table(src: int, dst: int, interp: int, columns: bool):
    """Tap indices (dst, k) and float32 weights (dst, k) along one axis."""
    s, f = _positions(src, dst, area=interp == 3)
    if interp in (1, 3):
        if columns:  # OpenCV zeroes the fraction where a column leaves the image
            out = (s < 0) | (s >= src - 1)
            f = np.where(out, _F32(0), f).astype(_F32)
            s = np.clip(s, 0, src - 1)
        weights = np.stack([_F32(1) - f, f], axis=-1).astype(_F32)
    elif interp == 2:
        weights = _cubic(f)
    else:
        weights = _lanczos4(f)
    k = weights.shape[1]
    taps = s[:, None] + np.arange(k)[None, :] - (k // 2 - 1)
    return np.clip(taps, 0, src - 1), weights


def _separable(src: np.ndarray, w: int, h: int, interp: int) -> np.ndarray:
    H, W, C = src.shape
    xt, xw = _table(W, w, interp, columns=True)
    yt, yw = _table(H, h, interp, columns=False)
    if src.dtype != np.uint8:
        wt = src.dtype.type
        rows = _weighted(src, xt, xw.astype(wt), axis=1)
        return _weighted(rows, yt, yw.astype(wt), axis=0)
    xa, yb = _fixed(xw).astype(np.int32), _fixed(yw)
    rows = _weighted(src.astype(np.int32), xt, xa, axis=1)  # exact integer sums, (H, w, C)
    flat = rows.reshape(H, w * C).astype(np.int64)
    if interp in (1, 3):
        out = _vertical_linear_u8(flat, yt, yb)
    elif interp == 2:
        out = _vertical_cubic_u8(flat, yt, yb)
    else:
        out = _vertical_exact_u8(flat, yt, yb)
    return np.clip(out, 0, 255).astype(np.uint8).reshape(h, w, C)


def _fixed(weights: np.ndarray) -> np.ndarray:
    """OpenCV's ``saturate_cast<short>(w * 2048)``: round half to even, NaN to -32768."""
    with np.errstate(invalid="ignore"):
        scaled = np.rint(weights * _F32(_COEF_SCALE))
    scaled = np.where(np.isnan(scaled), -32768, np.clip(scaled, -32768, 32767))
    return scaled.astype(np.int64)


def _weighted(data: np.ndarray, taps: np.ndarray, weights: np.ndarray, axis: int) -> np.ndarray:
    """Sum over taps of ``data[taps] * weight`` along ``axis``, left to right (OpenCV's order)."""
    shape = [1] * data.ndim
    shape[axis] = len(taps)
    acc = None
    for k in range(taps.shape[1]):
        term = np.take(data, taps[:, k], axis=axis) * weights[:, k].reshape(shape)
        acc = term if acc is None else acc + term
    return acc


def _vertical_linear_u8(rows: np.ndarray, taps: np.ndarray, b: np.ndarray) -> np.ndarray:
    r0, r1 = rows[taps[:, 0]] >> 4, rows[taps[:, 1]] >> 4
    v = ((r0 * b[:, :1]) >> 16) + ((r1 * b[:, 1:]) >> 16)
    return (v + 2) >> 2


def _vertical_exact_u8(rows: np.ndarray, taps: np.ndarray, b: np.ndarray) -> np.ndarray:
    acc = sum(rows[taps[:, k]] * b[:, k:k + 1] for k in range(taps.shape[1]))
    return (acc + (1 << 21)) >> 22


def _vertical_cubic_u8(rows: np.ndarray, taps: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = _vertical_exact_u8(rows, taps, b)
    vec = (rows.shape[1] // 8) * 8  # OpenCV's SSE loop: 8 values at a time, in float32
    if vec:
        bf = (b.astype(_F32) * _F32(1.0 / (_COEF_SCALE * _COEF_SCALE))).astype(_F32)
        acc = None
        for k in range(4):
            term = rows[taps[:, k], :vec].astype(_F32) * bf[:, k:k + 1]
            acc = term if acc is None else acc + term
        out[:, :vec] = np.clip(np.rint(acc), -32768, 32767).astype(np.int64)
    return out


# --- area (shrinking) -----------------------------------------------------------------------------
def _area_fast(src: np.ndarray, ix: int, iy: int, w: int, h: int) -> np.ndarray:
    C = src.shape[2]
    blocks = src[:h * iy, :w * ix].reshape(h, iy, w, ix, C)
    cells = [blocks[:, a, :, b] for a in range(iy) for b in range(ix)]
    if src.dtype == np.uint8:
        total = sum(c.astype(np.int32) for c in cells)
        if ix == 2 and iy == 2 and C in (1, 3, 4):  # OpenCV's 2x2 SIMD path rounds half up
            return ((total + 2) >> 2).astype(np.uint8)
        scaled = total.astype(_F32) * _F32(_F32(1) / _F32(ix * iy))
        return np.clip(np.rint(scaled), 0, 255).astype(np.uint8)
    wt = src.dtype.type
    total = np.zeros(cells[0].shape, dtype=wt)
    for start in range(0, len(cells) - len(cells) % 4, 4):
        a, b, c, d = cells[start:start + 4]
        total = total + (((a + b) + c) + d)
    for c in cells[len(cells) - len(cells) % 4:]:
        total = total + c
    return (total * wt(_F32(1) / _F32(ix * iy))).astype(src.dtype)


def _area_tab(src: int, dst: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(destination index, source index, float32 weight) triples, in OpenCV's order."""
    di, si, alpha = [], [], []
    for d in range(dst):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, src - f1)
        s2 = min(math.floor(f2), src - 1)
        s1 = min(math.ceil(f1), s2)
        if s1 - f1 > 1e-3:
            di.append(d), si.append(s1 - 1), alpha.append((s1 - f1) / cell)
        for s in range(s1, s2):
            di.append(d), si.append(s), alpha.append(1.0 / cell)
        if f2 - s2 > 1e-3:
            di.append(d), si.append(s2), alpha.append(min(min(f2 - s2, 1.0), cell) / cell)
    return np.array(di), np.array(si), np.array(alpha, dtype=_F32)


def _accumulate(data: np.ndarray, tab, axis: int, n: int, wt) -> np.ndarray:
    """out[d] = sum in table order of data[s] * alpha, along ``axis`` (0 or 1)."""
    di, si, alpha = tab
    rank = np.arange(len(di)) - np.searchsorted(di, di)
    shape = list(data.shape)
    shape[axis] = n
    out = np.zeros(shape, dtype=wt)
    view = out if axis == 0 else out.swapaxes(0, 1)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        vals = np.take(data, si[sel], axis=axis).astype(wt, copy=False)
        bshape = [1] * data.ndim
        bshape[axis] = int(sel.sum())
        term = vals * alpha[sel].astype(wt).reshape(bshape)
        view[di[sel]] += term if axis == 0 else term.swapaxes(0, 1)
    return out


def _area(src: np.ndarray, w: int, h: int, sx: float, sy: float) -> np.ndarray:
    H, W, _ = src.shape
    wt = np.float64 if src.dtype == np.float64 else _F32
    rows = _accumulate(src, _area_tab(W, w, sx), axis=1, n=w, wt=wt)
    out = _accumulate(rows, _area_tab(H, h, sy), axis=0, n=h, wt=wt)
    if src.dtype == np.uint8:
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return out.astype(src.dtype)

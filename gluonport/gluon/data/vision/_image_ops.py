"""numpy versions of MXNet 1.9.1's ``_image_*`` operators (``src/operator/image/``).

gluonport's op registry has no ``_image_*`` ops, so the vision transforms compute here, on the
host, following MXNet's CPU kernels: the same float32 arithmetic in the same order, and MXNet's
``saturate_cast`` (clip to [0, 255], then truncate) for uint8 results.

Random factors come from gluonport's generator (``mx.random.seed`` reseeds it); they are not
the numbers MXNet's C++ generator would draw, but the distributions are MXNet's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import _cv_resize
from .... import random as _random
from ....errors import ShapeError

_F32 = np.float32
_GRAY = np.array([0.299, 0.587, 0.114], dtype=_F32)  # MXNet's RGB -> gray weights


def _ndim(data: np.ndarray, op: str, layout: str, ndims: tuple[int, ...] = (3, 4)) -> None:
    if data.ndim not in ndims:
        shapes = " or ".join({3: layout, 4: "(N, " + layout[1:]}[n] for n in ndims)
        raise ShapeError(f"{op}: input must have shape {shapes}, got {data.shape}")


def _channels(data: np.ndarray, op: str, axis: int) -> int:
    c = data.shape[axis]
    if c not in (1, 3):
        raise ShapeError(f"{op}: the channel axis must have 1 or 3 elements, got input with "
                         f"shape {data.shape}")
    return c


def saturate(val: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """MXNet's ``saturate_cast`` of the image ops: uint8 clips then truncates."""
    if dtype == np.uint8:
        return np.clip(val, 0, 255).astype(np.uint8)
    return val.astype(dtype)


# --- layout and normalisation -------------------------------------------------------------------
def to_tensor(data: np.ndarray) -> np.ndarray:
    """HWC (NHWC) in [0, 255] -> float32 CHW (NCHW) in [0, 1]: ``x / 255.0f``."""
    _ndim(data, "ToTensor", "(height, width, channels)")
    wide = np.float64 if data.dtype == np.float64 else _F32
    out = (data.astype(wide) / wide(255)).astype(_F32)
    return np.ascontiguousarray(np.moveaxis(out, -1, -3))


def normalize(data: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """``(x - mean[c]) / std[c]`` over CHW (NCHW); mean/std have 1 or C values."""
    _ndim(data, "Normalize", "(channels, height, width)")
    c = _channels(data, "Normalize", -3)
    m, s = _per_channel(mean, c, "mean", data.shape), _per_channel(std, c, "std", data.shape)
    wide = np.float64 if data.dtype == np.float64 else _F32
    shape = (c, 1, 1)
    out = (data.astype(wide) - m.astype(wide).reshape(shape)) / s.astype(wide).reshape(shape)
    return out.astype(data.dtype)


def _per_channel(value: Any, c: int, name: str, shape: tuple) -> np.ndarray:
    vals = np.atleast_1d(np.asarray(value, dtype=_F32)).reshape(-1)
    if len(vals) not in (1, c):
        raise ShapeError(f"Normalize: invalid {name} for input with shape {shape}: {name} must "
                         f"have either 1 or {c} elements, but got {tuple(vals.tolist())}")
    return np.broadcast_to(vals, (c,))


# --- geometry -----------------------------------------------------------------------------------
def resize_size(h: int, w: int, size: Any, keep_ratio: bool) -> tuple[int, int]:
    """Output (height, width) of ``_image_resize`` (``GetHeightAndWidth``)."""
    dims = [int(size)] if np.isscalar(size) else [int(v) for v in size]
    if len(dims) not in (1, 2) or min(dims) <= 0:
        raise ShapeError(f"Resize: size must be a positive int or (width, height), got {size!r}")
    if len(dims) == 2:
        return dims[1], dims[0]
    if not keep_ratio:
        return dims[0], dims[0]
    if h > w:
        return h * dims[0] // w, dims[0]
    return dims[0], w * dims[0] // h


def resize(data: np.ndarray, size: Any, keep_ratio: bool = False, interp: Any = 1
           ) -> np.ndarray:
    """Resize HWC (or each image of NHWC) with MXNet's OpenCV resize."""
    _ndim(data, "Resize", "(height, width, channels)")
    code = 1 if interp is None else interp
    h, w = resize_size(data.shape[-3], data.shape[-2], size, keep_ratio)
    if data.ndim == 3:
        return _cv_resize.resize(data, w, h, code)
    return np.stack([_cv_resize.resize(img, w, h, code) for img in data]) if len(data) else \
        np.zeros((0, h, w, data.shape[-1]), dtype=data.dtype)


def crop(data: np.ndarray, x: int, y: int, width: int, height: int) -> np.ndarray:
    """``data[..., y:y+height, x:x+width, :]`` of HWC or NHWC (``_image_crop``)."""
    _ndim(data, "CropResize", "(height, width, channels)")
    _channels(data, "CropResize", -1)
    H, W = data.shape[-3], data.shape[-2]
    if width <= 0 or height <= 0 or x < 0 or y < 0 or x + width > W or y + height > H:
        raise ShapeError(f"CropResize: crop x={x}, y={y}, width={width}, height={height} does "
                         f"not fit in an image of width {W} and height {H}")
    return np.ascontiguousarray(data[..., y:y + height, x:x + width, :])


def _aug_image(data: np.ndarray, op: str) -> int:
    _ndim(data, op, "(height, width, channels)", (3,))
    return _channels(data, op, -1)


def flip(data: np.ndarray, axis: int, op: str) -> np.ndarray:
    """Mirror an HWC image along ``axis`` (1: left-right, 0: top-bottom)."""
    _aug_image(data, op)
    return np.ascontiguousarray(np.flip(data, axis=axis))


def random_flip(data: np.ndarray, axis: int, op: str) -> np.ndarray:
    """Flip with probability 1/2 (MXNet keeps the image when its Bernoulli draw is true)."""
    _aug_image(data, op)
    if _random.generator().random() < 0.5:
        return data.copy()
    return flip(data, axis, op)


# --- colour -------------------------------------------------------------------------------------
def uniform(low: float, high: float) -> float:
    """A float32 factor in [low, high) from gluonport's generator."""
    return float(_F32(_random.generator().uniform(low, high)))


def adjust_brightness(data: np.ndarray, alpha: float) -> np.ndarray:
    """``saturate(x * alpha)``."""
    _aug_image(data, "RandomBrightness")
    return saturate(data.astype(_F32) * _F32(alpha), data.dtype)


def adjust_contrast(data: np.ndarray, alpha: float) -> np.ndarray:
    """``saturate(x * alpha + (1 - alpha) * mean_gray)``; the gray mean is summed in float32
    pixel by pixel, as MXNet's loop does."""
    c = _aug_image(data, "RandomContrast")
    pixels = data.astype(_F32).reshape(-1, c)
    terms = pixels * _GRAY if c > 1 else pixels
    total = np.cumsum(terms.reshape(-1), dtype=_F32)[-1] if terms.size else _F32(0)
    gray_mean = _F32(total / _F32(pixels.shape[0]))
    beta = _F32((_F32(1) - _F32(alpha)) * gray_mean)
    return saturate(data.astype(_F32) * _F32(alpha) + beta, data.dtype)


def adjust_saturation(data: np.ndarray, alpha: float) -> np.ndarray:
    """MXNet 1.9.1's saturation blend. Its gray value is only the blue term (``gray =``
    where ``gray +=`` was meant); reproduced so results match MXNet."""
    c = _aug_image(data, "RandomSaturation")
    if c == 1:
        return data.copy()
    x = data.astype(_F32)
    gray = (x[..., 2:3] * _GRAY[2]) * (_F32(1) - _F32(alpha))
    return saturate(gray + x * _F32(alpha), data.dtype)


def _rgb_to_hls(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple:
    r, g, b = r / _F32(255), g / _F32(255), b / _F32(255)
    vmax = np.fmax(np.fmax(r, g), b)
    vmin = np.fmin(np.fmin(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * _F32(0.5)
    chroma = diff > np.finfo(_F32).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        sat = np.where(light < _F32(0.5), diff / (vmax + vmin),
                       diff / (_F32(2) - vmax - vmin))
        step = _F32(60) / diff
        hue = np.where(vmax == r, (g - b) * step,
                       np.where(vmax == g, (b - r) * step + _F32(120), (r - g) * step + _F32(240)))
    hue = np.where(hue < 0, hue + _F32(360), hue)
    zero = _F32(0)
    return np.where(chroma, hue, zero), light, np.where(chroma, sat, zero)


def _hls_to_rgb(h: np.ndarray, light: np.ndarray, sat: np.ndarray) -> tuple:
    p2 = np.where(light <= _F32(0.5), light * (_F32(1) + sat), light + sat - light * sat)
    p1 = _F32(2) * light - p2
    h = h * (_F32(1) / _F32(60))
    finite = np.isfinite(h)
    while (finite & (h < 0)).any():  # MXNet wraps by repeated float additions of 6
        h = np.where(finite & (h < 0), h + _F32(6), h)
    while (finite & (h >= 6)).any():
        h = np.where(finite & (h >= 6), h - _F32(6), h)
    sector = np.clip(h.astype(np.int64), 0, 5)
    frac = h - sector.astype(_F32)
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (_F32(1) - frac), p1 + (p2 - p1) * frac])
    order = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    pick = order[sector]  # (..., 3): b, g, r rows of tab
    b, g, r = (np.take_along_axis(tab, pick[None, ..., k], 0)[0] for k in range(3))
    grey = sat == 0
    return (np.where(grey, light, r) * _F32(255), np.where(grey, light, g) * _F32(255),
            np.where(grey, light, b) * _F32(255))


def adjust_hue(data: np.ndarray, alpha: float) -> np.ndarray:
    """Rotate the hue by ``alpha * 360`` degrees through MXNet's RGB <-> HLS conversion."""
    c = _aug_image(data, "RandomHue")
    if c == 1:
        return data.copy()
    x = data.astype(_F32)
    h, light, sat = _rgb_to_hls(x[..., 0], x[..., 1], x[..., 2])
    r, g, b = _hls_to_rgb(h + _F32(alpha) * _F32(360), light, sat)
    return saturate(np.stack([r, g, b], axis=-1), data.dtype)


_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]]).astype(_F32)


def adjust_lighting(data: np.ndarray, alpha: Sequence[float]) -> np.ndarray:
    """AlexNet-style PCA lighting: add ``eig @ alpha`` (float32, left to right) per channel."""
    c = _aug_image(data, "RandomLighting")
    if c == 1:
        return data.copy()
    a = np.asarray(alpha, dtype=_F32).reshape(3)
    pca = (_EIG[:, 0] * a[0] + _EIG[:, 1] * a[1]) + _EIG[:, 2] * a[2]
    return saturate(data.astype(_F32) + pca.astype(_F32), data.dtype)


def random_lighting(data: np.ndarray, alpha_std: float) -> np.ndarray:
    """``adjust_lighting`` with three factors drawn from N(0, alpha_std)."""
    alpha = _random.generator().normal(0.0, alpha_std, size=3).astype(_F32)
    return adjust_lighting(data, alpha)


def random_color_jitter(data: np.ndarray, brightness: float, contrast: float,
                        saturation: float, hue: float) -> np.ndarray:
    """Brightness, contrast, saturation and hue jitter in a random order (MXNet's op)."""
    _aug_image(data, "RandomColorJitter")
    rng = _random.generator()
    out = data
    for k in rng.permutation(4):
        if k == 0 and brightness > 0:
            out = adjust_brightness(out, 1.0 + uniform(-brightness, brightness))
        elif k == 1 and contrast > 0:
            out = adjust_contrast(out, 1.0 + uniform(-contrast, contrast))
        elif k == 2 and saturation > 0:
            out = adjust_saturation(out, 1.0 + uniform(-saturation, saturation))
        elif k == 3 and hue > 0:
            out = adjust_hue(out, uniform(-hue, hue))
    return out.copy() if out is data else out

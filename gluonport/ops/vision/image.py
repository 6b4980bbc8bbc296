"""MXNet 1.9.1's image operators (``src/operator/image/``): ``_image_to_tensor``,
``_image_normalize``, ``_image_resize``, ``_image_crop``, the flips, the colour jitters and the
lighting noise. MXNet places them at ``nd.image.X`` / ``sym.image.X`` (``F.image.X`` in a
HybridBlock), which is where ``gluon.data.vision.transforms`` and GluonCV's presets call them.

The kernels follow MXNet's CPU code: the same float32 arithmetic in the same order, and MXNet's
``saturate_cast`` for results (uint8 clips to [0, 255], then truncates; other dtypes are a plain
C cast). Facts kept from MXNet 1.9.1 (checked with the oracle, ``tests/golden/ops/image.npz``):

* ``to_tensor``: HWC or NHWC, any dtype, to float32 CHW / NCHW, ``x / 255.0f`` (a float64 image
  is divided in double, a float16 one rounded to half precision, as mshadow's ``half_t``
  arithmetic does);
* ``normalize``: CHW or NCHW with 1 or 3 channels, ``(x - mean[c]) / std[c]`` in float (double
  for float64; float16 rounds after each step), stored in the input dtype; ``mean``/``std``
  have 1 or C values, and their 4-value defaults fit no input (MXNet's quirk: give them
  explicitly);
* ``resize``: OpenCV 3.4.2's ``cv::resize`` (``gluonport/_core/cv_resize.py``, bit-exact for uint8);
  ``size`` is ``(width, height)`` or one edge (both edges, or the short one with
  ``keep_ratio``);
* ``crop``: a ``width`` x ``height`` window at ``(x, y)`` of HWC or NHWC with 1 or 3 channels;
* flips, colour jitters and lighting take one HWC image with 1 or 3 channels; a random op draws
  its factor per call from gluonport's generator (``mx.random.seed`` reseeds it), not MXNet's
  C++ generator, so the factors differ from MXNet's for one seed. MXNet 1.9.1's saturation
  blend uses only the blue term for its gray value (``gray =`` where ``gray +=`` was meant);
  kept so results match.

Where MXNet leaves its output unwritten (the middle row/column of an odd-sized flip, hue and
lighting on one channel, colour jitter with every amount 0) the result here is the input's
value.

ONNX lowerings (below in this file):

Each lowering repeats MXNet's arithmetic, so onnxruntime gives MXNet's numbers (float results
within float rounding, integer results equal):

* ``_image_to_tensor``: ``Transpose`` to CHW / NCHW, ``Cast`` to float32 and ``Div`` by 255
  (float64 is divided in double first, as MXNet does, then cast; float16 rounds through half);
* ``_image_normalize``: ``Sub`` and ``Div`` by (C, 1, 1) constants in float32 (float64 in
  double; float16 rounds to half after each step, as mshadow's ``half_t``), cast back to the
  input dtype (MXNet stores the result in the input dtype);
* ``_image_crop``: ``Slice`` of the height and width axes (a batch axis may be dynamic);
* ``_image_flip_left_right`` / ``_image_flip_top_bottom``: ``Slice`` with step -1;
* ``_image_adjust_lighting``: ``Add`` of the three float32 offsets in float32, then MXNet's
  ``saturate_cast`` (``Clip`` to [0, 255] before the uint8 ``Cast``, which truncates).

``_image_resize`` and the random ops have no export (their ``no_onnx`` says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core import cv_resize as _cv_resize
from ..._core import dtypes
from ..._core.attr_fields import Bool, Float, FloatTuple, Int, Shape
from ..._core.rng import generator
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext, lowering
from ..registry import define

__all__ = ["to_tensor", "normalize", "resize", "resize_size", "crop", "flip", "random_flip",
           "uniform", "saturate", "adjust_brightness", "adjust_contrast", "adjust_saturation",
           "adjust_hue", "adjust_lighting", "random_lighting", "random_color_jitter",
           "lighting_offsets", "normalize_values"]


_F32 = np.float32
_GRAY = np.array([0.299, 0.587, 0.114], dtype=_F32)  # MXNet's RGB -> gray weights
_HWC = "(height, width, channels)"
_NHWC = "(N, height, width, channels)"


def _generator() -> np.random.Generator:
    return generator()


# --- shape checks shared by inference and compute ------------------------------------------------
def _rank(op: str, shape: tuple, ranks: tuple[int, ...], layout: str, batched: str) -> None:
    if len(shape) not in ranks:
        want = " or ".join({3: layout, 4: batched}[r] for r in ranks)
        raise ShapeError(f"{op}: input must have shape {want}, got {fmt(shape)}")


def _one_or_three(op: str, shape: tuple, axis: int, what: str) -> int:
    """The channel count at ``axis`` (0 when unknown), checked to be 1 or 3 as MXNet does."""
    c = int(shape[axis])
    if c not in (0, 1, 3):
        raise ShapeError(f"{op}: the {what} axis must be the channel axis with 1 or 3 elements, "
                         f"got input of shape {fmt(shape)}")
    return c


def _image_check(op: str, shape: tuple) -> int:
    """MXNet's ``ImageShape``: one HWC image with 1 or 3 channels; returns the channels."""
    _rank(op, shape, (3,), _HWC, _NHWC)
    return _one_or_three(op, shape, -1, "last")


def _image_rule(name: str):
    def rule(p, in_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, [None]
        _image_check(name, tuple(data))
        return in_shapes, [tuple(data)]

    return rule


# --- to_tensor, normalize ------------------------------------------------------------------------
def _to_tensor_rule(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    _rank("image.to_tensor", tuple(data), (3, 4), _HWC, _NHWC)
    out = (data[2], data[0], data[1]) if len(data) == 3 else (data[0], data[3], data[1], data[2])
    return in_shapes, [tuple(out)]


def to_tensor(data: np.ndarray) -> np.ndarray:
    """HWC (NHWC) in [0, 255] -> float32 CHW (NCHW) in [0, 1]: ``x / 255.0f``."""
    _to_tensor_rule(None, [data.shape])
    wide = np.float64 if data.dtype == np.float64 else _F32
    out = data.astype(wide) / wide(255)
    if data.dtype == np.float16:  # mshadow's half_t / float is a half_t
        out = out.astype(np.float16)
    return np.ascontiguousarray(np.moveaxis(out.astype(_F32), -1, -3))


def _per_channel(value: Sequence[float], c: int, name: str, shape: tuple) -> np.ndarray:
    vals = np.atleast_1d(np.asarray(value, dtype=_F32)).reshape(-1)
    if c and len(vals) not in (1, c):
        raise ShapeError(f"image.normalize: invalid {name} for input of shape {fmt(shape)}: "
                         f"{name} must have either 1 or {c} elements, but got "
                         f"{tuple(vals.tolist())}")
    return np.broadcast_to(vals, (c,)) if c else vals


def normalize_values(shape: tuple, mean: Any, std: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check ``shape`` (CHW / NCHW, 1 or 3 channels) and return float32 per-channel mean and
    std, one value per channel (as given when the channel count is unknown)."""
    _rank("image.normalize", shape, (3, 4), "(channels, height, width)",
          "(N, channels, height, width)")
    c = _one_or_three("image.normalize", shape, -3, "first" if len(shape) == 3 else "second")
    return _per_channel(mean, c, "mean", shape), _per_channel(std, c, "std", shape)


def _normalize_rule(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    normalize_values(tuple(data), p.mean, p.std)
    return in_shapes, [tuple(data)]


def normalize(data: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """``(x - mean[c]) / std[c]`` over CHW (NCHW); mean/std have 1 or C values."""
    m, s = normalize_values(data.shape, mean, std)
    wide = np.float64 if data.dtype == np.float64 else _F32
    shape = (len(m), 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        centred = data.astype(wide) - m.astype(wide).reshape(shape)
        if data.dtype == np.float16:  # mshadow rounds half_t - float to half_t
            centred = centred.astype(np.float16).astype(_F32)
        return (centred / s.astype(wide).reshape(shape)).astype(data.dtype)


# --- resize, crop --------------------------------------------------------------------------------
def resize_size(h: int, w: int, size: Any, keep_ratio: bool) -> tuple[int, int]:
    """Output (height, width) of ``_image_resize`` (MXNet's ``GetHeightAndWidth``); 0 for a dim
    that depends on an unknown input dim."""
    dims = [int(size)] if np.isscalar(size) else [int(v) for v in size]
    if len(dims) not in (1, 2):
        raise OpAttributeError(f"image.resize: size={tuple(dims)} must be one int or "
                               "(width, height)")
    if min(dims) <= 0:
        raise OpAttributeError(f"image.resize: size={tuple(dims)} must be positive")
    if len(dims) == 2:
        return dims[1], dims[0]
    if not keep_ratio:
        return dims[0], dims[0]
    if h == 0 or w == 0:
        return 0, 0
    if h > w:
        return h * dims[0] // w, dims[0]
    return dims[0], w * dims[0] // h


def _resize_rule(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        resize_size(1, 1, p.size, p.keep_ratio)  # attribute checks
        return in_shapes, [None]
    _rank("image.resize", tuple(data), (3, 4), _HWC, _NHWC)
    h, w = resize_size(data[-3], data[-2], p.size, p.keep_ratio)
    return in_shapes, [(*data[:-3], h, w, data[-1])]


def resize(data: np.ndarray, size: Any, keep_ratio: bool = False, interp: int = 1
           ) -> np.ndarray:
    """Resize HWC (or each image of NHWC) with MXNet's OpenCV resize."""
    _rank("image.resize", data.shape, (3, 4), _HWC, _NHWC)
    h, w = resize_size(data.shape[-3], data.shape[-2], size, keep_ratio)
    if data.ndim == 3:
        return _cv_resize.resize(data, w, h, interp)
    if not len(data):
        return np.zeros((0, h, w, data.shape[-1]), dtype=data.dtype)
    return np.stack([_cv_resize.resize(img, w, h, interp) for img in data])


def _crop_check(p, shape: tuple) -> None:
    _rank("image.crop", shape, (3, 4), _HWC, _NHWC)
    _one_or_three("image.crop", shape, -1, "last")
    if p.width <= 0 or p.height <= 0 or p.x < 0 or p.y < 0:
        raise OpAttributeError(f"image.crop: x={p.x}, y={p.y} must be >= 0 and width="
                               f"{p.width}, height={p.height} > 0")
    H, W = shape[-3], shape[-2]
    if (W and p.x + p.width > W) or (H and p.y + p.height > H):
        raise ShapeError(f"image.crop: the window x={p.x}, y={p.y}, width={p.width}, height="
                         f"{p.height} does not fit in an image of shape {fmt(shape)} (x + "
                         "width must be <= its width, y + height <= its height)")


def _crop_rule(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    _crop_check(p, tuple(data))
    return in_shapes, [(*data[:-3], p.height, p.width, data[-1])]


def crop(data: np.ndarray, x: int, y: int, width: int, height: int) -> np.ndarray:
    """``data[..., y:y+height, x:x+width, :]`` of HWC or NHWC (``_image_crop``)."""
    p = _Window(x, y, width, height)
    _crop_check(p, data.shape)
    return np.ascontiguousarray(data[..., y:y + height, x:x + width, :])


class _Window:
    """Crop attributes for :func:`crop` called with plain ints."""

    def __init__(self, x: int, y: int, width: int, height: int):
        self.x, self.y, self.width, self.height = int(x), int(y), int(width), int(height)


# --- flips ---------------------------------------------------------------------------------------
def flip(data: np.ndarray, axis: int, op: str = "image.flip") -> np.ndarray:
    """Mirror an HWC image along ``axis`` (1: left-right, 0: top-bottom)."""
    _image_check(op, data.shape)
    return np.ascontiguousarray(np.flip(data, axis=axis))


def random_flip(data: np.ndarray, axis: int, op: str = "image.random_flip") -> np.ndarray:
    """Flip with probability 1/2 (MXNet keeps the image when its Bernoulli draw is true)."""
    _image_check(op, data.shape)
    if _generator().random() < 0.5:
        return data.copy()
    return flip(data, axis, op)


# --- colour --------------------------------------------------------------------------------------
def saturate(val: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """MXNet's ``saturate_cast`` of the image ops: uint8 clips then truncates."""
    if dtype == np.uint8:
        return np.clip(val, 0, 255).astype(np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        return val.astype(dtype)


def uniform(low: float, high: float) -> float:
    """A float32 factor in [low, high) from gluonport's generator."""
    return float(_F32(_generator().uniform(low, high)))


def adjust_brightness(data: np.ndarray, alpha: float) -> np.ndarray:
    """``saturate(x * alpha)``."""
    _image_check("image.random_brightness", data.shape)
    return saturate(data.astype(_F32) * _F32(alpha), data.dtype)


def adjust_contrast(data: np.ndarray, alpha: float) -> np.ndarray:
    """``saturate(x * alpha + (1 - alpha) * mean_gray)``; the gray mean is summed in float32
    pixel by pixel, as MXNet's loop does."""
    c = _image_check("image.random_contrast", data.shape)
    pixels = data.astype(_F32).reshape(-1, c)
    terms = pixels * _GRAY if c > 1 else pixels
    total = np.cumsum(terms.reshape(-1), dtype=_F32)[-1] if terms.size else _F32(0)
    gray_mean = _F32(total / _F32(pixels.shape[0]))
    beta = _F32((_F32(1) - _F32(alpha)) * gray_mean)
    return saturate(data.astype(_F32) * _F32(alpha) + beta, data.dtype)


def adjust_saturation(data: np.ndarray, alpha: float) -> np.ndarray:
    """MXNet 1.9.1's saturation blend, whose gray value is only the blue term."""
    c = _image_check("image.random_saturation", data.shape)
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
    c = _image_check("image.random_hue", data.shape)
    if c == 1:
        return data.copy()
    x = data.astype(_F32)
    h, light, sat = _rgb_to_hls(x[..., 0], x[..., 1], x[..., 2])
    r, g, b = _hls_to_rgb(h + _F32(alpha) * _F32(360), light, sat)
    return saturate(np.stack([r, g, b], axis=-1), data.dtype)


_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]]).astype(_F32)


def lighting_offsets(alpha: Sequence[float]) -> np.ndarray:
    """The float32 per-channel offsets ``eig @ alpha`` (summed left to right, as MXNet)."""
    a = np.asarray(alpha, dtype=_F32).reshape(-1)
    if len(a) < 3:
        raise OpAttributeError(f"image.adjust_lighting: alpha={tuple(a.tolist())} needs 3 "
                               "values (R, G, B)")
    return ((_EIG[:, 0] * a[0] + _EIG[:, 1] * a[1]) + _EIG[:, 2] * a[2]).astype(_F32)


def adjust_lighting(data: np.ndarray, alpha: Sequence[float]) -> np.ndarray:
    """AlexNet-style PCA lighting: add ``eig @ alpha`` per channel."""
    c = _image_check("image.adjust_lighting", data.shape)
    if c == 1:  # MXNet returns before reading alpha
        return data.copy()
    return saturate(data.astype(_F32) + lighting_offsets(alpha), data.dtype)


def random_lighting(data: np.ndarray, alpha_std: float) -> np.ndarray:
    """``adjust_lighting`` with three factors drawn from N(0, alpha_std)."""
    alpha = _generator().normal(0.0, alpha_std, size=3).astype(_F32)
    return adjust_lighting(data, alpha)


def random_color_jitter(data: np.ndarray, brightness: float, contrast: float,
                        saturation: float, hue: float) -> np.ndarray:
    """Brightness, contrast, saturation and hue jitter in a random order (MXNet's op)."""
    _image_check("image.random_color_jitter", data.shape)
    rng = _generator()
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


# --- registration --------------------------------------------------------------------------------
def _factors(p) -> tuple[float, float]:
    """``min_factor``/``max_factor``, which MXNet bounds below by 0."""
    for key in ("min_factor", "max_factor"):
        if getattr(p, key) < 0:
            raise OpAttributeError(f"image: {key}={getattr(p, key)} must be >= 0")
    return p.min_factor, p.max_factor


def _random_rule(name: str):
    rule = _image_rule(name)

    def checked(p, in_shapes):
        _factors(p)
        return rule(p, in_shapes)

    return checked


_NO_ONNX_RANDOM = ("a random training-time augmentation (a fresh draw on every call), left "
                   "out of inference exports; the deterministic image ops export")



def _copy_grad(F, p, inputs, outputs, ograds):
    """MXNet 1.9.1's FGradient for the flips, colour jitters and lighting: ``_copy`` of the head
    gradient, unchanged -- not the derivative (a flip's is the flipped gradient, a brightness
    factor's the scaled one), kept because it is what MXNet computes."""
    return [ograds[0]]


def _no_grad_copy(name: str) -> str:
    return (f"MXNet 1.9.1 gives _image_{name} the gradient ``_copy`` of the head gradient, whose "
            "shape is the output's, not the input's, so its backward fails shape inference "
            "(gluonport refuses it; MXNet would differentiate only where both shapes agree)")


define("_image_to_tensor",
       lambda p, x: to_tensor(x),
       _to_tensor_rule,
       params={},
       doc="HWC/NHWC in [0, 255] to float32 CHW/NCHW in [0, 1].",
       aliases=("_npx__image_to_tensor",), no_gradient=_no_grad_copy("to_tensor"),
       infer_type=lambda p, t: (t, [np.dtype(_F32)]))
define("_image_normalize",
       lambda p, x: normalize(x, p.mean, p.std),
       _normalize_rule,
       params={"mean": FloatTuple((0.0, 0.0, 0.0, 0.0)),
               "std": FloatTuple((1.0, 1.0, 1.0, 1.0))},
       doc="(x - mean[c]) / std[c] over CHW/NCHW with 1 or 3 channels.",
       aliases=("_npx__image_normalize",),
       gradient=lambda F, p, ins, outs, ogs: [F._internal._backward_image_normalize(
           ogs[0], ins[0], mean=p.mean, std=p.std)])
define("_image_resize",
       lambda p, x: resize(x, p.size, p.keep_ratio, p.interp),
       _resize_rule,
       params={"size": Shape(()), "keep_ratio": Bool(False), "interp": Int(1)},
       doc="OpenCV resize of HWC/NHWC images to (width, height) or one edge.",
       aliases=("_npx__image_resize",),
       sized_by_attrs=True, no_gradient=_no_grad_copy("resize"),
       no_onnx="OpenCV's resize rounds uint8 in fixed point (11-bit weights, shifts) and has "
               "its own border and area rules, which ONNX Resize does not reproduce",
               lists_input_names=False)
define("_image_crop",
       lambda p, x: crop(x, p.x, p.y, p.width, p.height),
       _crop_rule,
       params={"x": Int(), "y": Int(), "width": Int(), "height": Int()},
       doc="A width x height window at (x, y) of HWC/NHWC images.",
       aliases=("_npx__image_crop",), lists_input_names=False,
       gradient=lambda F, p, ins, outs, ogs: [F._internal._backward_image_crop(
           ogs[0], ins[0], x=p.x, y=p.y, width=p.width, height=p.height)])
define("_image_flip_left_right",
       lambda p, x: flip(x, 1, "image.flip_left_right"),
       _image_rule("image.flip_left_right"),
       params={},
       doc="Mirror an HWC image left to right.",
       aliases=("_npx__image_flip_left_right",), lists_input_names=False, gradient=_copy_grad)
define("_image_flip_top_bottom",
       lambda p, x: flip(x, 0, "image.flip_top_bottom"),
       _image_rule("image.flip_top_bottom"),
       params={},
       doc="Mirror an HWC image top to bottom.",
       aliases=("_npx__image_flip_top_bottom",), lists_input_names=False, gradient=_copy_grad)
define("_image_random_flip_left_right",
       lambda p, x: random_flip(x, 1, "image.random_flip_left_right"),
       _image_rule("image.random_flip_left_right"),
       params={},
       doc="flip_left_right with probability 1/2.",
       aliases=("_npx__image_random_flip_left_right",),
       no_onnx=_NO_ONNX_RANDOM, lists_input_names=False,
       no_gradient="MXNet 1.9.1 registers no FGradient for _image_random_flip_left_right")
define("_image_random_flip_top_bottom",
       lambda p, x: random_flip(x, 0, "image.random_flip_top_bottom"),
       _image_rule("image.random_flip_top_bottom"),
       params={},
       doc="flip_top_bottom with probability 1/2.",
       aliases=("_npx__image_random_flip_top_bottom",),
       no_onnx=_NO_ONNX_RANDOM, lists_input_names=False, gradient=_copy_grad)

_FACTORS = {"min_factor": Float(), "max_factor": Float()}
for _name, _adjust in (("brightness", adjust_brightness), ("contrast", adjust_contrast),
                       ("saturation", adjust_saturation), ("hue", adjust_hue)):
    define(f"_image_random_{_name}",
           lambda p, x, _adjust=_adjust: _adjust(x, uniform(*_factors(p))),
           _random_rule(f"image.random_{_name}"),
           params=_FACTORS,
           doc=f"Adjust the {_name} of an HWC image by a factor drawn from "
               "[min_factor, max_factor).",
           aliases=(f"_npx__image_random_{_name}",),
           no_onnx=_NO_ONNX_RANDOM, lists_input_names=False, gradient=_copy_grad)

define("_image_random_color_jitter",
       lambda p, x: random_color_jitter(x, p.brightness, p.contrast, p.saturation, p.hue),
       _image_rule("image.random_color_jitter"),
       params={"brightness": Float(), "contrast": Float(), "saturation": Float(),
               "hue": Float()},
       doc="Brightness, contrast, saturation and hue jitter in a random order.",
       aliases=("_npx__image_random_color_jitter",),
       no_onnx=_NO_ONNX_RANDOM, lists_input_names=False,
       no_gradient="MXNet 1.9.1 registers no FGradient for _image_random_color_jitter")
define("_image_adjust_lighting",
       lambda p, x: adjust_lighting(x, p.alpha),
       _image_rule("image.adjust_lighting"),
       params={"alpha": FloatTuple()},
       doc="AlexNet-style PCA lighting with given alphas.",
       aliases=("_npx__image_adjust_lighting",), lists_input_names=False, gradient=_copy_grad)
define("_image_random_lighting",
       lambda p, x: random_lighting(x, p.alpha_std),
       _image_rule("image.random_lighting"),
       params={"alpha_std": Float(0.05)},
       doc="AlexNet-style PCA lighting noise, alphas drawn from N(0, alpha_std).",
       aliases=("_npx__image_random_lighting",),
       no_onnx=_NO_ONNX_RANDOM, lists_input_names=False, gradient=_copy_grad)


# --- ONNX lowerings ---------------------------------------------------------------------------
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_INT64_MIN = np.iinfo(np.int64).min


def _work(dtype) -> np.dtype:
    """MXNet computes image arithmetic in float, or double for float64 data."""
    return F64 if np.dtype(dtype) == F64 else F32


def _to(ctx: LoweringContext, x: str, src, dst, out: bool = False) -> str:
    """``x`` in dtype ``dst`` (a Cast, or nothing); ``out`` writes the node's output."""
    outputs = [ctx.outputs[0]] if out else None
    if np.dtype(src) == np.dtype(dst):
        return ctx.make("Identity", [x], outputs=outputs) if out else x
    return ctx.make("Cast", [x], outputs=outputs, to=dtypes.onnx_of(dst))


def _to_tensor_onnx(ctx: LoweringContext) -> None:
    """HWC -> CHW (NHWC -> NCHW), then ``x / 255`` in float (double for float64)."""
    _to_tensor_rule(None, [tuple(ctx.shape)])
    perm = [2, 0, 1] if len(ctx.shape) == 3 else [0, 3, 1, 2]
    work = _work(ctx.dtype)
    x = _to(ctx, ctx.make("Transpose", [ctx.inputs[0]], perm=perm), ctx.dtype, work)
    y = ctx.make("Div", [x, ctx.const(np.asarray(255, work), "scale")])
    if ctx.dtype == F16:  # mshadow's half_t / float is a half_t
        y = _to(ctx, y, F32, F16)
        work = F16
    _to(ctx, y, work, F32, out=True)


def _normalize_onnx(ctx: LoweringContext) -> None:
    """``(x - mean) / std`` with (C, 1, 1) constants of the float32 attribute values."""
    p = ctx.params
    mean, std = normalize_values(tuple(ctx.shape), p.mean, p.std)
    work = _work(ctx.dtype)
    shape = (len(mean), 1, 1)
    m = ctx.const(mean.astype(work).reshape(shape), "mean")
    s = ctx.const(std.astype(work).reshape(shape), "std")
    x = ctx.make("Sub", [_to(ctx, ctx.inputs[0], ctx.dtype, work), m])
    if ctx.dtype == F16:  # mshadow rounds half_t - float to half_t
        x = _to(ctx, _to(ctx, x, F32, F16), F16, F32)
    y = ctx.make("Div", [x, s])
    _to(ctx, y, work, ctx.dtype, out=True)


def _crop_onnx(ctx: LoweringContext) -> None:
    """``Slice`` of the height and width axes at (y, x)."""
    p = ctx.params
    _crop_check(p, tuple(ctx.shape))
    rank = len(ctx.shape)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([p.y, p.x], "starts"),
                       ctx.ints([p.y + p.height, p.x + p.width], "ends"),
                       ctx.ints([rank - 3, rank - 2], "axes")], outputs=[ctx.outputs[0]])


def _flip_onnx(axis: int, name: str):
    def handler(ctx: LoweringContext) -> None:
        _image_check(name, tuple(ctx.shape))
        ctx.make("Slice", [ctx.inputs[0], ctx.ints([-1], "starts"),
                           ctx.ints([_INT64_MIN], "ends"), ctx.ints([axis], "axes"),
                           ctx.ints([-1], "steps")], outputs=[ctx.outputs[0]])

    handler.__name__ = f"to_{name.rsplit('.', 1)[-1]}"
    return handler


def _adjust_lighting_onnx(ctx: LoweringContext) -> None:
    """``saturate(float(x) + offsets)``; one channel is left as it is."""
    if _image_check("image.adjust_lighting", tuple(ctx.shape)) == 1:
        ctx.make("Identity", [ctx.inputs[0]], outputs=[ctx.outputs[0]])
        return
    pca = ctx.const(lighting_offsets(ctx.params.alpha), "offsets")
    y = ctx.make("Add", [_to(ctx, ctx.inputs[0], ctx.dtype, F32), pca])
    if ctx.dtype == np.uint8:
        y = ctx.make("Clip", [y, ctx.const(np.float32(0), "low"),
                              ctx.const(np.float32(255), "high")])
    _to(ctx, y, F32, ctx.dtype, out=True)


lowering("_image_to_tensor")(_to_tensor_onnx)
lowering("_image_normalize")(_normalize_onnx)
lowering("_image_crop")(_crop_onnx)
lowering("_image_flip_left_right")(_flip_onnx(1, "image.flip_left_right"))
lowering("_image_flip_top_bottom")(_flip_onnx(0, "image.flip_top_bottom"))
lowering("_image_adjust_lighting")(_adjust_lighting_onnx)


# --- backward kernels (MXNet's _backward_image_crop / _backward_image_normalize) ------------------
def _crop_backward(p, og: np.ndarray, data: np.ndarray) -> np.ndarray:
    grad = np.zeros(data.shape, dtype=og.dtype)
    grad[..., p.y:p.y + p.height, p.x:p.x + p.width, :] = og
    return grad


define("_backward_image_crop", _crop_backward, lambda p, s: (s, [s[1]]),
       params={"x": Int(), "y": Int(), "width": Int(), "height": Int()},
       inputs=("ograd", "data"), infer_type=lambda p, t: (t, [t[0]]),
       no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
       doc="image.crop's gradient: inputs (ograd, data); ``ograd`` written into zeros shaped like "
           "the data at the window, as MXNet's CropBackwardImpl.")


def _normalize_backward(p, og: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``ograd * (1.0 / std[c])`` in double, as MXNet's NormalizeBackward."""
    _, std = normalize_values(data.shape, p.mean, p.std)
    scale = (1.0 / std.astype(np.float64)).reshape(-1, 1, 1)
    return (og.astype(np.float64) * scale).astype(og.dtype)


define("_backward_image_normalize", _normalize_backward, lambda p, s: (s, [s[1]]),
       params={"mean": FloatTuple((0.0, 0.0, 0.0, 0.0)),
               "std": FloatTuple((1.0, 1.0, 1.0, 1.0))},
       inputs=("ograd", "data"), infer_type=lambda p, t: (t, [t[0]]),
       no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
       doc="image.normalize's gradient: inputs (ograd, data); ``ograd / std[c]``.")


def _crop_backward_onnx(ctx: LoweringContext) -> None:
    """``Pad`` of the gradient with zeros: (y, x) before, the rest of the data's size after."""
    p = ctx.params
    rank = len(ctx.in_shapes[1])
    begin = np.zeros(rank, np.int64)
    begin[rank - 3], begin[rank - 2] = p.y, p.x
    total = ctx.make("Sub", [ctx.make("Shape", [ctx.inputs[1]]),
                             ctx.make("Shape", [ctx.inputs[0]])])
    start = ctx.const(begin, "begin")
    pads = ctx.make("Concat", [start, ctx.make("Sub", [total, start])], axis=0)
    ctx.make("Pad", [ctx.inputs[0], pads], outputs=[ctx.outputs[0]])


def _normalize_backward_onnx(ctx: LoweringContext) -> None:
    """``ograd * (1 / std)`` with a (C, 1, 1) constant, in float (double for float64)."""
    p = ctx.params
    _, std = normalize_values(tuple(ctx.in_shapes[1]), p.mean, p.std)
    dt = np.dtype(ctx.in_dtypes[0])
    work = _work(dt)
    scale = ctx.const((1.0 / std.astype(np.float64)).astype(work).reshape(-1, 1, 1), "scale")
    y = ctx.make("Mul", [_to(ctx, ctx.inputs[0], dt, work), scale])
    _to(ctx, y, work, dt, out=True)


lowering("_backward_image_crop")(_crop_backward_onnx)
lowering("_backward_image_normalize")(_normalize_backward_onnx)

"""The functions of ``mx.image`` (``imresize``, ``resize_short``, ``center_crop``...).

:mod:`gluonport.image` (this package's ``__init__``) describes resizing, decoding and
randomness.
"""

from __future__ import annotations

import random
import warnings
from numbers import Number
from typing import Any

import numpy as np

from .. import ndarray as nd
from .._core import cv_resize as _cv_resize
from ..errors import DTypeError, GluonportError, ShapeError, UnsupportedOpError
from ..ndarray import NDArray

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate", "interp_method"]


def _image(src: Any, name: str) -> tuple[np.ndarray, Any]:
    """The numpy data and context of an HWC image given as NDArray (or numpy array)."""
    if isinstance(src, NDArray):
        data, ctx = src._data, src.context
    elif isinstance(src, np.ndarray):
        data, ctx = src, None
    else:
        raise DTypeError(f"{name}: expected an image NDArray of shape (height, width, "
                         f"channels), got {type(src).__name__}")
    if data.ndim != 3:
        raise ShapeError(f"{name}: expected an image of shape (height, width, channels), got "
                         f"shape {data.shape}")
    return data, ctx


def _codec_error(name: str) -> UnsupportedOpError:
    return UnsupportedOpError(
        f"mx.image.{name}: gluonport has no image codec (MXNet decodes with its built-in "
        "OpenCV). Decode the file with Pillow or OpenCV and pass the HWC uint8 array, e.g. "
        "mx.nd.array(np.asarray(PIL.Image.open(path).convert('RGB')), dtype='uint8') "
        "(OpenCV's cv2.imread gives BGR: reverse the channels with img[:, :, ::-1] for MXNet's "
        "RGB)", ops={name: []})


def imread(filename: str, *args: Any, **kwargs: Any) -> NDArray:
    """Read and decode an image file (``mx.image.imread``): not available in gluonport.

    Raises
    ------
    UnsupportedOpError
        Always; the message shows how to decode with Pillow or OpenCV instead.
    """
    raise _codec_error("imread")


def imdecode(buf: Any, *args: Any, **kwargs: Any) -> NDArray:
    """Decode an encoded image buffer (``mx.image.imdecode``): not available in gluonport.

    Raises
    ------
    UnsupportedOpError
        Always; the message shows how to decode with Pillow or OpenCV instead.
    """
    raise _codec_error("imdecode")


def imresize(src: NDArray, w: int, h: int, interp: int = 1, out: NDArray | None = None
             ) -> NDArray:
    """Resize ``src`` to width ``w`` and height ``h`` as MXNet's OpenCV ``cv::resize``.

    Parameters
    ----------
    src : NDArray
        ``(height, width, channels)`` image, uint8, float32 or float64.
    w, h : int
        Output width and height.
    interp : int, default 1
        OpenCV's interpolation code: 0 nearest, 1 bilinear, 2 bicubic, 3 area (pixel-area
        relation; bilinear-like when enlarging), 4 Lanczos over 8x8 pixels. (MXNet's docstring
        lists 2 and 3 the other way round; the codes are OpenCV's.) uint8 results equal
        MXNet's bit for bit.
    out : NDArray, optional
        Written with the result and returned.

    Returns
    -------
    NDArray
        ``(h, w, channels)``, of the input's dtype.
    """
    data, ctx = _image(src, "imresize")
    res = _cv_resize.resize(data, int(w), int(h), _interp_code(interp))
    return _wrap(res, ctx, out, "imresize")


def _interp_code(interp: Any) -> int:
    if interp not in _cv_resize.INTERP_NAMES:
        known = ", ".join(f"{k} ({v})" for k, v in _cv_resize.INTERP_NAMES.items())
        raise GluonportError(f"interpolation code interp={interp!r} is not supported; OpenCV's "
                             f"resize (and gluonport) support {known}")
    return int(interp)


def _wrap(res: np.ndarray, ctx: Any, out: NDArray | None, name: str) -> NDArray:
    if out is None:
        return NDArray(res, ctx)
    if out.shape != res.shape:
        raise ShapeError(f"{name}: out has shape {out.shape}, the result has {res.shape}")
    out[:] = res
    return out


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """Shrink a crop ``size`` (w, h) to fit ``src_size`` (w, h), keeping its aspect ratio.

    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


_BORDER_MODES = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def copyMakeBorder(src: NDArray, top: int, bot: int, left: int, right: int, type: int = 0,
                   value: float = 0.0, values: tuple = (), out: NDArray | None = None
                   ) -> NDArray:
    """Pad an image as OpenCV's ``copyMakeBorder`` (``mx.image.copyMakeBorder``).

    Parameters
    ----------
    src : NDArray
        ``(height, width, channels)`` image.
    top, bot, left, right : int
        Margins.
    type : int, default 0
        OpenCV's border code: 0 constant, 1 replicate (``aaa|abc|ccc``), 2 reflect
        (``cba|abc|cba``), 3 wrap (``abc|abc|abc``), 4 reflect-101 (``cb|abc|ba``). (MXNet's
        docstring numbers them differently; OpenCV's codes are what MXNet passes on.)
    value : float, default 0
        Constant fill for the first three channels (a fourth gets 0), as MXNet's ``value``.
    values : tuple of float
        Per-channel constant fill (overrides ``value``).
    """
    data, ctx = _image(src, "copyMakeBorder")
    if type not in _BORDER_MODES:
        raise GluonportError(f"copyMakeBorder: unknown border type {type!r}; use 0 (constant), "
                             "1 (replicate), 2 (reflect), 3 (wrap) or 4 (reflect-101)")
    pad = ((top, bot), (left, right), (0, 0))
    if type == 3:  # OpenCV's wrap is index mod size; numpy < 2's np.pad "wrap" differs when a
        # margin is wider than the image, so the rows and columns are picked here.
        rows = np.arange(-top, data.shape[0] + bot) % data.shape[0]
        cols = np.arange(-left, data.shape[1] + right) % data.shape[1]
        return _wrap(data[rows[:, None], cols[None, :]], ctx, out, "copyMakeBorder")
    if type != 0:
        return _wrap(np.pad(data, pad, mode=_BORDER_MODES[type]), ctx, out, "copyMakeBorder")
    fill = list(values) if len(values) else [value, value, value, 0.0]
    fill = (fill + [0.0] * 4)[:4]
    res = np.empty((data.shape[0] + top + bot, data.shape[1] + left + right, data.shape[2]),
                   dtype=data.dtype)
    for c in range(data.shape[2]):
        res[..., c] = _saturate(fill[c] if c < 4 else 0.0, data.dtype)
    res[top:top + data.shape[0], left:left + data.shape[1]] = data
    return _wrap(res, ctx, out, "copyMakeBorder")


def _saturate(v: float, dtype: np.dtype) -> Any:
    """OpenCV's ``saturate_cast``: integers round half to even and clip to the type's range."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(v), info.min, info.max).astype(dtype)
    return np.asarray(v).astype(dtype)


def interp_method(interp: int, sizes: tuple = ()) -> int:
    """MXNet's interpolation choice (its ``mx.image._get_interp_method``).

    Parameters
    ----------
    interp : int
        0-4 are returned as they are; 9 picks by the size change (2 when growing, 3 when
        shrinking, 1 otherwise; 2 without ``sizes``); 10 picks 0-4 at random.
    sizes : tuple, optional
        ``(old_h, old_w, new_h, new_w)`` for ``interp=9``.

    Returns
    -------
    int
        The interpolation method for :func:`imresize`.
    """
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return interp


def resize_short(src: NDArray, size: int, interp: int = 2) -> NDArray:
    """Resize so the shorter edge is ``size``, keeping the aspect ratio (integer division).

    ``interp`` defaults to 2 (bicubic), as MXNet's; 9 and 10 choose as
    :func:`interp_method`.

    >>> import gluonport as mx
    >>> mx.image.resize_short(mx.nd.zeros((375, 500, 3), dtype='uint8'), 256).shape
    (256, 341, 3)
    """
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src: NDArray, x0: int, y0: int, w: int, h: int, size: tuple | None = None,
               interp: int = 2) -> NDArray:
    """Crop ``src[y0:y0+h, x0:x0+w]``, then resize to ``size`` (w, h) when given and different.
    """
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=interp_method(interp, sizes))
    return out


def random_crop(src: NDArray, size: tuple, interp: int = 2
                ) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop a random ``size`` (w, h) window (scaled down to fit, then resized back up).

    The position comes from Python's ``random.randint``, as in MXNet.

    Returns
    -------
    (NDArray, (x0, y0, w, h))
    """
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src: NDArray, size: tuple, interp: int = 2
                ) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop the centre ``size`` (w, h) window; a window larger than the image is scaled down
    to fit and the crop resized up to ``size`` with ``interp`` (default 2, bicubic).

    Returns
    -------
    (NDArray, (x0, y0, w, h))
        The crop and where it was taken in ``src``.
    """
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src: NDArray, mean: Any, std: Any = None) -> NDArray:
    """``(src - mean) / std``, written into ``src`` (MXNet's ``-=``/``/=``) and returned."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src: NDArray, size: tuple, area: Any, ratio: tuple, interp: int = 2,
                     **kwargs: Any) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop a window of random area (fraction ``area``, or range) and aspect ``ratio`` range,
    resized to ``size`` (w, h); after 10 failed tries, a centre crop (as MXNet).

    Draws from Python's ``random`` in MXNet's order, so seeded runs crop as MXNet does.
    """
    h, w, _ = src.shape
    src_area = h * w
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                      DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise GluonportError(f"random_size_crop: unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
            return out, (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def imrotate(src: NDArray, rotation_degrees: Any, zoom_in: bool = False,
             zoom_out: bool = False) -> NDArray:
    """Rotate float32 CHW images (or an NCHW batch) about their centre, bilinearly sampled
    with zero padding; ``zoom_in`` crops away the padding, ``zoom_out`` keeps every corner.
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    expanded = src.ndim == 3
    if expanded:
        src = src.expand_dims(axis=0)
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    if isinstance(rotation_degrees, Number):
        rotation_degrees = nd.array([rotation_degrees] * len(src), ctx=src.context)
    if len(src) != len(rotation_degrees):
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rad = np.pi * rotation_degrees.as_in_context(src.context) / 180
    rad = rad.expand_dims(axis=1).expand_dims(axis=2)
    grid = _rotation_grid(src, rad, zoom_in, zoom_out)
    out = nd.BilinearSampler(src, grid)
    return out[0] if expanded else out


def _rotation_grid(src: NDArray, rad: NDArray, zoom_in: bool, zoom_out: bool) -> NDArray:
    """MXNet's sampling grid: pixel centres rotated by ``rad``, normalised to [-1, 1]."""
    _, _, h, w = src.shape
    hs, ws = float(h - 1) / 2, float(w - 1) / 2
    rows = nd.repeat(nd.arange(h, ctx=src.context).astype("float32").reshape(h, 1), w, axis=1)
    cols = nd.repeat(nd.arange(w, ctx=src.context).astype("float32").reshape(1, w), h, axis=0)
    hm, wm = (rows - hs).expand_dims(axis=0), (cols - ws).expand_dims(axis=0)
    c, s = nd.cos(rad), nd.sin(rad)
    w_rot = (wm * c - hm * s) / ws
    h_rot = (wm * s + hm * c) / hs
    scale: Any = 1
    if zoom_in or zoom_out:
        scale = _zoom(nd.array([h], ctx=src.context), nd.array([w], ctx=src.context), rad,
                      zoom_out)
    grid = nd.concat(w_rot.expand_dims(axis=1), h_rot.expand_dims(axis=1), dim=1)
    return grid * scale


def _zoom(h: NDArray, w: NDArray, rad: NDArray, zoom_out: bool) -> NDArray:
    rho = nd.sqrt(h * h + w * w)
    ang = nd.arctan(h / w)
    x1 = nd.abs(rho * nd.cos(ang + nd.abs(rad)))
    y1 = nd.abs(rho * nd.sin(ang + nd.abs(rad)))
    x2 = nd.abs(rho * nd.cos(ang - nd.abs(rad)))
    y2 = nd.abs(rho * nd.sin(ang - nd.abs(rad)))
    max_x, max_y = nd.maximum(x1, x2), nd.maximum(y1, y2)
    if zoom_out:
        scale = nd.maximum(max_x / w, max_y / h)
    else:
        scale = nd.minimum(w / max_x, h / max_y)
    return scale.expand_dims(axis=3)


def random_rotate(src: NDArray, angle_limits: tuple, zoom_in: bool = False,
                  zoom_out: bool = False) -> NDArray:
    """Rotate by an angle drawn uniformly from ``angle_limits`` (degrees) with
    ``numpy.random.uniform``, as MXNet (one angle per image of a batch)."""
    if src.ndim == 3:
        rotation_degrees = np.random.uniform(*angle_limits)
    else:
        rotation_degrees = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, rotation_degrees, zoom_in=zoom_in, zoom_out=zoom_out)

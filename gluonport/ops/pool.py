"""Pooling and resizing operators: ``Pooling``, ``Pooling_v1``, ``_contrib_AdaptiveAvgPooling2D``,
``_contrib_BilinearResize2D``, ``Pad``, ``Crop``.

MXNet 1.9.1 semantics kept here:

* ``Pooling`` output size per ``pooling_convention``: valid ``floor((x+2p-k)/s)+1``, full
  ``ceil((x+2p-k)/s)+1``, same ``ceil((x+2p)/s)`` (1-D only, no pad; MXNet 1.9.1 also
  needs ``pad=(0, 0, 0)`` spelled out there, an indexing slip not copied here). A window covers
  ``[o*s-p, o*s-p+k)`` clipped to the data; padding never enters a max (a window with no data
  gives the dtype's lowest value), ``avg`` divides by the window clipped to ``x+p`` (``count_
  include_pad``, the default) or to the data, ``sum`` adds, ``lp`` is ``(sum x^p)^(1/p)`` for
  p in 1, 2, 3 (no absolute value, as in MXNet). ``global_pool`` reduces all spatial axes.
  float16 sums accumulate in float32; integer data is refused, as MXNet refuses it.
* MKLDNN (oneDNN) builds, the CPU build everyone installs, give max ``Pooling`` with a 1-3-D
  kernel and a channels-first layout a hidden second output (its workspace, int32), which
  ``node_row_ptr`` counts; it is declared here so saved JSON matches MXNet's bytes. Its value
  is not meaningful (zeros).
* ``Pooling_v1`` (the pre-1.0 op) zero-pads *every* pool type (so padding enters a max) and
  ``avg`` always divides by the full kernel size.
* ``_contrib_AdaptiveAvgPooling2D``: window ``[floor(i*x/o), ceil((i+1)*x/o))``.
* ``_contrib_BilinearResize2D``: ``align_corners`` (default True) maps ``src = dst*(x-1)/(o-1)``,
  otherwise ``src = max((dst+0.5)*x/o - 0.5, 0)``; the coordinate arithmetic is float32, as in
  MXNet. ``mode`` picks the output size (size, odd_scale, like, to_even/odd_down/up).
* ``Pad`` works on 4-D/5-D data, never on the first two axes; ``reflect`` is numpy's reflect.
* ``Crop`` takes ``h_w`` or a second input's H, W (``num_args=2``), at ``offset`` or centred.

ONNX export (opset 13+): MaxPool/AveragePool/LpPool with MXNet's windows made explicit (end
padding, not ``ceil_mode``, whose last 'full' window differs; MXNet's divisors), Global*Pool or
Reduce*; Pooling_v1's zero padding enters the max through a ``Max`` with a constant; adaptive
pooling as AveragePool or averaging MatMuls; BilinearResize2D as ``Resize`` linear
('align_corners' or 'pytorch_half_pixel', sizes computed at run time when H/W are dynamic);
Pad as ``Pad``; Crop as ``Slice``. Dynamic spatial dims are kept where ONNX's windows equal
MXNet's for every size; elsewhere the export says why it needs them fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..attrs import Bool, Enum, Float, Int, Optional, Shape
from ..errors import DTypeError, OpAttributeError, ShapeError
from . import _onnx_window as win
from ._onnx import attach
from ._shape import fmt
from .registry import OpDef, register

__all__ = ["pool_nd", "pool_out_size", "bilinear_resize", "adaptive_avg_pool2d"]

_POOL_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
_DEFAULT_LAYOUT = {3: "NCW", 4: "NCHW", 5: "NCDHW"}


def _float_only(op: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: data of dtype {x.dtype} is not supported (MXNet computes only "
                         "floating point types); cast the input to float32")


def _acc(x: np.ndarray) -> np.ndarray:
    """float16 accumulates in float32 (MXNet's AccType for pooling sums)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def pool_out_size(x: int, k: int, s: int, p: int, convention: str) -> int:
    """MXNet's Pooling output size for one spatial axis (0 when ``x`` is unknown).

    >>> [pool_out_size(6, 3, 2, 0, c) for c in ("valid", "full", "same")]
    [2, 3, 3]
    """
    if x == 0:
        return 0
    if convention == "valid":
        return 1 + (x + 2 * p - k) // s
    if convention == "full":
        return 1 + -(-(x + 2 * p - k) // s)
    return -(-(x + 2 * p) // s)


# --- window reductions -----------------------------------------------------------------------
def _pad_for_windows(x, kernel, stride, pad, out_sp, fill) -> np.ndarray:
    """``x`` padded by ``pad`` in front and, behind, far enough for every output window."""
    sp = x.shape[2:]
    total = [max(s + 2 * p, (o - 1) * st + k) for s, k, st, p, o in
             zip(sp, kernel, stride, pad, out_sp)]
    if list(sp) == total and not any(pad):
        return x
    xp = np.full(x.shape[:2] + tuple(total), fill, x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, sp))] = x
    return xp


def _tap(x: np.ndarray, axis: int, t: int, s: int, o: int) -> np.ndarray:
    """Element ``t`` of every window along ``axis`` (windows start at ``0, s, 2s, ...``)."""
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(t, t + (o - 1) * s + 1, s)
    return x[tuple(idx)]


def _reduce_windows(xp, kernel, stride, out_sp, ufunc) -> np.ndarray:
    """Separable window reduction: one axis at a time, one ufunc call per kernel tap."""
    for axis, (k, s, o) in enumerate(zip(kernel, stride, out_sp), start=2):
        acc = np.array(_tap(xp, axis, 0, s, o))
        for t in range(1, k):
            ufunc(acc, _tap(xp, axis, t, s, o), out=acc)
        xp = acc
    return xp


def _avg_divisor(sp, kernel, stride, pad, out_sp, include_pad: bool) -> np.ndarray:
    """Per-window element counts, MXNet's ``pool_size`` (a product of per-axis counts)."""
    div = np.ones((1,) * (2 + len(sp)), np.int64)
    for i, (s, k, st, p, o) in enumerate(zip(sp, kernel, stride, pad, out_sp)):
        start = np.arange(o) * st - p
        end = np.minimum(start + k, s + p)
        cnt = end - start if include_pad else np.minimum(end, s) - np.maximum(start, 0)
        shape = [1] * div.ndim
        shape[2 + i] = o
        div = div * cnt.reshape(shape)
    return np.where(div > 0, div, 1)  # an empty window sums to 0 and MXNet writes 0


def pool_nd(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int],
            out_sp: Sequence[int], pool_type: str = "max", p_value: int = 1,
            count_include_pad: bool = True) -> np.ndarray:
    """Channels-first N-D pooling, MXNet's native CPU ``pool`` kernel, in ``x``'s dtype."""
    if pool_type == "max":
        lowest = np.finfo(x.dtype).min
        xp = _pad_for_windows(x, kernel, stride, pad, out_sp, lowest)
        return _reduce_windows(xp, kernel, stride, out_sp, np.fmax)
    a = _acc(x)
    if pool_type == "lp":
        a = a ** p_value if p_value != 1 else a
    xp = _pad_for_windows(a, kernel, stride, pad, out_sp, 0)
    out = _reduce_windows(xp, kernel, stride, out_sp, np.add)
    if pool_type == "avg":
        out = out / _avg_divisor(x.shape[2:], kernel, stride, pad, out_sp,
                                 count_include_pad).astype(out.dtype)
    elif pool_type == "lp":
        out = _lp_root(out, p_value)
    return out.astype(x.dtype, copy=False)


def _lp_root(s: np.ndarray, p_value: int) -> np.ndarray:
    return {1: lambda a: a, 2: np.sqrt, 3: np.cbrt}[p_value](s)


def _global_pool(x: np.ndarray, pool_type: str, p_value: int) -> np.ndarray:
    axes = tuple(range(2, x.ndim))
    if pool_type == "max":
        return np.fmax.reduce(x, axis=axes, keepdims=True)
    a = _acc(x)
    if pool_type == "lp" and p_value != 1:
        a = a ** p_value
    out = np.sum(a, axis=axes, keepdims=True)
    if pool_type == "avg":
        out = out / out.dtype.type(np.prod(x.shape[2:]))
    elif pool_type == "lp":
        out = _lp_root(out, p_value)
    return out.astype(x.dtype, copy=False)


# --- Pooling ---------------------------------------------------------------------------------
def _pool_layout(p, ndim: int) -> str:
    if p.kernel and not p.global_pool and len(p.kernel) != ndim - 2:
        raise ShapeError(f"Pooling: kernel {p.kernel} needs {len(p.kernel) + 2}-D data, got "
                         f"{ndim}-D")
    layout = p.layout or _DEFAULT_LAYOUT.get(len(p.kernel) + 2 if p.kernel else ndim)
    if layout is None or len(layout) != ndim:
        raise ShapeError(f"Pooling: data must be 3-D, 4-D or 5-D matching layout "
                         f"{p.layout or 'default'}; got {ndim}-D")
    return layout


def _pool_attrs(p, ndim: int) -> tuple[tuple, tuple, tuple]:
    """kernel, stride, pad with MXNet's defaults (stride 1, pad 0)."""
    nd = ndim - 2
    kernel = tuple(p.kernel)
    out = []
    for name, default in (("stride", 1), ("pad", 0)):
        v = tuple(getattr(p, name))
        if not v:
            v = (default,) * nd
        if len(v) < nd:
            raise OpAttributeError(f"Pooling: {name}={v} needs {nd} entries, one per axis")
        out.append(v[:nd])
    if min(kernel) < 1 or min(out[0]) < 1 or min(out[1]) < 0:
        raise OpAttributeError(f"Pooling: kernel {kernel} and stride {out[0]} must be >= 1, "
                               f"pad {out[1]} >= 0")
    return kernel, out[0], out[1]


def _pool_check(p) -> None:
    if p.pool_type == "lp" and p.p_value not in (1, 2, 3):
        raise OpAttributeError(f"Pooling: pool_type='lp' needs p_value 1, 2 or 3, got "
                               f"{p.p_value}")


def _pool_geometry(p, shape: tuple):
    """(channels_last, kernel, stride, pad, out spatial) for data of ``shape``."""
    _pool_check(p)
    if not 3 <= len(shape) <= 5:
        raise ShapeError(f"Pooling: data of shape {fmt(shape)} must be 3-D, 4-D or 5-D")
    last = _pool_layout(p, len(shape))[-1] == "C"
    sp = shape[1:-1] if last else shape[2:]
    if p.global_pool:
        return last, tuple(sp), (1,) * len(sp), (0,) * len(sp), (1,) * len(sp)
    if not p.kernel:
        raise OpAttributeError("Pooling: kernel is required unless global_pool=True")
    kernel, stride, pad = _pool_attrs(p, len(shape))
    if p.pooling_convention == "same" and (len(shape) != 3 or any(pad)):
        raise OpAttributeError("Pooling: pooling_convention='same' supports 1-D data (N, C, W) "
                               "without pad only")
    for x, k, q in zip(sp, kernel, pad):
        if x and k > x + 2 * q:
            raise ShapeError(f"Pooling: kernel {kernel} exceeds data {fmt(shape)} padded by "
                             f"{pad}")
    out = tuple(pool_out_size(x, k, s, q, p.pooling_convention) for x, k, s, q in
                zip(sp, kernel, stride, pad))
    return last, kernel, stride, pad, out


def _has_workspace(p) -> bool:
    """MKLDNN builds add a hidden workspace output to max pooling they can run."""
    return (p.pool_type == "max" and 1 <= len(p.kernel) <= 3
            and (p.layout is None or p.layout[1] == "C"))


def _pool_n_out(p) -> int:
    return 2 if _has_workspace(p) else 1


def _pool_shape(p, in_shapes):
    data = in_shapes[0]
    n_out = _pool_n_out(p)
    if data is None:
        return in_shapes, [None] * n_out
    last, _, _, _, out = _pool_geometry(p, tuple(data))
    oshape = (data[0], *out, data[-1]) if last else (data[0], data[1], *out)
    return in_shapes, [oshape] * n_out


def _pool_type_rule(p, in_types):
    out = [in_types[0]]
    if _pool_n_out(p) == 2:
        out.append(np.dtype(np.int32))
    return in_types, out


def _pooling(p, x):
    _float_only("Pooling", x)
    last, kernel, stride, pad, out_sp = _pool_geometry(p, x.shape)
    xc = np.moveaxis(x, -1, 1) if last else x
    p_value = p.p_value if p.pool_type == "lp" else 1
    if p.global_pool:
        out = _global_pool(xc, p.pool_type, p_value)
    else:
        include = True if p.count_include_pad is None else p.count_include_pad
        out = pool_nd(xc, kernel, stride, pad, out_sp, p.pool_type, p_value, include)
    if last:
        out = np.ascontiguousarray(np.moveaxis(out, 1, -1))
    if _pool_n_out(p) == 2:
        return out, np.broadcast_to(np.int32(0), out.shape)
    return out


register(OpDef(
    "Pooling",
    params={"kernel": Shape(()), "pool_type": Enum(("max", "avg", "sum", "lp"), "max"),
            "global_pool": Bool(False), "cudnn_off": Bool(False),
            "pooling_convention": Enum(("full", "valid", "same"), "valid"),
            "stride": Shape(()), "pad": Shape(()), "p_value": Optional(Int()),
            "count_include_pad": Optional(Bool()), "layout": Optional(Enum(_POOL_LAYOUTS))},
    compute=_pooling, infer_shape=_pool_shape, infer_type=_pool_type_rule,
    num_outputs=_pool_n_out, num_visible_outputs=1,
    output_names=lambda p: ("output", "workspace") if _has_workspace(p) else ("output",),
    aliases=("_npx_pooling",),
    doc="1-D/2-D/3-D max, average, sum or Lp pooling, optionally global."))


# --- Pooling_v1 ------------------------------------------------------------------------------
def _v1_geometry(p, shape: tuple):
    if len(shape) not in (4, 5):
        raise ShapeError(f"Pooling_v1: data of shape {fmt(shape)} must be 4-D or 5-D")
    sp = tuple(shape[2:])
    if p.global_pool:
        return sp, (1,) * len(sp), (0,) * len(sp), (1,) * len(sp)
    if len(p.kernel) != len(sp):
        raise ShapeError(f"Pooling_v1: kernel {p.kernel} does not fit data {fmt(shape)}")
    kernel = tuple(p.kernel)
    stride = tuple(p.stride) or (1,) * len(sp)
    pad = tuple(p.pad) or (0,) * len(sp)
    if len(stride) != len(sp) or len(pad) != len(sp):
        raise OpAttributeError(f"Pooling_v1: stride {stride} and pad {pad} need {len(sp)} "
                               "entries")
    for x, k, q in zip(sp, kernel, pad):
        if x and k > x + 2 * q:
            raise ShapeError(f"Pooling_v1: kernel {kernel} exceeds data {fmt(shape)} padded "
                             f"by {pad}")
    out = tuple(pool_out_size(x, k, s, q, p.pooling_convention) for x, k, s, q in
                zip(sp, kernel, stride, pad))
    return kernel, stride, pad, out


def _v1_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    out = _v1_geometry(p, tuple(data))[3]
    return in_shapes, [(data[0], data[1], *out)]


def _pooling_v1(p, x):
    _float_only("Pooling_v1", x)
    kernel, stride, pad, out_sp = _v1_geometry(p, x.shape)
    if any(pad):  # v1 zero-pads the data for every pool type, max included
        x = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    kind = "sum" if p.pool_type == "avg" else p.pool_type
    zeros = (0,) * len(kernel)
    out = pool_nd(x, kernel, stride, zeros, out_sp, kind)
    if p.pool_type == "avg":
        out = (_acc(out) / np.float32(np.prod(kernel))).astype(x.dtype)
    return out


register(OpDef(
    "Pooling_v1",
    params={"kernel": Shape(()), "pool_type": Enum(("max", "avg", "sum"), "max"),
            "global_pool": Bool(False), "pooling_convention": Enum(("full", "valid"), "valid"),
            "stride": Shape(()), "pad": Shape(())},
    compute=_pooling_v1, infer_shape=_v1_shape,
    doc="MXNet's pre-1.0 pooling: zero padding for all types, avg over the full kernel."))


# --- AdaptiveAvgPooling2D --------------------------------------------------------------------
def _adaptive_size(p, shape: tuple) -> tuple[int, int]:
    size = tuple(p.output_size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) == 2:
        return size[0], size[1]
    return 1, 1  # MXNet: an empty (or longer) output_size gives 1x1


def _adaptive_matrix(n_in: int, n_out: int, dtype) -> np.ndarray:
    """Row i averages ``[floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))`` (float32 maths)."""
    i = np.arange(n_out)
    start = np.floor(np.float32(1) * (i * n_in) / np.float32(n_out)).astype(np.int64)
    end = np.ceil(np.float32(1) * ((i + 1) * n_in) / np.float32(n_out)).astype(np.int64)
    j = np.arange(n_in)
    mask = (j >= start[:, None]) & (j < end[:, None])
    return (mask / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(x: np.ndarray, out_hw: tuple[int, int]) -> np.ndarray:
    """MXNet's AdaptiveAvgPooling2D on NCHW data: two averaging matmuls."""
    a = _acc(x)
    mh = _adaptive_matrix(x.shape[2], out_hw[0], a.dtype)
    mw = _adaptive_matrix(x.shape[3], out_hw[1], a.dtype)
    return np.matmul(np.matmul(mh, a), mw.T).astype(x.dtype, copy=False)


def _adaptive_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"AdaptiveAvgPooling2D: data of shape {fmt(data)} must be 4-D NCHW")
    return in_shapes, [(data[0], data[1], *_adaptive_size(p, tuple(data)))]


def _adaptive(p, x):
    _float_only("AdaptiveAvgPooling2D", x)
    _adaptive_shape(p, [x.shape])
    return adaptive_avg_pool2d(x, _adaptive_size(p, x.shape))


register(OpDef(
    "_contrib_AdaptiveAvgPooling2D", params={"output_size": Shape(())},
    compute=_adaptive, infer_shape=_adaptive_shape,
    doc="Average pooling to a fixed output size (PyTorch-style adaptive windows)."))


# --- BilinearResize2D ------------------------------------------------------------------------
_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


def _scaled(scale: float, x: int) -> int:
    """``static_cast<int>(float_scale * x)``: float32 product, truncated."""
    return int(np.float32(scale) * np.float32(x))


def _resize_hw(p, shape: tuple, like: tuple | None) -> tuple[int, int] | None:
    h, w = shape[2], shape[3]
    mode = p.mode
    if mode == "size":
        if p.scale_height is None:
            return p.height, p.width
        if p.scale_width is None:  # MXNet reads scale_width whenever scale_height is set
            raise OpAttributeError("BilinearResize2D: scale_height is set, so scale_width "
                                   "must be set too")
        return _scaled(p.scale_height, h), _scaled(p.scale_width, w)
    if mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise OpAttributeError("BilinearResize2D: mode='odd_scale' needs scale_height and "
                                   "scale_width")
        return tuple(_scaled(s, x) if x % 2 == 0 else _scaled(s, x - 1) + 1
                     for s, x in ((p.scale_height, h), (p.scale_width, w)))
    if mode == "like":
        return None if like is None else (like[2], like[3])
    even = mode.startswith("to_even")
    step = -1 if mode.endswith("down") else 1
    return tuple(x if (x % 2 == 0) == even else x + step for x in (h, w))


def _resize_inputs(p):
    return ("data", "like") if p.mode == "like" else ("data",)


def _resize_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"BilinearResize2D: data of shape {fmt(data)} must be 4-D NCHW")
    like = in_shapes[1] if p.mode == "like" else None
    if p.mode == "like" and like is not None and len(like) != 4:
        raise ShapeError(f"BilinearResize2D: like of shape {fmt(like)} must be 4-D NCHW")
    hw = _resize_hw(p, tuple(data), like)
    return in_shapes, [None if hw is None else (data[0], data[1], *hw)]


def _source_coords(n_in: int, n_out: int, align_corners: bool):
    """Low index, high index and weights of each output row (MXNet's float32 maths)."""
    if n_out > 1:
        scale = (np.float32(n_in - 1) / np.float32(n_out - 1) if align_corners
                 else np.float32(n_in) / np.float32(n_out))
    else:
        scale = np.float32(0)
    dst = np.arange(n_out)
    if align_corners:
        src = scale * dst.astype(np.float32)
    else:  # (dst + 0.5) is a double in MXNet's C++; the result is stored as float
        src = np.maximum(float(scale) * (dst + 0.5) - 0.5, 0).astype(np.float32)
    lo = src.astype(np.int64)
    hi = lo + (lo < n_in - 1)
    lam = src - lo.astype(np.float32)
    return lo, hi, np.float32(1) - lam, lam


def bilinear_resize(x: np.ndarray, out_hw: tuple[int, int], align_corners: bool = True
                    ) -> np.ndarray:
    """MXNet's BilinearResize2D forward on NCHW data.

    Each output is ``hl0 * (wl0*x[h0,w0] + wl1*x[h0,w1]) + hl1 * (wl0*x[h1,w0] + wl1*x[h1,w1])``
    as in MXNet; the width interpolation of an input row is computed once and shared by the
    output rows that use it (same values, fewer gathers), unless most rows are never used.
    """
    if tuple(out_hw) == x.shape[2:]:
        return x.copy()
    a = _acc(x)
    h0, h1, hl0, hl1 = (v.astype(a.dtype) if v.dtype.kind == "f" else v
                        for v in _source_coords(x.shape[2], out_hw[0], align_corners))
    w0, w1, wl0, wl1 = (v.astype(a.dtype) if v.dtype.kind == "f" else v
                        for v in _source_coords(x.shape[3], out_hw[1], align_corners))
    if x.shape[2] < 2 * out_hw[0]:  # interpolate every input row once, then pick rows
        rows = a[..., w0] * wl0 + a[..., w1] * wl1
        top, bottom = rows[:, :, h0], rows[:, :, h1]
    else:  # strong downsampling: pick the rows first
        top, bottom = a[:, :, h0], a[:, :, h1]
        top = top[..., w0] * wl0 + top[..., w1] * wl1
        bottom = bottom[..., w0] * wl0 + bottom[..., w1] * wl1
    out = hl0[:, None] * top + hl1[:, None] * bottom
    return out.astype(x.dtype, copy=False)


def _resize(p, x, like=None):
    _float_only("BilinearResize2D", x)
    _, outs = _resize_shape(p, [x.shape, None if like is None else like.shape])
    return bilinear_resize(x, outs[0][2:], p.align_corners)


register(OpDef(
    "_contrib_BilinearResize2D",
    params={"height": Int(1), "width": Int(1), "scale_height": Optional(Float()),
            "scale_width": Optional(Float()), "mode": Enum(_RESIZE_MODES, "size"),
            "align_corners": Bool(True)},
    inputs=_resize_inputs, compute=_resize, infer_shape=_resize_shape,
    doc="Bilinear resize of NCHW data to a size chosen by mode."))


# --- Pad -------------------------------------------------------------------------------------
def _pad_check(p, shape: tuple) -> None:
    pw = tuple(p.pad_width)
    if len(shape) not in (4, 5):
        raise ShapeError(f"Pad: data of shape {fmt(shape)} must be 4-D or 5-D")
    if len(pw) != 2 * len(shape):
        raise OpAttributeError(f"Pad: pad_width={pw} must have {2 * len(shape)} entries "
                               f"(before, after) per axis of {len(shape)}-D data")
    if any(pw[:4]) or min(pw) < 0:
        raise OpAttributeError(f"Pad: pad_width={pw} must be >= 0 and 0 on the first two "
                               "axes (batch and channel)")
    if p.mode == "reflect" and any(pw[2 * i] >= shape[i] or pw[2 * i + 1] >= shape[i]
                                   for i in (2, 3) if shape[i]):
        raise OpAttributeError(f"Pad: reflect padding {pw} must be smaller than the data's "
                               f"spatial size {fmt(shape)}")


def _pad_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    _pad_check(p, tuple(data))
    pw = p.pad_width
    out = tuple(d + pw[2 * i] + pw[2 * i + 1] if d else 0 for i, d in enumerate(data))
    return in_shapes, [out]


def _pad(p, x):
    _float_only("Pad", x)
    _pad_check(p, x.shape)
    pw = [(p.pad_width[2 * i], p.pad_width[2 * i + 1]) for i in range(x.ndim)]
    if p.mode == "constant":
        return np.pad(x, pw, mode="constant", constant_values=x.dtype.type(p.constant_value))
    return np.pad(x, pw, mode=p.mode)


register(OpDef(
    "Pad",
    params={"mode": Enum(("constant", "edge", "reflect")), "pad_width": Shape(),
            "constant_value": Float(0.0)},
    compute=_pad, infer_shape=_pad_shape, aliases=("pad",),
    doc="Pad the spatial axes of 4-D/5-D data (constant, edge or reflect)."))


# --- Crop ------------------------------------------------------------------------------------
def _crop_hw(p, shapes: list) -> tuple[int, int] | None:
    data = shapes[0]
    if p.num_args not in (1, 2):
        raise OpAttributeError(f"Crop: num_args={p.num_args} must be 1 (use h_w) or 2 (crop "
                               "like a second input)")
    if p.num_args == 2:
        like = shapes[1] if len(shapes) > 1 else None
        if like is None:
            return None
        if len(like) != 4:
            raise ShapeError(f"Crop: crop_like of shape {fmt(like)} must be 4-D NCHW")
        hw = (like[2], like[3])
    else:
        hw = tuple(p.h_w)
        if len(hw) != 2 or min(hw) < 1:
            raise OpAttributeError(f"Crop: h_w={p.h_w} must be two sizes >= 1")
    if (data[2] and hw[0] > data[2]) or (data[3] and hw[1] > data[3]):
        raise ShapeError(f"Crop: crop size {hw} exceeds data {fmt(data)}")
    return hw


def _crop_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"Crop: data of shape {fmt(data)} must be 4-D NCHW")
    hw = _crop_hw(p, in_shapes)
    return in_shapes, [None if hw is None else (data[0], data[1], *hw)]


def _crop(p, x, *like):
    h, w = _crop_shape(p, [x.shape] + [a.shape for a in like])[1][0][2:]
    if p.center_crop:
        y0, x0 = (x.shape[2] - h) // 2, (x.shape[3] - w) // 2
    else:
        y0, x0 = tuple(p.offset)
        if not (0 <= y0 <= x.shape[2] - h and 0 <= x0 <= x.shape[3] - w):
            raise ShapeError(f"Crop: offset {p.offset} puts the {h}x{w} crop outside data "
                             f"{x.shape}")
    return x[:, :, y0:y0 + h, x0:x0 + w].copy()


register(OpDef(
    "Crop",
    params={"num_args": Int(), "offset": Shape((0, 0)), "h_w": Shape((0, 0)),
            "center_crop": Bool(False)},
    variadic="num_args", compute=_crop, infer_shape=_crop_shape,
    doc="Legacy crop of NCHW data to h_w or to a second input's height and width."))


# --- ONNX export: Pooling --------------------------------------------------------------------
def _static_pool(ctx, x: str, kind: str, geo: tuple, include: bool, p_value: int,
                 work: np.dtype, lowest) -> str:
    """Pooling with every window placed exactly as MXNet places it (spatial dims known)."""
    sp, kernel, stride, pad, out_sp = geo
    after = win.end_pads(sp, kernel, stride, pad, out_sp)
    taps = win.fed_by_zero_pad(ctx, x)
    if kind == "max" and taps:
        xp = win.pad(ctx, x, pad, after, lowest)
        t = win.window_taps(ctx, xp, kernel, stride, (1,) * len(kernel), out_sp)
        return t[0] if len(t) == 1 else ctx.make("Max", t)
    if kind == "max":
        return win.pool_node(ctx, "MaxPool", x, kernel, stride, pad, after, lowest)
    if kind == "lp" and p_value == 2 and work != np.float64:
        return win.pool_node(ctx, "LpPool", x, kernel, stride, pad, after, work.type(0), p=2)
    if kind == "avg":
        divisor = _avg_divisor(sp, kernel, stride, pad, out_sp, include)
        return win.window_mean(ctx, x, geo, divisor, work, taps)
    ones = np.ones((1,) * (2 + len(sp)), np.int64)
    if kind == "sum":
        return win.window_mean(ctx, x, geo, ones, work, taps)
    s = win.window_mean(ctx, win.power(ctx, x, p_value), geo, ones, work)
    return win.root(ctx, s, p_value, work)


def _dynamic_pool(ctx, x: str, kind: str, p, kernel, stride, pad, include: bool,
                  work: np.dtype) -> str:
    """Spatial dims vary: pads are attributes, so only geometries where ONNX's windows and
    divisors equal MXNet's for every size are exported (else a ConversionError says why)."""
    conv = p.pooling_convention
    full = conv == "full"
    why = None
    if conv == "same" or any(q >= k for q, k in zip(pad, kernel)):
        why = "pooling_convention='same' or pad >= kernel"
    elif full and any(s > k - q for k, s, q in zip(kernel, stride, pad)):
        why = ("pooling_convention='full' with stride > kernel - pad (ONNX ceil_mode drops a "
               "last window that starts in the padding; MXNet keeps it)")
    elif full and kind not in ("max", "avg"):
        why = f"pool_type={kind!r} with pooling_convention='full'"
    elif work == np.float64 and kind != "max":
        why = "float64 data (onnxruntime has no double AveragePool)"
    if why:
        raise ctx.fail(f"Pooling with {why} needs the spatial dims fixed at export time; "
                       "export with a dynamic batch axis only")
    geo = {"kernel_shape": list(kernel), "strides": list(stride), "pads": list(pad) * 2,
           "ceil_mode": int(full)}
    if win.fed_by_zero_pad(ctx, x):  # an identity Max keeps PadFusion away (see there)
        x = ctx.make("Max", [x, ctx.const(np.asarray(np.finfo(work).min, work), "lowest")])
    if kind == "max":
        return ctx.make("MaxPool", [x], **geo)
    if kind == "lp" and p.p_value == 2:
        return ctx.make("LpPool", [x], p=2, **{k: v for k, v in geo.items() if k != "ceil_mode"})
    xp = win.power(ctx, x, p.p_value) if kind == "lp" else x
    y = ctx.make("AveragePool", [xp], count_include_pad=int(include or kind != "avg"), **geo)
    if kind == "avg":
        return y
    xs = ctx.make("Mul", [y, ctx.const(work.type(np.prod(kernel)), "size")])
    return xs if kind == "sum" else win.root(ctx, xs, p.p_value, work)


def _float_onnx(ctx, op: str) -> np.dtype:
    dt = np.dtype(ctx.dtype)
    if dt.kind != "f":
        raise ctx.fail(f"{op} of {dt} data is not supported (MXNet computes only floating "
                       "point types); cast the input to float32")
    return win.work_dtype(dt)


def _spatial_dynamic(ctx, last: bool) -> bool:
    rank = len(ctx.shape)
    return any(ctx.is_dynamic(0, a) for a in (range(1, rank - 1) if last else range(2, rank)))


def _pooling_onnx(ctx) -> None:
    """MaxPool/AveragePool/LpPool with MXNet's windows made explicit (end padding for 'full'
    and 'same', divisors as MXNet counts them), Global*Pool; channels-last data transposed
    around; float16 in float32. Only output 0 is defined (the workspace is MKLDNN's)."""
    p = ctx.params
    if len(ctx.outputs) > 1 and ctx.wants(1):
        raise ctx.fail("the hidden 'workspace' output of max Pooling (MKLDNN's) is read; it "
                       "has no ONNX equivalent; read only output 0")
    work = _float_onnx(ctx, "Pooling")
    shape, rank = tuple(ctx.shape), len(ctx.shape)
    last, kernel, stride, pad, out_sp = _pool_geometry(p, shape)
    x = win.to_first(ctx, win.as_dtype(ctx, 0, work), rank, last)
    p_value = p.p_value if p.pool_type == "lp" else 1
    include = True if p.count_include_pad is None else bool(p.count_include_pad)
    if p.global_pool:
        y = win.global_pool(ctx, x, p.pool_type, p_value, rank, work)
    elif _spatial_dynamic(ctx, last):
        y = _dynamic_pool(ctx, x, p.pool_type, p, kernel, stride, pad, include, work)
    else:
        sp = shape[1:-1] if last else shape[2:]
        lowest = np.asarray(np.finfo(ctx.dtype).min, work)
        y = _static_pool(ctx, x, p.pool_type, (sp, kernel, stride, pad, out_sp), include,
                         p_value, work, lowest)
    win.finish(ctx, y, work, win.last_perm(rank) if last else None)


def _pooling_v1_onnx(ctx) -> None:
    """Pooling_v1 pads every pool type with zeros: max is MaxPool then ``Max`` with 0 where a
    window touches the padding (a zero ``Pad`` before MaxPool would be folded away by
    onnxruntime); avg always divides by the kernel size."""
    p = ctx.params
    work = _float_onnx(ctx, "Pooling_v1")
    shape, rank = tuple(ctx.shape), len(ctx.shape)
    kernel, stride, pad, out_sp = _v1_geometry(p, shape)
    x = win.as_dtype(ctx, 0, work)
    if p.global_pool:
        y = win.global_pool(ctx, x, p.pool_type, 1, rank, work)
        win.finish(ctx, y, work)
        return
    if _spatial_dynamic(ctx, False):
        raise ctx.fail("Pooling_v1 needs the spatial dims fixed at export time; export with a "
                       "dynamic batch axis only")
    geo = (tuple(shape[2:]), kernel, stride, pad, out_sp)
    if p.pool_type == "max":
        lowest = np.finfo(ctx.dtype).min
        y = _static_pool(ctx, x, "max", geo, True, 1, work, np.asarray(lowest, work))
        if any(pad):  # windows touching the zero padding see a 0
            floor = np.where(win.touches_padding(*geo), 0, lowest).astype(work)
            y = ctx.make("Max", [y, ctx.const(floor, "zero_padding")])
    else:
        d = np.prod(kernel) if p.pool_type == "avg" else 1
        y = win.window_mean(ctx, x, geo, np.full((1,) * (2 + len(pad)), d, np.int64), work)
    win.finish(ctx, y, work)


attach("Pooling", _pooling_onnx)
attach("Pooling_v1", _pooling_v1_onnx)


# --- ONNX export: AdaptiveAvgPooling2D, BilinearResize2D -------------------------------------
def _separable(ctx, x: str, rows: np.ndarray, cols: np.ndarray) -> str:
    """``rows @ x @ cols.T`` on the last two axes (MatMul broadcasts over N and C)."""
    y = ctx.make("MatMul", [ctx.const(rows, "rows"), x])
    return ctx.make("MatMul", [y, ctx.const(np.ascontiguousarray(cols.T), "cols")])


def _adaptive_onnx(ctx) -> None:
    """Output 1x1: GlobalAveragePool; sizes dividing the input: AveragePool with kernel =
    stride; otherwise MXNet's windows ``[floor(i*x/o), ceil((i+1)*x/o))`` as two MatMuls with
    averaging matrices (float64 always so: onnxruntime has no double AveragePool)."""
    work = _float_onnx(ctx, "AdaptiveAvgPooling2D")
    oh, ow = _adaptive_size(ctx.params, tuple(ctx.shape))
    x = win.as_dtype(ctx, 0, work)
    if (oh, ow) == (1, 1):
        y = win.global_pool(ctx, x, "avg", 1, 4, work)
    else:
        h, w = _static_spatial_pool(ctx, "AdaptiveAvgPooling2D to a size other than 1x1")
        if work != np.float64 and h % oh == 0 and w % ow == 0:
            k = [h // oh, w // ow]
            y = ctx.make("AveragePool", [x], kernel_shape=k, strides=k)
        else:
            y = _separable(ctx, x, _adaptive_matrix(h, oh, work), _adaptive_matrix(w, ow, work))
    win.finish(ctx, y, work)


def _static_spatial_pool(ctx, what: str) -> tuple[int, int]:
    if ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3):
        raise ctx.fail(f"{what} needs H and W fixed at export time; export with a dynamic "
                       "batch axis only")
    return int(ctx.shape[2]), int(ctx.shape[3])


def _interp_matrix(n_in: int, n_out: int, align_corners: bool, dtype) -> np.ndarray:
    """(n_out, n_in) bilinear weights from MXNet's source coordinates."""
    lo, hi, w0, w1 = _source_coords(n_in, n_out, align_corners)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (np.arange(n_out), lo), w0.astype(np.float64))
    np.add.at(m, (np.arange(n_out), hi), w1.astype(np.float64))
    return m.astype(dtype)


def _scaled_dim(ctx, scale: float, x) -> int | str:
    """``int(float32(scale) * x)`` for a known or run-time size."""
    if isinstance(x, int):
        return _scaled(scale, x)
    f = ctx.make("Mul", [ctx.cast_to(x, np.float32), ctx.const(np.float32(scale), "scale")])
    return ctx.cast_to(ctx.make("Floor", [f]), np.int64)


def _resize_dim(ctx, mode: str, x, scale: float | None) -> int | str:
    """One output size of a computed mode, from the size ``x`` (int or int64 tensor)."""
    if mode == "size":
        return _scaled_dim(ctx, scale, x)
    r = win.arith(ctx, "Mod", x, 2)
    if mode == "odd_scale":  # even: int(s*x); odd: int(s*(x-1)) + 1
        return win.arith(ctx, "Add", _scaled_dim(ctx, scale, win.arith(ctx, "Sub", x, r)), r)
    if mode == "to_even_down":
        return win.arith(ctx, "Sub", x, r)
    if mode == "to_even_up":
        return win.arith(ctx, "Add", x, r)
    if mode == "to_odd_down":
        return win.arith(ctx, "Add", win.arith(ctx, "Sub", x, 1), r)
    return win.arith(ctx, "Sub", win.arith(ctx, "Add", x, 1), r)  # to_odd_up


def _resize_sizes(ctx) -> list:
    """MXNet's output (H, W) as ints or run-time int64 tensors (dynamic H/W)."""
    p = ctx.params
    if p.mode == "like":
        return [win.dim(ctx, 1, 2), win.dim(ctx, 1, 3)]
    if not (ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3)):
        return list(_resize_hw(p, tuple(ctx.shape), None))
    if p.mode == "size" and p.scale_height is None:
        return [p.height, p.width]
    _resize_hw(p, tuple(ctx.shape), None)  # MXNet's attribute checks
    scales = (p.scale_height, p.scale_width)
    return [_resize_dim(ctx, p.mode, win.dim(ctx, 0, a), s) for a, s in zip((2, 3), scales)]


def _resize_onnx(ctx) -> None:
    """``Resize`` linear: align_corners=True is 'align_corners'; False is MXNet's
    ``max((dst+0.5)*x/o - 0.5, 0)`` with a single output row at 0, which is
    'pytorch_half_pixel'. Sizes from the mode (``Shape`` of the like input, run-time
    arithmetic for dynamic H/W). float64: separable MatMuls (no onnxruntime double Resize)."""
    p = ctx.params
    work = _float_onnx(ctx, "BilinearResize2D")
    x = win.as_dtype(ctx, 0, work)
    hw = _resize_sizes(ctx)
    if work == np.float64:
        if not all(isinstance(v, int) for v in hw):
            raise ctx.fail("float64 BilinearResize2D needs its output size fixed at export "
                           "time (onnxruntime has no double Resize; it is lowered to MatMuls)")
        h, w = _static_spatial_pool(ctx, "float64 BilinearResize2D")
        y = _separable(ctx, x, _interp_matrix(h, hw[0], p.align_corners, work),
                       _interp_matrix(w, hw[1], p.align_corners, work))
        win.finish(ctx, y, work)
        return
    if ctx.opset >= 18:
        sizes, axes = win.vec(ctx, hw), [2, 3]
    else:
        nc = [win.dim(ctx, 0, 0), win.dim(ctx, 0, 1)]
        sizes, axes = win.vec(ctx, nc + hw), None
    mode = "align_corners" if p.align_corners else "pytorch_half_pixel"
    y = ctx.make("Resize", [x, "", "", sizes], mode="linear", axes=axes,
                 coordinate_transformation_mode=mode)
    win.finish(ctx, y, work)


attach("_contrib_AdaptiveAvgPooling2D", _adaptive_onnx)
attach("_contrib_BilinearResize2D", _resize_onnx)


# --- ONNX export: Pad, Crop ------------------------------------------------------------------
def _pad_onnx(ctx) -> None:
    """``Pad``: MXNet's (before0, after0, before1, after1, ...) become ONNX's befores then
    afters; the constant is cast to the data dtype, as MXNet does."""
    p = ctx.params
    _float_onnx(ctx, "Pad")
    _pad_check(p, tuple(ctx.shape))
    pw = [int(v) for v in p.pad_width]
    pads = ctx.ints(pw[0::2] + pw[1::2], "pads")
    ins = [ctx.inputs[0], pads]
    if p.mode == "constant":
        ins.append(ctx.const(np.asarray(p.constant_value, ctx.dtype), "value"))
    ctx.make("Pad", ins, outputs=[ctx.outputs[0]], mode=p.mode)


def _crop_onnx(ctx) -> None:
    """``Slice`` of H and W (the batch stays dynamic): the size from h_w or the like input's
    ``Shape``, the start from offset or centred, ``(H - h) // 2``."""
    p = ctx.params
    _crop_shape(p, [tuple(s) for s in ctx.in_shapes])
    if p.num_args == 2:
        size = [win.dim(ctx, 1, 2), win.dim(ctx, 1, 3)]
    else:
        size = [int(v) for v in p.h_w]
    if p.center_crop:
        start = [win.arith(ctx, "Div", win.arith(ctx, "Sub", win.dim(ctx, 0, a), s), 2)
                 for a, s in zip((2, 3), size)]
    else:
        start = [int(v) for v in p.offset]
        known = all(isinstance(v, int) for v in size) and not (
            ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3))  # else Slice clamps at run time
        if known and not all(0 <= b <= ctx.shape[2 + i] - size[i] for i, b in enumerate(start)):
            raise ctx.fail(f"offset {p.offset} puts the {size[0]}x{size[1]} crop outside "
                           f"data {tuple(ctx.shape)}")
    end = [win.arith(ctx, "Add", b, s) for b, s in zip(start, size)]
    ctx.make("Slice", [ctx.inputs[0], win.vec(ctx, start), win.vec(ctx, end),
                       ctx.ints([2, 3], "axes")], outputs=[ctx.outputs[0]])


attach("Pad", _pad_onnx)
attach("Crop", _crop_onnx)

"""Pooling operators: ``Pooling`` and ``Pooling_v1`` (the resizing ops
``_contrib_AdaptiveAvgPooling2D``, ``_contrib_BilinearResize2D``, ``Pad`` and ``Crop`` are in
``resize.py``).

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

ONNX export (opset 13+): MaxPool/AveragePool/LpPool with MXNet's windows made explicit (end
padding, not ``ceil_mode``, whose last 'full' window differs; MXNet's divisors), Global*Pool or
Reduce*; Pooling_v1's zero padding enters the max through a ``Max`` with a constant. Dynamic
spatial dims are kept where ONNX's windows equal MXNet's for every size; elsewhere the export
says why it needs them fixed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..._core.attr_fields import Bool, Enum, Int, Optional, Shape
from ...errors import DTypeError, OpAttributeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext, lowering
from ..lowering import window as win
from ..registry import OpDef, register
from .conv_kernels import scratch

__all__ = ["pool_nd", "pool_backward", "pool_out_size", "float_only", "acc_array", "float_onnx"]

_POOL_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
_DEFAULT_LAYOUT = {3: "NCW", 4: "NCHW", 5: "NCDHW"}


def float_only(op: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: data of dtype {x.dtype} is not supported (MXNet computes only "
                         "floating point types); cast the input to float32")


def acc_array(x: np.ndarray) -> np.ndarray:
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
    """Separable window reduction: one axis at a time, one ufunc call per kernel tap (the
    partial results of all but the last axis in reusable scratch buffers)."""
    last = len(kernel) + 1
    for axis, (k, s, o) in enumerate(zip(kernel, stride, out_sp), start=2):
        first = _tap(xp, axis, 0, s, o)
        if axis == last:
            acc = np.array(first)
        else:
            acc = scratch(f"pool{axis % 2}", first.shape, first.dtype)
            np.copyto(acc, first)
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
    a = acc_array(x)
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
    a = acc_array(x)
    if pool_type == "lp" and p_value != 1:
        a = a ** p_value
    out = np.sum(a, axis=axes, keepdims=True)
    if pool_type == "avg":
        out = out / out.dtype.type(np.prod(x.shape[2:]))
    elif pool_type == "lp":
        out = _lp_root(out, p_value)
    return out.astype(x.dtype, copy=False)


# --- gradients -------------------------------------------------------------------------------
def _padded_size(sp, kernel, stride, pad, out_sp) -> list[int]:
    return [max(s + 2 * q, (o - 1) * st + k) for s, k, st, q, o in
            zip(sp, kernel, stride, pad, out_sp)]


def _tap_slice(tap, stride, out_sp, lead: int = 2) -> tuple:
    """Tap ``tap`` of every window: spatial axes after ``lead`` axes (2: (N, C, *S); 0: the
    spatial-first (*S, N*C) layout of :func:`_to_spatial_first`)."""
    spatial = tuple(slice(t, t + (o - 1) * s + 1, s) for t, s, o in zip(tap, stride, out_sp))
    return (slice(None),) * lead + spatial + (() if lead else (slice(None),))


def _first_max_grad(xp: np.ndarray, y: np.ndarray, og: np.ndarray, kernel, stride,
                    out_sp, slot: str | None = None, lead: int = 2) -> np.ndarray:
    """Each output gradient added at its window's first maximum (row-major tap order), as
    MXNet's max-pool backward routes it; ``xp`` is the padded data (padding never wins unless
    the window holds nothing else, and padding is cropped). One pass per kernel tap over the
    output: a tap takes the gradient where it equals the window's maximum and no earlier tap
    did. Windows that do not overlap (stride >= kernel: lenet's and most nets' 2x2/2) write
    their taps' parts straight into the result, which needs no zeroing when they tile it.
    ``slot``: the result is that scratch buffer (the caller copies its crop out). ``lead=0``:
    the arrays are spatial-first, (*S, N*C) (:func:`_to_spatial_first`)."""
    disjoint = all(s >= k for s, k in zip(stride, kernel))
    sp = xp.shape[2:] if lead else xp.shape[:-1]
    tiled = disjoint and all(s == k and o * s == t for s, k, o, t in
                             zip(stride, kernel, out_sp, sp))
    gp = np.empty_like(xp) if slot is None else scratch(slot, xp.shape, xp.dtype)
    if not tiled:
        gp.fill(0)
    free = np.empty(y.shape, bool)
    hit = np.empty(y.shape, bool)
    part = None if disjoint else np.empty(y.shape, og.dtype)
    taps = list(itertools.product(*(range(k) for k in kernel)))
    for i, tap in enumerate(taps):
        sl = _tap_slice(tap, stride, out_sp, lead)
        np.equal(xp[sl], y, out=hit)
        if i:
            hit &= free
        if part is None:
            np.multiply(og, hit, out=gp[sl])
        else:
            np.multiply(og, hit, out=part)
            gp[sl] += part
        if i == 0:
            np.logical_not(hit, out=free)
        elif i < len(taps) - 1:
            np.greater(free, hit, out=free)  # free and not hit
    return gp


#: max-pool gradients whose output rows are shorter than this run spatial-first (below)
_SHORT_ROWS = 17
#: (N, C) rows per block of the transposing copies in and out of the spatial-first layout
_BLOCK_ROWS = 64


def _spatial_first_pays(nc: int, out_sp: Sequence[int], kernel, stride) -> bool:
    """Whether a max-pool gradient runs spatial-first: overlapping windows (disjoint ones write
    their parts in place, which the copies would only slow down: lenet's 2x2/2 of
    (32, 20, 24, 24) 1.6 -> 2.6 ms), output rows shorter than ``_SHORT_ROWS`` and at least
    as many (N, C) rows (rows of 28 gained nothing: (8, 64, 56, 56) 3x3/2)."""
    return (bool(out_sp) and out_sp[-1] < _SHORT_ROWS <= nc
            and any(s < k for s, k in zip(stride, kernel)))


def _to_spatial_first(a: np.ndarray, total: Sequence[int], offset: Sequence[int], fill,
                      slot: str) -> np.ndarray:
    """A (*total, N*C) scratch copy of channels-first ``a`` (N, C, *S): ``a`` at ``offset``
    of each spatial axis, ``fill`` around it. The (N, C) rows are innermost, so each tap of
    a window runs over N*C contiguous values instead of rows of a few pixels (an 8x8 output:
    numpy's loops then do 8 values at a time). The transposing copy goes by blocks of rows
    that stay in cache: (32, 64, 16, 16) data 1.7 -> 0.7 ms against one whole-array copy."""
    nc, sp = a.shape[0] * a.shape[1], a.shape[2:]
    out = scratch(slot, (*total, nc), a.dtype)
    if tuple(total) != tuple(sp):
        out.fill(fill)
    dst = out[tuple(slice(o, o + s) for o, s in zip(offset, sp))]
    src = a.reshape(nc, *sp)
    for i in range(0, nc, _BLOCK_ROWS):
        np.copyto(dst[..., i:i + _BLOCK_ROWS], np.moveaxis(src[i:i + _BLOCK_ROWS], 0, -1))
    return out


def _from_spatial_first(g: np.ndarray, offset: Sequence[int], shape: tuple,
                        dtype) -> np.ndarray:
    """The new channels-first ``shape`` (N, C, *S) array, of ``dtype``, holding the (*S, N*C)
    block of spatial-first ``g`` at ``offset``."""
    nc, sp = shape[0] * shape[1], shape[2:]
    src = g[tuple(slice(o, o + s) for o, s in zip(offset, sp))]
    out = np.empty((nc, *sp), dtype)
    step = 4 * _BLOCK_ROWS  # longer blocks: the reads, not the writes, are strided here
    for i in range(0, nc, step):
        np.copyto(out[i:i + step], np.moveaxis(src[..., i:i + step], -1, 0), casting="unsafe")
    return out.reshape(shape)


def _max_grad_spatial_first(og: np.ndarray, x: np.ndarray, y: np.ndarray, kernel, stride,
                            pad, out_sp, total, dtype) -> np.ndarray:
    """:func:`_first_max_grad` on spatial-first copies (for short output rows, where numpy's
    loops over a few pixels at a time cost more than the copies: resnet18's 3x3/2 max-pool
    of (32, 64, 16, 16) at 8x8, 7.8-8.9 -> 6.0-7.1 ms; a 3x3/1 on 16x16 16.0 -> 14.1 ms).
    ``og``, ``x``, ``y`` are in the working dtype; ``dtype`` is the data's: the result's, and
    its lowest value pads, as on the channels-first route."""
    nc = x.shape[0] * x.shape[1]
    xp = _to_spatial_first(x, total, pad, np.finfo(dtype).min, "pool_x")
    # the output and its gradient: one whole-array copy each measured faster here than
    # _to_spatial_first's blocks (resnet18's stem 3x3/2: 3.8-4.0 against 4.1-4.3 ms a call)
    flat = [np.ascontiguousarray(a.reshape(nc, -1).T).reshape(*out_sp, nc) for a in (y, og)]
    gp = _first_max_grad(xp, flat[0], flat[1], kernel, stride, out_sp, "pool_g", lead=0)
    return _from_spatial_first(gp, pad, x.shape, dtype)


def pool_backward(og: np.ndarray, x: np.ndarray, y: np.ndarray, kernel, stride, pad, out_sp,
                  kind: str, p_value: int = 1, include: bool = True,
                  v1: bool = False) -> np.ndarray:
    """Channels-first pooling gradient (MXNet's ``unpool``): max to each window's first
    maximum (``v1``: to every element equal to it, zero padding included, as mshadow's
    ``unpool``), avg ``og / divisor`` and sum ``og`` to every element of the window, lp
    ``og * x^(p-1) / y^(p-1)``. float16 is computed in float32."""
    wd = np.float32 if x.dtype == np.float16 else x.dtype
    g, xw, yw = (a.astype(wd, copy=False) for a in (og, x, y))
    sp = x.shape[2:]
    total = _padded_size(sp, kernel, stride, pad, out_sp)
    inner = (slice(None), slice(None)) + tuple(slice(q, q + s) for q, s in zip(pad, sp))
    if kind == "max" and not v1:
        if _spatial_first_pays(x.shape[0] * x.shape[1], out_sp, kernel, stride):
            return _max_grad_spatial_first(g, xw, yw, kernel, stride, pad, out_sp, total,
                                           x.dtype)
        if any(pad) or list(total) != list(sp):  # padded copies in scratch, a fresh crop
            xp = scratch("pool_x", x.shape[:2] + tuple(total), wd)
            xp.fill(np.finfo(x.dtype).min)
            xp[inner] = xw
            gp = _first_max_grad(xp, yw, g, kernel, stride, out_sp, "pool_g")
            return np.array(gp[inner], dtype=x.dtype)
        return _first_max_grad(xw, yw, g, kernel, stride, out_sp).astype(x.dtype, copy=False)
    if kind == "avg":
        g = g / _avg_divisor(sp, kernel, stride, pad, out_sp, include).astype(wd)
    elif kind == "lp" and p_value > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = g / yw ** (p_value - 1)
    gp = np.zeros(x.shape[:2] + tuple(total), wd)
    if kind == "max":
        xp = np.full(x.shape[:2] + tuple(total), np.finfo(x.dtype).min, wd)
        xp[(slice(None), slice(None)) + tuple(slice(0, s + 2 * q) for q, s in
                                              zip(pad, sp))] = 0
        xp[inner] = xw
    for tap in itertools.product(*(range(k) for k in kernel)):
        sl = _tap_slice(tap, stride, out_sp)
        gp[sl] += g * (xp[sl] == yw) if kind == "max" else g
    dx = gp[inner]
    if kind == "lp" and p_value > 1:
        dx = dx * xw ** (p_value - 1)
    return dx.astype(x.dtype, copy=False)


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
    float_only("Pooling", x)
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


def _pool_grad(p, og, x, y):
    """``_backward_Pooling``: inputs the output gradient, data and the forward output."""
    last, kernel, stride, pad, out_sp = _pool_geometry(p, x.shape)
    if p.pool_type == "avg" and p.pooling_convention == "same" and x.dtype != np.float64:
        raise OpAttributeError(
            "Pooling: no gradient for pool_type='avg' with pooling_convention='same' on "
            f"{x.dtype} data: MXNet 1.9.1's oneDNN backward refuses it ('could not create a "
            "descriptor for a pooling forward propagation primitive'); use float64 data or "
            "another convention")
    og, xc, yc = (np.moveaxis(a, -1, 1) if last else a for a in (og, x, y))
    include = True if p.count_include_pad is None else p.count_include_pad
    p_value = p.p_value if p.pool_type == "lp" else 1
    dx = pool_backward(og, xc, yc, kernel, stride, pad, out_sp, p.pool_type, p_value, include)
    return np.ascontiguousarray(np.moveaxis(dx, 1, -1)) if last else dx


def _grad_attrs(p) -> dict:
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _grad_pooling(F, p, inputs, outputs, ograds):
    """One ``_backward_Pooling`` kernel (the workspace output takes no gradient)."""
    return [F._internal._backward_Pooling(ograds[0], inputs[0], outputs[0], **_grad_attrs(p))]


_POOL_PARAMS = {
    "kernel": Shape(()), "pool_type": Enum(("max", "avg", "sum", "lp"), "max"),
    "global_pool": Bool(False), "cudnn_off": Bool(False),
    "pooling_convention": Enum(("full", "valid", "same"), "valid"),
    "stride": Shape(()), "pad": Shape(()), "p_value": Optional(Int()),
    "count_include_pad": Optional(Bool()), "layout": Optional(Enum(_POOL_LAYOUTS))}
_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"


def _grad_shapes(p, in_shapes):
    return list(in_shapes), [None if in_shapes[1] is None else tuple(in_shapes[1])]


register(OpDef(
    "_backward_Pooling", params=_POOL_PARAMS, inputs=("ograd", "data", "output"),
    compute=_pool_grad, infer_shape=_grad_shapes, infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient=_NO_GRAD,
    doc="Pooling's data gradient. Inputs: the output gradient, data, the forward output."))

register(OpDef(
    "Pooling",
    params=_POOL_PARAMS, gradient=_grad_pooling,
    compute=_pooling, infer_shape=_pool_shape, infer_type=_pool_type_rule,
    num_outputs=_pool_n_out, num_visible_outputs=1,
    output_names=lambda p: ("output", "workspace") if _has_workspace(p) else ("output",),
    aliases=("_npx_pooling",),
    doc="1-D/2-D/3-D max, average, sum or Lp pooling, optionally global.", lists_output_names=True))


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
    float_only("Pooling_v1", x)
    kernel, stride, pad, out_sp = _v1_geometry(p, x.shape)
    if any(pad):  # v1 zero-pads the data for every pool type, max included
        x = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    kind = "sum" if p.pool_type == "avg" else p.pool_type
    zeros = (0,) * len(kernel)
    out = pool_nd(x, kernel, stride, zeros, out_sp, kind)
    if p.pool_type == "avg":
        out = (acc_array(out) / np.float32(np.prod(kernel))).astype(x.dtype)
    return out


def _pool_v1_grad(p, og, x, y):
    """``_backward_Pooling_v1``: inputs the output gradient, data and the forward output."""
    kernel, stride, pad, out_sp = _v1_geometry(p, x.shape)
    if p.pool_type != "avg":
        return pool_backward(og, x, y, kernel, stride, pad, out_sp, p.pool_type, v1=True)
    full = np.full(og.shape, np.prod(kernel), np.float32)
    g = (og.astype(np.float32) / full).astype(og.dtype)
    return pool_backward(g, x, y, kernel, stride, pad, out_sp, "sum", v1=True)


def _grad_pooling_v1(F, p, inputs, outputs, ograds):
    return [F._internal._backward_Pooling_v1(ograds[0], inputs[0], outputs[0],
                                             **_grad_attrs(p))]


_V1_PARAMS = {
    "kernel": Shape(()), "pool_type": Enum(("max", "avg", "sum"), "max"),
    "global_pool": Bool(False), "pooling_convention": Enum(("full", "valid"), "valid"),
    "stride": Shape(()), "pad": Shape(())}

register(OpDef(
    "_backward_Pooling_v1", params=_V1_PARAMS, inputs=("ograd", "data", "output"),
    compute=_pool_v1_grad, infer_shape=_grad_shapes, infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient=_NO_GRAD,
    doc="Pooling_v1's data gradient. Inputs: the output gradient, data, the forward output."))

register(OpDef(
    "Pooling_v1",
    params=_V1_PARAMS, gradient=_grad_pooling_v1,
    compute=_pooling_v1, infer_shape=_v1_shape,
    doc="MXNet's pre-1.0 pooling: zero padding for all types, avg over the full kernel.",
    lists_output_names=True))


# --- ONNX export: Pooling --------------------------------------------------------------------
def _static_pool(ctx: LoweringContext, x: str, kind: str, geo: tuple, include: bool, p_value: int,
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


def _dynamic_pool(ctx: LoweringContext, x: str, kind: str, p, kernel, stride, pad, include: bool,
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


def float_onnx(ctx: LoweringContext, op: str) -> np.dtype:
    dt = np.dtype(ctx.dtype)
    if dt.kind != "f":
        raise ctx.fail(f"{op} of {dt} data is not supported (MXNet computes only floating "
                       "point types); cast the input to float32")
    return win.work_dtype(dt)


def _spatial_dynamic(ctx: LoweringContext, last: bool) -> bool:
    rank = len(ctx.shape)
    return any(ctx.is_dynamic(0, a) for a in (range(1, rank - 1) if last else range(2, rank)))


def _pooling_onnx(ctx: LoweringContext) -> None:
    """MaxPool/AveragePool/LpPool with MXNet's windows made explicit (end padding for 'full'
    and 'same', divisors as MXNet counts them), Global*Pool; channels-last data transposed
    around; float16 in float32. Only output 0 is defined (the workspace is MKLDNN's)."""
    p = ctx.params
    if len(ctx.outputs) > 1 and ctx.wants(1):
        raise ctx.fail("the hidden 'workspace' output of max Pooling (MKLDNN's) is read; it "
                       "has no ONNX equivalent; read only output 0")
    work = float_onnx(ctx, "Pooling")
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


def _pooling_v1_onnx(ctx: LoweringContext) -> None:
    """Pooling_v1 pads every pool type with zeros: max is MaxPool then ``Max`` with 0 where a
    window touches the padding (a zero ``Pad`` before MaxPool would be folded away by
    onnxruntime); avg always divides by the kernel size."""
    p = ctx.params
    work = float_onnx(ctx, "Pooling_v1")
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


def _max_grad_tiled(ctx: LoweringContext, og: str, x: str, y: str, kernel, sp) -> str:
    """Max-pool's gradient where the windows tile the float32 data ``x`` (stride = kernel, no
    padding; the caller crops what no window reads), routed as :func:`_first_max_grad` routes
    it: to each window's first element (row-major) equal to its maximum ``y``. Each element's
    key is ``T - tap`` (``T`` taps, ``tap`` its row-major place in its window) where it equals
    the window's maximum and 0 elsewhere; a ``MaxPool`` of the keys gives each window its
    first maximum's key (0: none, as for a NaN maximum), and the elements whose key equals
    their window's, spread back by nearest ``Resize``, take the output gradient. onnxruntime
    runs these nodes on fast paths: ``MaxPool`` with ``Indices`` and ``MaxUnpool`` (the route
    below) made LeNet-BN's training step at batch 32 4-7% slower (two 2x2 pools; in-process
    A/B, two threads)."""
    taps = int(np.prod(kernel))
    tap = np.zeros(tuple(sp), np.float32)  # each element's row-major place in its window
    for axis, k in enumerate(kernel):
        shape = [1] * len(sp)
        shape[axis] = sp[axis]
        tap = tap * k + (np.arange(sp[axis]) % k).reshape(shape)
    key = ctx.const((taps - tap)[None, None].astype(np.float32), "tap_keys")
    scales = ctx.const(np.array([1, 1, *kernel], np.float32), "scales")

    def spread(v: str) -> str:  # (N, C, *O) -> (N, C, *S): each value over its window
        return ctx.make("Resize", [v, "", scales], mode="nearest",
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    at_max = ctx.make("Cast", [ctx.make("Equal", [x, spread(y)])], to=_onnx_type(np.float32))
    first = ctx.make("MaxPool", [ctx.make("Mul", [at_max, key])], kernel_shape=list(kernel),
                     strides=list(kernel))
    hit = ctx.make("Cast", [ctx.make("Equal", [spread(first), key])],
                   to=_onnx_type(np.float32))
    return ctx.make("Mul", [spread(og), hit])


def _max_grad_by_indices(ctx: LoweringContext, og: str, x: str, kernel, stride, pads,
                         work) -> str:
    """Max-pool's gradient at opset 16+: ``MaxPool``'s ``Indices`` (each window's first
    maximum in row-major order, flat over the whole tensor; padding never wins) scatter-add
    the output gradient into zeros shaped like the data (``ScatterElements``,
    ``reduction='add'``; ``MaxUnpool`` where windows are disjoint). The caller checks every
    pad is smaller than the kernel, so no window is padding only (onnxruntime refuses such
    pads)."""
    _, idx = ctx.make("MaxPool", [x], outputs=2, kernel_shape=list(kernel),
                      strides=list(stride), pads=list(pads) if any(pads) else None)
    if all(s >= k for s, k in zip(stride, kernel)) and not any(pads):
        # disjoint windows (gaps between them: windows side by side take the route of
        # _max_grad_tiled): no two outputs share a maximum, so MaxUnpool's placement (one
        # value per index) is the scatter-add; onnxruntime's runs in 0.7 ms where
        # ScatterElements takes 1.2 ms (LeNet's first 2x2 pool, batch 32, one thread)
        return ctx.make("MaxUnpool", [og, idx, ctx.make("Shape", [x])],
                        kernel_shape=list(kernel), strides=list(stride))
    flat = ctx.make("Reshape", [x, ctx.ints([1, -1], "flat")])
    zeros = ctx.make("Expand", [ctx.const(np.zeros((1, 1), work), "zero"),
                                ctx.make("Shape", [flat])])
    row = ctx.ints([1, -1], "row")
    dx = ctx.make("ScatterElements", [zeros, ctx.make("Reshape", [idx, row]),
                                      ctx.make("Reshape", [og, row])],
                  axis=1, reduction="add")
    return ctx.make("Reshape", [dx, ctx.make("Shape", [x])])


def _pool_grad_onnx(ctx: LoweringContext, v1: bool) -> None:
    """Max (not v1) on float32 with unpadded windows side by side (stride = kernel): keys,
    ``MaxPool`` and ``Resize`` (:func:`_max_grad_tiled`). Max at opset 16+ with every pad
    smaller than the kernel: MaxPool's indices and a scatter-add
    (:func:`_max_grad_by_indices`). Otherwise the gradient as col2im of per-tap contributions:
    the padded data's im2col columns (N, C, taps, windows) give max's first-maximum one-hot
    (``ArgMax``; v1: ``Equal`` to the output, every tie) times the output gradient,
    avg/sum/lp the output gradient (divided by the divisor, or by ``y^(p-1)``) on every tap;
    col2im sums them into the padded image, which is cropped (and for lp multiplied by
    ``x^(p-1)``). Spatial dims must be static."""
    p = ctx.params
    work = win.work_dtype(ctx.in_dtypes[1])
    shape, rank = tuple(ctx.in_shapes[1]), len(ctx.in_shapes[1])
    if any(ctx.is_dynamic(1, a) for a in range(1, rank)):
        raise ctx.fail("the Pooling gradient needs the data's non-batch dims fixed at export "
                       "time; export with a dynamic batch axis only")
    if v1:
        last, (kernel, stride, pad, out_sp) = False, _v1_geometry(p, shape)
    else:
        last, kernel, stride, pad, out_sp = _pool_geometry(p, shape)
    og, x, y = (win.to_first(ctx, win.as_dtype(ctx, i, work), rank, last) for i in range(3))
    sp = shape[1:-1] if last else shape[2:]
    c = shape[-1] if last else shape[1]
    kind = p.pool_type
    after = win.end_pads(sp, kernel, stride, pad, out_sp)
    if (kind == "max" and not v1 and work == np.float32 and not any(pad) and not any(after)
            and list(stride) == list(kernel)):  # disjoint windows side by side
        covered = [o * k for o, k in zip(out_sp, kernel)]
        left = [v - n for v, n in zip(sp, covered)]  # rows no window reads get no gradient
        if any(left):
            x = win.pad(ctx, x, [0] * len(sp), [-v for v in left])
        dx = _max_grad_tiled(ctx, og, x, y, kernel, covered)
        if any(left):
            dx = win.pad(ctx, dx, [0] * len(sp), left)
        win.finish(ctx, dx, work, win.last_perm(rank) if last else None)
        return
    if (kind == "max" and not v1 and ctx.opset >= 16
            and all(b < k and a < k for b, a, k in zip(pad, after, kernel))):
        dx = _max_grad_by_indices(ctx, og, x, kernel, stride, list(pad) + after, work)
        win.finish(ctx, dx, work, win.last_perm(rank) if last else None)
        return
    total = _padded_size(sp, kernel, stride, pad, out_sp)
    taps, windows = int(np.prod(kernel)), int(np.prod(out_sp))
    og_r = ctx.make("Reshape", [og, ctx.ints([0, c, 1, windows], "og_r")])
    ones = ctx.const(np.ones((1, 1, taps, 1), work), "taps")
    if kind == "max":
        lowest = np.asarray(np.finfo(ctx.in_dtypes[1]).min, work)
        xp = win.pad(ctx, x, pad, pad, np.zeros((), work) if v1 else lowest)
        xp = win.pad(ctx, xp, [0] * len(sp), [t - v - 2 * q for t, v, q in zip(total, sp, pad)],
                     lowest)
        cols = win.im2col(ctx, xp, kernel, stride, (1,) * len(sp), (0,) * len(sp), out_sp)
        cols = ctx.make("Reshape", [cols, ctx.ints([0, c, taps, windows], "cols")])
        if v1:
            y_r = ctx.make("Reshape", [y, ctx.ints([0, c, 1, windows], "y_r")])
            hit = ctx.make("Equal", [cols, y_r])
        else:
            arg = ctx.make("ArgMax", [cols], axis=2, keepdims=1)
            hit = ctx.make("Equal", [arg, ctx.const(np.arange(taps).reshape(1, 1, -1, 1),
                                                    "tap_ids")])
        contrib = ctx.make("Mul", [ctx.make("Cast", [hit], to=_onnx_type(work)), og_r])
    else:
        w = og_r
        if v1 and kind == "avg":
            w = ctx.make("Div", [w, ctx.const(work.type(np.prod(kernel)), "size")])
        elif kind == "avg":
            include = True if p.count_include_pad is None else bool(p.count_include_pad)
            div = _avg_divisor(sp, kernel, stride, pad, out_sp, include).reshape(1, 1, 1, -1)
            w = ctx.make("Div", [w, ctx.const(div.astype(work), "divisor")])
        elif kind == "lp" and p.p_value > 1:
            y_r = ctx.make("Reshape", [y, ctx.ints([0, c, 1, windows], "y_r")])
            w = ctx.make("Div", [w, win.power(ctx, y_r, p.p_value - 1)])
        contrib = ctx.make("Mul", [w, ones])
    contrib = ctx.make("Reshape", [contrib, ctx.ints([0, c * taps, windows], "contrib")])
    full = win.col2im(ctx, contrib, kernel, stride, (1,) * len(sp), (0,) * len(sp), out_sp,
                      total)
    dx = win.pad(ctx, full, [-q for q in pad], [v + q - t for t, v, q in zip(total, sp, pad)])
    if kind == "lp" and p.p_value > 1:
        dx = ctx.make("Mul", [dx, win.power(ctx, x, p.p_value - 1)])
    win.finish(ctx, dx, work, win.last_perm(rank) if last else None)


def _onnx_type(dt) -> int:
    from ..._core import dtypes

    return dtypes.onnx_of(np.dtype(dt))


lowering("Pooling")(_pooling_onnx)
lowering("Pooling_v1")(_pooling_v1_onnx)
lowering("_backward_Pooling")(lambda ctx: _pool_grad_onnx(ctx, False))
lowering("_backward_Pooling_v1")(lambda ctx: _pool_grad_onnx(ctx, True))

"""Normalisation operators (MXNet 1.9.1 semantics).

Registered here: ``BatchNorm``, ``_contrib_SyncBatchNorm`` (same inference math, channel axis
fixed at 1), ``LayerNorm``, ``InstanceNorm``, ``GroupNorm``, ``L2Normalization`` and ``LRN``.

MXNet facts kept here (checked against MXNet 1.9.1):

* ``BatchNorm`` has inputs ``data, gamma, beta, moving_mean, moving_var`` with the last two
  auxiliary states, and three outputs ``output, mean, var`` of which one is visible unless
  ``output_mean_var``. ``fix_gamma`` defaults to True: gamma is then treated as 1. At inference
  the ``mean`` output is ``moving_mean`` and the ``var`` output is the *inverse* standard
  deviation ``1 / sqrt(moving_var + eps)``; in training they are the batch mean and inverse std.
  For float16 data the parameters and moving statistics are float32.
* ``_contrib_SyncBatchNorm`` in training outputs the batch mean and *variance*; at inference its
  mean/var outputs are not written by MXNet (here: moving mean and inverse std, as BatchNorm).
* ``LayerNorm``/``GroupNorm`` output ``mean`` and ``std = sqrt(var + eps)`` (hidden unless
  ``output_mean_var``); GroupNorm's gamma and beta have one value per *group* ``(num_groups,)``.
* ``InstanceNorm`` has hidden outputs ``mean`` and ``var`` of shape ``(N, C)``.
* ``L2Normalization`` divides by ``sqrt(sum(x**2) + eps)``; hidden output ``norm``.
* ``LRN`` (4-d input, odd ``nsize``): ``x * (knorm + alpha / nsize * sum_window(x**2))**-beta``
  over a channel window; hidden output ``tmp_norm``.
"""

from __future__ import annotations

import numpy as np

from ..attrs import Bool, Enum, Float, Int, Optional, Str
from ..errors import OpAttributeError, ShapeError
from ._shape import fmt, merge, norm_axis
from .nn import require_float, work_dtype
from .registry import OpDef, register

__all__: list[str] = []

# MXNet declares these defaults as C++ float literals; keep the float32-rounded values.
_EPS_1E3 = float(np.float32(1e-3))
_EPS_1E5 = float(np.float32(1e-5))


def _param_dtype(dtype: np.dtype) -> np.dtype:
    """BatchNorm keeps gamma/beta/moving stats in float32 for float16 data (a cuDNN rule)."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _channel_view(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _reduce_axes(ndim: int, keep: int) -> tuple[int, ...]:
    return tuple(a for a in range(ndim) if a != keep)


# --- BatchNorm / SyncBatchNorm -------------------------------------------------------------------
_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")


def _bn_shape_at(axis: int, in_shapes: list) -> tuple[list, list]:
    """gamma, beta and the moving statistics are ``(C,)`` with C the data's ``axis`` dim."""
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None, None, None]
    ax = norm_axis(axis, len(data), "channel axis")
    c = (data[ax],)
    for i, name in enumerate(_BN_INPUTS[1:], start=1):
        ins[i] = merge(ins[i], c, f"{name}: ")
    return ins, [tuple(data), c, c]


def _bn_type(p, in_types: list) -> tuple[list, list]:
    data = in_types[0]
    if data is None:
        return list(in_types), [None, None, None]
    pd = _param_dtype(np.dtype(data))
    return [np.dtype(data)] + [pd] * (len(in_types) - 1), [np.dtype(data), pd, pd]


def _bn_normalize(x, gamma, beta, mean, invstd, axis: int, fix_gamma: bool) -> np.ndarray:
    """``(x - mean) * invstd * gamma + beta`` with per-channel vectors along ``axis``."""
    wd = np.result_type(work_dtype(x.dtype), mean.dtype)
    scale = invstd.astype(wd) if fix_gamma else invstd.astype(wd) * gamma.astype(wd)
    xc = x.astype(wd, copy=False) - _channel_view(mean.astype(wd), x.ndim, axis)
    out = xc * _channel_view(scale, x.ndim, axis) + _channel_view(beta.astype(wd), x.ndim, axis)
    return out.astype(x.dtype, copy=False)


def _bn_infer(op: str, axis: int, p, x, gamma, beta, mm, mv) -> tuple:
    require_float(op, x)
    _bn_shape_at(axis, [x.shape, gamma.shape, beta.shape, mm.shape, mv.shape])
    ax = norm_axis(axis, x.ndim, "channel axis")
    invstd = (1.0 / np.sqrt(mv.astype(np.float64) + p.eps)).astype(mv.dtype)
    out = _bn_normalize(x, gamma, beta, mm, invstd, ax, p.fix_gamma)
    return out, mm.copy(), invstd


def _batch_moments(x: np.ndarray, ax: int, pd: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    axes = _reduce_axes(x.ndim, ax)
    xw = x.astype(np.result_type(work_dtype(x.dtype), pd), copy=False)
    mean = xw.mean(axis=axes)
    var = np.square(xw - _channel_view(mean, x.ndim, ax)).mean(axis=axes)
    return mean.astype(pd), var.astype(pd)


def _bn_train(op: str, axis: int, p, x, gamma, beta, mm, mv, plain_var: bool) -> tuple:
    """Training mode: batch statistics (biased variance) unless ``use_global_stats``."""
    if p.use_global_stats:
        return _bn_infer(op, axis, p, x, gamma, beta, mm, mv)
    require_float(op, x)
    _bn_shape_at(axis, [x.shape, gamma.shape, beta.shape, mm.shape, mv.shape])
    ax = norm_axis(axis, x.ndim, "channel axis")
    mean, var = _batch_moments(x, ax, mm.dtype)
    invstd = (1.0 / np.sqrt(var.astype(np.float64) + p.eps)).astype(var.dtype)
    out = _bn_normalize(x, gamma, beta, mean, invstd, ax, p.fix_gamma)
    return out, mean, (var if plain_var else invstd)


def _bn_n_visible(p) -> int:
    return 3 if p.output_mean_var else 1


register(OpDef(
    "BatchNorm",
    params={"eps": Float(_EPS_1E3), "momentum": Float(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "axis": Int(1),
            "cudnn_off": Bool(False), "min_calib_range": Optional(Float()),
            "max_calib_range": Optional(Float())},
    inputs=_BN_INPUTS, aux=(3, 4), num_outputs=3, num_visible_outputs=_bn_n_visible,
    output_names=("output", "mean", "var"),
    infer_shape=lambda p, s: _bn_shape_at(p.axis, s), infer_type=_bn_type,
    compute=lambda p, *a: _bn_infer("BatchNorm", p.axis, p, *a),
    train_compute=lambda p, *a: _bn_train("BatchNorm", p.axis, p, *a, plain_var=False),
    aliases=("_npx_batch_norm",),
    doc="(x - mean) / sqrt(var + eps) * gamma + beta per channel (axis); inference uses the "
        "moving statistics; gamma is 1 when fix_gamma (the default)."))

register(OpDef(
    "_contrib_SyncBatchNorm",
    params={"eps": Float(_EPS_1E3), "momentum": Float(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "ndev": Int(1),
            "key": Str()},
    inputs=_BN_INPUTS, aux=(3, 4), num_outputs=3, num_visible_outputs=_bn_n_visible,
    output_names=("output", "mean", "var"),
    infer_shape=lambda p, s: _bn_shape_at(1, s), infer_type=_bn_type,
    compute=lambda p, *a: _bn_infer("_contrib_SyncBatchNorm", 1, p, *a),
    train_compute=lambda p, *a: _bn_train("_contrib_SyncBatchNorm", 1, p, *a, plain_var=True),
    doc="BatchNorm synchronised across devices in training; on one device (and at inference) "
        "the same math as BatchNorm with the channel on axis 1."))


# --- LayerNorm -----------------------------------------------------------------------------------
def _moments_shape(data: tuple, axes: tuple[int, ...]) -> tuple:
    return tuple(1 if i in axes else d for i, d in enumerate(data))


def _ln_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None, None, None]
    ax = norm_axis(p.axis, len(data))
    c = (data[ax],)
    ins[1] = merge(ins[1], c, "gamma: ")
    ins[2] = merge(ins[2], c, "beta: ")
    moments = _moments_shape(data, (ax,))
    return ins, [tuple(data), moments, moments]


def _layer_norm(p, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> tuple:
    require_float("LayerNorm", x)
    _ln_shape(p, [x.shape, gamma.shape, beta.shape])
    ax = norm_axis(p.axis, x.ndim)
    xw = x.astype(work_dtype(x.dtype), copy=False)
    mean = xw.mean(axis=ax, keepdims=True)
    xc = xw - mean
    std = np.sqrt(np.square(xc).mean(axis=ax, keepdims=True) + np.float32(p.eps))
    out = xc / std * _channel_view(gamma, x.ndim, ax) + _channel_view(beta, x.ndim, ax)
    return tuple(a.astype(x.dtype, copy=False) for a in (out, mean, std))


def _ln_n_visible(p) -> int:
    return 3 if p.output_mean_var else 1


register(OpDef(
    "LayerNorm",
    params={"axis": Int(-1), "eps": Float(_EPS_1E5), "output_mean_var": Bool(False)},
    inputs=("data", "gamma", "beta"), num_outputs=3, num_visible_outputs=_ln_n_visible,
    output_names=("output", "mean", "std"), infer_shape=_ln_shape, compute=_layer_norm,
    aliases=("_npx_layer_norm",),
    doc="(x - mean) / sqrt(var + eps) * gamma + beta with moments over one axis."))


# --- InstanceNorm --------------------------------------------------------------------------------
def _in_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if data is None or len(data) < 2:
        return ins, [None if data is None else tuple(data), None, None]
    c = (data[1],)
    ins[1] = merge(ins[1], c, "gamma: ")
    ins[2] = merge(ins[2], c, "beta: ")
    return ins, [tuple(data), (data[0], data[1]), (data[0], data[1])]


def _need_rank3(op: str, shape: tuple) -> None:
    if len(shape) < 3:
        raise ShapeError(f"{op}: input of shape {fmt(shape)} needs at least 3 dimensions "
                         "(N, C, spatial...)")


def _instance_norm(p, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> tuple:
    require_float("InstanceNorm", x)
    _need_rank3("InstanceNorm", x.shape)
    _in_shape(p, [x.shape, gamma.shape, beta.shape])
    n, c = x.shape[:2]
    xw = x.astype(work_dtype(x.dtype), copy=False).reshape(n, c, -1)
    mean = xw.mean(axis=2)
    xc = xw - mean[:, :, None]
    var = np.square(xc).mean(axis=2)
    out = xc / np.sqrt(var + np.float32(p.eps))[:, :, None]
    out = out * gamma[None, :, None] + beta[None, :, None]
    return (out.reshape(x.shape).astype(x.dtype, copy=False), mean.astype(x.dtype),
            var.astype(x.dtype))


register(OpDef(
    "InstanceNorm", params={"eps": Float(_EPS_1E3)}, inputs=("data", "gamma", "beta"),
    num_outputs=3, num_visible_outputs=1, output_names=("output", "mean", "var"),
    infer_shape=_in_shape, compute=_instance_norm,
    doc="Per-sample, per-channel normalisation over the spatial axes, then gamma/beta per "
        "channel."))


# --- GroupNorm -----------------------------------------------------------------------------------
def _gn_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None, None, None]
    _need_rank3("GroupNorm", tuple(data))
    g = p.num_groups
    if g <= 0 or (data[1] > 0 and data[1] % g):
        raise ShapeError(f"GroupNorm: {data[1]} channels (shape {fmt(data)}) are not divisible "
                         f"into num_groups={g} groups; pick a divisor of the channel count")
    ins[1] = merge(ins[1], (g,), "gamma: ")
    ins[2] = merge(ins[2], (g,), "beta: ")
    return ins, [tuple(data), (data[0], g), (data[0], g)]


def _group_norm(p, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> tuple:
    require_float("GroupNorm", x)
    _gn_shape(p, [x.shape, gamma.shape, beta.shape])
    n, g = x.shape[0], p.num_groups
    xw = x.astype(work_dtype(x.dtype), copy=False).reshape(n, g, -1)
    mean = xw.mean(axis=2)
    xc = xw - mean[:, :, None]
    std = np.sqrt(np.square(xc).mean(axis=2) + np.float32(p.eps))
    out = xc / std[:, :, None] * gamma[None, :, None] + beta[None, :, None]
    return (out.reshape(x.shape).astype(x.dtype, copy=False), mean.astype(x.dtype),
            std.astype(x.dtype))


register(OpDef(
    "GroupNorm",
    params={"num_groups": Int(1), "eps": Float(_EPS_1E5), "output_mean_var": Bool(False)},
    inputs=("data", "gamma", "beta"), num_outputs=3, num_visible_outputs=_ln_n_visible,
    output_names=("output", "mean", "std"), infer_shape=_gn_shape, compute=_group_norm,
    doc="Normalisation over groups of channels; gamma and beta hold one value per group."))


# --- L2Normalization -----------------------------------------------------------------------------
def _l2_norm_shape(mode: str, data: tuple) -> tuple:
    if mode == "instance":
        return (data[0],) if data else (1,)
    _need_rank3(f"L2Normalization(mode={mode!r})", data)
    if mode == "channel":
        return (data[0], 1) + tuple(data[2:])
    return (data[0], data[1])


def _l2_shape(p, in_shapes: list) -> tuple[list, list]:
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), [None, None]
    return list(in_shapes), [tuple(data), _l2_norm_shape(p.mode, tuple(data))]


def _l2_normalization(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    require_float("L2Normalization", x)
    nshape = _l2_norm_shape(p.mode, x.shape)
    if p.mode == "instance":
        axes = tuple(range(1, x.ndim))
    elif p.mode == "channel":
        axes = (1,)
    else:
        axes = tuple(range(2, x.ndim))
    xw = x.astype(work_dtype(x.dtype), copy=False)
    norm = np.sqrt(np.square(xw).sum(axis=axes, keepdims=True) + np.float32(p.eps))
    out = (xw / norm).astype(x.dtype, copy=False)
    return out, norm.reshape(nshape).astype(x.dtype, copy=False)


register(OpDef(
    "L2Normalization",
    params={"eps": Float(float(np.float32(1e-10))),
            "mode": Enum(("instance", "spatial", "channel"), "instance")},
    num_outputs=2, num_visible_outputs=1, output_names=("output", "norm"),
    infer_shape=_l2_shape, compute=_l2_normalization,
    doc="x / sqrt(sum(x**2) + eps) over all but axis 0 (instance), over axis 1 (channel) or "
        "over the spatial axes (spatial)."))


# --- LRN -----------------------------------------------------------------------------------------
def _lrn_check(p, shape: tuple) -> None:
    if p.nsize % 2 != 1:
        raise OpAttributeError(f"LRN: nsize={p.nsize} must be odd (MXNet's LRN only supports "
                               "odd window sizes)")
    if len(shape) != 4:
        raise ShapeError(f"LRN: input of shape {fmt(shape)} must be 4-d (N, C, H, W)")


def _lrn_shape(p, in_shapes: list) -> tuple[list, list]:
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), [None, None]
    _lrn_check(p, tuple(data))
    return list(in_shapes), [tuple(data), tuple(data)]


def _lrn(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    require_float("LRN", x)
    _lrn_check(p, x.shape)
    xw = x.astype(work_dtype(x.dtype), copy=False)
    sq = np.square(xw)
    window = np.zeros_like(sq)
    c, half = x.shape[1], p.nsize // 2
    for k in range(-half, half + 1):  # a few channel taps, each a whole-tensor add
        lo, hi = max(0, -k), min(c, c - k)
        if lo < hi:
            window[:, lo:hi] += sq[:, lo + k:hi + k]
    tmp = window * np.float32(np.float32(p.alpha) / p.nsize) + np.float32(p.knorm)
    out = xw * np.power(tmp, -np.float32(p.beta))
    return out.astype(x.dtype, copy=False), tmp.astype(x.dtype, copy=False)


register(OpDef(
    "LRN",
    params={"alpha": Float(float(np.float32(1e-4))), "beta": Float(0.75), "knorm": Float(2.0),
            "nsize": Int()},
    num_outputs=2, num_visible_outputs=1, output_names=("output", "tmp_norm"),
    infer_shape=_lrn_shape, compute=_lrn,
    doc="Local response normalisation across channels."))

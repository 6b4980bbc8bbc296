"""Normalisation operators (MXNet 1.9.1 semantics).

Registered here: ``BatchNorm``, ``_contrib_SyncBatchNorm`` (same inference math, channel axis
fixed at 1), ``_contrib_BatchNormWithReLU`` (BatchNorm's parameters, inputs and mean/var
outputs, ReLU on the data output, a hidden fourth ``workspace`` output; MXNet 1.9.1 runs it
only through oneDNN, for 4-d float32 data with ``axis=1``: here any shape, axis and float
dtype), ``LayerNorm``, ``InstanceNorm``, ``GroupNorm``, ``L2Normalization`` and ``LRN``.

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

ONNX export: BatchNorm is BatchNormalization with a ones gamma under ``fix_gamma`` (MXNet's own
exporter used the stored gamma), transposed for a channel axis other than 1, with its visible
mean/var outputs computed; LayerNorm is LayerNormalization (opset >= 17, last axis) or a
ReduceMean composition over its one axis; GroupNorm (per-group gamma/beta) is InstanceNormalization
on (N, G, -1); L2Normalization composes ``x / sqrt(sum(x**2) + eps)``; LRN maps to LRN. Hidden
outputs that MXNet keeps for backward only (InstanceNorm's, L2Normalization's, LRN's) are
composed when a graph reads them (a backward graph does).

Gradients: each op's rule calls one backward kernel of :mod:`.norm_grad`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, Enum, Float, Int, Optional, Str
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge, norm_axis
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..lowering.math import named, onnx_compute, onnx_input_as, onnx_work_dtype
from ..registry import InPlace, OpDef, register
from .conv_kernels import scratch
from .dense import require_float, work_dtype
from .train_graphs import batchnorm_train_graph

__all__ = ["bn_infer", "channel_window_sum", "channel_layout", "channel_sums", "channel_dot",
           "per_channel"]

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
# MXNet 1.9.1's FSetInputVarAttrOnCompose for the BatchNorm family: composing the op gives its
# moving-statistics variables these initializers unless they already carry an ``__init__``.
_BN_VAR_ATTRS = {"moving_mean": {"__init__": '["zero", {}]'},
                 "moving_var": {"__init__": '["one", {}]'}}


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


def channel_sums(x3: np.ndarray) -> np.ndarray:
    """Per-channel sums of a (pre, C, post) array: over ``pre`` first (rows of C*post
    contiguous values), then over ``post``. numpy reduces a short contiguous last axis one
    (n, c) row at a time: summing ``post`` first took (32, 256, 4) 207 us, (32, 128, 16) 133,
    (32, 64, 256) 267; this order 16, 18 and 136."""
    return x3.sum(axis=0).sum(axis=1)


def channel_dot(x3: np.ndarray, y3: np.ndarray) -> np.ndarray:
    """Per-channel dot products of two (pre, C, post) arrays. For a short ``post`` the
    contraction runs over whole (C*post) rows, then sums ``post``: (32, 256, 4) 83 -> 16 us,
    (32, 128, 16) 55 -> 31 (one ``einsum`` per (n, c) row before)."""
    pre, c, post = x3.shape
    if pre > 1 and 1 < post < 32:
        return np.einsum("nk,nk->k", x3.reshape(pre, -1), y3.reshape(pre, -1)).reshape(
            c, post).sum(axis=1)
    return np.einsum("ncp,ncp->c", x3, y3)


def per_channel(v: np.ndarray, shape3: tuple) -> np.ndarray:
    """Per-channel vector ``v`` broadcastable against a contiguous (pre, C, post) array. With
    several samples and ``post`` > 1 it is written out as (1, C, post), so numpy runs each
    sample's C*post values in one inner loop rather than one loop per (n, c): ``x * scale +
    shift`` on (32, 256, 4) 121 -> 53 us, (32, 64, 256) 791 -> 683."""
    pre, c, post = shape3
    if pre > 1 and post > 1:
        return np.repeat(v, post).reshape(1, c, post)
    return v.reshape(1, c, 1)


def channel_layout(x: np.ndarray, ax: int) -> tuple[int, int, int]:
    """``x``'s shape as (pre, C, post) around the channel axis ``ax``."""
    return (int(np.prod(x.shape[:ax], dtype=np.int64)), x.shape[ax],
            int(np.prod(x.shape[ax + 1:], dtype=np.int64)))


def _bn_normalize(x, gamma, beta, mean, invstd, axis: int, fix_gamma: bool,
                  out: np.ndarray | None = None) -> np.ndarray:
    """``(x - mean) * invstd * gamma + beta`` with per-channel vectors along ``axis``.

    Folded per channel into ``x * scale + shift`` (two passes over the data, not three).
    ``out`` (the executor passes ``x`` itself when nothing else reads it) receives the result
    when it has the working dtype; the arithmetic is the same either way.
    """
    wd = np.result_type(work_dtype(x.dtype), mean.dtype)
    scale = invstd.astype(wd) if fix_gamma else invstd.astype(wd) * gamma.astype(wd)
    shift = beta.astype(wd) - mean.astype(wd) * scale
    if x.flags.c_contiguous and (out is None or out.flags.c_contiguous):
        shape3 = channel_layout(x, axis)  # (pre, C, post) views: see per_channel
        x3 = x.reshape(shape3)
        if out is not None and out.dtype == wd == x.dtype:
            out3 = out.reshape(shape3)  # a view: the result is ``out`` itself
            np.multiply(x3, per_channel(scale, shape3), out=out3)
        else:
            out3 = x3.astype(wd, copy=False) * per_channel(scale, shape3)
            out = out3.reshape(x.shape)
        out3 += per_channel(shift, shape3)
        return out.astype(x.dtype, copy=False)
    if out is not None and out.dtype == wd == x.dtype:
        np.multiply(x, _channel_view(scale, x.ndim, axis), out=out)
    else:
        out = x.astype(wd, copy=False) * _channel_view(scale, x.ndim, axis)
    out += _channel_view(shift, x.ndim, axis)
    return out.astype(x.dtype, copy=False)


def bn_infer(op: str, axis: int, p, x, gamma, beta, mm, mv,
             out: np.ndarray | None = None) -> tuple:
    """BatchNorm at inference: ``(normalised x, moving_mean copy, invstd)``; ``out`` as in
    :func:`_bn_normalize` (the executor's in-place form; the result is the same)."""
    require_float(op, x)
    _bn_shape_at(axis, [x.shape, gamma.shape, beta.shape, mm.shape, mv.shape])
    ax = norm_axis(axis, x.ndim, "channel axis")
    invstd = (1.0 / np.sqrt(mv.astype(np.float64) + p.eps)).astype(mv.dtype)
    y = _bn_normalize(x, gamma, beta, mm, invstd, ax, p.fix_gamma, out)
    return y, mm.copy(), invstd


def _batch_moments(x: np.ndarray, ax: int, pd: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and biased variance (centred, two passes) on a (pre, C, post) view:
    row sums along the contiguous axis, and the centred sum of squares as one einsum over a
    scratch copy of ``x - mean`` (no squared temporary)."""
    xw = x.astype(np.result_type(work_dtype(x.dtype), pd), copy=False)
    x3 = xw.reshape(channel_layout(x, ax))
    count = x3.shape[0] * x3.shape[2]
    if count == 0:  # numpy's mean of nothing: NaN (with its warning), as before
        nan = xw.mean(axis=_reduce_axes(x.ndim, ax)).astype(pd)
        return nan, nan.copy()
    mean = channel_sums(x3) / xw.dtype.type(count)
    xc = scratch("bn", x3.shape, xw.dtype)
    np.subtract(x3, per_channel(mean, x3.shape), out=xc)
    var = channel_dot(xc, xc) / xw.dtype.type(count)
    return mean.astype(pd), var.astype(pd)


def _bn_train(op: str, axis: int, p, x, gamma, beta, mm, mv, plain_var: bool) -> tuple:
    """Training mode: batch statistics (biased variance) unless ``use_global_stats``."""
    if p.use_global_stats:
        return bn_infer(op, axis, p, x, gamma, beta, mm, mv)
    require_float(op, x)
    _bn_shape_at(axis, [x.shape, gamma.shape, beta.shape, mm.shape, mv.shape])
    ax = norm_axis(axis, x.ndim, "channel axis")
    mean, var = _batch_moments(x, ax, mm.dtype)
    invstd = (1.0 / np.sqrt(var.astype(np.float64) + p.eps)).astype(var.dtype)
    out = _bn_normalize(x, gamma, beta, mean, invstd, ax, p.fix_gamma)
    return out, mean, (var if plain_var else invstd)


def _bn_n_visible(p) -> int:
    return 3 if p.output_mean_var else 1


def _bn_into(p, args: list, i: int) -> list | None:
    """In place (the executor's inference plan): inference BatchNorm into the data, when data
    and statistics share one float dtype."""
    x = args[0]
    if x.dtype not in (np.float32, np.float64) or any(a.dtype != x.dtype for a in args[1:]):
        return None
    return list(bn_infer("BatchNorm", p.axis, p, *args, out=x))


def _attrs(p) -> dict:
    """The forward op's attributes for its backward op (unset optionals left out)."""
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _bn_rule(backward: str, with_output: bool = False):
    """BatchNorm-family gradient: one ``_backward_*`` kernel call (it also updates the moving
    statistics in training mode); no gradient flows to the auxiliary states."""

    def rule(F, p, inputs, outputs, ograds):
        extra = [outputs[0]] if with_output else []
        g = getattr(F._internal, backward)(ograds[0], outputs[1], outputs[2], *inputs, *extra,
                                 **_attrs(p))
        return [g[0], g[1], g[2], None, None]

    return rule


register(OpDef(
    "BatchNorm",
    params={"eps": Float(_EPS_1E3), "momentum": Float(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "axis": Int(1),
            "cudnn_off": Bool(False), "min_calib_range": Optional(Float()),
            "max_calib_range": Optional(Float())},
    inputs=_BN_INPUTS, aux=(3, 4), num_outputs=3, num_visible_outputs=_bn_n_visible,
    var_attrs=_BN_VAR_ATTRS,
    output_names=("output", "mean", "var"),
    infer_shape=lambda p, s: _bn_shape_at(p.axis, s), infer_type=_bn_type,
    compute=lambda p, *a: bn_infer("BatchNorm", p.axis, p, *a),
    train_compute=lambda p, *a: _bn_train("BatchNorm", p.axis, p, *a, plain_var=False),
    train_graph=batchnorm_train_graph(lambda p: p.axis, plain_var=False),
    aliases=("_npx_batch_norm",), keeps_shape=True, fresh_outputs=True, inplace=InPlace(_bn_into),
    gradient=_bn_rule("_backward_BatchNorm"),
    doc="(x - mean) / sqrt(var + eps) * gamma + beta per channel (axis); inference uses the "
        "moving statistics; gamma is 1 when fix_gamma (the default).", lists_output_names=True))

register(OpDef(
    "_contrib_SyncBatchNorm",
    params={"eps": Float(_EPS_1E3), "momentum": Float(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "ndev": Int(1),
            "key": Str()},
    inputs=_BN_INPUTS, aux=(3, 4), num_outputs=3, num_visible_outputs=_bn_n_visible,
    var_attrs=_BN_VAR_ATTRS,
    output_names=("output", "mean", "var"),
    infer_shape=lambda p, s: _bn_shape_at(1, s), infer_type=_bn_type,
    compute=lambda p, *a: bn_infer("_contrib_SyncBatchNorm", 1, p, *a),
    train_compute=lambda p, *a: _bn_train("_contrib_SyncBatchNorm", 1, p, *a, plain_var=True),
    train_graph=batchnorm_train_graph(lambda p: 1, plain_var=True),
    gradient=_bn_rule("_backward__contrib_SyncBatchNorm"),
    doc="BatchNorm synchronised across devices in training; on one device (and at inference) "
        "the same math as BatchNorm with the channel on axis 1.", lists_output_names=True))


# --- BatchNormWithReLU ----------------------------------------------------------------------------
def _bn_relu_type(p, in_types: list) -> tuple[list, list]:
    ins, outs = _bn_type(p, in_types)
    return ins, outs + [outs[1]]


def _bn_relu_shape(p, in_shapes: list) -> tuple[list, list]:
    ins, outs = _bn_shape_at(p.axis, in_shapes)
    return ins, outs + [outs[0]]


def _with_relu(outs: tuple) -> tuple:
    """BatchNorm's outputs with the data output through ReLU, plus MXNet's hidden
    ``workspace`` output (data-shaped, parameter dtype; a zero view, nothing reads it)."""
    y, mean, var = outs
    relu = np.maximum(y, y.dtype.type(0), out=y)
    return relu, mean, var, np.broadcast_to(np.zeros((), mean.dtype), y.shape)


register(OpDef(
    "_contrib_BatchNormWithReLU",
    params={"eps": Float(_EPS_1E3), "momentum": Float(0.9), "fix_gamma": Bool(True),
            "use_global_stats": Bool(False), "output_mean_var": Bool(False), "axis": Int(1),
            "cudnn_off": Bool(False), "min_calib_range": Optional(Float()),
            "max_calib_range": Optional(Float())},
    inputs=_BN_INPUTS, aux=(3, 4), num_outputs=4, num_visible_outputs=_bn_n_visible,
    var_attrs=_BN_VAR_ATTRS,
    output_names=("output", "mean", "var", "workspace"),
    infer_shape=_bn_relu_shape, infer_type=_bn_relu_type,
    compute=lambda p, *a: _with_relu(bn_infer("_contrib_BatchNormWithReLU", p.axis, p, *a)),
    train_compute=lambda p, *a: _with_relu(
        _bn_train("_contrib_BatchNormWithReLU", p.axis, p, *a, plain_var=False)),
    gradient=_bn_rule("_backward_contrib_BatchNormWithReLU", with_output=True),
    doc="BatchNorm followed by ReLU on its data output (MXNet's fused oneDNN operator).",
    lists_output_names=True))


def _moments_rule(backward: str):
    """LayerNorm/InstanceNorm/GroupNorm: one kernel from the saved moments (outputs 1, 2);
    their head gradients are ignored, as MXNet's rule ignores them."""

    def rule(F, p, inputs, outputs, ograds):
        g = getattr(F._internal, backward)(ograds[0], inputs[0], inputs[1], outputs[1], outputs[2],
                                 **_attrs(p))
        return [g[0], g[1], g[2]]

    return rule


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
    gradient=_moments_rule("_backward_LayerNorm"),
    aliases=("_npx_layer_norm",), keeps_shape=True,
    doc="(x - mean) / sqrt(var + eps) * gamma + beta with moments over one axis.",
    lists_output_names=True))


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
    infer_shape=_in_shape, compute=_instance_norm, keeps_shape=True,
    gradient=_moments_rule("_backward_InstanceNorm"),
    doc="Per-sample, per-channel normalisation over the spatial axes, then gamma/beta per "
        "channel.", lists_output_names=True))


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
    gradient=_moments_rule("_backward_GroupNorm"),
    doc="Normalisation over groups of channels; gamma and beta hold one value per group.",
    lists_output_names=True))


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
    gradient=lambda F, p, ins, outs, ogs: [
        F._internal._backward_L2Normalization(ogs[0], outs[0], outs[1], **_attrs(p))],
    doc="x / sqrt(sum(x**2) + eps) over all but axis 0 (instance), over axis 1 (channel) or "
        "over the spatial axes (spatial).", lists_output_names=True))


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
    gradient=lambda F, p, ins, outs, ogs: [
        F._internal._backward_LRN(ogs[0], ins[0], outs[1], **_attrs(p))],
    doc="Local response normalisation across channels.", lists_output_names=True))


# --- ONNX export ---------------------------------------------------------------------------------
def _out_name(ctx: LoweringContext, k: int, work: np.dtype) -> str | None:
    """Output ``k``'s name when ``work`` is the data's dtype (no cast back), else ``None``."""
    return ctx.outputs[k] if work == ctx.dtype else None


def _finish(ctx: LoweringContext, k: int, y: str, work: np.dtype) -> None:
    """Define output ``k`` from ``y`` computed in ``work``: a Cast back to the data's dtype
    (when they are equal, ``y`` was written to the output's name already)."""
    if work != ctx.dtype:
        ctx.make("Cast", [y], outputs=[ctx.outputs[k]], to=dtypes.onnx_of(ctx.dtype))


def _standardize(ctx: LoweringContext, x: str, axes: list[int], eps: float, work: np.dtype,
                 mean_out: str | None = None, std_out: str | None = None) -> tuple[str, ...]:
    """``((x - mean) / std, mean, std)`` with ``std = sqrt(mean((x - mean)**2) + eps)`` over
    ``axes`` (kept as size-1 dims), as MXNet's LayerNorm/GroupNorm compute."""
    mean = onnx_reduce(ctx, "ReduceMean", x, axes, outputs=named(mean_out))
    xc = ctx.make("Sub", [x, mean])
    var = onnx_reduce(ctx, "ReduceMean", ctx.make("Mul", [xc, xc]), axes)
    var_eps = ctx.make("Add", [var, ctx.const(work.type(eps), "eps")])
    std = ctx.make("Sqrt", [var_eps], outputs=named(std_out))
    return ctx.make("Div", [xc, std]), mean, std


def _affine(ctx: LoweringContext, y: str, scale: str, shift: str, view: list[int] | None,
            out: str | None) -> str:
    """``y * scale + shift`` with per-channel vectors reshaped to ``view`` first."""
    if view is not None:
        shape = ctx.ints(view, "chan_shape")
        scale = ctx.make("Reshape", [scale, shape])
        shift = ctx.make("Reshape", [shift, shape])
    return ctx.make("Add", [ctx.make("Mul", [y, scale]), shift], outputs=named(out))


def _chan_view(rank: int, axis: int) -> list[int] | None:
    """Shape broadcasting a (C,) vector along ``axis`` of a rank-``rank`` tensor (None: as is)."""
    trailing = rank - axis - 1
    return None if trailing == 0 else [-1] + [1] * trailing


# BatchNorm ----------------------------------------------------------------------------------------
def _bn_stat_outputs(ctx: LoweringContext, mm: str, mv: str, eps: float) -> None:
    """Visible mean/var outputs (``output_mean_var``) at inference: ``moving_mean`` and the
    inverse std ``1 / sqrt(moving_var + eps)``, as MXNet 1.9.1 writes them."""
    if ctx.wants(1):
        ctx.make("Identity", [mm], outputs=[ctx.outputs[1]])
    if ctx.wants(2):
        pdt = np.dtype(ctx.in_dtypes[4])
        var_eps = ctx.make("Add", [mv, ctx.const(pdt.type(eps), "eps")])
        ctx.make("Reciprocal", [ctx.make("Sqrt", [var_eps])], outputs=[ctx.outputs[2]])


def _to_channel1(ctx: LoweringContext, x: str, rank: int, ax: int) -> tuple[str, Callable | None]:
    """Put the channel axis at position 1, where ONNX normalises: a Transpose (or an
    Unsqueeze for 1-d data); returns the moved tensor and how to move the result back."""
    if rank == 1:
        def undo(y: str, out: str | None) -> str:
            return ctx.make("Squeeze", [y, ctx.ints([0], "axes")], outputs=named(out))

        return ctx.make("Unsqueeze", [x, ctx.ints([0], "axes")]), undo
    if ax == 1:
        return x, None
    rest = [a for a in range(rank) if a != ax]
    perm = [rest[0], ax] + rest[1:]
    back = [int(a) for a in np.argsort(perm)]

    def untranspose(y: str, out: str | None) -> str:
        return ctx.make("Transpose", [y], outputs=named(out), perm=back)

    return ctx.make("Transpose", [x], perm=perm), untranspose


def _bn_onnx_at(fixed_axis: int | None) -> Callable:
    """BatchNorm at inference: ``BatchNormalization`` with the moving statistics. gamma is a
    ones initializer when ``fix_gamma`` (MXNet ignores gamma's value then; MXNet's own exporter
    did not); a channel axis other than 1 is transposed there and back; float16 data is
    normalised in float32 (its parameters are float32, as in MXNet)."""

    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        rank = len(ctx.shape)
        ax = norm_axis(p.axis if fixed_axis is None else fixed_axis, rank, "channel axis")
        _, g, b, mm, mv = ctx.inputs
        pdt = np.dtype(ctx.in_dtypes[3])
        if p.fix_gamma:
            g = ctx.const(np.ones(ctx.in_shapes[3], pdt), "gamma_ones")
        x, undo = _to_channel1(ctx, onnx_input_as(ctx, 0, pdt), rank, ax)
        out = _out_name(ctx, 0, pdt)
        y = ctx.make("BatchNormalization", [x, g, b, mm, mv],
                     outputs=named(None if undo else out), epsilon=float(p.eps))
        if undo is not None:
            y = undo(y, out)
        _finish(ctx, 0, y, pdt)
        _bn_stat_outputs(ctx, mm, mv, float(p.eps))

    return handler


lowering("BatchNorm")(_bn_onnx_at(None))
lowering("_contrib_SyncBatchNorm")(_bn_onnx_at(1))


def _bn_relu_onnx(ctx: LoweringContext) -> None:
    """BatchNorm's lowering into a fresh tensor, then ``Relu`` into the output."""
    if ctx.wants(3):
        raise ctx.fail("its hidden workspace output is read; MXNet keeps it for backward only")
    out = ctx.outputs[0]
    ctx.outputs[0] = ctx.fresh("bn")
    try:
        _bn_onnx_at(None)(ctx)
        normed = ctx.outputs[0]
    finally:
        ctx.outputs[0] = out
    ctx.make("Relu", [normed], outputs=[out])


lowering("_contrib_BatchNormWithReLU")(_bn_relu_onnx)


# LayerNorm / InstanceNorm / GroupNorm -------------------------------------------------------------
def _stat_names(ctx: LoweringContext, work: np.dtype) -> tuple[str | None, str | None]:
    """Names for the mean/std outputs when they are read and need no cast back."""
    return tuple(_out_name(ctx, k, work) if ctx.wants(k) else None for k in (1, 2))


def _finish_stats(ctx: LoweringContext, mean: str, std: str, work: np.dtype,
                  squeeze: list[int] | None) -> None:
    """Define the read mean/std outputs (squeezing ``squeeze`` axes, casting back)."""
    for k, t in ((1, mean), (2, std)):
        if not ctx.wants(k):
            continue
        if squeeze is not None:
            t = ctx.make("Squeeze", [t, ctx.ints(squeeze, "axes")],
                         outputs=named(_out_name(ctx, k, work)))
        _finish(ctx, k, t, work)


def _ln_onnx(ctx: LoweringContext) -> None:
    """LayerNorm normalises over ONE axis. Over the last axis (opset >= 17, mean/std not read):
    ``LayerNormalization``; otherwise ReduceMean/Sub/Mul/Sqrt/Div with gamma/beta reshaped to
    broadcast along the axis (ONNX's LayerNormalization would normalise axis..end)."""
    p = ctx.params
    rank = len(ctx.shape)
    ax = norm_axis(p.axis, rank)
    work = onnx_work_dtype(ctx.dtype)
    x, g, b = (onnx_input_as(ctx, i, work) for i in range(3))
    stats = ctx.wants(1) or ctx.wants(2)
    if ctx.opset >= 17 and ax == rank - 1 and not stats:
        # stash_type: the precision of the statistics (float32 by default; keep double)
        y = ctx.make("LayerNormalization", [x, g, b], outputs=named(_out_name(ctx, 0, work)),
                     axis=ax, epsilon=float(np.float32(p.eps)),
                     stash_type=dtypes.onnx_of(work) if work == np.float64 else None)
        _finish(ctx, 0, y, work)
        return
    mean_out, std_out = _stat_names(ctx, work)
    normed, mean, std = _standardize(ctx, x, [ax], float(np.float32(p.eps)), work, mean_out,
                                     std_out)
    y = _affine(ctx, normed, g, b, _chan_view(rank, ax), _out_name(ctx, 0, work))
    _finish(ctx, 0, y, work)
    _finish_stats(ctx, mean, std, work, None)


lowering("LayerNorm")(_ln_onnx)


def _in_onnx(ctx: LoweringContext) -> None:
    """``InstanceNormalization`` (same eps placement as MXNet); float64 data, or a read hidden
    mean/var output (a backward graph reads them), is composed instead on (N, C, -1)."""
    p = ctx.params
    work = onnx_work_dtype(ctx.dtype)
    x, g, b = (onnx_input_as(ctx, i, work) for i in range(3))
    out = _out_name(ctx, 0, work)
    eps = float(np.float32(p.eps))
    if work != np.float64 and not (ctx.wants(1) or ctx.wants(2)):
        y = ctx.make("InstanceNormalization", [x, g, b], outputs=named(out), epsilon=eps)
        _finish(ctx, 0, y, work)
        return
    x3 = ctx.make("Reshape", [x, ctx.ints([0, 0, -1], "ncl")])
    mean = onnx_reduce(ctx, "ReduceMean", x3, [2])
    xc = ctx.make("Sub", [x3, mean])
    var = onnx_reduce(ctx, "ReduceMean", ctx.make("Mul", [xc, xc]), [2])
    std = ctx.make("Sqrt", [ctx.make("Add", [var, ctx.const(work.type(eps), "eps")])])
    y3 = _affine(ctx, ctx.make("Div", [xc, std]), g, b, [-1, 1], None)
    y = ctx.make("Reshape", [y3, ctx.make("Shape", [ctx.inputs[0]])], outputs=named(out))
    _finish(ctx, 0, y, work)
    _finish_stats(ctx, mean, var, work, [2])


lowering("InstanceNorm")(_in_onnx)


def _gn_onnx(ctx: LoweringContext) -> None:
    """MXNet 1.9.1's GroupNorm has one gamma/beta per *group*, unlike ONNX's
    GroupNormalization (per channel from opset 21): the data is reshaped to (N, G, -1), where
    ``InstanceNormalization`` with the (G,) gamma/beta is exactly GroupNorm, and back. With
    mean/std read, or float64 data, the moments are composed instead."""
    p = ctx.params
    work = onnx_work_dtype(ctx.dtype)
    x, g, b = (onnx_input_as(ctx, i, work) for i in range(3))
    eps = float(np.float32(p.eps))
    xg = ctx.make("Reshape", [x, ctx.ints([0, p.num_groups, -1], "group_shape")])
    stats = ctx.wants(1) or ctx.wants(2)
    if work != np.float64 and not stats:
        y = ctx.make("InstanceNormalization", [xg, g, b], epsilon=eps)
    else:
        normed, mean, std = _standardize(ctx, xg, [2], eps, work)
        y = _affine(ctx, normed, g, b, [-1, 1], None)
        _finish_stats(ctx, mean, std, work, [2])
    shape = (ctx.make("Shape", [ctx.inputs[0]]) if ctx.is_dynamic(0)
             else ctx.ints(ctx.shape, "shape"))
    y = ctx.make("Reshape", [y, shape], outputs=named(_out_name(ctx, 0, work)))
    _finish(ctx, 0, y, work)


lowering("GroupNorm")(_gn_onnx)


# L2Normalization / LRN ----------------------------------------------------------------------------
def _l2_onnx(ctx: LoweringContext) -> None:
    """``x / sqrt(ReduceSumSquare(x) + eps)`` (MXNet adds eps under the root; ONNX's
    LpNormalization has no eps and one axis only); the hidden norm output when read (a
    backward graph reads it)."""
    p = ctx.params
    rank = len(ctx.shape)
    axes = {"instance": range(1, rank), "channel": [1], "spatial": range(2, rank)}[p.mode]
    work = onnx_work_dtype(ctx.dtype)
    x = onnx_input_as(ctx, 0, work)
    # no axes (1-d data, mode='instance'): every element is its own norm; an empty axes list
    # would make ReduceSumSquare reduce everything
    sq = onnx_reduce(ctx, "ReduceSumSquare", x, axes) if len(axes) else ctx.make("Mul", [x, x])
    norm = ctx.make("Sqrt", [ctx.make("Add", [sq, ctx.const(work.type(p.eps), "eps")])])
    y = ctx.make("Div", [x, norm], outputs=named(_out_name(ctx, 0, work)))
    _finish(ctx, 0, y, work)
    if ctx.wants(1):  # (N,), (N, 1, spatial...) or (N, C): drop the kept reduced axes
        shape = {"instance": [-1], "channel": None, "spatial": [0, 0]}[p.mode]
        if shape is not None and len(axes):
            norm = ctx.make("Reshape", [norm, ctx.ints(shape, "norm_shape")],
                            outputs=named(_out_name(ctx, 1, work)))
        elif work == ctx.dtype:
            norm = ctx.make("Identity", [norm], outputs=[ctx.outputs[1]])
        _finish(ctx, 1, norm, work)


lowering("L2Normalization")(_l2_onnx)


def channel_window_sum(ctx: LoweringContext, t: str, channels: int, nsize: int) -> str:
    """ONNX: the sum over a centred window of ``nsize`` channels (axis 1 of 4-d ``t``), zero
    beyond the edges: ``nsize`` slices of the zero-padded tensor added (static channels)."""
    half = nsize // 2
    padded = ctx.make("Pad", [t, ctx.ints([0, half, 0, 0, 0, half, 0, 0], "pads")])
    taps = [ctx.make("Slice", [padded, ctx.ints([k], "s"), ctx.ints([k + channels], "e"),
                               ctx.ints([1], "a")]) for k in range(nsize)]
    return ctx.make("Sum", taps) if len(taps) > 1 else taps[0]


def _lrn_onnx(ctx: LoweringContext) -> None:
    """``LRN`` with bias=knorm, size=nsize: both MXNet and ONNX scale alpha by 1/size. When
    the hidden ``tmp_norm`` is read (a backward graph reads it), both outputs are composed:
    ``tmp = knorm + alpha/n * window(x**2)``, ``y = x * tmp**-beta``."""
    p = ctx.params
    _lrn_check(p, tuple(ctx.shape))
    if not ctx.wants(1):
        attrs = {"alpha": float(np.float32(p.alpha)), "beta": float(np.float32(p.beta)),
                 "bias": float(np.float32(p.knorm)), "size": int(p.nsize)}
        onnx_compute(ctx, lambda x, out: ctx.make("LRN", [x], outputs=named(out), **attrs),
                     ("LRN",))
        return
    channels = int(ctx.shape[1])
    if not channels or ctx.is_dynamic(0, 1):
        raise ctx.fail("its hidden tmp_norm output exports with a static channel count")
    work = onnx_work_dtype(ctx.dtype)
    x = onnx_input_as(ctx, 0, work)
    window = channel_window_sum(ctx, ctx.make("Mul", [x, x]), channels, p.nsize)
    scale = ctx.const(work.type(np.float32(np.float32(p.alpha) / p.nsize)), "scale")
    tmp = ctx.make("Add", [ctx.make("Mul", [window, scale]), ctx.const(work.type(p.knorm),
                                                                       "knorm")],
                   outputs=named(_out_name(ctx, 1, work)))
    power = ctx.make("Pow", [tmp, ctx.const(work.type(-np.float32(p.beta)), "neg_beta")])
    y = ctx.make("Mul", [x, power], outputs=named(_out_name(ctx, 0, work)))
    _finish(ctx, 0, y, work)
    _finish(ctx, 1, tmp, work)


lowering("LRN")(_lrn_onnx)

"""``_backward_BatchNorm_train_forward``: BatchNorm's training-mode normalisation (batch
moments) as one node; ``_backward_BatchNorm_train``, its backward kernel.

Not MXNet operators, which is why both carry the ``_backward_`` prefix (as
``_backward_RNN_lstm_forward`` in :mod:`.rnn_train`): they exist only in the training graphs
gluonport builds for a hybridized step on onnxruntime (BatchNorm's ``train_graph``,
:mod:`.train_graphs`) and are never written to MXNet files. Written out with elementary ops,
the training forward's gradient would come from each op's own rule: about fifteen full-size
passes per layer in the backward graph (the variance's and the mean's paths back to the data
each broadcast, multiply and add). One node with its own rule instead gives MXNet's backward
kernel's form, about eight passes:
``dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))``,
``dgamma = sum(dy * xhat)``, ``dbeta = sum(dy)`` over every axis but the channel axis, with
``xhat = (x - mean) * invstd``.

* ``_backward_BatchNorm_train_forward``: inputs ``data, gamma, beta``; attributes ``eps``,
  ``fix_gamma`` (gamma is 1), ``axis`` (the channel axis); outputs ``output`` (``(x - mean) *
  invstd * gamma + beta``), ``mean`` and ``var`` (the batch mean and *biased* variance, shape
  ``(C,)``). The moving statistics are not its business: the training form updates them from
  ``mean``/``var`` (MXNet's momentum rule), and the runner writes them when the backward pass
  runs.
* ``_backward_BatchNorm_train``: inputs ``out_grad, data, gamma, mean, var`` (the forward's
  saved moments), the same attributes; outputs the gradients of ``data, gamma, beta`` (gamma's
  is 0 under ``fix_gamma``). The head gradients of the forward's ``mean``/``var`` are ignored,
  as MXNet's BatchNorm rule ignores them. No gradient of its own.

float16 data is computed in float32 by the numpy kernels and in the data's dtype by the ONNX
lowerings (as the elementary-op form it replaces).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Float, Int
from ..infer import merge, norm_axis
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..registry import OpDef, register
from .dense import work_dtype

__all__: list[str] = []

_PARAMS = {"eps": Float(float(np.float32(1e-3))), "fix_gamma": Bool(True), "axis": Int(1)}


def _axes(p, ndim: int) -> tuple[int, tuple[int, ...]]:
    ax = norm_axis(p.axis, ndim, "channel axis")
    return ax, tuple(a for a in range(ndim) if a != ax)


def _view(v: np.ndarray, ndim: int, ax: int) -> np.ndarray:
    shape = [1] * ndim
    shape[ax] = -1
    return v.reshape(shape)


def _forward(p, x, gamma, beta):
    ax, axes = _axes(p, x.ndim)
    wd = work_dtype(x.dtype)
    xw = x.astype(wd, copy=False)
    mean = xw.mean(axis=axes)
    xc = xw - _view(mean, x.ndim, ax)
    var = np.square(xc).mean(axis=axes)
    scale = 1.0 / np.sqrt(var + wd.type(p.eps))
    if not p.fix_gamma:
        scale = scale * gamma.astype(wd)
    y = xc * _view(scale, x.ndim, ax) + _view(beta.astype(wd), x.ndim, ax)
    return y.astype(x.dtype, copy=False), mean.astype(x.dtype), var.astype(x.dtype)


def _backward(p, og, x, gamma, mean, var):
    ax, axes = _axes(p, x.ndim)
    wd = work_dtype(x.dtype)
    n = x.size // max(x.shape[ax], 1)
    invstd = 1.0 / np.sqrt(var.astype(wd) + wd.type(p.eps))
    iw = invstd if p.fix_gamma else invstd * gamma.astype(wd)
    dy = og.astype(wd, copy=False)
    xc = x.astype(wd, copy=False) - _view(mean.astype(wd), x.ndim, ax)
    sum_dy = dy.sum(axis=axes)
    dot = (dy * xc).sum(axis=axes)
    k = dot * invstd * invstd / n
    dx = (dy - _view(sum_dy / n, x.ndim, ax) - xc * _view(k, x.ndim, ax)) * _view(iw, x.ndim, ax)
    dgamma = np.zeros_like(dot) if p.fix_gamma else dot * invstd
    pd = gamma.dtype
    return dx.astype(x.dtype, copy=False), dgamma.astype(pd), sum_dy.astype(pd)


def _channels(p, data: tuple | None) -> tuple | None:
    return None if data is None else (data[norm_axis(p.axis, len(data), "channel axis")],)


def _fwd_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    c = _channels(p, ins[0])
    if c is None:
        return ins, [None, None, None]
    ins[1] = merge(ins[1], c, "gamma: ")
    ins[2] = merge(ins[2], c, "beta: ")
    return ins, [tuple(ins[0]), c, c]


def _bwd_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    c = _channels(p, ins[1])
    if c is None:
        return ins, [None, None, None]
    for i, name in ((2, "gamma: "), (3, "mean: "), (4, "var: ")):
        ins[i] = merge(ins[i], c, name)
    return ins, [tuple(ins[1]), c, c]


def _fwd_type(p, in_types: list) -> tuple[list, list]:
    d = in_types[0]
    return list(in_types), [d, d, d]


def _bwd_type(p, in_types: list) -> tuple[list, list]:
    return list(in_types), [in_types[1], in_types[2], in_types[2]]


def _rule(F, p, inputs, outputs, ograds):
    x, gamma, _ = inputs
    g = F._internal._backward_BatchNorm_train(ograds[0], x, gamma, outputs[1], outputs[2],
                                              eps=p.eps, fix_gamma=p.fix_gamma, axis=p.axis)
    return [g[0], g[1], g[2]]


register(OpDef(
    "_backward_BatchNorm_train_forward", params=_PARAMS, inputs=("data", "gamma", "beta"),
    num_outputs=3, output_names=("output", "mean", "var"),
    infer_shape=_fwd_shape, infer_type=_fwd_type, compute=_forward, gradient=_rule,
    doc="BatchNorm's training-mode normalisation with the batch mean and biased variance "
        "(also output); gluonport's, for training graphs on onnxruntime."))

register(OpDef(
    "_backward_BatchNorm_train", params=_PARAMS,
    inputs=("out_grad", "data", "gamma", "mean", "var"),
    num_outputs=3, output_names=("data_grad", "gamma_grad", "beta_grad"),
    infer_shape=_bwd_shape, infer_type=_bwd_type, compute=_backward,
    no_gradient="a backward kernel (gluonport's, as _backward_BatchNorm_train_forward)",
    doc="_backward_BatchNorm_train_forward's gradients of data, gamma and beta in MXNet's "
        "backward-kernel form."))


def _chan(ctx: LoweringContext, v: str, rank: int, ax: int) -> str:
    """A ``(C,)`` tensor viewed as ``(C, 1, ...)`` to broadcast along the channel axis."""
    trailing = rank - ax - 1
    return ctx.make("Reshape", [v, ctx.ints([-1] + [1] * trailing, "chan")]) if trailing else v


def _affine(ctx: LoweringContext, x: str, scale: str | None, shift: str, rank: int, ax: int,
            c: int, dt: np.dtype) -> str:
    """``x * scale + shift`` per channel (``scale`` None: 1): with the channel on axis 1, one
    BatchNormalization node with statistics 0 and 1 and epsilon 0 (one pass; onnxruntime's
    broadcasting Mul/Add/Sub along axis 1 are slower), else broadcasting ops."""
    if ax == 1:
        ones = ctx.const(np.ones(c, dt), "ones")
        zeros = ctx.const(np.zeros(c, dt), "zeros")
        return ctx.make("BatchNormalization", [x, ones if scale is None else scale, shift,
                                               zeros, ones], epsilon=0.0)
    y = x if scale is None else ctx.make("Mul", [x, _chan(ctx, scale, rank, ax)])
    return ctx.make("Add", [y, _chan(ctx, shift, rank, ax)])


def _as(ctx: LoweringContext, t: str, have, want) -> str:
    return t if np.dtype(have) == np.dtype(want) else ctx.cast_to(t, want)


@lowering("_backward_BatchNorm_train_forward")
def _onnx_forward(ctx: LoweringContext) -> None:
    """Batch moments (ReduceMean of the data, ReduceSumSquare of the centred data), then one
    BatchNormalization node with them as its statistics (one pass for the normalisation)."""
    p = ctx.params
    rank = len(ctx.in_shapes[0])
    dt = np.dtype(ctx.in_dtypes[0])
    ax, axes = _axes(p, rank)
    x = ctx.inputs[0]
    gamma, beta = (_as(ctx, t, d, dt) for t, d in zip(ctx.inputs[1:3], ctx.in_dtypes[1:3]))
    mean_k = onnx_reduce(ctx, "ReduceMean", x, axes, keepdims=True)
    flat = ctx.ints([-1], "flat")
    c = int(ctx.in_shapes[0][ax])
    xc = (_affine(ctx, x, None, ctx.make("Neg", [ctx.make("Reshape", [mean_k, flat])]), rank,
                  ax, c, dt) if ax == 1 else ctx.make("Sub", [x, mean_k]))
    shape = ctx.in_shapes[0]
    n = int(np.prod(shape, dtype=np.int64)) // max(int(shape[ax]), 1)
    var_k = ctx.make("Mul", [onnx_reduce(ctx, "ReduceSumSquare", xc, axes, keepdims=True),
                             ctx.const(dt.type(1.0 / max(n, 1)), "inv_n")])
    mean = ctx.make("Reshape", [mean_k, flat], outputs=[ctx.outputs[1]])
    var = ctx.make("Reshape", [var_k, flat], outputs=[ctx.outputs[2]])
    if p.fix_gamma:
        gamma = ctx.const(np.ones(int(ctx.in_shapes[0][ax]), dt), "ones")
    if ax == 1:
        ctx.make("BatchNormalization", [x, gamma, beta, mean, var], outputs=[ctx.outputs[0]],
                 epsilon=float(p.eps))
        return
    scale = ctx.make("Mul", [ctx.make("Reciprocal", [ctx.make("Sqrt", [ctx.make(
        "Add", [var, ctx.const(dt.type(p.eps), "eps")])])]), gamma])
    ctx.make("Add", [ctx.make("Mul", [xc, _chan(ctx, scale, rank, ax)]),
                     _chan(ctx, beta, rank, ax)], outputs=[ctx.outputs[0]])


@lowering("_backward_BatchNorm_train")
def _onnx_backward(ctx: LoweringContext) -> None:
    """MXNet's backward-kernel form: two per-channel sums (``dy``, ``dy * (x - mean)``), then
    ``dx = dy * iw - (x - mean) * (dot * invstd**2 / n * iw) - sum(dy) / n * iw``; the
    per-channel affine maps as BatchNormalization nodes (:func:`_affine`)."""
    p = ctx.params
    shape = ctx.in_shapes[1]
    rank = len(shape)
    dt = np.dtype(ctx.in_dtypes[1])
    ax, axes = _axes(p, rank)
    n = int(np.prod(shape, dtype=np.int64)) // max(int(shape[ax]), 1)
    og, x, gamma, mean, var = (_as(ctx, t, d, dt) for t, d in zip(ctx.inputs, ctx.in_dtypes))

    c = int(shape[ax])

    def affine(t: str, scale: str | None, shift: str) -> str:
        return _affine(ctx, t, scale, shift, rank, ax, c, dt)

    invstd = ctx.make("Reciprocal", [ctx.make("Sqrt", [ctx.make(
        "Add", [var, ctx.const(dt.type(p.eps), "eps")])])])
    iw = invstd if p.fix_gamma else ctx.make("Mul", [invstd, gamma])
    xc = affine(x, None, ctx.make("Neg", [mean]))
    sum_dy = onnx_reduce(ctx, "ReduceSum", og, axes, keepdims=False)
    dot = onnx_reduce(ctx, "ReduceSum", ctx.make("Mul", [og, xc]), axes, keepdims=False)
    inv_n = ctx.const(dt.type(1.0 / max(n, 1)), "inv_n")
    k = ctx.make("Mul", [ctx.make("Mul", [ctx.make("Mul", [dot, invstd]), invstd]), inv_n])
    c1 = ctx.make("Mul", [k, iw])
    c2 = ctx.make("Mul", [ctx.make("Mul", [sum_dy, inv_n]), iw])
    # dx = (dy * iw - c2) - xc * c1: two per-channel affine maps and one same-shape Sub
    zero = ctx.const(np.zeros(c, dt), "zeros")
    ctx.make("Sub", [affine(og, iw, ctx.make("Neg", [c2])), affine(xc, c1, zero)],
             outputs=[ctx.outputs[0]])
    pd = ctx.in_dtypes[2]
    if ctx.wants(1):
        dgamma = ctx.make("Mul", [dot, invstd if not p.fix_gamma else ctx.const(
            dt.type(0), "zero")])
        ctx.make("Identity", [_as(ctx, dgamma, dt, pd)], outputs=[ctx.outputs[1]])
    if ctx.wants(2):
        ctx.make("Identity", [_as(ctx, sum_dy, dt, pd)], outputs=[ctx.outputs[2]])

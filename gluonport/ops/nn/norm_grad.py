"""Backward kernels of the normalisation operators (MXNet 1.9.1's ``_backward_*`` ops).

The forward ops and their gradient rules live in :mod:`.norm`; each rule calls one kernel
registered here (one pass over the data instead of a chain of small ops):

* ``_backward_BatchNorm`` -- MXNet's inputs ``(out_grad, mean, var, data, gamma, beta,
  moving_mean, moving_var)`` with the forward op's attributes, outputs the gradients of
  ``data, gamma, beta``. In training mode without ``use_global_stats`` it uses the batch
  statistics saved by the forward pass (``mean``, and ``var`` = the inverse std) and, as MXNet
  1.9.1 does **in its backward pass**, updates the auxiliary ``moving_mean``/``moving_var``
  *in place* (MXNet's ``FMutateInputs`` {6, 7}): ``moving = moving * momentum + batch *
  (1 - momentum)`` with the biased batch variance recovered as ``1 / invstd**2 - eps``. At
  inference (or with ``use_global_stats``) the moving statistics are read and left alone.
  The gradient of ``gamma`` is 0 under ``fix_gamma``; the head gradients of the ``mean``/``var``
  outputs are ignored (MXNet's rule passes only the data output's).
* ``_backward__contrib_SyncBatchNorm``: the same, with the forward ``var`` output holding the
  batch *variance* (SyncBatchNorm's training output), channel axis 1.
* ``_backward_contrib_BatchNormWithReLU``: BatchNorm's inputs plus the forward's ReLU output
  (in place of MXNet's oneDNN workspace): the head gradient passes where the output is > 0.
* ``_backward_LayerNorm``, ``_backward_InstanceNorm``, ``_backward_GroupNorm``: inputs
  ``(out_grad, data, gamma, mean, std_or_var)`` (the forward's saved moments), outputs the
  gradients of ``data, gamma, beta``; the moments' own head gradients are ignored, as MXNet.
* ``_backward_L2Normalization``: ``(out_grad, output, norm)``; ``_backward_LRN``: ``(out_grad,
  data, tmp_norm)``.

None of these has a gradient of its own (MXNet registers none). ONNX: each kernel lowers to a
composition (ReduceSum/ReduceMean, the LRN window as a sum of channel slices); the BatchNorm
kernels in inference semantics, as every lowering (moving statistics read, never written; the
training-mode kernel is not exported). float16 is computed in float32, as the numpy kernels.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Int, Optional, Str
from ..infer import norm_axis
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..lowering.math import onnx_input_as, onnx_work_dtype
from ..registry import OpDef, register
from .conv_kernels import scratch
from .dense import work_dtype
from .norm import channel_dot, channel_layout, channel_sums, channel_window_sum, per_channel

__all__: list[str] = []

_NO_GRAD = "a backward kernel; MXNet 1.9.1 registers no gradient for it"


def _view(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _others(ndim: int, keep: int) -> tuple[int, ...]:
    return tuple(a for a in range(ndim) if a != keep)


# --- BatchNorm family ----------------------------------------------------------------------------
def _bn_backward(axis: int | None, plain_var: bool, train: bool):
    """The kernel for one op and mode: ``axis`` None reads ``p.axis``; ``plain_var``: the
    forward's ``var`` output is the variance (SyncBatchNorm), else the inverse std."""

    def kernel(p, og, mean, var, x, gamma, beta, mm, mv, *relu_out):
        ax = norm_axis(p.axis if axis is None else axis, x.ndim, "channel axis")
        wd = np.result_type(work_dtype(x.dtype), mm.dtype)
        og_w = og.astype(wd, copy=False)
        if relu_out:  # BatchNormWithReLU: the ReLU's gradient first
            og_w = np.where(relu_out[0] > 0, og_w, wd.type(0))
        batch = train and not p.use_global_stats
        if batch:
            m = mean.astype(wd)
            if plain_var:
                variance = var.astype(wd)
                invstd = 1.0 / np.sqrt(variance + wd.type(p.eps))
            else:
                invstd = var.astype(wd)
                variance = 1.0 / (invstd * invstd) - wd.type(p.eps)
            mom = wd.type(p.momentum)
            mm[...] = (mm.astype(wd) * mom + m * (1 - mom)).astype(mm.dtype)
            mv[...] = (mv.astype(wd) * mom + variance * (1 - mom)).astype(mv.dtype)
        else:
            m = mm.astype(wd)
            invstd = 1.0 / np.sqrt(mv.astype(wd) + wd.type(p.eps))
        w = np.ones_like(invstd) if p.fix_gamma else gamma.astype(wd)
        # (pre, C, post) views: per-channel reductions over axes 0 and 2, few passes
        c = x.shape[ax]
        shape3 = channel_layout(x, ax)
        og3 = og_w.reshape(shape3)
        sum_g = channel_sums(og3)
        iw = invstd * w
        need_dot = batch or not p.fix_gamma
        if need_dot:  # x - mean in a reusable scratch buffer (no fresh temporary)
            x3 = x.reshape(shape3).astype(wd, copy=False)
            xc = scratch("bn", x3.shape, wd)
            np.subtract(x3, per_channel(m, shape3), out=xc)
            dotp = channel_dot(xc, og3)
        else:
            dotp = np.zeros_like(sum_g)
        if batch:
            n = x.size // max(c, 1)
            k = dotp * invstd * invstd / n
            np.multiply(xc, per_channel(-k * iw, shape3), out=xc)
            dx = og3 * per_channel(iw, shape3)
            dx += xc
            dx -= per_channel(sum_g / n * iw, shape3)
        else:
            dx = og3 * per_channel(iw, shape3)
        dx = dx.reshape(x.shape)
        dgamma = np.zeros_like(dotp) if p.fix_gamma else dotp * invstd
        pd = mm.dtype
        return dx.astype(x.dtype, copy=False), dgamma.astype(pd), sum_g.astype(pd)

    return kernel


def _bn_grad_shape(axis: int | None):
    def rule(p, in_shapes: list) -> tuple[list, list]:
        data = in_shapes[3]
        if data is None:
            return list(in_shapes), [None, None, None]
        ax = norm_axis(p.axis if axis is None else axis, len(data), "channel axis")
        c = (data[ax],)
        return list(in_shapes), [tuple(data), c, c]

    return rule


def _bn_grad_type(p, in_types: list) -> tuple[list, list]:
    data, pd = in_types[3], in_types[6]
    return list(in_types), [data, pd, pd]


_BN_PARAMS = {"eps": Float(float(np.float32(1e-3))), "momentum": Float(0.9),
              "fix_gamma": Bool(True), "use_global_stats": Bool(False),
              "output_mean_var": Bool(False), "axis": Int(1), "cudnn_off": Bool(False),
              "min_calib_range": Optional(Float()), "max_calib_range": Optional(Float())}
_SYNC_PARAMS = {"eps": Float(float(np.float32(1e-3))), "momentum": Float(0.9),
                "fix_gamma": Bool(True), "use_global_stats": Bool(False),
                "output_mean_var": Bool(False), "ndev": Int(1), "key": Str()}
_BN_GRAD_INPUTS = ("out_grad", "mean", "var", "data", "gamma", "beta", "moving_mean",
                   "moving_var")

for _name, _params, _axis, _plain, _extra in (
        ("_backward_BatchNorm", _BN_PARAMS, None, False, ()),
        ("_backward__contrib_SyncBatchNorm", _SYNC_PARAMS, 1, True, ()),
        ("_backward_contrib_BatchNormWithReLU", _BN_PARAMS, None, False, ("output",))):
    register(OpDef(
        _name, params=_params, inputs=_BN_GRAD_INPUTS + _extra, aux=(6, 7), num_outputs=3,
        output_names=("data_grad", "gamma_grad", "beta_grad"),
        infer_shape=_bn_grad_shape(_axis), infer_type=_bn_grad_type,
        compute=_bn_backward(_axis, _plain, train=False),
        train_compute=_bn_backward(_axis, _plain, train=True),
        no_gradient=_NO_GRAD,
        doc="Gradients of data, gamma, beta of the forward op; in training mode (batch "
            "statistics) it also updates moving_mean/moving_var in place, as MXNet's backward "
            "pass does."))


def _bn_grad_onnx(axis: int | None, plain_var: bool):
    """Inference-mode gradients, as every ONNX lowering has inference semantics (the moving
    statistics normalise; they are read, never written): ``out_grad * gamma / sqrt(moving_var
    + eps)``, gamma's gradient from the centred data, beta's the summed head gradient. The
    training-mode kernel (batch statistics, moving-statistics update) is not exported."""

    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        rank = len(ctx.in_shapes[3])
        ax = norm_axis(p.axis if axis is None else axis, rank, "channel axis")
        axes = list(_others(rank, ax))
        wd = np.dtype(ctx.in_dtypes[6])
        og, _, _, x, gamma, _, mm, mv = (ctx.cast_to(t, wd) if np.dtype(d) != wd else t
                                         for t, d in zip(ctx.inputs[:8], ctx.in_dtypes[:8]))
        if len(ctx.inputs) > 8:  # BatchNormWithReLU: through the ReLU first
            relu_out = ctx.inputs[8]
            positive = ctx.make("Greater", [relu_out, ctx.const(
                np.zeros((), np.dtype(ctx.in_dtypes[8])), "zero")])
            og = ctx.make("Where", [positive, og, ctx.const(wd.type(0), "zero")])
        eps = ctx.const(wd.type(p.eps), "eps")
        invstd = ctx.make("Reciprocal", [ctx.make("Sqrt", [ctx.make("Add", [mv, eps])])])
        trailing = rank - ax - 1
        shape = ctx.ints([-1] + [1] * trailing, "chan_shape")

        def view(v: str) -> str:
            return ctx.make("Reshape", [v, shape]) if trailing else v

        scale = invstd if p.fix_gamma else ctx.make("Mul", [invstd, gamma])
        dx = ctx.make("Mul", [og, view(scale)])
        if np.dtype(ctx.in_dtypes[3]) != wd:
            dx = ctx.cast_to(dx, ctx.in_dtypes[3])
        ctx.make("Identity", [dx], outputs=[ctx.outputs[0]])
        if ctx.wants(1):
            if p.fix_gamma:
                ctx.make("Mul", [invstd, ctx.const(wd.type(0), "zero")],
                         outputs=[ctx.outputs[1]])
            else:
                xc = ctx.make("Sub", [x, view(mm)])
                dotp = onnx_reduce(ctx, "ReduceSum", ctx.make("Mul", [xc, og]), axes,
                                   keepdims=False)
                ctx.make("Mul", [dotp, invstd], outputs=[ctx.outputs[1]])
        if ctx.wants(2):
            onnx_reduce(ctx, "ReduceSum", og, axes, keepdims=False, outputs=[ctx.outputs[2]])

    return handler


lowering("_backward_BatchNorm")(_bn_grad_onnx(None, False))
lowering("_backward__contrib_SyncBatchNorm")(_bn_grad_onnx(1, True))
lowering("_backward_contrib_BatchNormWithReLU")(_bn_grad_onnx(None, False))


# --- LayerNorm / InstanceNorm / GroupNorm --------------------------------------------------------
def _standardized_backward(og: np.ndarray, xc: np.ndarray, inv: np.ndarray, dy: np.ndarray,
                           axes: tuple[int, ...]) -> np.ndarray:
    """d/dx of ``(x - mean) * inv`` over ``axes`` given ``dy`` (the head gradient times gamma):
    ``(dy - mean(dy) - xhat * mean(dy * xhat)) * inv``."""
    xhat = xc * inv
    return (dy - dy.mean(axis=axes, keepdims=True)
            - xhat * (dy * xhat).mean(axis=axes, keepdims=True)) * inv


def _ln_backward(p, og, x, gamma, mean, std):
    ax = norm_axis(p.axis, x.ndim)
    wd = work_dtype(x.dtype)
    ogw, xw = og.astype(wd, copy=False), x.astype(wd, copy=False)
    inv = 1.0 / std.astype(wd)
    xc = xw - mean.astype(wd)
    dy = ogw * _view(gamma.astype(wd), x.ndim, ax)
    dx = _standardized_backward(ogw, xc, inv, dy, (ax,))
    rest = _others(x.ndim, ax)
    return (dx.astype(x.dtype), (ogw * xc * inv).sum(axis=rest).astype(gamma.dtype),
            ogw.sum(axis=rest).astype(gamma.dtype))


def _in_backward(p, og, x, gamma, mean, var):
    n, c = x.shape[:2]
    wd = work_dtype(x.dtype)
    ogw = og.astype(wd, copy=False).reshape(n, c, -1)
    xc = x.astype(wd, copy=False).reshape(n, c, -1) - mean.astype(wd)[:, :, None]
    inv = (1.0 / np.sqrt(var.astype(wd) + wd.type(p.eps)))[:, :, None]
    dy = ogw * gamma.astype(wd)[None, :, None]
    dx = _standardized_backward(ogw, xc, inv, dy, (2,))
    return (dx.reshape(x.shape).astype(x.dtype),
            (ogw * xc * inv).sum(axis=(0, 2)).astype(gamma.dtype),
            ogw.sum(axis=(0, 2)).astype(gamma.dtype))


def _gn_backward(p, og, x, gamma, mean, std):
    n, g = x.shape[0], p.num_groups
    wd = work_dtype(x.dtype)
    ogw = og.astype(wd, copy=False).reshape(n, g, -1)
    xc = x.astype(wd, copy=False).reshape(n, g, -1) - mean.astype(wd).reshape(n, g, 1)
    inv = 1.0 / std.astype(wd).reshape(n, g, 1)
    dy = ogw * gamma.astype(wd)[None, :, None]
    dx = _standardized_backward(ogw, xc, inv, dy, (2,))
    return (dx.reshape(x.shape).astype(x.dtype),
            (ogw * xc * inv).sum(axis=(0, 2)).astype(gamma.dtype),
            ogw.sum(axis=(0, 2)).astype(gamma.dtype))


def _moments_grad_shape(p, in_shapes: list) -> tuple[list, list]:
    data, gamma = in_shapes[1], in_shapes[2]
    return list(in_shapes), [None if data is None else tuple(data), gamma, gamma]


def _moments_grad_type(p, in_types: list) -> tuple[list, list]:
    return list(in_types), [in_types[1], in_types[2], in_types[2]]


for _name, _params, _fn, _saved in (
        ("_backward_LayerNorm", {"axis": Int(-1), "eps": Float(float(np.float32(1e-5))),
                                 "output_mean_var": Bool(False)}, _ln_backward, "std"),
        ("_backward_InstanceNorm", {"eps": Float(float(np.float32(1e-3)))}, _in_backward,
         "var"),
        ("_backward_GroupNorm", {"num_groups": Int(1), "eps": Float(float(np.float32(1e-5))),
                                 "output_mean_var": Bool(False)}, _gn_backward, "std")):
    register(OpDef(
        _name, params=_params, inputs=("out_grad", "data", "gamma", "mean", _saved),
        num_outputs=3, output_names=("data_grad", "gamma_grad", "beta_grad"),
        infer_shape=_moments_grad_shape, infer_type=_moments_grad_type, compute=_fn,
        no_gradient=_NO_GRAD,
        doc="Gradients of data, gamma, beta from the forward's saved mean and std/var."))


# --- L2Normalization / LRN -----------------------------------------------------------------------
def _l2_axes(mode: str, ndim: int) -> tuple[int, ...]:
    return {"instance": tuple(range(1, ndim)), "channel": (1,),
            "spatial": tuple(range(2, ndim))}[mode]


def _l2_backward(p, og, out, norm):
    """``d(x / n)``: ``(og - y * sum(og * y)) / n`` over the normalised axes."""
    wd = work_dtype(og.dtype)
    axes = _l2_axes(p.mode, og.ndim)
    ogw, y = og.astype(wd, copy=False), out.astype(wd, copy=False)
    n = norm.astype(wd).reshape([1 if a in axes else d for a, d in enumerate(og.shape)])
    dot = (ogw * y).sum(axis=axes, keepdims=True)
    return ((ogw - y * dot) / n).astype(og.dtype)


register(OpDef(
    "_backward_L2Normalization",
    params={"eps": Float(float(np.float32(1e-10))),
            "mode": Enum(("instance", "spatial", "channel"), "instance")},
    inputs=("out_grad", "output", "norm"), no_gradient=_NO_GRAD,
    infer_shape=lambda p, s: (list(s), [s[0]]), compute=_l2_backward,
    doc="Gradient of L2Normalization from its output and saved norm."))


def _window_sum(a: np.ndarray, nsize: int) -> np.ndarray:
    """Sum over a centred window of ``nsize`` channels (axis 1), zero beyond the edges."""
    out = np.zeros_like(a)
    c, half = a.shape[1], nsize // 2
    for k in range(-half, half + 1):
        lo, hi = max(0, -k), min(c, c - k)
        if lo < hi:
            out[:, lo:hi] += a[:, lo + k:hi + k]
    return out


def _lrn_backward(p, og, x, tmp):
    """``y = x * t**-beta`` with ``t = knorm + alpha/n * window(x**2)``; the window is
    symmetric, so its adjoint is itself."""
    wd = work_dtype(x.dtype)
    ogw, xw, t = (a.astype(wd, copy=False) for a in (og, x, tmp))
    beta = wd.type(p.beta)
    scale = wd.type(np.float32(p.alpha) / p.nsize)
    back = _window_sum(ogw * xw * np.power(t, -beta - 1), p.nsize)
    dx = ogw * np.power(t, -beta) - 2 * beta * scale * xw * back
    return dx.astype(x.dtype)


register(OpDef(
    "_backward_LRN",
    params={"alpha": Float(float(np.float32(1e-4))), "beta": Float(0.75), "knorm": Float(2.0),
            "nsize": Int()},
    inputs=("out_grad", "data", "tmp_norm"), no_gradient=_NO_GRAD,
    infer_shape=lambda p, s: (list(s), [s[1]]), compute=_lrn_backward,
    doc="Gradient of LRN from its input and saved tmp_norm."))


# --- ONNX: moments, L2Normalization, LRN ---------------------------------------------------------
def _unsqueeze(ctx: LoweringContext, t: str, axes: list[int]) -> str:
    return ctx.make("Unsqueeze", [t, ctx.ints(axes, "axes")])


def _onnx_standardized(ctx: LoweringContext, og: str, xc: str, inv: str, dy: str,
                       axes: list[int]) -> str:
    """ONNX form of :func:`_standardized_backward`."""
    xhat = ctx.make("Mul", [xc, inv])
    m1 = onnx_reduce(ctx, "ReduceMean", dy, axes)
    m2 = onnx_reduce(ctx, "ReduceMean", ctx.make("Mul", [dy, xhat]), axes)
    inner = ctx.make("Sub", [ctx.make("Sub", [dy, m1]), ctx.make("Mul", [xhat, m2])])
    return ctx.make("Mul", [inner, inv])


def _onnx_moments_grad(ctx: LoweringContext) -> None:
    """``_backward_LayerNorm`` / ``InstanceNorm`` / ``GroupNorm``: the data in a layout where
    the moments reduce one axis (LayerNorm: its axis; the others: (N, C or G, -1), axis 2)."""
    p = ctx.params
    work = onnx_work_dtype(ctx.in_dtypes[1])
    og, x, gamma, mean, saved = (onnx_input_as(ctx, i, work) for i in range(5))
    rank = len(ctx.in_shapes[1])
    if "axis" in p.as_dict():  # LayerNorm: moments keep a size-1 axis
        ax = norm_axis(p.axis, rank)
        inv = ctx.make("Reciprocal", [saved])
        view = [-1] + [1] * (rank - ax - 1)
        g = ctx.make("Reshape", [gamma, ctx.ints(view, "chan")]) if len(view) > 1 else gamma
        xc = ctx.make("Sub", [x, mean])
        dx = _onnx_standardized(ctx, og, xc, inv, ctx.make("Mul", [og, g]), [ax])
        rest = [a for a in range(rank) if a != ax]
        grads_of = (og, ctx.make("Mul", [xc, inv]))
    else:
        groups = p.get("num_groups")
        split = ctx.ints([0, groups or 0, -1] if groups else [0, 0, -1], "grouped")
        og3, x3 = (ctx.make("Reshape", [t, split]) for t in (og, x))
        m3 = _unsqueeze(ctx, mean, [2])
        if groups:  # GroupNorm saves std
            inv = ctx.make("Reciprocal", [_unsqueeze(ctx, saved, [2])])
        else:  # InstanceNorm saves the variance
            eps = ctx.const(work.type(p.eps), "eps")
            inv = ctx.make("Reciprocal", [ctx.make("Sqrt", [ctx.make("Add", [
                _unsqueeze(ctx, saved, [2]), eps])])])
        g = _unsqueeze(ctx, gamma, [1])
        xc = ctx.make("Sub", [x3, m3])
        dx3 = _onnx_standardized(ctx, og3, xc, inv, ctx.make("Mul", [og3, g]), [2])
        dx = ctx.make("Reshape", [dx3, ctx.make("Shape", [ctx.inputs[1]])])
        rest = [0, 2]
        grads_of = (og3, ctx.make("Mul", [xc, inv]))
        og = og3
    outs = [dx, onnx_reduce(ctx, "ReduceSum", ctx.make("Mul", [grads_of[0], grads_of[1]]), rest,
                            keepdims=False),
            onnx_reduce(ctx, "ReduceSum", og, rest, keepdims=False)]
    dts = [ctx.in_dtypes[1], ctx.in_dtypes[2], ctx.in_dtypes[2]]
    for k, (t, dt) in enumerate(zip(outs, dts)):
        if ctx.wants(k):
            if np.dtype(dt) != work:
                t = ctx.cast_to(t, dt)
            ctx.make("Identity", [t], outputs=[ctx.outputs[k]])


for _name in ("_backward_LayerNorm", "_backward_InstanceNorm", "_backward_GroupNorm"):
    lowering(_name)(_onnx_moments_grad)


def _onnx_l2_grad(ctx: LoweringContext) -> None:
    """``(og - y * sum(og * y)) / norm`` with the saved norm unsqueezed to broadcast."""
    p = ctx.params
    rank = len(ctx.in_shapes[0])
    axes = list(_l2_axes(p.mode, rank))
    work = onnx_work_dtype(ctx.in_dtypes[0])
    og, y, norm = (onnx_input_as(ctx, i, work) for i in range(3))
    if p.mode == "instance" and rank > 1:
        norm = _unsqueeze(ctx, norm, axes)
    elif p.mode == "spatial":
        norm = _unsqueeze(ctx, norm, axes)
    dot = (onnx_reduce(ctx, "ReduceSum", ctx.make("Mul", [og, y]), axes) if axes
           else ctx.make("Mul", [og, y]))
    dx = ctx.make("Div", [ctx.make("Sub", [og, ctx.make("Mul", [y, dot])]), norm])
    if np.dtype(ctx.in_dtypes[0]) != work:
        dx = ctx.cast_to(dx, ctx.in_dtypes[0])
    ctx.make("Identity", [dx], outputs=[ctx.outputs[0]])


lowering("_backward_L2Normalization")(_onnx_l2_grad)


def _onnx_lrn_grad(ctx: LoweringContext) -> None:
    """``og * t**-beta - 2 beta alpha/n * x * window(og * x * t**(-beta-1))``, the window a sum
    of ``nsize`` channel slices of the zero-padded product (static channel count)."""
    p = ctx.params
    work = onnx_work_dtype(ctx.in_dtypes[1])
    og, x, t = (onnx_input_as(ctx, i, work) for i in range(3))
    c = int(ctx.in_shapes[1][1])
    if not c:
        raise ctx.fail("the LRN gradient exports with a static channel count")
    beta = work.type(p.beta)
    prod = ctx.make("Mul", [ctx.make("Mul", [og, x]),
                            ctx.make("Pow", [t, ctx.const(-beta - 1, "pow")])])
    window = channel_window_sum(ctx, prod, c, p.nsize)
    scale = ctx.const(work.type(2 * beta * work.type(np.float32(p.alpha) / p.nsize)), "scale")
    dx = ctx.make("Sub", [ctx.make("Mul", [og, ctx.make("Pow", [t, ctx.const(-beta, "negb")])]),
                          ctx.make("Mul", [ctx.make("Mul", [x, window]), scale])])
    if np.dtype(ctx.in_dtypes[1]) != work:
        dx = ctx.cast_to(dx, ctx.in_dtypes[1])
    ctx.make("Identity", [dx], outputs=[ctx.outputs[0]])


lowering("_backward_LRN")(_onnx_lrn_grad)

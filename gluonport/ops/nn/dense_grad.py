"""Backward kernels of the dense-layer ops in :mod:`.dense` (MXNet 1.9.1's ``_backward_*`` ops):
``_backward_FullyConnected``, ``_backward_Activation``, ``_backward_LeakyReLU`` and
``_backward_softmax`` / ``_backward_log_softmax`` / ``_backward_softmin``.

Each is one numpy kernel, so a training step calls one op per layer instead of a chain of small
ones. Their inputs differ from MXNet's (whose backward nodes read shapes and dtypes from the
forward node): they take the forward inputs and outputs they need, listed in each op's doc.
float16 is computed in float32 and rounded once, as the forward ops are; every gradient has its
input's dtype. MXNet registers no gradient for these ops, and neither does gluonport.

ONNX export (so a backward graph exports): the same formulas as ONNX nodes (``MatMul`` and
``ReduceSum`` for FullyConnected, ``Where``/``Mul``/``Exp``/``Erf`` for the activations), in
float32 for float16 data and for float64 through ``Erf`` (no double kernel in onnxruntime).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, DType, Enum, Float, Int, Optional
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..lowering.math import Builder, onnx_input_as, onnx_work_dtype
from ..registry import OpDef, register
from .dense import erfc, gamma_view_shape, work_dtype

__all__: list[str] = []

_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"


def _wd(*arrays: np.ndarray) -> list[np.ndarray]:
    return [a.astype(work_dtype(a.dtype), copy=False) for a in arrays]


def _like_shapes(p, in_shapes: list, n: int) -> tuple[list, list]:
    """Outputs: the shapes of inputs 1..n (the forward inputs whose gradients these are)."""
    return list(in_shapes), [None if s is None else tuple(s) for s in in_shapes[1:1 + n]]


def _like_types(p, in_types: list, n: int) -> tuple[list, list]:
    return list(in_types), list(in_types[1:1 + n])


# --- FullyConnected ------------------------------------------------------------------------------
def _fc_backward(p, og, x, w, b=None):
    """data grad ``og @ W``, weight grad ``og^T @ x``, bias grad ``sum(og)`` (two GEMMs and one
    reduction, over the flattened batch)."""
    g, xw, ww = _wd(og, x, w)
    g2 = g.reshape(-1, w.shape[0])
    xs = xw.reshape(g2.shape[0], -1)
    dx = np.matmul(g2, ww).reshape(x.shape).astype(x.dtype, copy=False)
    dw = np.matmul(g2.T, xs).astype(w.dtype, copy=False)
    if b is None:
        return dx, dw
    return dx, dw, g2.sum(axis=0).reshape(b.shape).astype(b.dtype, copy=False)


register(OpDef(
    "_backward_FullyConnected",
    params={"num_hidden": Int(), "no_bias": Bool(False), "flatten": Bool(True)},
    inputs=lambda p: ("ograd", "data", "weight") + (() if p.no_bias else ("bias",)),
    num_outputs=lambda p: 2 if p.no_bias else 3,
    infer_shape=lambda p, s: _like_shapes(p, s, 2 if p.no_bias else 3),
    infer_type=lambda p, t: _like_types(p, t, 2 if p.no_bias else 3),
    compute=_fc_backward, no_gradient=_NO_GRAD,
    doc="FullyConnected's gradients. Inputs: the output gradient, data, weight (and bias, read "
        "for its shape); outputs: the gradients of data, weight (and bias)."))


# --- Activation ----------------------------------------------------------------------------------
def _activation_backward(p, og, x, y):
    """MXNet's ``ActivationBackward``: relu, sigmoid, tanh and softrelu read the output
    (relu's gradient at 0 is 0; softrelu's is ``-expm1(-y)``), softsign the input. relu is the
    output gradient times ``y > 0`` as in MXNet (a NaN or infinite output gradient where
    ``y <= 0`` gives NaN, a negative one -0), which is also 10x faster than a select."""
    g, xw, yw = _wd(og, x, y)
    act = p.act_type
    if act == "relu":
        d = np.greater(yw, 0, out=np.empty(yw.shape, g.dtype))
        with np.errstate(invalid="ignore"):
            d *= g
    elif act == "sigmoid":
        d = g * yw * (1 - yw)
    elif act == "tanh":
        d = g * (1 - yw * yw)
    elif act == "softrelu":
        d = g * -np.expm1(-yw)
    else:
        d = g / np.square(1 + np.abs(xw))
    return d.astype(x.dtype, copy=False)


register(OpDef(
    "_backward_Activation",
    params={"act_type": Enum(("relu", "sigmoid", "tanh", "softrelu", "softsign"))},
    inputs=("ograd", "data", "output"),
    infer_shape=lambda p, s: _like_shapes(p, s, 1), infer_type=lambda p, t: _like_types(p, t, 1),
    compute=_activation_backward, no_gradient=_NO_GRAD,
    doc="Activation's data gradient. Inputs: the output gradient, data, the forward output."))


# --- LeakyReLU -----------------------------------------------------------------------------------
_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_SELU_ALPHA = float(np.float32(1.6732632423543772848170429916717))
_SELU_LAMBDA = float(np.float32(1.0507009873554804934193349852946))


def _reduce_to(a: np.ndarray, view: list[int], shape: tuple) -> np.ndarray:
    axes = tuple(i for i, (v, d) in enumerate(zip(view, a.shape)) if v == 1 and d != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape)


def _leaky_backward(p, og, x, y, extra=None):
    """MXNet's ``LeakyReLUOp::Backward``: leaky and rrelu ``y > 0 ? 1 : slope`` (rrelu's slope
    is its mask output: the mean slope at inference), elu ``y > 0 ? 1 : y + slope``, selu
    ``lambda * (y > 0 ? 1 : y + alpha)``, gelu ``Phi(x) + x phi(x)``, prelu ``x > 0 ? 1 :
    gamma`` and gamma's gradient ``sum(og * min(x, 0))`` over the axes gamma broadcasts on."""
    g, xw, yw = _wd(og, x, y)
    act = p.act_type
    wd = g.dtype.type
    if act == "leaky":
        d = np.where(yw > 0, g, g * wd(np.float32(p.slope)))
    elif act == "rrelu":
        slope = (np.float32(p.lower_bound) + np.float32(p.upper_bound)) / np.float32(2)
        d = np.where(yw > 0, g, g * wd(slope))
    elif act == "elu":
        d = np.where(yw > 0, g, g * (yw + wd(np.float32(p.slope))))
    elif act == "selu":
        d = g * (_SELU_LAMBDA * np.where(yw > 0, 1, yw + _SELU_ALPHA))
    elif act == "gelu":
        d = g * (0.5 * erfc(xw * -_SQRT_HALF) + xw * _INV_SQRT_2PI * np.exp(-0.5 * xw * xw))
    else:
        view = gamma_view_shape(extra.shape, x.shape)
        gw = extra.astype(g.dtype, copy=False).reshape(view)
        d = np.where(xw > 0, g, g * gw)
        dg = _reduce_to(g * np.minimum(xw, 0), view, extra.shape)
        return d.astype(x.dtype, copy=False), dg.astype(extra.dtype, copy=False)
    return d.astype(x.dtype, copy=False)


def _leaky_n(p) -> int:
    return 2 if p.act_type == "prelu" else 1


register(OpDef(
    "_backward_LeakyReLU",
    params={"act_type": Enum(("rrelu", "leaky", "prelu", "elu", "selu", "gelu"), "leaky"),
            "slope": Float(0.25), "lower_bound": Float(0.125), "upper_bound": Float(0.334)},
    inputs=lambda p: ("ograd", "data", "output") + (("gamma",) if p.act_type == "prelu" else ()),
    num_outputs=_leaky_n,
    infer_shape=lambda p, s: (list(s), [s[1]] + ([s[3]] if p.act_type == "prelu" else [])),
    infer_type=lambda p, t: (list(t), [t[1]] + ([t[3]] if p.act_type == "prelu" else [])),
    compute=_leaky_backward, no_gradient=_NO_GRAD,
    doc="LeakyReLU's gradients. Inputs: the output gradient, data, the forward output (and "
        "gamma for prelu); outputs: data's gradient (and gamma's)."))


# --- softmax family ------------------------------------------------------------------------------
_SOFTMAX_PARAMS = {
    "axis": Int(-1),
    "temperature": Optional(Float()),
    "dtype": Optional(DType(choices=("float16", "float32", "float64"))),
    "use_length": Optional(Bool(), False),
}


def _softmax_backward(kind: str):
    def compute(p, og, x, y, length=None):
        """softmax ``y (og - sum(og y)) / t``; log_softmax ``(og - exp(y) sum(og)) / t``;
        softmin the negated softmax form. Positions masked by ``length`` have ``y = 0`` and get
        0. The gradient has the data's dtype (``dtype`` only sets the forward output's)."""
        g, yw = _wd(og, y)
        ax = p.axis if p.axis >= 0 else p.axis + y.ndim
        if kind == "log_softmax":
            d = g - np.exp(yw) * g.sum(axis=ax, keepdims=True)
        else:
            d = yw * (g - (g * yw).sum(axis=ax, keepdims=True))
            if kind == "softmin":
                d = -d
        if p.temperature is not None and p.temperature != 1.0:
            d = d / d.dtype.type(x.dtype.type(p.temperature))
        return d.astype(x.dtype, copy=False)

    compute.__name__ = f"_backward_{kind}"
    return compute


for _kind in ("softmax", "log_softmax", "softmin"):
    register(OpDef(
        f"_backward_{_kind}", params=_SOFTMAX_PARAMS,
        inputs=lambda p: ("ograd", "data", "output") + (("length",) if p.use_length else ()),
        infer_shape=lambda p, s: _like_shapes(p, s, 1),
        infer_type=lambda p, t: _like_types(p, t, 1),
        compute=_softmax_backward(_kind), no_gradient=_NO_GRAD,
        doc=f"{_kind}'s data gradient. Inputs: the output gradient, data (read for its dtype), "
            "the forward output (and length, whose masked positions get 0)."))


# --- ONNX export ---------------------------------------------------------------------------------
_Build = Callable[[LoweringContext, Builder, list, object], list]


def _lower(build: _Build, op_types: tuple[str, ...] = ()) -> Callable[[LoweringContext], None]:
    """A handler running ``build(ctx, g, inputs, work)`` on the float inputs in the work dtype
    (that of the output gradient, input 0) and casting its results to the outputs' dtypes."""

    def handler(ctx: LoweringContext) -> None:
        g = Builder(ctx)
        work = onnx_work_dtype(ctx.in_dtypes[0], op_types)
        ins = [onnx_input_as(ctx, i, work) if ctx.in_dtypes[i].kind == "f" else ctx.inputs[i]
               for i in range(len(ctx.inputs))]
        for k, y in enumerate(build(ctx, g, ins, work)):
            g.out(y, work, k)

    return handler


def _fc_onnx(ctx, g, ins, work):
    og, x, w = ins[:3]
    hidden, units = ctx.in_shapes[2]
    g2 = g("Reshape", og, ctx.ints([-1, hidden], "og2"))
    dx = g("Reshape", g("MatMul", g2, w), g("Shape", x))
    xs = g("Reshape", x, ctx.ints([-1, units], "x2"))
    outs = [dx, g("MatMul", g("Transpose", g2, perm=[1, 0]), xs)]
    if len(ins) > 3:
        db = onnx_reduce(ctx, "ReduceSum", g2, [0], keepdims=False)
        outs.append(g("Reshape", db, ctx.ints(list(ctx.in_shapes[3]), "bshape")))
    return outs


lowering("_backward_FullyConnected")(_lower(_fc_onnx))


def _positive(g: Builder, y: str, work) -> str:
    return g("Greater", y, g.k(0, work))


def _activation_onnx(ctx, g, ins, work):
    og, x, y = ins
    one = g.k(1, work)
    act = ctx.params.act_type
    if act == "relu":  # og * (y > 0), as MXNet 1.9.1 and the numpy kernel compute it (Where
        # is a branch per value in onnxruntime: 6x slower on real signs)
        return [g("Mul", og, g.ctx.cast_to(_positive(g, y, work), work))]
    if act == "sigmoid":
        d = g("Mul", y, g("Sub", one, y))
    elif act == "tanh":
        d = g("Sub", one, g("Mul", y, y))
    elif act == "softrelu":
        d = g("Sub", one, g("Exp", g("Neg", y)))
    else:
        d = g("Reciprocal", g("Mul", *(2 * [g("Add", one, g("Abs", x))])))
    return [g("Mul", og, d)]


lowering("_backward_Activation")(_lower(_activation_onnx))


def _leaky_onnx(ctx, g, ins, work):
    p = ctx.params
    og, x, y = ins[:3]
    act = p.act_type
    pos = _positive(g, y if act != "prelu" else x, work)
    if act in ("leaky", "rrelu"):
        slope = (np.float32(p.slope) if act == "leaky"
                 else (np.float32(p.lower_bound) + np.float32(p.upper_bound)) / np.float32(2))
        return [g.where(pos, og, g("Mul", og, g.k(slope, work)))]
    if act == "elu":
        return [g.where(pos, og, g("Mul", og, g("Add", y, g.k(np.float32(p.slope), work))))]
    if act == "selu":
        neg = g("Add", y, g.k(_SELU_ALPHA, work))
        return [g("Mul", og, g("Mul", g.where(pos, g.k(1, work), neg), g.k(_SELU_LAMBDA, work)))]
    if act == "gelu":
        cdf = g("Mul", g("Add", g.k(1, work), g("Erf", g("Mul", x, g.k(_SQRT_HALF, work)))),
                g.k(0.5, work))
        pdf = g("Mul", g("Exp", g("Mul", g("Mul", x, x), g.k(-0.5, work))),
                g.k(_INV_SQRT_2PI, work))
        return [g("Mul", og, g("Add", cdf, g("Mul", x, pdf)))]
    data, gshape = tuple(ctx.in_shapes[1]), tuple(ctx.in_shapes[3])
    view = gamma_view_shape(gshape, data)
    gamma = g("Reshape", ins[3], ctx.ints(view, "gamma_view"))
    dx = g.where(pos, og, g("Mul", og, gamma))
    prod = g("Mul", og, g("Min", x, g.k(0, work)))
    axes = [i for i, (v, d) in enumerate(zip(view, data)) if v == 1 and d != 1]
    dg = onnx_reduce(ctx, "ReduceSum", prod, axes) if axes else prod
    return [dx, g("Reshape", dg, ctx.ints(list(gshape), "gamma_shape"))]


lowering("_backward_LeakyReLU")(_lower(_leaky_onnx, ("Erf",)))


def _softmax_onnx(kind: str) -> _Build:
    def build(ctx, g, ins, work):
        p = ctx.params
        og, y = ins[0], ins[2]
        ax = p.axis if p.axis >= 0 else p.axis + len(ctx.in_shapes[2])
        if kind == "log_softmax":
            d = g("Sub", og, g("Mul", g("Exp", y), onnx_reduce(ctx, "ReduceSum", og, [ax])))
        else:
            total = onnx_reduce(ctx, "ReduceSum", g("Mul", og, y), [ax])
            d = g("Mul", y, g("Sub", og, total))
            if kind == "softmin":
                d = g("Neg", d)
        if p.temperature is not None and p.temperature != 1.0:
            t = ctx.in_dtypes[1].type(p.temperature)
            d = g("Div", d, g.k(t, work))
        return [d]

    return build


for _kind in ("softmax", "log_softmax", "softmin"):
    lowering(f"_backward_{_kind}")(_lower(_softmax_onnx(_kind)))

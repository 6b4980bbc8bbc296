"""Gradients of the unary ops (:mod:`gluonport.ops.math.unary`): MXNet 1.9.1's ``FGradient`` of
each, and the backward kernels that need their own op.

Most rules compose MXNet's derivative (``mshadow_op.h``: ``sin_grad = cos(x)``, ``tanh_grad =
1 - y^2`` of the output, ...) from registered ops, so they run as they are on the tape (``nd``)
and in a backward graph (``sym``, ONNX). Rounding ops, ``sign``, ``logical_not``, ``zeros_like``
and ``ones_like`` give zero (``MakeZeroGradNodes``). MXNet's edge semantics kept: ``abs`` at 0
is 0 (``sign``), ``relu`` passes the gradient where ``y > 0`` and gives NaN where ``y`` is NaN,
``clip`` passes it where ``a_min <= x <= a_max`` (and at NaN), ``hard_sigmoid`` where
``0 < alpha x + beta < 1``.

Backward kernels (MXNet's names; ours take the forward input instead of reading its dtype or
value from the forward node):

* ``_backward_gamma(ograd, data)``: ``ograd * gamma(x) * psi(x)``; ``_backward_gammaln``:
  ``ograd * psi(x)`` (digamma has no op of its own);
* ``_backward_cast(ograd, data)`` / ``_backward_amp_cast``: the gradient cast back to the
  input's dtype; ``_backward_amp_multicast(ograd_0.., data_0..)`` likewise for each input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core.attr_fields import Bool, Int, Params
from ..lowering import LoweringContext, lowering
from ..lowering import math as M
from ..registry import GradFn, OpDef, register, zero_gradient
from . import special

__all__ = ["UNARY_GRADS", "unary_rule", "hard_sigmoid_grad", "clip_grad", "cast_grad",
           "amp_cast_grad", "amp_multicast_grad", "add_n_grad", "like_rhs_grad"]

_NOT_DIFFERENTIATED = ("a backward kernel: MXNet 1.9.1 registers no gradient for it, so "
                       "gradients of gradients through it are not available")

Body = Callable[..., object]
"""A rule body: ``(F, x, y, og) -> gradient of x`` (input, output, output gradient)."""


def _mul(F, og, d):
    return F.elemwise_mul(og, d)


def _k(F, x, c: float):
    return F._internal._mul_scalar(x, scalar=c)


def _one_minus(F, x):
    return F._internal._rminus_scalar(x, scalar=1.0)


_LN10, _LN2 = math.log(10.0), math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)

_BODIES: dict[str, Body] = {
    "abs": lambda F, x, y, og: _mul(F, og, F.sign(x)),
    "sqrt": lambda F, x, y, og: F.elemwise_div(_k(F, og, 0.5), y),             # 0.5 / y
    "rsqrt": lambda F, x, y, og: F.elemwise_div(_k(F, _mul(F, og, y), -0.5), x),  # -0.5/(sqrt x x)
    "cbrt": lambda F, x, y, og: F.elemwise_div(og, _k(F, F.square(y), 3.0)),  # 1 / (3 y^2)
    "rcbrt": lambda F, x, y, og: F.elemwise_div(_mul(F, og, y), _k(F, x, -3.0)),
    "exp": lambda F, x, y, og: _mul(F, og, y),
    "log": lambda F, x, y, og: F.elemwise_div(og, x),
    "log10": lambda F, x, y, og: F.elemwise_div(og, _k(F, x, _LN10)),
    "log2": lambda F, x, y, og: F.elemwise_div(og, _k(F, x, _LN2)),
    "log1p": lambda F, x, y, og: F.elemwise_div(og, F._internal._plus_scalar(x, scalar=1.0)),
    "expm1": lambda F, x, y, og: _mul(F, og, F.exp(x)),
    "sin": lambda F, x, y, og: _mul(F, og, F.cos(x)),
    "cos": lambda F, x, y, og: _mul(F, og, F.negative(F.sin(x))),
    "tan": lambda F, x, y, og: _mul(F, og, F._internal._plus_scalar(F.square(y), scalar=1.0)),
    "arcsin": lambda F, x, y, og: _mul(F, og, F.rsqrt(_one_minus(F, F.square(x)))),
    "arccos": lambda F, x, y, og: _mul(F, og, F.negative(F.rsqrt(_one_minus(F, F.square(x))))),
    "arctan": lambda F, x, y, og: F.elemwise_div(
        og, F._internal._plus_scalar(F.square(x), scalar=1.0)),
    "sinh": lambda F, x, y, og: _mul(F, og, F.cosh(x)),
    "cosh": lambda F, x, y, og: _mul(F, og, F.sinh(x)),
    "tanh": lambda F, x, y, og: _mul(F, og, _one_minus(F, F.square(y))),
    "arcsinh": lambda F, x, y, og: F.elemwise_div(og, F._internal._hypot_scalar(x, scalar=1.0)),
    "arccosh": lambda F, x, y, og: _mul(
        F, og, F.rsqrt(F._internal._minus_scalar(F.square(x), scalar=1.0))),
    "arctanh": lambda F, x, y, og: F.elemwise_div(og, _one_minus(F, F.square(x))),
    "degrees": lambda F, x, y, og: _k(F, og, 180.0 / math.pi),
    "radians": lambda F, x, y, og: _k(F, og, math.pi / 180.0),
    "gamma": lambda F, x, y, og: F._internal._backward_gamma(og, x),
    "gammaln": lambda F, x, y, og: F._internal._backward_gammaln(og, x),
    "erf": lambda F, x, y, og: _mul(F, og, _k(F, F.exp(F.negative(F.square(x))),
                                               _TWO_OVER_SQRT_PI)),
    "erfinv": lambda F, x, y, og: _mul(F, og, _k(F, F.exp(F.square(y)), _HALF_SQRT_PI)),
    "reciprocal": lambda F, x, y, og: F.negative(F.elemwise_div(og, F.square(x))),
    "sigmoid": lambda F, x, y, og: _mul(F, og, F.elemwise_mul(y, _one_minus(F, y))),
    "softsign": lambda F, x, y, og: F.elemwise_div(
        og, F.square(F._internal._plus_scalar(F.abs(x), scalar=1.0))),
    "negative": lambda F, x, y, og: F.negative(og),
    "square": lambda F, x, y, og: _mul(F, og, _k(F, x, 2.0)),
    "relu": lambda F, x, y, og: _mul(F, og, F.where(F._internal._not_equal(y, y), y,
                                                     F._internal._greater_scalar(y, scalar=0.0))),
    "_copy": lambda F, x, y, og: og,
}

_ZERO = ("round", "rint", "ceil", "floor", "trunc", "fix", "sign", "logical_not", "zeros_like",
         "ones_like")


def unary_rule(body: Body) -> GradFn:
    """A one-input op's FGradient from ``body(F, x, y, og)``."""

    def rule(F, p, inputs, outputs, ograds):
        return [body(F, inputs[0], outputs[0], ograds[0])]

    return rule


UNARY_GRADS: dict[str, Callable] = {name: unary_rule(b) for name, b in _BODIES.items()}
UNARY_GRADS.update({name: zero_gradient for name in _ZERO})


def hard_sigmoid_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """``ograd * alpha`` where ``0 < y < 1`` (MXNet tests ``alpha x + beta``, which is ``y``
    there), else 0."""
    y = outputs[0]
    inside = F.elemwise_mul(F._internal._greater_scalar(y, scalar=0.0),
                            F._internal._lesser_scalar(y, scalar=1.0))
    return [F.elemwise_mul(F._internal._mul_scalar(ograds[0], scalar=float(np.float32(p.alpha))),
                           inside)]


def clip_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """MXNet's ``clip_grad``: 0 where ``x > a_max`` or ``x < a_min``, else ``ograd`` (NaN
    passes)."""
    x = inputs[0]
    out = F.elemwise_add(F._internal._greater_scalar(x, scalar=p.a_max),
                         F._internal._lesser_scalar(x, scalar=p.a_min))
    return [F.elemwise_mul(ograds[0], F.logical_not(out))]


def cast_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """``Cast``: the gradient cast back to the input's dtype (``_backward_cast``)."""
    return [F._internal._backward_cast(ograds[0], inputs[0])]


def amp_cast_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """``amp_cast``: the gradient cast back to the input's dtype (``_backward_amp_cast``)."""
    return [F._internal._backward_amp_cast(ograds[0], inputs[0])]


def amp_multicast_grad(F: Any, p: Params, inputs: list, outputs: list,
                       ograds: list) -> list:
    """``amp_multicast``: each gradient cast back to its input's dtype."""
    grads = F._internal._backward_amp_multicast(*ograds, *inputs, num_outputs=p.num_outputs)
    return [grads[i] for i in range(p.num_outputs)] if p.num_outputs > 1 else [grads]


def add_n_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """``add_n``: the output gradient for every input (MXNet's CloneGradient)."""
    return [ograds[0] for _ in inputs]  # CloneGradient


def like_rhs_grad(F: Any, p: Params, inputs: list, outputs: list, ograds: list) -> list:
    """``_identity_with_attr_like_rhs``: the gradient to lhs, none to rhs."""
    return [ograds[0], None]  # _backward_copy for lhs, zeros_like for rhs


# --- kernels ----------------------------------------------------------------------------------
def _gamma_d(x: np.ndarray) -> np.ndarray:
    return special.gamma(x) * special.digamma(x)


def _psi_kernel(deriv: Callable[[np.ndarray], np.ndarray]) -> Callable:
    """``ograd * deriv(x)``: the derivative in float64, rounded to the dtype (MXNet evaluates it
    in float, then multiplies in the dtype)."""

    def compute(p, og: np.ndarray, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            d = deriv(x.astype(np.float64)).astype(x.dtype)
            return (og * d).astype(og.dtype, copy=False)

    return compute


def _psi_onnx(deriv64: Callable) -> Callable:
    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        dt = np.dtype(ctx.in_dtypes[1])
        d = g.cast(deriv64(g, g.input(1, M.F64)), M.F64, dt)
        g.out(g("Mul", g.input(0, dt), d), dt)

    return handler


def _same_as_data(p, in_shapes):
    return [in_shapes[1], in_shapes[1]], [in_shapes[1]]


def _type_of_data(p, in_types):
    return in_types, [in_types[-1]]


for _name, _d, _d64 in (
        ("_backward_gamma", _gamma_d,
         lambda g, x: g("Mul", special.gamma64(g, x), special.digamma64(g, x))),
        ("_backward_gammaln", special.digamma, special.digamma64)):
    lowering(register(OpDef(
        _name, inputs=("ograd", "data"), compute=_psi_kernel(_d), infer_shape=_same_as_data,
        infer_type=_type_of_data, no_gradient=_NOT_DIFFERENTIATED,
        doc=f"``{_name[10:]}``'s gradient: inputs (ograd, data); ``ograd`` times "
            + ("gamma(x) psi(x)" if _name.endswith("gamma") else "psi(x)") + ".")))(
        _psi_onnx(_d64))


def _cast_back(p, og: np.ndarray, x: np.ndarray) -> np.ndarray:
    return og.astype(x.dtype)  # gradients reach float inputs only


def _cast_back_onnx(ctx: LoweringContext) -> None:
    g = M.Builder(ctx)
    g.out(ctx.inputs[0], ctx.in_dtypes[0])  # out() casts to the data's dtype


for _name in ("_backward_cast", "_backward_amp_cast"):
    lowering(register(OpDef(
        _name, inputs=("ograd", "data"), compute=_cast_back, infer_shape=_same_as_data,
        infer_type=lambda p, t: (t, [t[1]]), no_gradient=_NOT_DIFFERENTIATED,
        doc=f"``{_name[10:]}``'s gradient: ``ograd`` cast to the dtype of ``data``.")))(
        _cast_back_onnx)


def _multicast_back(p, *arrays: np.ndarray) -> list[np.ndarray]:
    n = p.num_outputs
    return [arrays[i].astype(arrays[n + i].dtype) for i in range(n)]


def _multicast_back_onnx(ctx: LoweringContext) -> None:
    g = M.Builder(ctx)
    n = ctx.params.num_outputs
    for k in range(n):
        if k == 0 or ctx.wants(k):
            g.out(ctx.inputs[k], ctx.in_dtypes[k], k)


lowering(register(OpDef(
    "_backward_amp_multicast", params={"num_outputs": Int(), "cast_narrow": Bool(False)},
    inputs=lambda p: [f"ograd_{i}" for i in range(p.num_outputs)]
    + [f"data_{i}" for i in range(p.num_outputs)],
    num_outputs=lambda p: p.num_outputs, compute=_multicast_back,
    infer_shape=lambda p, s: (list(s), list(s[p.num_outputs:])),
    infer_type=lambda p, t: (t, list(t[p.num_outputs:])), no_gradient=_NOT_DIFFERENTIATED,
    doc="``amp_multicast``'s gradient: inputs (ograd_0.., data_0..), each ``ograd_i`` cast to "
        "the dtype of ``data_i``.")))(_multicast_back_onnx)

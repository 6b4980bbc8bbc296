"""Small contrib math ops: ``_contrib_quadratic`` (``quadratic_op-inl.h``),
``_contrib_gradientmultiplier`` (``gradient_multiplier_op.cc``; identity in inference) and
``khatri_rao`` (column-wise Kronecker product; float data only, as MXNet's BLAS kernel), with
their ONNX lowerings.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Float, Int
from ...errors import DTypeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, const_as, deliver, lowering, simple
from ..lowering.dims import onnx_dims, onnx_shape
from ..registry import OpDef, register

__all__: list[str] = []


def _quadratic(p, x):
    """``x * (a * x + b) + c`` computed at float precision (double for float64), then cast back
    to the input dtype (integers truncate) as MXNet's kernel does with its float attributes."""
    calc = np.float64 if x.dtype == np.float64 else np.float32
    a, b, c = (calc(v) for v in (p.a, p.b, p.c))
    xf = x.astype(calc)
    return (xf * (a * xf + b) + c).astype(x.dtype)


def _quadratic_grad(F, p, inputs, outputs, ograds):
    """MXNet's ``_backward_contrib_quadratic``: ``ograd * (2 a x + b)``."""
    slope = F._internal._plus_scalar(F._internal._mul_scalar(inputs[0], scalar=2.0 * p.a),
                                     scalar=p.b)
    return [F.elemwise_mul(ograds[0], slope)]


def _multiplier_grad(F, p, inputs, outputs, ograds):
    """MXNet's ``_backward_contrib_gradientmultiplier``: ``ograd * scalar``."""
    return [F._internal._mul_scalar(ograds[0], scalar=p.scalar)]


register(OpDef("_contrib_quadratic", params={"a": Float(0.0), "b": Float(0.0), "c": Float(0.0)},
               compute=_quadratic, doc="Elementwise ``a * x**2 + b * x + c``.",
               gradient=_quadratic_grad))

register(OpDef("_contrib_gradientmultiplier",
               params={"scalar": Float(1.0), "is_int": Bool(True)},
               compute=lambda p, x: x.copy(),
               doc="Identity in the forward pass (scales gradients in MXNet's backward).",
               lists_input_names=False, gradient=_multiplier_grad))


# --- khatri_rao ------------------------------------------------------------------------------
def _khatri_rao(p, *mats: np.ndarray) -> np.ndarray:
    """Column-wise Kronecker product: row ``(i, j, ...)`` (the first matrix outermost) is the
    elementwise product of row i of the first matrix, row j of the second, ..."""
    _kr_shape(p, [m.shape for m in mats])
    if any(m.dtype.kind != "f" for m in mats):
        raise DTypeError(f"khatri_rao: dtype {mats[0].dtype} is not supported (MXNet's "
                               "CPU kernel runs on float32/float64 only); cast the inputs")
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return out.astype(mats[0].dtype, copy=False)


def _kr_shape(p, in_shapes):
    for s in in_shapes:
        if s is not None and len(s) != 2:
            raise ShapeError(f"khatri_rao: every input must be a matrix, got {fmt(s)}")
    cols = None
    for i, s in enumerate(in_shapes):
        cols = merge(cols, None if s is None else (s[1],),
                     f"khatri_rao: input {i} {fmt(s)} needs the others' column count: ")
    if any(s is None for s in in_shapes):
        return in_shapes, [None]
    rows = int(np.prod([s[0] for s in in_shapes], dtype=np.int64))
    return in_shapes, [(rows, cols[0])]


register(OpDef(
    "khatri_rao", params={"num_args": Int()}, variadic="num_args", compute=_khatri_rao,
    infer_shape=_kr_shape, no_gradient="MXNet 1.9.1 registers no FGradient for khatri_rao",
    doc="Column-wise Kronecker (Khatri-Rao) product of matrices with equal column counts."))


def _calc(dtype) -> np.dtype:
    """MXNet's compute precision for the float-attribute elementwise ops: double for float64,
    float otherwise."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _quadratic_onnx(ctx: LoweringContext) -> None:
    """``x * (a * x + b) + c`` at float (double for float64) precision, cast back."""
    p, dt = ctx.params, np.dtype(ctx.dtype)
    calc = _calc(dt)
    x = ctx.inputs[0] if dt == calc else ctx.cast_to(ctx.inputs[0], calc)
    ax = ctx.make("Mul", [const_as(ctx, p.a, calc, "a"), x])
    y = ctx.make("Add", [ctx.make("Mul", [x, ctx.make("Add", [ax, const_as(ctx, p.b, calc, "b")])]),
                         const_as(ctx, p.c, calc, "c")])
    deliver(ctx, y if dt == calc else ctx.cast_to(y, dt))


def _khatri_rao_onnx(ctx: LoweringContext) -> None:
    """Outer products of matching rows by broadcasting ``(r, 1, k) * (1, s, k)``, flattened
    to ``(r * s, k)`` one input at a time."""
    y = ctx.inputs[0]
    shape = onnx_shape(ctx, [[-1], onnx_dims(ctx, 0, 1, 2)])
    for x in ctx.inputs[1:]:
        y = ctx.make("Mul", [ctx.make("Unsqueeze", [y, ctx.ints([1], "axes")]),
                             ctx.make("Unsqueeze", [x, ctx.ints([0], "axes")])])
        y = ctx.make("Reshape", [y, shape])
    deliver(ctx, y)


lowering("_contrib_quadratic")(_quadratic_onnx)
lowering("_contrib_gradientmultiplier")(simple("Identity"))
lowering("khatri_rao")(_khatri_rao_onnx)

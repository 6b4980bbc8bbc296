"""Backward kernels of the binary elementwise ops: MXNet 1.9.1's ``_backward_broadcast_<op>``
(``broadcast_add`` ... ``broadcast_hypot``) and ``_backward_<op>`` (``_mod``, ``_power``,
``_maximum``, ``_minimum``, ``_hypot``).

Each takes ``(ograd, lhs, rhs)`` -- MXNet's take ``ograd`` and, for most, the inputs, reading the
input shapes from the forward node; ours read them from ``lhs``/``rhs`` -- and returns the two
input gradients: the elementwise partial derivatives MXNet's ``mshadow_op`` gradient functors
give (``mshadow_op.h``), times ``ograd``, each summed back to its input's shape over the axes it
was broadcast along. The formulas (``a`` = lhs, ``b`` = rhs, ``g`` = ograd):

==========  ================================  ===========================
op          lhs gradient                      rhs gradient
==========  ================================  ===========================
add         g                                 g
sub         g                                 -g
mul         g b                               g a
div         g / b                             g (-a / b^2)
mod         g (``mod_grad`` is 1)             g (-floor(a / b))
power       g (b a^(b-1))                     g (a^b log a)
maximum     g (a >= b)                        g (a < b)
minimum     g (a <= b)                        g (a > b)
hypot       g (a / hypot(a, b))               g (b / hypot(a, b))
==========  ================================  ===========================

Ties go to the lhs in maximum/minimum, as in MXNet. The derivatives are computed in float32
(float64 for float64 data; float16 data in float32, as ``half_t`` math does) and returned in
the inputs' dtypes. One formula table serves the numpy compute and the ONNX lowering (ONNX
broadcasts like numpy; the reduction back to an input's shape is one ``ReduceSum``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..lowering import LoweringContext, lowering, onnx_reduce
from ..lowering import math as M
from ..registry import OpDef, register

__all__ = ["sum_to_shape", "BROADCAST_STEMS", "SAME_SHAPE_STEMS"]

_NOT_DIFFERENTIATED = ("a backward kernel: MXNet 1.9.1 registers no gradient for it, so "
                       "gradients of gradients through it are not available")


def sum_to_shape(g: np.ndarray, shape: tuple) -> np.ndarray:
    """``g`` (the broadcast shape) summed over the axes ``shape`` was broadcast along."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return np.sum(g, axis=axes, keepdims=True).reshape(shape)


class _Np:
    """The derivative formulas' operations on numpy arrays of one float dtype."""

    def __init__(self, work: np.dtype) -> None:
        self.work = work

    def mul(self, x, y):
        return x * y

    def div(self, x, y):
        return x / y

    def neg(self, x):
        return -x

    def floor(self, x):
        return np.floor(x)

    def log(self, x):
        return np.log(x)

    def pow(self, x, y):
        return np.power(x, y)

    def minus1(self, x):
        return x - self.work.type(1)

    def hypot(self, x, y):
        return np.hypot(x, y)

    def mask(self, op: str, x, y):
        fn = {"ge": np.greater_equal, "gt": np.greater, "le": np.less_equal,
              "lt": np.less}[op]
        return fn(x, y).astype(self.work)


class _Onnx:
    """The same operations as ONNX nodes (tensors of the float dtype ``work``)."""

    def __init__(self, g: M.Builder, work: np.dtype) -> None:
        self.g, self.work = g, work

    def mul(self, x, y):
        return self.g("Mul", x, y)

    def div(self, x, y):
        return self.g("Div", x, y)

    def neg(self, x):
        return self.g("Neg", x)

    def floor(self, x):
        return self.g("Floor", x)

    def log(self, x):
        return self.g("Log", x)

    def pow(self, x, y):
        return self.g("Pow", x, y)

    def minus1(self, x):
        return self.g("Sub", x, self.g.k(1, self.work))

    def hypot(self, x, y):
        return M.hypot(self.g, x, y, self.work)

    def mask(self, op: str, x, y):
        op_type = {"ge": "GreaterOrEqual", "gt": "Greater", "le": "LessOrEqual",
                   "lt": "Less"}[op]
        return self.g.cast(self.g(op_type, x, y), M.BOOL, self.work)


Formula = Callable[[Any, Any, Any, Any], tuple[Any, Any]]

_FORMULAS: dict[str, Formula] = {
    "add": lambda A, g, a, b: (g, g),
    "sub": lambda A, g, a, b: (g, A.neg(g)),
    "mul": lambda A, g, a, b: (A.mul(g, b), A.mul(g, a)),
    "div": lambda A, g, a, b: (A.div(g, b), A.mul(g, A.div(A.neg(a), A.mul(b, b)))),
    "mod": lambda A, g, a, b: (g, A.mul(g, A.neg(A.floor(A.div(a, b))))),
    "power": lambda A, g, a, b: (A.mul(g, A.mul(A.pow(a, A.minus1(b)), b)),
                                 A.mul(g, A.mul(A.pow(a, b), A.log(a)))),
    "maximum": lambda A, g, a, b: (A.mul(g, A.mask("ge", a, b)), A.mul(g, A.mask("lt", a, b))),
    "minimum": lambda A, g, a, b: (A.mul(g, A.mask("le", a, b)), A.mul(g, A.mask("gt", a, b))),
    "hypot": lambda A, g, a, b: (A.mul(g, A.div(a, A.hypot(a, b))),
                                 A.mul(g, A.div(b, A.hypot(a, b)))),
}

BROADCAST_STEMS = tuple(_FORMULAS)
"""The broadcast ops with a gradient kernel (``broadcast_<stem>``)."""
SAME_SHAPE_STEMS = ("mod", "power", "maximum", "minimum", "hypot")
"""The same-shape ops with one (``_<stem>``; elemwise_add ... elemwise_div compose theirs)."""


def _work(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _compute(formula: Formula) -> Callable:
    def compute(p, og: np.ndarray, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        work = _work(og.dtype)
        with np.errstate(all="ignore"):
            ga, gb = formula(_Np(work), og.astype(work, copy=False),
                             a.astype(work, copy=False), b.astype(work, copy=False))
            ga = ga if ga.shape == og.shape else np.broadcast_to(ga, og.shape)
            gb = gb if gb.shape == og.shape else np.broadcast_to(gb, og.shape)
            return [_fresh(sum_to_shape(ga, a.shape), a.dtype, og),
                    _fresh(sum_to_shape(gb, b.shape), b.dtype, og)]

    return compute


def _fresh(g: np.ndarray, dtype: np.dtype, og: np.ndarray) -> np.ndarray:
    """``g`` in ``dtype``, copied only where it still is (a view of) the ograd or a read-only
    broadcast view."""
    if g.dtype != dtype or not g.flags.writeable or np.shares_memory(g, og):
        return np.array(g, dtype=dtype)
    return g


def _shape(p, in_shapes):
    og, lhs, rhs = in_shapes
    return [og, lhs, rhs], [lhs, rhs]


def _type(p, in_types):
    return in_types, [in_types[1], in_types[2]]


def _onnx_sum_to(ctx: LoweringContext, y: str, k: int) -> str:
    """``y`` (the ograd's shape) summed back to input ``k``'s shape: over the leading axes it
    lacks and the axes where it has a (static) 1."""
    rank = len(ctx.in_shapes[0])
    shape, dyn = ctx.in_shapes[k], ctx.in_dynamic[k]
    lead = rank - len(shape)
    og_shape, og_dyn = ctx.in_shapes[0], ctx.in_dynamic[0]
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape) if d == 1 and not dyn[i]
                                and (og_shape[lead + i] != 1 or og_dyn[lead + i])]
    if not axes:
        return y
    r = onnx_reduce(ctx, "ReduceSum", y, axes, True)
    if lead:
        r = ctx.make("Squeeze", [r, ctx.ints(list(range(lead)), "lead")])
    return r


def _lowering(formula: Formula) -> Callable:
    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        work = _work(ctx.in_dtypes[0])
        og, a, b = (g.input(i, work) for i in range(3))
        grads = formula(_Onnx(g, work), og, a, b)
        for k, y in enumerate(grads):
            if not ctx.wants(k):
                continue
            g.out(_onnx_sum_to(ctx, y, k + 1), work, k)  # every formula has og's shape

    return handler


def _register(name: str, formula: Formula, doc: str) -> None:
    lowering(register(OpDef(name, inputs=("ograd", "lhs", "rhs"), num_outputs=2,
                        output_names=("lhs_grad", "rhs_grad"), compute=_compute(formula),
                        infer_shape=_shape, infer_type=_type, no_gradient=_NOT_DIFFERENTIATED,
                        doc=doc)))(_lowering(formula))


for _stem, _formula in _FORMULAS.items():
    _register(f"_backward_broadcast_{_stem}", _formula,
              f"Gradients of ``broadcast_{_stem}``: inputs (ograd, lhs, rhs), outputs the lhs "
              "and rhs gradients summed back to their shapes.")
for _stem in SAME_SHAPE_STEMS:
    _register(f"_backward_{_stem}", _FORMULAS[_stem],
              f"Gradients of ``_{_stem}``: inputs (ograd, lhs, rhs) of one shape.")

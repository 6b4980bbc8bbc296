"""Binary elementwise operators: same-shape (``elemwise_*``), broadcasting (``broadcast_*``) and
array-scalar (``_*_scalar``). Unary math lives in :mod:`gluonport.ops.math.unary`.

A family is a table: each row is one MXNet operator, reduced to a kernel ``fn(a, b)`` that gets
two operands of one dtype and returns that dtype. MXNet 1.9.1's legacy semantics, checked against
the real library (``tests/golden/ops/elemwise.npz``):

* comparisons and logic ops return the *input* dtype (1 / 0), not bool;
* integer ``div`` truncates toward zero (C division); ``mod`` takes the divisor's sign and gives
  0 for a zero divisor, for floats too (MXNet's ``mshadow_op::mod``, evaluated in double);
* ``power`` and ``hypot`` compute in float32 (``powf``/``hypotf``) for every dtype but float64,
  so ``int32 3 ** 19`` is ``1162261504``, as in MXNet;
* ``_*_scalar`` ops cast the scalar to the array's dtype (``int32 + 2.5`` adds 2), unless
  ``is_int=False`` meets an integer array: then the op runs in float64 and returns float64
  (``NumpyBinaryScalarType``); a bool array becomes int64 (``is_int``) or float64;
* ``elemwise_*`` ops need equal shapes, ``broadcast_*`` ops broadcast like numpy.

ONNX export: every kernel maps to one lowering of :mod:`gluonport.ops.lowering.math` (``_ONNX``),
shared by the three op kinds (ONNX broadcasts like numpy; a scalar is a constant of the working
dtype). Integer division and modulo never pass onnxruntime a divisor of 0 or -1 (it fails, or
dies on ``INT_MIN / -1``); int8/uint8 are computed in int32 and wrapped back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, Float
from ...errors import ShapeError
from ..infer import broadcast_shapes, same_shape
from ..lowering import LoweringContext, lowering
from ..lowering import math as M
from ..registry import InPlace, OpDef, register, zero_gradient
from .binary_grad import BROADCAST_STEMS, SAME_SHAPE_STEMS
from .unary import c_cast

__all__ = ["binary", "broadcast", "scalar", "int_div", "mxnet_mod"]

Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _restore(dtype: np.dtype, out: np.ndarray | np.generic) -> np.ndarray:
    """Back to the operands' dtype the way C's conversion does it (floats round, ints truncate)."""
    out = np.asarray(out)
    if out.dtype == dtype:
        return out
    if dtype.kind in "iub" and out.dtype.kind == "f":
        return c_cast(out, dtype)
    with np.errstate(over="ignore"):  # float32 -> float16 overflow gives inf, as in C
        return out.astype(dtype)


def int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C integer division (truncates toward zero), exact for int64; 0 where ``b == 0`` (MXNet
    itself dies with SIGFPE there)."""
    safe = np.where(b == 0, 1, b).astype(np.result_type(a, b), copy=False)
    with np.errstate(over="ignore"):  # INT_MIN // -1 wraps to INT_MIN, as in C on x86
        q = np.floor_divide(a, safe)
    fix = (np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))
    return np.where(b == 0, 0, q + fix)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return int_div(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def mxnet_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MXNet's ``mod``: ``fmod`` in double, moved onto the divisor's side; 0 when ``b == 0``."""
    dtype = np.result_type(a, b)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.fmod(a64, b64)
    if dtype.kind != "u":
        r = np.where((r != 0) & ((r < 0) != (b64 < 0)), r + b64, r)
    return _restore(dtype, np.where(b64 == 0, 0.0, r))


def _float_math(fn: Kernel) -> Kernel:
    """``math::pow``-style binary functions: float32 (``powf``) unless the dtype is float64."""

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        dtype = np.result_type(a, b)
        work = np.float64 if dtype == np.float64 else np.float32
        with np.errstate(all="ignore"):
            out = fn(np.asarray(a, work), np.asarray(b, work))
        return _restore(dtype, out)

    return kernel


def _cmp(fn: Kernel) -> Kernel:
    """Comparison / logic: 1 or 0 in the operands' dtype."""
    return lambda a, b: fn(a, b).astype(np.result_type(a, b))


def _native(fn: Kernel) -> Kernel:
    """Arithmetic done in the dtype itself (integers wrap, as in C)."""

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return _restore(np.result_type(a, b), fn(a, b))

    return kernel


def _broadcast_rule(p, in_shapes):
    out = broadcast_shapes(in_shapes[0], in_shapes[1])
    return in_shapes, [out]


def binary_onnx(lower: M.Binary) -> Callable:
    """Export handler of a binary op (both kinds: ONNX broadcasts like numpy, and a same-shape
    op's operands need nothing more)."""

    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        dt = np.dtype(ctx.in_dtypes[0])
        g.out(lower(g, ctx.inputs[0], ctx.inputs[1], dt), dt)

    return handler


def binary(name: str, fn: Kernel, aliases: tuple[str, ...] = (), doc: str = "",
           **facts: object) -> OpDef:
    """A same-shape binary op (``elemwise_add``): inputs ``lhs``, ``rhs``; ``facts`` are more
    :class:`OpDef` fields (``inplace``)."""

    def compute(p, a, b):
        if a.shape != b.shape:  # numpy would broadcast; MXNet's elemwise ops refuse
            raise ShapeError(f"{name}: lhs shape {a.shape} and rhs shape {b.shape} differ; "
                             f"use broadcast_{name.split('_', 1)[-1].lstrip('_')} to broadcast")
        return fn(a, b)

    return register(OpDef(
        name, compute=compute, inputs=("lhs", "rhs"),
        infer_shape=lambda p, s: same_shape(s, 1), aliases=aliases, doc=doc, **facts))


def broadcast(name: str, fn: Kernel, aliases: tuple[str, ...] = (), doc: str = "",
              **facts: object) -> OpDef:
    """A broadcasting binary op (``broadcast_add``): inputs ``lhs``, ``rhs``; ``facts`` are
    more :class:`OpDef` fields (``gradient``)."""

    def compute(p, a, b):
        broadcast_shapes(a.shape, b.shape)  # ShapeError naming both shapes, not numpy's error
        return fn(a, b)

    return register(OpDef(
        name, compute=compute, inputs=("lhs", "rhs"),
        infer_shape=_broadcast_rule, aliases=aliases, doc=doc, **facts))


SCALAR_PARAMS = {"scalar": Float(1.0), "is_int": Bool(True)}
"""MXNet 1.9.1's ``NumpyBinaryScalarParam``, shared by every ``_*_scalar`` op and smooth_l1."""


def scalar_work_dtype(p, dtype: np.dtype) -> np.dtype:
    """The dtype a scalar op computes and returns in (MXNet's ``NumpyBinaryScalarType``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.dtype(np.int64 if p.is_int else np.float64)
    if dtype.kind in "iu" and not p.is_int:
        return np.dtype(np.float64)
    return dtype


def _scalar_type(p, in_types):
    t = in_types[0]
    return [t], [None if t is None else scalar_work_dtype(p, t)]


def scalar_operands(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The array in its working dtype and the scalar cast to it (``DType(scalar)``: 2.5 -> 2)."""
    work = scalar_work_dtype(p, x.dtype)
    s = np.asarray(p.scalar, np.float64)
    return x.astype(work, copy=False), (c_cast(s, work) if work.kind in "iu" else s.astype(work))


def scalar_onnx(lower: M.Binary, reverse: bool = False) -> Callable:
    """Export handler of ``x <op> scalar`` (``scalar <op> x`` when ``reverse``): the array in
    the working dtype, the scalar a constant converted as MXNet converts it."""

    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        work, s = _scalar_const(ctx.params, ctx.dtype)
        x, k = g.input(0, work), g.k(s, work)
        a, b = (k, x) if reverse else (x, k)
        g.out(lower(g, a, b, work), work)

    return handler


def _scalar_const(p, dtype) -> tuple[np.dtype, np.ndarray]:
    """(working dtype, the scalar in it), exactly as :func:`scalar_operands` makes them."""
    work = scalar_work_dtype(p, dtype)
    return work, scalar_operands(p, np.zeros((), work))[1]


def scalar(name: str, fn: Kernel, aliases: tuple[str, ...] = (), doc: str = "",
           **facts: object) -> OpDef:
    """An array-scalar op (``_plus_scalar``): ``fn(x, scalar)``; attributes ``scalar, is_int``;
    ``facts`` are more :class:`OpDef` fields (``gradient``)."""

    def compute(p, x):
        return fn(*scalar_operands(p, x))

    return register(OpDef(name, params=SCALAR_PARAMS, compute=compute, infer_type=_scalar_type,
                          aliases=aliases, doc=doc, lists_input_names=False, **facts))


def _swap(fn: Kernel) -> Kernel:
    return lambda a, b: fn(b, a)


_ADD, _SUB, _MUL = _native(np.add), _native(np.subtract), _native(np.multiply)
_POWER, _HYPOT = _float_math(np.power), _float_math(np.hypot)
_MAX, _MIN = _native(np.maximum), _native(np.minimum)
_EQ, _NE = _cmp(np.equal), _cmp(np.not_equal)
_GT, _GE, _LT, _LE = _cmp(np.greater), _cmp(np.greater_equal), _cmp(np.less), _cmp(np.less_equal)
_AND, _OR, _XOR = _cmp(np.logical_and), _cmp(np.logical_or), _cmp(np.logical_xor)

# one ONNX lowering per kernel (gluonport/ops/lowering/math.py)
_ONNX: dict[Kernel, M.Binary] = {
    _ADD: M.arith("Add"), _SUB: M.arith("Sub"), _MUL: M.arith("Mul"), _div: M.div,
    mxnet_mod: M.mod, _POWER: M.power, _HYPOT: M.hypot, _MAX: M.minmax("Max"),
    _MIN: M.minmax("Min"), _EQ: M.compare("Equal"), _NE: M.compare("Equal", negate=True),
    _GT: M.compare("Greater"), _GE: M.compare("GreaterOrEqual"), _LT: M.compare("Less"),
    _LE: M.compare("LessOrEqual"), _AND: M.logic("And"), _OR: M.logic("Or"),
    _XOR: M.logic("Xor"),
}


def _register_binary(name: str, fn: Kernel, aliases: tuple[str, ...], make=binary,
                     **facts: object) -> None:
    lowering(make(name, fn, aliases, **facts))(binary_onnx(_ONNX[fn]))


def _add_into(p, args: list, i: int) -> list | None:
    """In place (the executor's inference plan): same-shape, same-dtype float operands added
    into operand ``i``."""
    a, b = args[i], args[1 - i]
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        return None
    with np.errstate(all="ignore"):  # as the op: inf from overflow, no warning
        np.add(a, b, out=a)
    return [a]


def _grad_add(F, p, inputs, outputs, ograds):
    return [ograds[0], ograds[0]]


def _grad_sub(F, p, inputs, outputs, ograds):
    return [ograds[0], F.negative(ograds[0])]


def _grad_mul(F, p, inputs, outputs, ograds):
    lhs, rhs = inputs
    return [F.elemwise_mul(ograds[0], rhs), F.elemwise_mul(ograds[0], lhs)]


def _grad_div(F, p, inputs, outputs, ograds):
    # d(a/b) = og / b, -og * a / b^2 = -og * out / b (MXNet's _backward_div rule)
    lhs, rhs = inputs
    g_lhs = F.elemwise_div(ograds[0], rhs)
    return [g_lhs, F.negative(F.elemwise_mul(g_lhs, outputs[0]))]


_ELEMWISE_GRADS = {"add": _grad_add, "sub": _grad_sub, "mul": _grad_mul, "div": _grad_div}


def _grad_kernel(name: str):
    """The rule of a binary op whose gradient is the kernel ``name`` (``_backward_broadcast_mul``,
    ``binary_grad.py``) of (ograd, lhs, rhs)."""

    def rule(F, p, inputs, outputs, ograds):
        grads = getattr(F._internal, name)(ograds[0], inputs[0], inputs[1])
        return [grads[0], grads[1]]

    rule.__name__ = f"grad_via{name}"
    return rule


def _binary_grad(stem: str, broadcast_op: bool):
    """MXNet's FGradient of ``broadcast_<stem>`` / ``_<stem>``: its ``_backward_*`` kernel, or
    zero (``MakeZeroGradNodes``) for comparisons and logic ops."""
    if stem in (BROADCAST_STEMS if broadcast_op else SAME_SHAPE_STEMS):
        return _grad_kernel(f"_backward_broadcast_{stem}" if broadcast_op else f"_backward_{stem}")
    return zero_gradient

_ARITH: list[tuple[str, Kernel, tuple[str, ...], tuple[str, ...]]] = [
    # (suffix, kernel, elemwise_* aliases, broadcast_* aliases) -- MXNet 1.9.1's alias lists
    ("add", _ADD, ("_add", "_plus", "_Plus", "_sparse_elemwise_add"),
     ("broadcast_plus", "_sparse_broadcast_add", "_sparse_broadcast_plus")),
    ("sub", _SUB, ("_sub", "_minus", "_Minus", "_sparse_elemwise_sub"),
     ("broadcast_minus", "_sparse_broadcast_sub", "_sparse_broadcast_minus")),
    ("mul", _MUL, ("_mul", "_Mul", "_sparse_elemwise_mul"), ("_sparse_broadcast_mul",)),
    ("div", _div, ("_div", "_Div", "_sparse_elemwise_div"), ("_sparse_broadcast_div",)),
]
for _suffix, _fn, _ew_alias, _bc_alias in _ARITH:
    _register_binary(f"elemwise_{_suffix}", _fn, _ew_alias, gradient=_ELEMWISE_GRADS[_suffix],
                     **({"inplace": InPlace(_add_into, (0, 1)), "fresh_outputs": True,
                         "lists_output_names": True} if _fn is _ADD else {}))
    _register_binary(f"broadcast_{_suffix}", _fn, _bc_alias, make=broadcast,
                     gradient=_binary_grad(_suffix, True))

_OTHER_BINARY: list[tuple[str, Kernel, str, tuple[str, ...]]] = [
    # (name stem, kernel, alias of the same-shape op, broadcast_* aliases)
    ("mod", mxnet_mod, "_Mod", ()),
    ("power", _POWER, "_Power", ()),
    ("maximum", _MAX, "_Maximum", ("_npi_maximum",)),
    ("minimum", _MIN, "_Minimum", ("_npi_minimum",)),
    ("hypot", _HYPOT, "_Hypot", ()),
    ("equal", _EQ, "_Equal", ()),
    ("not_equal", _NE, "_Not_Equal", ()),
    ("greater", _GT, "_Greater", ()),
    ("greater_equal", _GE, "_Greater_Equal", ()),
    ("lesser", _LT, "_Lesser", ()),
    ("lesser_equal", _LE, "_Lesser_Equal", ()),
    ("logical_and", _AND, "_Logical_And", ()),
    ("logical_or", _OR, "_Logical_Or", ()),
    ("logical_xor", _XOR, "_Logical_Xor", ()),
]
for _stem, _fn, _alias, _bc_alias in _OTHER_BINARY:
    _register_binary(f"_{_stem}", _fn, (_alias,), gradient=_binary_grad(_stem, False))
    _register_binary(f"broadcast_{_stem}", _fn, _bc_alias, make=broadcast,
                     gradient=_binary_grad(_stem, True))


def _smooth_l1_consts(sigma: np.ndarray, work) -> tuple[np.ndarray, np.ndarray]:
    """(sigma^2, 1 / sigma^2) in the float dtype ``work``."""
    s2 = np.asarray(sigma * sigma, work)
    return s2, np.asarray(1.0, work) / s2


def _smooth_l1(x: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2 (MXNet's smooth_l1_loss)."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    xf = x.astype(work)
    s2, inv = _smooth_l1_consts(sigma, work)
    out = np.where(xf > inv, xf - 0.5 * inv,
                   np.where(xf < -inv, -xf - 0.5 * inv, 0.5 * xf * xf * s2))
    return _restore(x.dtype, out)


def _smooth_l1_onnx(ctx: LoweringContext) -> None:
    """The three pieces and two Wheres, with the constants rounded as the compute rounds them."""
    g = M.Builder(ctx)
    dtype, sigma = _scalar_const(ctx.params, ctx.dtype)
    work = M.F64 if dtype == M.F64 else M.F32
    s2, inv = _smooth_l1_consts(sigma, work)
    x = g.input(0, work)
    half_inv = g.k(0.5 * inv, work)
    quad = g("Mul", g("Mul", g("Mul", g.k(0.5, work), x), x), g.k(s2, work))
    below = g.where(g("Less", x, g.k(-inv, work)), g("Sub", g("Neg", x), half_inv), quad)
    g.out(g.where(g("Greater", x, g.k(inv, work)), g("Sub", x, half_inv), below), work)


# --- gradients of the scalar ops: MXNet's FGradient of each, as compositions of ops ------------
def _g_same(F, p, x, y, og):
    return og  # d(x + s), d(x - s); mod_grad is 1 (floats)


def _g_mul(F, p, x, y, og):
    return F._internal._mul_scalar(og, scalar=p.scalar)


def _g_div(F, p, x, y, og):
    return F._internal._div_scalar(og, scalar=p.scalar)


def _g_rdiv(F, p, x, y, og):  # rdiv_grad: -s / x^2
    return F.elemwise_mul(og, F._internal._rdiv_scalar(F.square(x), scalar=-p.scalar))


def _g_rmod(F, p, x, y, og):  # rmod_grad: -floor(s / x)
    return F.elemwise_mul(og, F.negative(F.floor(F._internal._rdiv_scalar(x, scalar=p.scalar))))


def _g_power(F, p, x, y, og):  # power_grad: x^(s-1) * s
    d = F._internal._power_scalar(x, scalar=p.scalar - 1)
    return F.elemwise_mul(og, F._internal._mul_scalar(d, scalar=p.scalar))


def _g_rpower(F, p, x, y, og):  # rpower_grad (of the output): y * log(s)
    with np.errstate(all="ignore"):  # log of s <= 0 is -inf / NaN, as in MXNet
        log_s = float(np.log(np.float64(p.scalar)))
    return F._internal._mul_scalar(F.elemwise_mul(og, y), scalar=log_s)


def _g_maximum(F, p, x, y, og):  # ge: a tie goes to x
    return F.elemwise_mul(og, F._internal._greater_equal_scalar(x, scalar=p.scalar))


def _g_minimum(F, p, x, y, og):  # le
    return F.elemwise_mul(og, F._internal._lesser_equal_scalar(x, scalar=p.scalar))


def _g_hypot(F, p, x, y, og):  # hypot_grad_left: x / hypot(x, s)
    return F.elemwise_mul(og, F.elemwise_div(x, y))


def _g_smooth_l1(F, p, x, y, og):
    """smooth_l1_gradient: 1 above 1/sigma^2, -1 below -1/sigma^2, sigma^2 x between."""
    return F.elemwise_mul(og, F.clip(F._internal._mul_scalar(x, scalar=p.scalar * p.scalar),
                                     a_min=-1.0, a_max=1.0))


def _scalar_rule(fn):
    def rule(F, p, inputs, outputs, ograds):
        return [fn(F, p, inputs[0], outputs[0], ograds[0])]

    rule.__name__ = f"grad{fn.__name__[2:]}"
    return rule


_SCALAR_GRADS = {
    "_plus_scalar": _g_same, "_minus_scalar": _g_same,
    "_rminus_scalar": lambda F, p, x, y, og: F.negative(og), "_mul_scalar": _g_mul,
    "_div_scalar": _g_div, "_rdiv_scalar": _g_rdiv, "_mod_scalar": _g_same,
    "_rmod_scalar": _g_rmod, "_power_scalar": _g_power, "_rpower_scalar": _g_rpower,
    "_maximum_scalar": _g_maximum, "_minimum_scalar": _g_minimum, "_hypot_scalar": _g_hypot,
}

_SCALAR: list[tuple[str, Kernel, bool, tuple[str, ...]]] = [
    # (name, kernel, scalar on the left, aliases)
    ("_plus_scalar", _ADD, False, ("_PlusScalar",)),
    ("_minus_scalar", _SUB, False, ("_MinusScalar",)),
    ("_rminus_scalar", _SUB, True, ("_RMinusScalar",)),
    ("_mul_scalar", _MUL, False, ("_MulScalar",)),
    ("_div_scalar", _div, False, ("_DivScalar",)),
    ("_rdiv_scalar", _div, True, ("_RDivScalar",)),
    ("_mod_scalar", mxnet_mod, False, ("_ModScalar",)),
    ("_rmod_scalar", mxnet_mod, True, ("_RModScalar",)),
    ("_power_scalar", _POWER, False, ("_PowerScalar",)),
    ("_rpower_scalar", _POWER, True, ("_RPowerScalar",)),
    ("_maximum_scalar", _MAX, False, ("_MaximumScalar", "_npi_maximum_scalar")),
    ("_minimum_scalar", _MIN, False, ("_MinimumScalar", "_npi_minimum_scalar")),
    ("_hypot_scalar", _HYPOT, False, ("_HypotScalar", "_npi_hypot_scalar")),
    ("_equal_scalar", _EQ, False, ("_EqualScalar",)),
    ("_not_equal_scalar", _NE, False, ("_NotEqualScalar",)),
    ("_greater_scalar", _GT, False, ("_GreaterScalar",)),
    ("_greater_equal_scalar", _GE, False, ("_GreaterEqualScalar",)),
    ("_lesser_scalar", _LT, False, ("_LesserScalar",)),
    ("_lesser_equal_scalar", _LE, False, ("_LesserEqualScalar",)),
    ("_logical_and_scalar", _AND, False, ("_LogicalAndScalar",)),
    ("_logical_or_scalar", _OR, False, ("_LogicalOrScalar",)),
    ("_logical_xor_scalar", _XOR, False, ("_LogicalXorScalar",)),
]
for _name, _fn, _reverse, _aliases in _SCALAR:
    _rule = _scalar_rule(_SCALAR_GRADS[_name]) if _name in _SCALAR_GRADS else zero_gradient
    lowering(scalar(_name, _swap(_fn) if _reverse else _fn, _aliases, gradient=_rule))(
        scalar_onnx(_ONNX[_fn], _reverse))
lowering(scalar("smooth_l1", _smooth_l1, ("_npx_smooth_l1",),
                gradient=_scalar_rule(_g_smooth_l1)))(_smooth_l1_onnx)

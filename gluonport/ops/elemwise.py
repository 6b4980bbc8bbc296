"""Elementwise operators: binary (same-shape and broadcasting), scalar, unary math.

A family is a table: each row is one MXNet operator, reduced to a numpy function. MXNet's legacy
(1.x) semantics kept here:

* comparisons and logic ops return the *input* dtype (1.0 / 0.0), not bool;
* ``_*_scalar`` ops keep the array's dtype (MXNet casts the scalar to it);
* ``elemwise_*`` ops need equal shapes, ``broadcast_*`` ops broadcast like numpy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..attrs import Bool, Float
from ._shape import broadcast_shapes, same_shape
from .registry import OpDef, register

__all__ = ["binary", "broadcast", "scalar", "unary"]

ArrayFn = Callable[..., np.ndarray]


def _as(dtype: np.dtype, out: np.ndarray | np.generic) -> np.ndarray:
    """Keep MXNet's output dtype (numpy may promote, e.g. int / int -> float)."""
    return np.asarray(out).astype(dtype, copy=False)


def _broadcast_rule(p, in_shapes):
    out = broadcast_shapes(in_shapes[0], in_shapes[1])
    return in_shapes, [out]


def binary(name: str, fn: ArrayFn, aliases: tuple[str, ...] = (), doc: str = "") -> OpDef:
    """A same-shape binary op (``elemwise_add``): inputs ``lhs``, ``rhs``."""
    return register(OpDef(
        name, compute=lambda p, a, b: _as(a.dtype, fn(a, b)), inputs=("lhs", "rhs"),
        infer_shape=lambda p, s: same_shape(s, 1), aliases=aliases, doc=doc))


def broadcast(name: str, fn: ArrayFn, aliases: tuple[str, ...] = (), doc: str = "") -> OpDef:
    """A broadcasting binary op (``broadcast_add``): inputs ``lhs``, ``rhs``."""
    return register(OpDef(
        name, compute=lambda p, a, b: _as(a.dtype, fn(a, b)), inputs=("lhs", "rhs"),
        infer_shape=_broadcast_rule, aliases=aliases, doc=doc))


_SCALAR_PARAMS = {"scalar": Float(1.0), "is_int": Bool(True)}


def _scalar_of(p, dtype: np.dtype):
    """MXNet casts the scalar attribute to the array's dtype before computing."""
    return np.asarray(p.scalar).astype(dtype)


def scalar(name: str, fn: ArrayFn, aliases: tuple[str, ...] = (), doc: str = "") -> OpDef:
    """An array-scalar op (``_plus_scalar``): ``fn(x, scalar)``; attribute ``scalar``."""
    return register(OpDef(
        name, params=_SCALAR_PARAMS,
        compute=lambda p, x: _as(x.dtype, fn(x, _scalar_of(p, x.dtype))),
        aliases=aliases, doc=doc))


def unary(name: str, fn: ArrayFn, aliases: tuple[str, ...] = (), doc: str = "") -> OpDef:
    """A unary elementwise op keeping shape and dtype."""
    return register(OpDef(name, compute=lambda p, x: _as(x.dtype, fn(x)), aliases=aliases,
                          doc=doc))


def _cmp(fn: ArrayFn) -> ArrayFn:
    return lambda a, b: fn(a, b)  # bool result; _as() turns it into the input dtype


def _mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MXNet's mod follows the sign of the divisor (like numpy) and gives 0 for b == 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.mod(a, b)
    return np.where(b == 0, 0, out) if np.issubdtype(np.asarray(out).dtype, np.integer) else out


def _div(a, b):
    """Integer division truncates toward zero (C semantics), as MXNet's kernels do."""
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.trunc(np.true_divide(a, b))
    return np.divide(a, b)


_ARITH: list[tuple[str, ArrayFn, tuple[str, ...], tuple[str, ...]]] = [
    # (suffix, fn, elemwise aliases, broadcast aliases)
    ("add", np.add, ("_add", "_plus", "_Plus"), ("broadcast_plus",)),
    ("sub", np.subtract, ("_sub", "_minus", "_Minus"), ("broadcast_minus",)),
    ("mul", np.multiply, ("_mul", "_Mul"), ()),
    ("div", _div, ("_div", "_Div"), ()),
]
for _suffix, _fn, _ew_alias, _bc_alias in _ARITH:
    binary(f"elemwise_{_suffix}", _fn, _ew_alias)
    broadcast(f"broadcast_{_suffix}", _fn, _bc_alias)

_OTHER_BINARY: list[tuple[str, ArrayFn, str]] = [
    # (name stem, fn, MXNet's capitalised alias of the same-shape op)
    ("mod", _mod, "_Mod"),
    ("power", np.power, "_Power"),
    ("maximum", np.maximum, "_Maximum"),
    ("minimum", np.minimum, "_Minimum"),
    ("hypot", np.hypot, "_Hypot"),
    ("equal", _cmp(np.equal), "_Equal"),
    ("not_equal", _cmp(np.not_equal), "_Not_Equal"),
    ("greater", _cmp(np.greater), "_Greater"),
    ("greater_equal", _cmp(np.greater_equal), "_Greater_Equal"),
    ("lesser", _cmp(np.less), "_Lesser"),
    ("lesser_equal", _cmp(np.less_equal), "_Lesser_Equal"),
    ("logical_and", _cmp(np.logical_and), "_Logical_And"),
    ("logical_or", _cmp(np.logical_or), "_Logical_Or"),
    ("logical_xor", _cmp(np.logical_xor), "_Logical_Xor"),
]
for _stem, _fn, _alias in _OTHER_BINARY:
    binary(f"_{_stem}", _fn, (_alias,))
    broadcast(f"broadcast_{_stem}", _fn)

_SCALAR: list[tuple[str, ArrayFn, str]] = [
    ("_plus_scalar", np.add, "_PlusScalar"),
    ("_minus_scalar", np.subtract, "_MinusScalar"),
    ("_rminus_scalar", lambda x, s: s - x, "_RMinusScalar"),
    ("_mul_scalar", np.multiply, "_MulScalar"),
    ("_div_scalar", _div, "_DivScalar"),
    ("_rdiv_scalar", lambda x, s: _div(s, x), "_RDivScalar"),
    ("_mod_scalar", _mod, "_ModScalar"),
    ("_rmod_scalar", lambda x, s: _mod(s, x), "_RModScalar"),
    ("_power_scalar", np.power, "_PowerScalar"),
    ("_rpower_scalar", lambda x, s: np.power(s, x), "_RPowerScalar"),
    ("_maximum_scalar", np.maximum, "_MaximumScalar"),
    ("_minimum_scalar", np.minimum, "_MinimumScalar"),
    ("_hypot_scalar", np.hypot, "_HypotScalar"),
    ("_equal_scalar", _cmp(np.equal), "_EqualScalar"),
    ("_not_equal_scalar", _cmp(np.not_equal), "_NotEqualScalar"),
    ("_greater_scalar", _cmp(np.greater), "_GreaterScalar"),
    ("_greater_equal_scalar", _cmp(np.greater_equal), "_GreaterEqualScalar"),
    ("_lesser_scalar", _cmp(np.less), "_LesserScalar"),
    ("_lesser_equal_scalar", _cmp(np.less_equal), "_LesserEqualScalar"),
    ("_logical_and_scalar", _cmp(np.logical_and), "_LogicalAndScalar"),
    ("_logical_or_scalar", _cmp(np.logical_or), "_LogicalOrScalar"),
    ("_logical_xor_scalar", _cmp(np.logical_xor), "_LogicalXorScalar"),
]
for _name, _fn, _alias in _SCALAR:
    scalar(_name, _fn, (_alias,))

_UNARY: list[tuple[str, ArrayFn, tuple[str, ...]]] = [
    ("negative", np.negative, ()),
    ("abs", np.abs, ()),
    ("sign", np.sign, ()),
    ("sqrt", np.sqrt, ()),
    ("square", np.square, ()),
    ("exp", np.exp, ()),
    ("log", np.log, ()),
    ("relu", lambda x: np.maximum(x, 0), ()),
    ("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x)), ()),
    ("tanh", np.tanh, ()),
    ("_copy", lambda x: x.copy(), ("identity",)),
]
for _name, _fn, _aliases in _UNARY:
    unary(_name, _fn, _aliases)

"""Import handlers: elementwise math, logic, comparisons, activations, Clip, Cast, Where.

ONNX's binary ops broadcast numpy-style: they map onto MXNet's ``broadcast_*`` ops, or onto
``_*_scalar`` ops when one side is a one-element constant that does not widen the result.
MXNet's comparisons return the input dtype (1 / 0): a ``Cast`` to bool follows, as ONNX
returns bool.
"""

from __future__ import annotations

import math

import numpy as np

from .._import_build import (
    broadcast_together,
    cast,
    norm_axis,
    scalar_value,
)
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

# --- binary -----------------------------------------------------------------------------------
# ONNX op -> (MXNet broadcast op, scalar op with the constant on the right, on the left)
_BINARY = {
    "Add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "Max": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "Min": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "Equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "Less": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "Greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "LessOrEqual": ("broadcast_lesser_equal", "_lesser_equal_scalar",
                    "_greater_equal_scalar"),
    "GreaterOrEqual": ("broadcast_greater_equal", "_greater_equal_scalar",
                       "_lesser_equal_scalar"),
    "And": ("broadcast_logical_and", None, None),
    "Or": ("broadcast_logical_or", None, None),
    "Xor": ("broadcast_logical_xor", None, None),
}
_COMPARE = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}


def _scalar_side(a: Value, b: Value) -> bool:
    """``b`` is a one-element constant that does not widen ``a``'s shape."""
    return (b.const is not None and b.const.size == 1 and a.rank is not None
            and b.const.ndim <= a.rank and a.const is None)


def _is_bool(v: Value) -> bool:
    return v.dtype is not None and np.dtype(v.dtype) == np.bool_


def binary(ctx: ImportContext, op_type: str, a: Value, b: Value) -> object:
    bop, right, left = _BINARY[op_type]
    if _is_bool(a) and _is_bool(b):
        # MXNet 1.9.1's logic and comparison kernels refuse bool operands ("does not support
        # boolean type" / "Unknown type enum 7"): compute on uint8 (1/0), back to bool
        u8 = np.dtype(np.uint8)
        out = ctx.op(bop, cast(ctx, a.sym, u8), cast(ctx, b.sym, u8))
        return cast(ctx, out, np.dtype(np.bool_)) if op_type in _COMPARE else out
    if a.dtype is None or b.dtype is None:
        right = left = None
    if right is not None and _scalar_side(a, b) and b.dtype == a.dtype:
        s = scalar_value(b)
        out = ctx.op(right, a.sym, scalar=float(s), is_int=a.dtype.kind in "iub")
    elif left is not None and _scalar_side(b, a) and b.dtype == a.dtype:
        s = scalar_value(a)
        out = ctx.op(left, b.sym, scalar=float(s), is_int=b.dtype.kind in "iub")
    else:
        out = ctx.op(bop, a.sym, b.sym)
    if op_type in _COMPARE and (ctx.out_dtype() is None or ctx.out_dtype() == np.bool_):
        if a.dtype != np.bool_:
            out = cast(ctx, out, np.dtype(np.bool_))
    return out


def _binary_handler(op_type: str):
    def handler(ctx: ImportContext, a: Value, b: Value, *, broadcast: int = 0,
                axis: int | None = None) -> object:
        if axis is not None and broadcast:
            b = _legacy_align(ctx, a, b, axis)
        return binary(ctx, op_type, a, b)

    handler.__name__ = op_type.lower()
    return handler


def _legacy_align(ctx: ImportContext, a: Value, b: Value, axis: int) -> Value:
    """Before opset 7, ``broadcast=1, axis=k`` lines B up with A's dims from ``k`` on: B gets
    trailing unit dims so numpy broadcasting does the same."""
    if a.rank is None or b.rank is None:
        raise ctx.fail("legacy broadcast (opset < 7) needs both ranks")
    extra = a.rank - norm_axis(axis, a.rank, ctx) - b.rank
    if extra <= 0:
        return b
    shape = tuple(b.shape) + (1,) * extra
    if b.const is not None:
        return Value(ctx, b.name + "_aligned", const=b.const.reshape(shape))
    s = b.sym
    for _ in range(extra):
        s = ctx.op("expand_dims", s, axis=-1)
    return Value(ctx, b.name, sym=s, shape=shape, dtype=b.dtype)


for _op in _BINARY:
    importer(_op, since=1)(_binary_handler(_op))


@importer("Pow", since=12)
def pow_(ctx: ImportContext, a: Value, b: Value) -> object:
    """Since opset 12 the exponent may have another type: MXNet needs one dtype."""
    if b.dtype is not None and a.dtype is not None and b.dtype != a.dtype:
        if b.const is not None:
            b = Value(ctx, b.name + "_cast", const=b.const.astype(a.dtype))
        else:
            b = Value(ctx, b.name, sym=cast(ctx, b.sym, a.dtype), shape=b.shape, dtype=a.dtype)
    return binary(ctx, "Pow", a, b)


@importer("Mod", since=10)
def mod(ctx: ImportContext, a: Value, b: Value, *, fmod: int = 0) -> object:
    """``fmod=0``: the result takes the divisor's sign (MXNet's ``mod``); ``fmod=1``: C's fmod,
    the dividend's sign: ``sign(a) * mod(|a|, |b|)`` (exact, no division). MXNet's ``mod``
    gives 0 for a zero divisor where ONNX (numpy, C) gives NaN: for floats, ``0 / (b != 0)``
    (NaN there, 0 elsewhere) is added."""
    if not fmod:
        out = ctx.op("broadcast_mod", a.sym, b.sym)
    else:
        r = ctx.op("broadcast_mod", ctx.op("abs", a.sym), ctx.op("abs", b.sym))
        out = ctx.op("broadcast_mul", ctx.op("sign", a.sym), r)
    if b.dtype is None or np.dtype(b.dtype).kind != "f":
        return out
    nonzero = ctx.op("_not_equal_scalar", b.sym, scalar=0.0)
    return ctx.op("broadcast_add", out, ctx.op("broadcast_div", ctx.op("zeros_like", b.sym),
                                                nonzero))


def _variadic(ctx: ImportContext, op_type: str, args: tuple) -> object:
    if len(args) == 1:
        return args[0].sym
    out = binary(ctx, op_type, args[0], args[1])
    for v in args[2:]:
        out = ctx.op(_BINARY[op_type][0], out, v.sym)
    return out


@importer(("Max", "Min"), since=6)
def max_min(ctx: ImportContext, *args: Value) -> object:
    return _variadic(ctx, ctx.op_type, args)


@importer("Sum", since=6)
def sum_(ctx: ImportContext, *args: Value) -> object:
    if len(args) > 2 and all(v.shape == args[0].shape and v.shape is not None for v in args):
        return ctx.op("add_n", *[v.sym for v in args])
    return _variadic(ctx, "Add", args)


@importer("Mean", since=6)
def mean(ctx: ImportContext, *args: Value) -> object:
    total = sum_(ctx, *args)
    return total if len(args) == 1 else ctx.op("_div_scalar", total, scalar=float(len(args)))


@importer("Not", since=1)
def not_(ctx: ImportContext, x: Value) -> object:
    """On uint8 for a bool input: MXNet 1.9.1's ``logical_not`` has no bool kernel."""
    if _is_bool(x):
        out = ctx.op("logical_not", cast(ctx, x.sym, np.dtype(np.uint8)))
        return cast(ctx, out, np.dtype(np.bool_))
    return ctx.op("logical_not", x.sym)


# --- unary ------------------------------------------------------------------------------------
_UNARY = {
    "Neg": "negative", "Abs": "abs", "Sqrt": "sqrt", "Exp": "exp", "Log": "log",
    "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Sign": "sign",
    "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
    "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
    "Atanh": "arctanh", "Erf": "erf", "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh",
    "Softsign": "softsign",
}


def _unary_handler(mx_op: str):
    def handler(ctx: ImportContext, x: Value) -> object:
        return ctx.op(mx_op, x.sym)

    handler.__name__ = mx_op
    return handler


for _op, _mx in _UNARY.items():
    importer(_op, since=1)(_unary_handler(_mx))


@importer("Identity", since=1)
def identity(ctx: ImportContext, x: Value) -> object:
    return x.const if x.const is not None else x.sym


@importer("Round", since=11)
def round_(ctx: ImportContext, x: Value) -> object:
    """Halves to even (numpy's rint); MXNet's ``round`` goes away from zero, so ties are
    fixed up: ``floor(x) + (x - floor(x) > 0.5 or (== 0.5 and floor(x) odd))``."""
    f = ctx.op("floor", x.sym)
    frac = ctx.op("broadcast_sub", x.sym, f)
    odd = ctx.op("_mod_scalar", f, scalar=2.0)
    up_tie = ctx.op("broadcast_mul", ctx.op("_equal_scalar", frac, scalar=0.5), odd)
    up = ctx.op("broadcast_add", ctx.op("_greater_scalar", frac, scalar=0.5), up_tie)
    return ctx.op("broadcast_add", f, up)


@importer("IsNaN", since=9)
def isnan(ctx: ImportContext, x: Value) -> object:
    return cast(ctx, ctx.op("_not_equal", x.sym, x.sym), np.dtype(np.bool_))


@importer("IsInf", since=10)
def isinf(ctx: ImportContext, x: Value, *, detect_negative: int = 1,
          detect_positive: int = 1) -> object:
    if detect_negative and detect_positive:
        hit = ctx.op("_equal_scalar", ctx.op("abs", x.sym), scalar=math.inf)
    elif detect_positive:
        hit = ctx.op("_equal_scalar", x.sym, scalar=math.inf)
    elif detect_negative:
        hit = ctx.op("_equal_scalar", x.sym, scalar=-math.inf)
    else:
        hit = ctx.op("zeros_like", x.sym)
    return cast(ctx, hit, np.dtype(np.bool_))


# --- activations ------------------------------------------------------------------------------
@importer("LeakyRelu", since=1)
def leaky_relu(ctx: ImportContext, x: Value, *, alpha: float = 0.01) -> object:
    return ctx.op("LeakyReLU", x.sym, act_type="leaky", slope=alpha)


@importer("Elu", since=1)
def elu(ctx: ImportContext, x: Value, *, alpha: float = 1.0) -> object:
    return ctx.op("LeakyReLU", x.sym, act_type="elu", slope=alpha)


_SELU_ALPHA, _SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


@importer("Selu", since=1)
def selu(ctx: ImportContext, x: Value, *, alpha: float = _SELU_ALPHA,
         gamma: float = _SELU_GAMMA) -> object:
    if np.float32(alpha) == np.float32(_SELU_ALPHA) and np.float32(gamma) == np.float32(
            _SELU_GAMMA):
        return ctx.op("LeakyReLU", x.sym, act_type="selu")
    neg = ctx.op("_mul_scalar", ctx.op("expm1", ctx.op("_minimum_scalar", x.sym, scalar=0.0)),
                 scalar=alpha)
    return ctx.op("_mul_scalar", ctx.op("broadcast_add", ctx.op("relu", x.sym), neg),
                  scalar=gamma)


@importer("Celu", since=12)
def celu(ctx: ImportContext, x: Value, *, alpha: float = 1.0) -> object:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    e = ctx.op("expm1", ctx.op("_div_scalar", x.sym, scalar=alpha))
    neg = ctx.op("_minimum_scalar", ctx.op("_mul_scalar", e, scalar=alpha), scalar=0.0)
    return ctx.op("broadcast_add", ctx.op("relu", x.sym), neg)


@importer("PRelu", since=1)
def prelu(ctx: ImportContext, x: Value, slope: Value) -> object:
    """MXNet's ``LeakyReLU(act_type='prelu')`` takes one slope per channel (axis 1); other
    slope shapes use ``relu(x) + min(x, 0) * slope``."""
    if slope.const is not None and x.rank is not None and x.rank >= 2:
        sq = slope.const.reshape([d for d in slope.const.shape if d != 1] or [1])
        per_channel = (sq.ndim == 1 and slope.const.ndim <= x.rank
                       and (slope.const.ndim == x.rank - 1 or sq.size == 1
                            or ctx.version < 7)  # PRelu-6: the slope is per channel
                       and all(d == 1 for d in slope.const.shape[1:]))
        if per_channel:
            return ctx.op("LeakyReLU", x.sym, ctx.new_param(f"{slope.name}_gamma", sq),
                          act_type="prelu")
    neg = ctx.op("broadcast_mul", ctx.op("_minimum_scalar", x.sym, scalar=0.0), slope.sym)
    return ctx.op("broadcast_add", ctx.op("relu", x.sym), neg)


@importer("Gelu", since=20)
def gelu(ctx: ImportContext, x: Value, *, approximate: str = "none") -> object:
    if approximate == "none":
        return ctx.op("LeakyReLU", x.sym, act_type="gelu")
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    cube = ctx.op("_mul_scalar", ctx.op("_power_scalar", x.sym, scalar=3.0), scalar=0.044715)
    inner = ctx.op("_mul_scalar", ctx.op("broadcast_add", x.sym, cube),
                   scalar=math.sqrt(2.0 / math.pi))
    t = ctx.op("_plus_scalar", ctx.op("tanh", inner), scalar=1.0)
    return ctx.op("broadcast_mul", ctx.op("_mul_scalar", x.sym, scalar=0.5), t)


@importer("HardSigmoid", since=1)
def hard_sigmoid(ctx: ImportContext, x: Value, *, alpha: float = 0.2,
                 beta: float = 0.5) -> object:
    return ctx.op("hard_sigmoid", x.sym, alpha=alpha, beta=beta)


@importer("HardSwish", since=14)
def hard_swish(ctx: ImportContext, x: Value) -> object:
    return ctx.op("broadcast_mul", x.sym,
                  ctx.op("hard_sigmoid", x.sym, alpha=1.0 / 6.0, beta=0.5))


def _softplus(ctx: ImportContext, x) -> object:
    """``log(1 + exp(x))`` as ``relu(x) + log1p(exp(-|x|))``: MXNet 1.9.1's CPU
    ``Activation(softrelu)`` (oneDNN's soft_relu) computes ``log(1 + exp(x))`` in float32 and
    loses the small values (at x = -10: 4.48e-5 for 4.54e-5, 1.3% off, so onnx's Mish test
    fails there at rtol 1e-3), while ``log1p`` keeps them; no overflow for large x either."""
    neg_abs = ctx.op("negative", ctx.op("abs", x))
    return ctx.op("broadcast_add", ctx.op("relu", x), ctx.op("log1p", ctx.op("exp", neg_abs)))


@importer("Softplus", since=1)
def softplus(ctx: ImportContext, x: Value) -> object:
    return _softplus(ctx, x.sym)


@importer("Mish", since=18)
def mish(ctx: ImportContext, x: Value) -> object:
    """``x * tanh(softplus(x))`` (softplus as :func:`_softplus`)."""
    return ctx.op("broadcast_mul", x.sym, ctx.op("tanh", _softplus(ctx, x.sym)))


@importer("ThresholdedRelu", since=10)
def thresholded_relu(ctx: ImportContext, x: Value, *, alpha: float = 1.0) -> object:
    return ctx.op("broadcast_mul", x.sym, ctx.op("_greater_scalar", x.sym, scalar=alpha))


@importer("Shrink", since=9)
def shrink(ctx: ImportContext, x: Value, *, bias: float = 0.0, lambd: float = 0.5) -> object:
    """``x + bias`` below ``-lambd``, ``x - bias`` above ``lambd``, 0 between."""
    lo = ctx.op("_lesser_scalar", x.sym, scalar=-lambd)
    hi = ctx.op("_greater_scalar", x.sym, scalar=lambd)
    zero = ctx.op("zeros_like", x.sym)
    above = ctx.op("where", hi, ctx.op("_minus_scalar", x.sym, scalar=bias), zero)
    return ctx.op("where", lo, ctx.op("_plus_scalar", x.sym, scalar=bias), above)


# --- Clip, Cast, Where ------------------------------------------------------------------------
def _bounds(dtype: np.dtype) -> tuple[float, float]:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.min), float(info.max)
    return -math.inf, math.inf


def _clip(ctx: ImportContext, x: Value, lo: float | None, hi: float | None) -> object:
    """``min(max(x, lo), hi)`` as ONNX defines it (lo > hi gives hi everywhere)."""
    if lo is not None and hi is not None and lo <= hi:
        return ctx.op("clip", x.sym, a_min=lo, a_max=hi)
    out = x.sym
    if lo is not None:
        out = ctx.op("_maximum_scalar", out, scalar=lo)
    if hi is not None:
        out = ctx.op("_minimum_scalar", out, scalar=hi)
    return out if (lo is not None or hi is not None) else ctx.op("_copy", out)


@importer("Clip", since=1)
def clip_attrs(ctx: ImportContext, x: Value, *, min: float = -3.4028234663852886e38,  # noqa: A002
               max: float = 3.4028234663852886e38, consumed_inputs=None) -> object:  # noqa: A002
    """Before opset 11 the bounds are attributes (defaulting to the float range)."""
    return _clip(ctx, x, float(min), float(max))


@importer("Clip", since=11)
def clip(ctx: ImportContext, x: Value, lo: Value | None = None, hi: Value | None = None
         ) -> object:
    """Since opset 11 the bounds are optional inputs: none, either or both may be given."""
    bounds = []
    for v in (lo, hi):
        if v is None:
            bounds.append(None)
        elif v.const is not None:
            bounds.append(float(scalar_value(v)))
        else:
            bounds.append(v)
    if any(isinstance(b, Value) for b in bounds):  # runtime bounds: broadcast max/min
        out = x.sym
        if bounds[0] is not None:
            out = ctx.op("broadcast_maximum", out, bounds[0].sym if isinstance(
                bounds[0], Value) else ctx.const([bounds[0]], x.dtype))
        if bounds[1] is not None:
            out = ctx.op("broadcast_minimum", out, bounds[1].sym if isinstance(
                bounds[1], Value) else ctx.const([bounds[1]], x.dtype))
        return out
    return _clip(ctx, x, bounds[0], bounds[1])


@importer("Cast", since=1)
def cast_(ctx: ImportContext, x: Value, *, to: int = 1, saturate: int = 1,
          round_mode: str = "up") -> object:
    from onnx import helper

    try:
        target = np.dtype(helper.tensor_dtype_to_np_dtype(to))
    except (KeyError, ValueError, TypeError):
        raise ctx.fail(f"cast to ONNX type {to} has no MXNet equivalent") from None
    if target == x.dtype:
        return ctx.op("_copy", x.sym)
    return cast(ctx, x.sym, target)


@importer("CastLike", since=15)
def cast_like(ctx: ImportContext, x: Value, like: Value, *, saturate: int = 1,
              round_mode: str = "up") -> object:
    if like.dtype is None:
        raise ctx.fail("the target type is unknown")
    return cast(ctx, x.sym, like.dtype)


@importer("Where", since=9)
def where(ctx: ImportContext, cond: Value, x: Value, y: Value) -> object:
    """MXNet's ``where`` needs one shape for all three: broadcast them to the output's. A
    bool condition is cast to the branches' type: MXNet 1.9.1's ``where`` has no bool kernel
    ("Unknown type enum 7" at run time) while any nonzero number selects ``x``."""
    c, a, b = broadcast_together(ctx, (cond, x, y))
    if cond.dtype is not None and np.dtype(cond.dtype) == np.bool_:
        c = cast(ctx, c, x.dtype if x.dtype is not None else np.float32)
    return ctx.op("where", c, a, b)

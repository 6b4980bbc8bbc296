"""Unary elementwise operators (math, rounding, activations), casts, clip and add_n.

Like :mod:`gluonport.ops.math.elemwise`, the math ops are table rows reduced to one numpy function.
MXNet 1.9.1's semantics, checked against the real library (``tests/golden/ops/unary.npz``):

* the output keeps the input dtype. Math on integers runs in double (MXNet's ``math::`` wrappers
  promote integers to double) and converts back like C: truncation toward zero, and NaN or
  out-of-range values become the type's minimum (x86's "integer indefinite"): ``sqrt`` of int32
  ``-7`` is ``-2147483648``. float16 runs in float32, as ``half_t`` does;
* ``round`` rounds halves away from zero, ``rint`` rounds halves *down* (MXNet's own kernel:
  ``x - floor(x) <= ceil(x) - x ? floor : ceil``), ``fix`` toward zero;
* ``sign(nan)`` is 0 and ``relu(nan)`` is nan; ``logical_not`` returns 1 / 0 in the input dtype;
* ``clip`` casts its bounds to the dtype and tests ``x > a_max`` before ``x < a_min``;
* ``Cast`` converts like C (``-1.7 -> -1``, uint8 wraps through int32).

``erf``, ``erfinv``, ``gamma`` and ``gammaln`` come from :mod:`gluonport.ops.math.special`
(numpy only).

ONNX export: each table row carries its lowering (:mod:`gluonport.ops.lowering.math`,
:mod:`gluonport.ops.math.special`), run in MXNet's work dtype between Casts. ONNX has no ErfInv,
Gamma or LGamma, and onnxruntime no float64 kernel for most trigonometric and hyperbolic ops:
those are compositions accurate to a few ulps in float64. ``Cast`` to bfloat16 is refused
(gluonport's bfloat16 is raw uint16 bits). Conversions of NaN or out-of-range floats to integers
are the runtime's ``Cast``: onnxruntime 1.31 on x86 gives MXNet's integer minimum, 1.16
saturates.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, DType, Float, Int
from ..lowering import LoweringContext, lowering
from ..lowering import math as M
from ..registry import InPlace, OpDef, register
from . import special
from .unary_grad import (
    UNARY_GRADS,
    add_n_grad,
    amp_cast_grad,
    amp_multicast_grad,
    cast_grad,
    clip_grad,
    hard_sigmoid_grad,
    like_rhs_grad,
)

__all__ = ["c_cast", "unary", "math_unary", "CAST_DTYPES"]

ArrayFn = Callable[[np.ndarray], np.ndarray]

CAST_DTYPES = ("bfloat16", "bool", "float16", "float32", "float64", "int32", "int64", "int8",
               "uint8")


def c_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert a float array to ``dtype`` the way C (on x86) does.

    Floats round; integers truncate toward zero; NaN, inf and out-of-range values become the
    minimum of the 32- or 64-bit integer the compiler converts through (so int8/uint8 get its low
    byte: ``uint8(-1.7) = 255``, ``uint8(300.7) = 44``, ``uint8(nan) = 0``); bool is ``x != 0``.
    """
    dtype = np.dtype(dtype)
    x = np.asarray(x)
    if dtype.kind == "f" or x.dtype.kind not in "fc":
        with np.errstate(over="ignore"):  # float64 -> float16 overflow gives inf, as in C
            return x.astype(dtype)
    if dtype.kind == "b":
        return x != 0
    bits = 64 if dtype.itemsize == 8 or dtype == np.uint32 else 32
    wide = np.int64 if bits == 64 else np.int32
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64, copy=False))
        ok = (t >= -(2.0 ** (bits - 1))) & (t < 2.0 ** (bits - 1))
        t = np.where(ok, t, -(2.0 ** (bits - 1)))
    return t.astype(wide).astype(dtype)


def math_unary(fn: ArrayFn) -> Callable[[np.ndarray], np.ndarray]:
    """Run ``fn`` the way MXNet's ``math::`` functions do and return the input dtype.

    float32 and float64 compute in place, float16 in float32, integers and bool in float64.
    """

    def apply(x: np.ndarray) -> np.ndarray:
        if x.dtype in (np.float32, np.float64):
            work = x
        else:
            work = x.astype(np.float32 if x.dtype == np.float16 else np.float64)
        with np.errstate(all="ignore"):
            out = np.asarray(fn(work))
        return c_cast(out, x.dtype) if out.dtype != x.dtype else out

    return apply


def unary(name: str, fn: ArrayFn, aliases: tuple[str, ...] = (), doc: str = "",
          **extra) -> OpDef:
    """A unary elementwise op keeping shape and dtype: ``fn(x)`` on the numpy array."""
    return register(OpDef(name, compute=lambda p, x: fn(x), aliases=aliases, doc=doc,
                          lists_input_names=False, **extra))


def math_onnx(lower: M.Unary) -> Callable:
    """Export handler for a ``math_unary`` op: the input cast to MXNet's work dtype (float32
    for float16, float64 for integers, or float64 throughout for a lowering marked
    ``in_double``), ``lower`` there, then cast back (``Cast`` converts like C on onnxruntime)."""

    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        work = M.math_work(ctx.dtype, getattr(lower, "double", False))
        g.out(lower(g, g.input(0, work), work), work)

    return handler


def native_onnx(lower: M.Native) -> Callable:
    """Export handler for an op computed in the input's own dtype."""

    def handler(ctx: LoweringContext) -> None:
        g = M.Builder(ctx)
        g.out(lower(g, ctx.inputs[0], np.dtype(ctx.dtype)), ctx.dtype)

    return handler


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``round``: halves go away from zero (numpy's ``rint`` goes to even)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _rint_half_down(x: np.ndarray) -> np.ndarray:
    """MXNet's ``rint`` kernel: the nearer of floor and ceil, floor on a tie."""
    lo, hi = np.floor(x), np.ceil(x)
    return np.where(x - lo <= hi - x, lo, hi)


def _sign(x: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 in the input dtype; NaN gives 0 (MXNet compares, numpy propagates NaN)."""
    out = np.sign(x)
    return np.where(np.isnan(out), 0, out).astype(x.dtype) if x.dtype.kind == "f" else out


def _relu(x: np.ndarray) -> np.ndarray:
    """``a > 0 || isnan(a) ? a : 0``."""
    return np.where((x > 0) | (x != x), x, np.zeros((), x.dtype))


def _logical_not(x: np.ndarray) -> np.ndarray:
    return (x == 0).astype(x.dtype)


_DEG = 180.0 / np.pi
_RAD = np.pi / 180.0

_op = M.unary_op
_MATH: list[tuple[str, ArrayFn, tuple[str, ...], M.Unary]] = [
    # (name, numpy function on float arrays, MXNet 1.9.1's aliases, ONNX lowering)
    ("abs", np.abs, ("_sparse_abs",), _op("Abs")),
    ("round", _round_half_away, ("_sparse_round",), M.round_away),
    ("rint", _rint_half_down, ("_sparse_rint",), M.rint_down),
    ("ceil", np.ceil, ("_sparse_ceil",), _op("Ceil")),
    ("floor", np.floor, ("_sparse_floor",), _op("Floor")),
    ("trunc", np.trunc, ("_sparse_trunc",), M.trunc),
    ("fix", np.trunc, ("_sparse_fix",), M.trunc),
    ("sqrt", np.sqrt, ("_sparse_sqrt",), _op("Sqrt")),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), ("_sparse_rsqrt",),
     lambda g, x, w: g("Reciprocal", g("Sqrt", x))),
    ("cbrt", np.cbrt, ("_sparse_cbrt",), M.in_double(M.cbrt)),
    ("rcbrt", lambda x: 1.0 / np.cbrt(x), (), M.in_double(M.rcbrt)),
    ("exp", np.exp, ("_sparse_exp",), _op("Exp")),
    ("log", np.log, ("_sparse_log",), _op("Log")),
    ("log10", np.log10, ("_sparse_log10",), M.log_exact(10.0)),
    ("log2", np.log2, ("_sparse_log2",), M.log_exact(2.0)),
    ("log1p", np.log1p, ("_sparse_log1p",), M.log1p),
    ("expm1", np.expm1, ("_sparse_expm1",), M.expm1),
    ("sin", np.sin, ("_sparse_sin",), _op("Sin")),
    ("cos", np.cos, ("_sparse_cos",), _op("Cos")),
    ("tan", np.tan, ("_sparse_tan",), _op("Tan", special.tan64)),
    ("arcsin", np.arcsin, ("_sparse_arcsin",), _op("Asin", special.asin64)),
    ("arccos", np.arccos, ("_sparse_arccos",), _op("Acos", special.acos64)),
    ("arctan", np.arctan, ("_sparse_arctan",), _op("Atan", special.atan64)),
    ("sinh", np.sinh, ("_sparse_sinh",), _op("Sinh", special.sinh64)),
    ("cosh", np.cosh, ("_sparse_cosh",), _op("Cosh", special.cosh64)),
    ("tanh", np.tanh, ("_sparse_tanh",), _op("Tanh")),
    ("arcsinh", np.arcsinh, ("_sparse_arcsinh",), _op("Asinh", special.asinh64)),
    ("arccosh", np.arccosh, ("_sparse_arccosh",), _op("Acosh", special.acosh64)),
    ("arctanh", np.arctanh, ("_sparse_arctanh",), _op("Atanh", special.atanh64)),
    ("degrees", lambda x: x * x.dtype.type(_DEG), ("_sparse_degrees",), M.scale(_DEG)),
    ("radians", lambda x: x * x.dtype.type(_RAD), ("_sparse_radians",), M.scale(_RAD)),
    ("gamma", special.gamma, ("_npx_gamma", "_sparse_gamma"),
     M.in_double(lambda g, x, w: special.gamma64(g, x))),
    ("gammaln", special.lgamma, ("_npx_gammaln", "_sparse_gammaln"),
     M.in_double(lambda g, x, w: special.gammaln64(g, x))),
    ("erf", special.erf, ("_npx_erf",),
     lambda g, x, w: special.erf64(g, x) if w == M.F64 else M.erf32(g, x, w)),
    ("erfinv", special.erfinv, ("_npx_erfinv",), special.erfinv_onnx),
    ("reciprocal", lambda x: 1.0 / x, (), _op("Reciprocal")),
    ("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x)), ("_sparse_sigmoid",), _op("Sigmoid")),
    ("softsign", lambda x: x / (1.0 + np.abs(x)), (), M.softsign),
]
for _name, _fn, _aliases, _lower in _MATH:
    lowering(unary(_name, math_unary(_fn), _aliases, gradient=UNARY_GRADS[_name]))(
        math_onnx(_lower))

_NATIVE: list[tuple[str, ArrayFn, tuple[str, ...], M.Native]] = [
    # computed in the dtype itself (MXNet's kernels do not go through math::)
    ("negative", np.negative, ("_sparse_negative",), M.negative),
    ("square", np.square, ("_sparse_square",), lambda g, x, dt: M.arith("Mul")(g, x, x, dt)),
    ("sign", _sign, ("_sparse_sign",), M.sign),
    ("relu", _relu, ("_sparse_relu",), M.relu),
    ("logical_not", _logical_not, (), M.logical_not),
    ("_copy", lambda x: x.copy(), ("identity",), lambda g, x, dt: g("Identity", x)),
    ("zeros_like", np.zeros_like, ("_sparse_zeros_like",), M.fill_like(0)),
    ("ones_like", np.ones_like, (), M.fill_like(1)),
]
for _name, _fn, _aliases, _lower in _NATIVE:
    lowering(unary(_name, _fn, _aliases, gradient=UNARY_GRADS[_name]))(native_onnx(_lower))


def _hard_sigmoid(p, x: np.ndarray) -> np.ndarray:
    """``clip(alpha * x + beta, 0, 1)`` with float32 ``alpha``/``beta`` (MXNet's ``real_t``)."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    alpha = np.asarray(np.float32(p.alpha), work)
    beta = np.asarray(np.float32(p.beta), work)
    out = alpha * x.astype(work, copy=False) + beta
    out = np.where(out > 1, work(1), out)
    return np.where(out < 0, work(0), out).astype(x.dtype, copy=False)


def _hard_sigmoid_onnx(ctx: LoweringContext) -> None:
    """``HardSigmoid`` (float32 alpha/beta; float16 computed in float32); float64, which has no
    onnxruntime kernel, as ``Clip(alpha x + beta, 0, 1)`` (NaN passes through both)."""
    p, g = ctx.params, M.Builder(ctx)
    work = M.F64 if ctx.dtype == M.F64 else M.F32
    alpha, beta = float(np.float32(p.alpha)), float(np.float32(p.beta))
    x = g.input(0, work)
    if work == M.F32:
        y = g("HardSigmoid", x, alpha=alpha, beta=beta)
    else:
        y = g("Clip", g("Add", g("Mul", x, g.k(alpha, work)), g.k(beta, work)),
              g.k(0, work), g.k(1, work))
    g.out(y, work)


lowering(register(OpDef("hard_sigmoid", params={"alpha": Float(0.2), "beta": Float(0.5)},
                        compute=_hard_sigmoid, lists_input_names=False,
                        gradient=hard_sigmoid_grad)))(_hard_sigmoid_onnx)


def _clip(p, x: np.ndarray) -> np.ndarray:
    """MXNet's clip kernel: ``x > a_max ? a_max : (x < a_min ? a_min : x)``, bounds in x's dtype."""
    lo = c_cast(np.asarray(p.a_min, np.float64), x.dtype)
    hi = c_cast(np.asarray(p.a_max, np.float64), x.dtype)
    return np.where(x > hi, hi, np.where(x < lo, lo, x))


def _clip_onnx(ctx: LoweringContext) -> None:
    """``Clip`` with the bounds converted to the dtype (inputs, so integers work from opset 13);
    when ``a_min > a_max`` (or a bound is NaN) MXNet's order of tests, which Clip does not
    follow, as two Wheres."""
    p, g = ctx.params, M.Builder(ctx)
    dt = np.dtype(ctx.dtype)
    lo = c_cast(np.asarray(p.a_min, np.float64), dt)
    hi = c_cast(np.asarray(p.a_max, np.float64), dt)
    if lo <= hi:
        g.out(g("Clip", ctx.inputs[0], g.k(lo, dt), g.k(hi, dt)), dt)
        return
    work = np.dtype(np.int32) if dt.kind in "iu" and dt.itemsize < 4 else dt  # no int8 Where
    x, klo, khi = g.input(0, work), g.k(lo, work), g.k(hi, work)
    g.out(g.where(g("Greater", x, khi), khi, g.where(g("Less", x, klo), klo, x)), work)


def _np_clip_is_mxnet_clip() -> bool:
    """Whether ``np.clip`` gives MXNet's ``x > hi ? hi : (x < lo ? lo : x)`` bit for bit on
    signed zeros and NaN (numpy 1.23 turns a -0.0 inside ``[0, hi]`` into +0.0; numpy 2 keeps
    it): probed once, on this numpy."""
    x = np.array([-0.0, 0.0, np.nan, -1.0, 1.0, -np.inf, np.inf])
    for lo, hi in ((0.0, 0.5), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)):
        want = np.where(x > hi, hi, np.where(x < lo, lo, x))
        got = np.clip(x, lo, hi)
        if not (np.array_equal(got, want, equal_nan=True)
                and np.array_equal(np.signbit(got), np.signbit(want))):
            return False
    return True


_NP_CLIP_EXACT = _np_clip_is_mxnet_clip()


def _clip_into(p, args: list, i: int) -> list | None:
    """In place (the executor's inference plan): MXNet's ``x > hi ? hi : (x < lo ? lo : x)`` bit
    for bit (NaN and -0.0 kept) when ``lo <= hi``, with ``np.clip`` where this numpy's gives
    exactly that, else two masked copies; when ``lo > hi`` the op runs."""
    x = args[0]
    if x.dtype not in (np.float32, np.float64):
        return None
    lo = np.asarray(p.a_min, np.float64).astype(x.dtype)
    hi = np.asarray(p.a_max, np.float64).astype(x.dtype)
    if not lo <= hi:
        return None
    if _NP_CLIP_EXACT:
        np.clip(x, lo, hi, out=x)
    else:
        np.copyto(x, hi, where=x > hi)
        np.copyto(x, lo, where=x < lo)  # lo <= hi: no value set to hi is below lo
    return [x]


lowering(register(OpDef("clip", params={"a_min": Float(), "a_max": Float()}, compute=_clip,
                        aliases=("_npi_clip", "_sparse_clip"), fresh_outputs=True,
                        inplace=InPlace(_clip_into, (0,), lambda p: p.a_min <= p.a_max),
                        lists_input_names=False, gradient=clip_grad)))(
    _clip_onnx)


# --- casts ------------------------------------------------------------------------------------
def cast_array(x: np.ndarray, name: str) -> np.ndarray:
    """``x`` converted to the MXNet dtype ``name``; bfloat16 gives its raw bits (uint16), as
    gluonport carries bfloat16 everywhere."""
    if name == "bfloat16":
        return dtypes.float32_to_bfloat16(x.astype(np.float32))
    return c_cast(x, dtypes.to_numpy(name))


def _cast_type(p, in_types):
    return in_types, [dtypes.to_numpy(p.dtype)]


def _cast_onnx(ctx: LoweringContext) -> None:
    """``Cast`` (C's conversion on onnxruntime: truncation, wrap-around between integers, NaN
    is true); output ``k`` of a multi-output cast is input ``k`` converted. bfloat16 results
    are refused: gluonport carries them as raw uint16 bits, which ONNX cannot reinterpret."""
    if getattr(ctx.params, "dtype", None) == "bfloat16":
        raise ctx.fail("a cast to bfloat16 cannot be exported: gluonport holds bfloat16 as "
                       "its raw uint16 bits and ONNX has no bit-reinterpreting cast; cast to "
                       "float16 or float32 instead")
    g = M.Builder(ctx)
    for k in range(len(ctx.outputs)):
        if k == 0 or ctx.wants(k):
            g.out(ctx.inputs[k], ctx.in_dtypes[k], k)


lowering(register(OpDef("Cast", params={"dtype": DType(choices=CAST_DTYPES)},
                        compute=lambda p, x: cast_array(x, p.dtype), infer_type=_cast_type,
                        aliases=("cast", "_npi_cast", "_npx_cast"),
                        lists_input_names=False, gradient=cast_grad)))(_cast_onnx)

_AMP_FLOATS = (np.dtype(np.float16), np.dtype(np.float32))


def _amp_cast_type(p, in_types):
    t = in_types[0]
    if t is None:
        return in_types, [None]
    return in_types, [dtypes.to_numpy(p.dtype) if np.dtype(t) in _AMP_FLOATS else t]


def _amp_cast(p, x: np.ndarray) -> np.ndarray:
    """Casts float16/float32 inputs to ``dtype``; any other dtype passes through unchanged."""
    return cast_array(x, p.dtype) if x.dtype in _AMP_FLOATS else x.copy()


lowering(register(OpDef("amp_cast", params={"dtype": DType(choices=[d for d in CAST_DTYPES
                                                                     if d != "bool"])},
                        compute=_amp_cast, infer_type=_amp_cast_type, lists_input_names=False,
                        amp_cast_input=lambda k: 0, gradient=amp_cast_grad)))(_cast_onnx)


def _amp_widest(p, types: list) -> np.dtype | None:
    """``AMPMultiCastType``'s target: float32 if any input is float32 (float16 if ``cast_narrow``
    and any is float16); starts from the first input's type."""
    if p.cast_narrow:
        target = np.dtype(np.float32)
        if any(t is not None and np.dtype(t) == np.float16 for t in types):
            target = np.dtype(np.float16)
        return target
    if any(t is not None and np.dtype(t) == np.float32 for t in types):
        return np.dtype(np.float32)
    return None if types[0] is None else np.dtype(types[0])


def _amp_multicast_type(p, in_types):
    widest = _amp_widest(p, in_types)
    outs = [widest if t is not None and np.dtype(t) in _AMP_FLOATS else t for t in in_types]
    return in_types, outs


def _amp_multicast(p, *xs: np.ndarray) -> list[np.ndarray]:
    widest = _amp_widest(p, [x.dtype for x in xs])
    return [x.astype(widest) if x.dtype in _AMP_FLOATS else x.copy() for x in xs]


lowering(register(OpDef(
             "amp_multicast", params={"num_outputs": Int(), "cast_narrow": Bool(False)},
             inputs=lambda p: [f"data_{i}" for i in range(p.num_outputs)],
             num_outputs=lambda p: p.num_outputs, compute=_amp_multicast,
             infer_shape=lambda p, s: (list(s), list(s)), infer_type=_amp_multicast_type,
             amp_cast_input=lambda k: k, gradient=amp_multicast_grad,
)))(_cast_onnx)


# --- several inputs ---------------------------------------------------------------------------
def _add_n(p, *xs: np.ndarray) -> np.ndarray:
    out = xs[0].copy()
    with np.errstate(over="ignore"):
        for x in xs[1:]:
            out += x
    return out


def _add_n_onnx(ctx: LoweringContext) -> None:
    """``Sum`` for floats (added left to right, as MXNet does); integers, which Sum has no
    kernel for, as a chain of wrapping Adds."""
    g = M.Builder(ctx)
    dt = np.dtype(ctx.dtype)
    if dt.kind == "f":
        y = g("Sum", *ctx.inputs)
    else:
        add = M.arith("Add")
        y = ctx.inputs[0]
        for x in ctx.inputs[1:]:
            y = add(g, y, x, dt)
    g.out(y, dt)


lowering(register(OpDef("add_n", params={"num_args": Int()}, variadic="num_args", compute=_add_n,
                        aliases=("ElementWiseSum", "_sparse_ElementWiseSum", "_sparse_add_n"),
                        gradient=add_n_grad)))(_add_n_onnx)

lowering(register(OpDef("_identity_with_attr_like_rhs", inputs=("lhs", "rhs"),
                        compute=lambda p, lhs, rhs: lhs.copy(), gradient=like_rhs_grad)
                  ))(lambda ctx: M.Builder(ctx).out(ctx.inputs[0], ctx.dtype))

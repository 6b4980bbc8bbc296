"""Elementwise math as ONNX subgraphs: the lowerings behind the export handlers of the elemwise
and unary families, with MXNet 1.9.1's semantics on onnxruntime's kernels.

A lowering is a function of a :class:`Builder` and tensor names that returns the name of its
result:

* binary ``fn(g, a, b, dtype)``: two operands of one dtype, the result in that dtype
  (comparisons too: MXNet returns 1 / 0 in the operands' dtype);
* unary math ``fn(g, x, work)``: a float32 or float64 tensor in, the same dtype out; the handler
  casts around it the way MXNet computes (float16 in float32, integers in float64, then a C
  conversion back, which onnxruntime's ``Cast`` performs on x86: truncation, and the integer
  minimum for NaN and out-of-range values).

What onnxruntime (CPU, 1.16 to 1.31) lacks, and the way around it:

* int8/uint8 kernels for arithmetic, comparisons, Max/Min and Where (1.16 has none; 1.31 none
  for Add/Sub/Mul/Div before opset 14): narrow integers are computed in int32 and cast back (the
  cast wraps, as C's integer arithmetic does);
* integer ``Div``/``Mod`` by 0 fail, and int32/int64 ``INT_MIN / -1`` kills the process
  (SIGFPE): the divisor is replaced before dividing and the result fixed after (MXNet gives 0
  for a zero divisor in ``mod``; gluonport also for ``div``, where MXNet itself dies);
* no float64 kernel for ``Tan``, ``Asin``, ``Acos``, ``Atan``, ``Sinh``, ``Cosh``, ``Asinh``,
  ``Acosh``, ``Atanh``, ``Softsign``, ``Erf`` and ``HardSigmoid``: float64 data goes through
  compositions of ops that have one (:mod:`gluonport.ops.math.special` for the special
  functions), accurate to a few units in the last place;
* ``Sign(nan)`` is NaN (MXNet: 0), ``Erf(nan)`` is 1 in 1.16, and ``Max``/``Min`` propagate
  NaN in 1.31 but not in 1.16: NaN is handled explicitly; ``Round`` rounds halves to even
  (MXNet: away from zero, and ``rint`` down): composed from ``Floor``/``Ceil``;
* float64 ``cos`` and ``tan`` use ``Cos``, which onnxruntime 1.16 has no double kernel for
  (1.31 has).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..._core import dtypes
from . import LoweringContext

__all__ = ["Builder", "Unary", "Binary", "Native", "F32", "F64", "math_work", "unary_op",
           "in_double", "trunc", "round_away", "rint_down", "cbrt", "rcbrt", "log_exact",
           "log1p", "expm1", "scale",
           "softsign", "arith", "div", "mod", "power", "hypot", "minmax", "compare", "logic",
           "negative", "sign", "relu", "logical_not", "fill_like", "widen_narrow", "erf32",
           "onnx_input_as", "NO_DOUBLE_KERNEL", "named", "onnx_work_dtype", "onnx_compute"]

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, BOOL = np.dtype(np.int32), np.dtype(np.bool_)


def onnx_input_as(ctx: LoweringContext, i: int, dtype) -> str:
    """Input ``i`` in ``dtype``: itself, a converted initializer (parameters), or a Cast."""
    dtype = np.dtype(dtype)
    if ctx.in_dtypes[i] == dtype:
        return ctx.inputs[i]
    value = ctx.param(i)
    if value is not None:
        return ctx.const(value.astype(dtype), f"{i}_as_{dtype.name}")
    return ctx.cast_to(ctx.inputs[i], dtype)


class Builder:
    """Node-building shorthand for one handler call: ``g("Add", a, b)``; ``g.k(0.5, dtype)``
    makes a scalar constant once per value and dtype."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx = ctx
        self._consts: dict[tuple, str] = {}
        self._first = len(ctx.nodes)  # nodes from here on are this handler's

    def __call__(self, op_type: str, *inputs: str, **attrs) -> str:
        return self.ctx.make(op_type, list(inputs), **attrs)

    @property
    def opset(self) -> int:
        return self.ctx.opset

    def k(self, value, dtype) -> str:
        """A constant of ``dtype`` (a scalar unless ``value`` is an array)."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            self._consts[key] = self.ctx.const(arr, "k")
        return self._consts[key]

    def cast(self, x: str, src, dst) -> str:
        """``x`` (of dtype ``src``) as ``dst``; no node when they are equal."""
        if np.dtype(src) == np.dtype(dst):
            return x
        return self.ctx.cast_to(x, np.dtype(dst))

    def where(self, cond: str, a: str, b: str) -> str:
        return self("Where", cond, a, b)

    def input(self, i: int, dtype) -> str:
        """Input ``i`` in ``dtype`` (a parameter is converted at export time)."""
        return onnx_input_as(self.ctx, i, dtype)

    def out(self, y: str, dtype, k: int = 0) -> None:
        """Make ``y`` (of ``dtype``) output ``k``, cast to the output's dtype if it differs:
        the node of this handler that made ``y`` is renamed, anything else (an input, a
        constant) goes through an Identity."""
        ctx = self.ctx
        target = np.dtype(ctx.out_dtypes[k] or dtype)
        if np.dtype(dtype) != target:
            y = ctx.cast_to(y, target)
        mine = ctx.nodes[self._first:]
        if mine and list(mine[-1].output) == [y]:
            mine[-1].output[0] = ctx.outputs[k]
        else:
            ctx.make("Identity", [y], outputs=[ctx.outputs[k]])


def math_work(dtype, double: bool = False) -> np.dtype:
    """The dtype MXNet's ``math::`` functions compute in: float32 for float16 and float32,
    float64 for float64, integers and bool (``double`` forces float64)."""
    dtype = np.dtype(dtype)
    if dtype == F64 or double or dtype.kind not in "f":
        return F64
    return F32


# --- unary math: fn(g, x, work) -------------------------------------------------------------
Unary = Callable[[Builder, str, np.dtype], str]


def unary_op(op_type: str, f64: Callable[[Builder, str], str] | None = None) -> Unary:
    """The ONNX op ``op_type``; ``f64(g, x)`` instead on float64 data when onnxruntime has no
    double kernel for it."""

    def lower(g: Builder, x: str, work: np.dtype) -> str:
        if work == F64 and f64 is not None:
            return f64(g, x)
        return g(op_type, x)

    lower.__name__ = f"lower_{op_type}"
    return lower


def in_double(lower: Unary) -> Unary:
    """Mark ``lower`` to run in float64 for every input dtype (float32 results rounded once from
    double, as C's ``cbrtf``/``tgammaf`` are correctly rounded)."""

    def wrapped(g: Builder, x: str, work: np.dtype) -> str:
        return lower(g, x, work)

    wrapped.double = True  # type: ignore[attr-defined]
    wrapped.__name__ = lower.__name__
    return wrapped


def _less0(g: Builder, x: str, work) -> str:
    return g("Less", x, g.k(0, work))


def _signed(g: Builder, x: str, r: str, work) -> str:
    """``r`` (>= 0) with the sign of ``x``. (A zero result is +0: onnxruntime's Where returns +0
    for a -0.0 in its first branch, so the sign of zero is not kept anywhere here.)"""
    return g.where(g("Less", x, g.k(0, work)), g("Neg", r), r)


def trunc(g: Builder, x: str, work) -> str:
    """Toward zero: ``ceil`` below 0, ``floor`` above (ONNX has no Trunc)."""
    return g.where(_less0(g, x, work), g("Ceil", x), g("Floor", x))


def round_away(g: Builder, x: str, work) -> str:
    """C's ``round``: halves away from zero. On ``|x|``, where ``|x| - floor(|x|)`` is exact
    (``floor(x + 0.5)`` would round 0.49999997 up)."""
    a = g("Abs", x)
    f = g("Floor", a)
    up = g("GreaterOrEqual", g("Sub", a, f), g.k(0.5, work))
    return _signed(g, x, g.where(up, g("Add", f, g.k(1, work)), f), work)


def rint_down(g: Builder, x: str, work) -> str:
    """MXNet's ``rint``: the nearer of floor and ceil, floor on a tie (same float operations)."""
    lo, hi = g("Floor", x), g("Ceil", x)
    return g.where(g("LessOrEqual", g("Sub", x, lo), g("Sub", hi, x)), lo, hi)


def cbrt(g: Builder, x: str, work) -> str:
    """``sign(x) |x|^(1/3)`` with one Newton step (``pow`` with a rounded 1/3 is off by
    ``|log x|`` ulps); a result within rounding of an integer whose cube is ``|x|`` becomes that
    integer (libm's cbrt is exact on cubes, and integer inputs truncate after it)."""
    a = g("Abs", x)
    y = g("Pow", a, g.k(1.0 / 3.0, work))
    step = g("Div", g("Sub", y, g("Div", a, g("Mul", y, y))), g.k(3, work))
    finite = g("And", g("Greater", y, g.k(0, work)), g("Less", y, g.k(np.inf, work)))
    y = g.where(finite, g("Sub", y, step), y)
    r = g("Round", y)
    y = g.where(g("Equal", g("Mul", g("Mul", r, r), r), a), r, y)
    return _signed(g, x, y, work)


def rcbrt(g: Builder, x: str, work) -> str:
    """``1 / cbrt(x)``; +-inf at +-0 taken from ``1 / x`` (cbrt's zero has lost its sign)."""
    y = g("Reciprocal", cbrt(g, x, work))
    return g.where(g("Equal", x, g.k(0, work)), g("Reciprocal", x), y)


def log_exact(base: float) -> Unary:
    """``log(x) / log(base)``, exact on powers of ``base`` (as libm's log2/log10 are; integer
    inputs truncate: ``log10(1000)`` must give 3, not 2.9999999999999996)."""

    def lower(g: Builder, x: str, work) -> str:
        y = g("Div", g("Log", x), g.k(math.log(base), work))
        r = g("Round", y)
        return g.where(g("Equal", g("Pow", g.k(base, work), r), x), r, y)

    lower.__name__ = f"log{base:g}"
    return lower


def log1p(g: Builder, x: str, work) -> str:
    """Kahan's ``log(u) x / (u - 1)`` with ``u = 1 + x`` (ONNX has no Log1p): as accurate as
    log for tiny x."""
    one = g.k(1, work)
    u = g("Add", one, x)
    main = g("Div", g("Mul", g("Log", u), x), g("Sub", u, one))
    r = g.where(g("Equal", u, one), x, main)
    return g.where(g("Equal", u, g.k(np.inf, work)), u, r)


def expm1(g: Builder, x: str, work) -> str:
    """Kahan's ``(u - 1) x / log(u)`` with ``u = exp(x)`` (ONNX has no Expm1)."""
    one = g.k(1, work)
    u = g("Exp", x)
    um1 = g("Sub", u, one)
    main = g("Div", g("Mul", um1, x), g("Log", u))
    r = g.where(g("Equal", u, one), x, main)
    r = g.where(g("Equal", um1, g.k(-1, work)), um1, r)
    return g.where(g("Equal", u, g.k(np.inf, work)), u, r)


def scale(factor: float) -> Unary:
    """``x * factor`` with the factor in the work dtype (degrees, radians)."""

    def lower(g: Builder, x: str, work) -> str:
        return g("Mul", x, g.k(factor, work))

    return lower


def erf32(g: Builder, x: str, work) -> str:
    """``Erf``, NaN kept (onnxruntime 1.16's float Erf gives 1)."""
    return g.where(g("IsNaN", x), x, g("Erf", x))


def softsign(g: Builder, x: str, work) -> str:
    """``x / (1 + |x|)``, MXNet's formula (onnxruntime's Softsign has no double kernel)."""
    return g("Div", x, g("Add", g.k(1, work), g("Abs", x)))


# --- binary: fn(g, a, b, dtype) ---------------------------------------------------------------
Binary = Callable[[Builder, str, str, np.dtype], str]


def _narrow(dtype: np.dtype) -> bool:
    return dtype.kind in "iu" and dtype.itemsize < 4


def widen_narrow(lower: Binary) -> Binary:
    """``lower`` computed in int32 for int8/uint8 operands and cast back (wrapping, as C's
    integer arithmetic does); onnxruntime lacks most narrow integer kernels."""

    def wrapped(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
        if not _narrow(dtype):
            return lower(g, a, b, dtype)
        y = lower(g, g.cast(a, dtype, I32), g.cast(b, dtype, I32), I32)
        return g.cast(y, I32, dtype)

    wrapped.__name__ = lower.__name__
    return wrapped


def arith(op_type: str) -> Binary:
    """``Add``/``Sub``/``Mul`` in the dtype itself (integers wrap)."""

    def lower(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
        return g(op_type, a, b)

    lower.__name__ = f"lower_{op_type}"
    return widen_narrow(lower)


def _bad_divisor(g: Builder, b: str, dtype: np.dtype) -> tuple[str, str | None]:
    """(b == 0, b == -1 for signed types): the divisors onnxruntime cannot take."""
    zero = g("Equal", b, g.k(0, dtype))
    minus1 = g("Equal", b, g.k(-1, dtype)) if dtype.kind == "i" else None
    return zero, minus1


@widen_narrow
def div(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
    """True division for floats; C's truncating division for integers, 0 for a zero divisor
    and ``-a`` (wrapping) for ``-1``, neither of which reaches onnxruntime's Div."""
    if dtype.kind == "f":
        return g("Div", a, b)
    zero, minus1 = _bad_divisor(g, b, dtype)
    bad = zero if minus1 is None else g("Or", zero, minus1)
    q = g("Div", a, g.where(bad, g.k(1, dtype), b))
    if minus1 is not None:
        q = g.where(minus1, g("Neg", a), q)
    return g.where(zero, g.k(0, dtype), q)


@widen_narrow
def mod(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
    """MXNet's mod: the remainder takes the divisor's sign, 0 for a zero divisor.

    Floats: ``fmod`` moved onto the divisor's side (the sum rounds once, as MXNet's double
    computation rounded back does). Integers: ONNX's integer Mod already takes the divisor's
    sign; a divisor of 0 or -1 is replaced by 1, which gives the same 0.
    """
    if dtype.kind == "f":
        zero = g.k(0, dtype)
        r = g("Mod", a, b, fmod=1)
        other_side = g("Xor", g("Less", r, zero), g("Less", b, zero))
        fix = g("And", g("Not", g("Equal", r, zero)), other_side)
        r = g.where(fix, g("Add", r, b), r)
        return g.where(g("Equal", b, zero), zero, r)
    zero, minus1 = _bad_divisor(g, b, dtype)
    bad = zero if minus1 is None else g("Or", zero, minus1)
    return g("Mod", a, g.where(bad, g.k(1, dtype), b))


def power(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
    """``powf`` (float32) for every dtype but float64, converted back like C."""
    work = F64 if dtype == F64 else F32
    y = g("Pow", g.cast(a, dtype, work), g.cast(b, dtype, work))
    return g.cast(y, work, dtype)


def hypot(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
    """``sqrt(a^2 + b^2)`` in double, rounded to float32 unless the data is float64 (``hypotf``
    evaluates the same way; float64 inputs above 1e154 overflow where C's hypot would not)."""
    a64, b64 = g.cast(a, dtype, F64), g.cast(b, dtype, F64)
    h = g("Sqrt", g("Add", g("Mul", a64, a64), g("Mul", b64, b64)))
    if dtype != F64:
        h = g.cast(h, F64, F32)
        return g.cast(h, F32, dtype)
    return h


def minmax(op_type: str) -> Binary:
    """``Max``/``Min``; NaN on either side gives NaN, as numpy's maximum and MXNet's do (made
    explicit: onnxruntime 1.16's Max returns the other operand)."""

    def lower(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
        m = g(op_type, a, b)
        if dtype.kind != "f":
            return m
        nan = g("Or", g("IsNaN", a), g("IsNaN", b))
        return g.where(nan, g.k(np.nan, dtype), m)

    return widen_narrow(lower)


def compare(op_type: str, negate: bool = False) -> Binary:
    """A comparison, 1 / 0 in the operands' dtype (``negate``: not-equal)."""

    def lower(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
        r = g(op_type, a, b)
        if negate:
            r = g("Not", r)
        return g.cast(r, BOOL, dtype)

    return widen_narrow(lower)


def logic(op_type: str) -> Binary:
    """``And``/``Or``/``Xor`` of ``x != 0`` (NaN is true, as in C), in the operands' dtype."""

    def lower(g: Builder, a: str, b: str, dtype: np.dtype) -> str:
        r = g(op_type, g.cast(a, dtype, BOOL), g.cast(b, dtype, BOOL))
        return g.cast(r, BOOL, dtype)

    return lower


# --- unary ops computed in the dtype itself: fn(g, x, dtype) -----------------------------------
Native = Callable[[Builder, str, np.dtype], str]


def negative(g: Builder, x: str, dtype: np.dtype) -> str:
    """``-x``; uint8 wraps (onnxruntime's Neg has no unsigned kernel: done in int32)."""
    if dtype.kind == "u":
        return g.cast(g("Neg", g.cast(x, dtype, I32)), I32, dtype)
    return g("Neg", x)


def sign(g: Builder, x: str, dtype: np.dtype) -> str:
    """-1, 0 or 1; MXNet's sign of NaN is 0 (ONNX's is NaN)."""
    s = g("Sign", x)
    if dtype.kind != "f":
        return s
    return g.where(g("IsNaN", x), g.k(0, dtype), s)


def relu(g: Builder, x: str, dtype: np.dtype) -> str:
    """``Relu`` (NaN passes, as in MXNet); integers through ``Max(x, 0)`` (Relu has integer
    kernels only from opset 14)."""
    if dtype.kind == "f":
        return g("Relu", x)
    return minmax("Max")(g, x, g.k(0, dtype), dtype)


def logical_not(g: Builder, x: str, dtype: np.dtype) -> str:
    """1 where ``x == 0``, else 0, in x's dtype."""
    return compare("Equal")(g, x, g.k(0, dtype), dtype)


def fill_like(value: float) -> Callable[[Builder, str, np.dtype], str]:
    """``ConstantOfShape(Shape(x))`` filled with ``value`` (the shape is a constant unless the
    input varies with the dynamic axes)."""

    def lower(g: Builder, x: str, dtype: np.dtype) -> str:
        from onnx import numpy_helper

        ctx = g.ctx
        shape = g("Shape", x) if ctx.is_dynamic(0) else ctx.ints(ctx.in_shapes[0], "shape")
        fill = numpy_helper.from_array(np.full((1,), value, dtype=dtype), "value")
        return g("ConstantOfShape", shape, value=fill)

    return lower


# --- work dtypes of single-op lowerings (NN ops) ----------------------------------------------
# onnxruntime's CPU provider has no double kernel for these ONNX ops (onnxruntime 1.16 to 1.31):
# float64 data goes through them in float32 (relative error ~1e-7) so the model still runs.
NO_DOUBLE_KERNEL = frozenset({"Softplus", "Softsign", "Elu", "Selu", "LeakyRelu", "PRelu", "Erf",
                              "Gelu", "LRN", "InstanceNormalization"})


def named(out: str | None) -> list[str] | None:
    """``outputs=`` for ``ctx.make``: the given name, or a fresh one when ``None``."""
    return [out] if out else None


def onnx_work_dtype(dtype, op_types: tuple[str, ...] = (), keep_f16: bool = False) -> np.dtype:
    """The dtype an exported op computes in: float32 for float16 data (MXNet computes float16
    in float32 and rounds once; ``keep_f16`` for single elementwise nodes, whose kernels round
    once too) and for float64 data through an op in ``NO_DOUBLE_KERNEL``; otherwise the
    data's own."""
    dt = np.dtype(dtype)
    if (dt == np.float16 and not keep_f16) or (
            dt == np.float64 and NO_DOUBLE_KERNEL.intersection(op_types)):
        return np.dtype(np.float32)
    return dt


def onnx_compute(ctx: LoweringContext, build: Callable, op_types: tuple[str, ...] = (),
                 out_dtype=None,
                 keep_f16: bool = False) -> None:
    """Define ``ctx.outputs[0]`` as ``build(x, out)`` on input 0 in its work dtype
    (:func:`onnx_work_dtype`), cast to ``out_dtype`` (default: the input's) when they differ.

    ``build`` returns its result's tensor name and writes it to ``out`` when ``out`` is given
    (no cast needed), else to a fresh name.
    """
    dt = np.dtype(ctx.in_dtypes[0])
    work = onnx_work_dtype(dt, op_types, keep_f16)
    target = np.dtype(out_dtype) if out_dtype is not None else dt
    x = onnx_input_as(ctx, 0, work)
    if target == work:
        build(x, ctx.outputs[0])
        return
    ctx.make("Cast", [build(x, None)], outputs=[ctx.outputs[0]], to=dtypes.onnx_of(target))

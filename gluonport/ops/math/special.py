"""Special functions numpy lacks, vectorized, to double precision: erf, erfc, erfinv, gamma, lgamma,
digamma (the gradients of gamma and gammaln).

MXNet computes these with the C library (``erff``/``erf``, ``tgammaf``/``tgamma``,
``lgammaf``/``lgamma``) and cephes' ``ndtri`` for ``erfinv``. gluonport evaluates them in float64
here (no scipy dependency) and the op layer rounds to the array's dtype, so float32 results agree
with MXNet's to the last bit or two. Every function takes and returns float64 arrays and follows
C's conventions at poles and outside the domain (``tgamma(-1) = nan``, ``lgamma(0) = inf``,
``erfinv(1) = inf``, ``erfinv(2) = nan``).

ONNX compositions (below in this file, used by the unary ops' lowerings):

Special and float64 functions as ONNX subgraphs (ONNX has no ErfInv, Gamma or LGamma, and
onnxruntime no float64 Erf, Tan, Atan, Sinh... kernels). Used by the unary family's export.

* ``erf`` (float64) and ``erfinv``: polynomials fitted, on first use, to gluonport's own
  double-precision functions above (least squares on Chebyshev nodes'
  worth of samples, converted to the power basis, which is well conditioned on these ranges).
  ``erf``: ``x P(x^2)`` for ``|x| < 2``, ``1 - exp(-x^2) Q(1/|x|)`` up to 6 (erf is 1 in double
  beyond). ``erfinv``: in ``w = -log((1 - x)(1 + x))`` (M. Giles' variable, exact near 1 since
  ``1 - x`` is), ``x P(w)`` for ``w < 5``, ``x Q(sqrt w)`` above. Relative error: ~1e-14 in
  float64, ~2e-7 in float32 (lower degrees for float32 data).
* ``gamma``/``gammaln``: the Lanczos sum above (g = 7, nine terms) and
  the reflection formula, with the same pole and overflow rules (~1e-15).
* float64 ``atan`` (and ``asin``, ``acos`` through it): a float32 ``Atan`` seed on the argument
  reduced to [0, 1], refined by two Newton steps on ``tan(y) = z`` with double ``Sin``/``Cos``.
* float64 hyperbolic functions from ``Exp``/``Log`` (with ``expm1``/``log1p`` compositions so
  small arguments keep their precision).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..lowering.math import F32, F64, Builder, expm1, log1p

__all__ = ["erf", "erfc", "erfinv", "gamma", "lgamma", "erf64", "erfinv_onnx", "gamma64",
           "gammaln64", "tan64", "atan64", "asin64", "acos64", "sinh64", "cosh64", "asinh64",
           "acosh64", "atanh64", "digamma", "digamma64"]


_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_SERIES_LIMIT = 2.5  # |x| below: power series for erf; above: continued fraction for erfc
_SERIES_TERMS = 48   # enough for 1e-17 relative at |x| = 2.5 (terms peak near n = x**2)
_CF_DEPTH = 60       # continued-fraction depth for erfc at |x| >= 2.5 (converged to 1 ulp)


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1)): positive terms only."""
    two_x2 = 2.0 * x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * two_x2 / (2 * n + 1)
        total += term
    return _TWO_OVER_SQRT_PI * np.exp(-x * x) * total


def _erfc_cf(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x >= 2.5: exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))."""
    frac = x.copy()
    for k in range(_CF_DEPTH, 0, -1):
        frac = x + (0.5 * k) / frac
    with np.errstate(invalid="ignore"):
        return np.exp(-x * x) / (np.sqrt(np.pi) * frac)


def _erf_erfc(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(erf(x), erfc(x)), each accurate in the region where it is small."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    erf_abs = np.empty_like(ax)
    erfc_abs = np.empty_like(ax)
    near = ~(ax >= _SERIES_LIMIT)  # NaN goes to the series, which keeps it NaN
    erf_abs[near] = _erf_series(ax[near])
    erfc_abs[near] = 1.0 - erf_abs[near]
    far = ~near
    erfc_abs[far] = _erfc_cf(ax[far])
    erf_abs[far] = 1.0 - erfc_abs[far]
    neg = x < 0
    erfc_out = np.where(neg, 2.0 - erfc_abs, erfc_abs)
    return np.where(neg, -erf_abs, erf_abs), erfc_out


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, float64, relative error ~1e-16."""
    return _erf_erfc(x)[0]


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function 1 - erf(x), accurate in the tails."""
    return _erf_erfc(x)[1]


def _erfinv_guess(a: np.ndarray) -> np.ndarray:
    """Winitzki's closed-form approximation of erfinv on [0, 1) (relative error < 2e-3)."""
    k = 0.147
    ln = np.log1p(-a * a)
    t = 2.0 / (np.pi * k) + 0.5 * ln
    return np.sqrt(np.sqrt(t * t - ln / k) - t)


def erfinv(y: np.ndarray) -> np.ndarray:
    """Inverse error function: a closed-form guess refined by three Halley steps.

    Near 0 the residual is ``erf(x) - |y|``; near 1 it is ``(1 - |y|) - erfc(x)`` so the tail keeps
    full relative precision. ``erfinv(+-1) = +-inf`` and ``|y| > 1`` gives NaN, as in MXNet.
    """
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    inside = a < 1.0
    a_in = a[inside]
    x = _erfinv_guess(a_in)
    tail = a_in > 0.5
    one_minus = 1.0 - a_in  # exact for a >= 0.5 (Sterbenz)
    for _ in range(3):
        e, ec = _erf_erfc(x)
        resid = np.where(tail, one_minus - ec, e - a_in)
        slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
        step = resid / slope
        x = x - step / (1.0 + x * step)
    out = np.full_like(a, np.nan)
    out[inside] = x
    out[a == 1.0] = np.inf
    return np.copysign(out, y)


# Lanczos approximation, g = 7, nine terms (Godfrey's coefficients; ~1e-15 relative accuracy).
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lanczos_sum(x: np.ndarray) -> np.ndarray:
    """A(x) = c0 + sum_k c_k / (x - 1 + k), so Gamma(x) = sqrt(2 pi) t^(x-1/2) e^-t A(x)."""
    total = np.full_like(x, _LANCZOS[0])
    for k in range(1, len(_LANCZOS)):
        total += _LANCZOS[k] / (x - 1.0 + k)
    return total


def _sin_pi(x: np.ndarray) -> np.ndarray:
    """sin(pi x) from the exact offset to the nearest integer n: (-1)^n sin(pi (x - n))."""
    n = np.round(x)
    d = x - n  # exact
    parity = np.fmod(n, 2.0)  # exact, also for |n| > 2**53
    return np.where(parity == 0.0, 1.0, -1.0) * np.sin(np.pi * d)


def _gamma_right(x: np.ndarray) -> np.ndarray:
    """Gamma(x) for x >= 0.5; the power is split in two so Gamma(171) does not overflow early."""
    t = x + (_LANCZOS_G - 0.5)
    half = t ** (0.5 * (x - 0.5))
    return np.sqrt(2.0 * np.pi) * half * (half * np.exp(-t)) * _lanczos_sum(x)


_GAMMA_OVERFLOW = 171.7  # Gamma(x) exceeds the float64 range above ~171.62
_GAMMA_INT_MAX = 171  # the largest n with a finite Gamma(n) = (n - 1)! in float64
#: Gamma(n) = (n - 1)! for n = 1 .. 171, each correctly rounded (``float`` of the exact int).
#: The Lanczos sum is ~1e-15 off at the integers too (Gamma(5) can be 23.999999999999996,
#: depending on numpy's exp/pow), which an integer cast truncates to 23; C's tgamma is exact
#: there, and so is this table.
_FACTORIALS = np.array([float(math.factorial(n - 1)) for n in range(1, _GAMMA_INT_MAX + 1)])


def _positive_integers(x: np.ndarray) -> np.ndarray:
    """Where ``x`` is one of 1, 2, ..., 171 (the arguments :data:`_FACTORIALS` covers)."""
    return (x == np.floor(x)) & (x >= 1.0) & (x <= _GAMMA_INT_MAX)


def gamma(x: np.ndarray) -> np.ndarray:
    """C's ``tgamma``: Gamma(x); +-inf at +-0, NaN at negative integers and -inf; exact (the
    correctly rounded factorial) at the positive integers."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        right = ~(x < 0.5)  # NaN goes right and stays NaN
        xr = x[right]
        out[right] = np.where(xr > _GAMMA_OVERFLOW, np.inf, _gamma_right(xr))
        xl = x[~right]
        # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        refl = np.pi / (_sin_pi(xl) * _gamma_right(1.0 - xl))
        bad = (xl == np.floor(xl)) & (xl != 0.0)  # negative integers and -inf
        refl = np.where(bad, np.nan, refl)
        out[~right] = np.where(xl == 0.0, np.copysign(np.inf, xl), refl)
        ints = _positive_integers(x)
        out[ints] = _FACTORIALS[x[ints].astype(np.intp) - 1]
    return out


def lgamma(x: np.ndarray) -> np.ndarray:
    """C's ``lgamma``: log|Gamma(x)|; +inf at the poles 0, -1, -2, ... and at +-inf."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        right = ~(x < 0.5)
        xr = x[right]
        t = xr + (_LANCZOS_G - 0.5)
        val = (0.5 * np.log(2.0 * np.pi) + (xr - 0.5) * np.log(t) - t
               + np.log(_lanczos_sum(xr)))
        val = np.where((xr == 1.0) | (xr == 2.0), 0.0, val)  # exact zeros, as C gives
        out[right] = np.where(xr == np.inf, np.inf, val)
        xl = x[~right]
        t = (1.0 - xl) + (_LANCZOS_G - 0.5)
        lg_refl = (0.5 * np.log(2.0 * np.pi) + (0.5 - xl) * np.log(t) - t
                   + np.log(_lanczos_sum(1.0 - xl)))
        val = np.log(np.pi / np.abs(_sin_pi(xl))) - lg_refl
        out[~right] = np.where(xl == np.floor(xl), np.inf, val)
    return out


_ERF_SPLIT, _ERF_END = 2.0, 6.0      # erf: series part below 2, erfc part up to 6
_ERFINV_SPLIT, _ERFINV_END = 5.0, 37.5  # erfinv: w = -log(1 - x^2) split; max w in double ~36
_ERFINV_DEGREES = {F32: (10, 14), F64: (18, 24)}
_HUGE = 2.0 ** 28  # asinh/acosh: above, log(2x) is exact to double precision


def _fit(t: np.ndarray, target: np.ndarray, degree: int) -> np.ndarray:
    """Power-basis coefficients (lowest first) of the least-squares Chebyshev fit in ``t``."""
    from numpy.polynomial import chebyshev

    return chebyshev.cheb2poly(chebyshev.chebfit(t, target, degree))


def horner(g: Builder, coeffs: np.ndarray, t: str, work) -> str:
    """``sum c_i t^i`` by Horner's rule (``coeffs`` lowest first)."""
    acc = g("Mul", g.k(coeffs[-1], work), t)
    for i in range(len(coeffs) - 2, 0, -1):
        acc = g("Mul", g("Add", acc, g.k(coeffs[i], work)), t)
    return g("Add", acc, g.k(coeffs[0], work))


# --- erf (float64) ----------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _erf_coeffs() -> tuple[np.ndarray, np.ndarray]:
    """(P in t = x^2/2 - 1 for erf(x)/x on |x| < 2, Q in u = 3/x - 1 for erfc(x) exp(x^2))."""
    x = np.linspace(1e-9, _ERF_SPLIT, 40001)
    central = _fit(x * x * 0.5 - 1.0, erf(x) / x, 16)
    x = np.linspace(_ERF_SPLIT, _ERF_END, 40001)
    tail = _fit(3.0 / x - 1.0, erfc(x) * np.exp(x * x), 12)
    return central, tail


def erf64(g: Builder, x: str) -> str:
    """erf in float64 (onnxruntime's Erf has no double kernel); NaN stays NaN, +-inf gives +-1."""
    central, tail = _erf_coeffs()
    one = g.k(1, F64)
    t = g("Sub", g("Mul", g("Mul", x, x), g.k(0.5, F64)), one)
    near = g("Mul", x, horner(g, central, t, F64))
    a = g("Min", g("Abs", x), g.k(_ERF_END, F64))  # erf(6) is 1 in double
    u = g("Sub", g("Div", g.k(3, F64), a), one)
    far = g("Sub", one, g("Mul", g("Exp", g("Neg", g("Mul", a, a))), horner(g, tail, u, F64)))
    far = g.where(g("Less", x, g.k(0, F64)), g("Neg", far), far)
    return g.where(g("Less", g("Abs", x), g.k(_ERF_SPLIT, F64)), near, far)


# --- erfinv -----------------------------------------------------------------------------------
def _tail_map() -> tuple[float, float]:
    """``u = s * c1 - c0`` maps ``s = sqrt(w)`` on the tail range onto [-1, 1]."""
    lo, hi = math.sqrt(_ERFINV_SPLIT), math.sqrt(_ERFINV_END)
    return 2.0 / (hi - lo), (hi + lo) / (hi - lo)


@lru_cache(maxsize=2)
def _erfinv_coeffs(central_deg: int, tail_deg: int) -> tuple[np.ndarray, np.ndarray]:
    """Fits of erfinv(x)/x: P in ``t = w/2.5 - 1`` (w < 5), Q in ``u`` (w >= 5), sampled
    through the forward functions (y -> x = erf(y), 1 - x = erfc(y)) so the tail is exact."""
    y = np.linspace(1e-8, 6.1, 200001)
    ec = erfc(y)
    w = -np.log(ec * (2.0 - ec))
    ratio = y / erf(y)
    near = w < _ERFINV_SPLIT
    central = _fit(w[near] / (_ERFINV_SPLIT / 2) - 1.0, ratio[near], central_deg)
    c1, c0 = _tail_map()
    tail = _fit(np.sqrt(w[~near]) * c1 - c0, ratio[~near], tail_deg)
    return central, tail


def erfinv_onnx(g: Builder, x: str, work) -> str:
    """The inverse error function in ``work`` (float32 or float64): +-inf at +-1, NaN outside
    [-1, 1], as MXNet gives."""
    central, tail = _erfinv_coeffs(*_ERFINV_DEGREES[np.dtype(work)])
    one = g.k(1, work)
    w = g("Neg", g("Log", g("Mul", g("Sub", one, x), g("Add", one, x))))
    t = g("Sub", g("Mul", w, g.k(2 / _ERFINV_SPLIT, work)), one)
    c1, c0 = _tail_map()
    u = g("Sub", g("Mul", g("Sqrt", w), g.k(c1, work)), g.k(c0, work))
    ratio = g.where(g("Less", w, g.k(_ERFINV_SPLIT, work)), horner(g, central, t, work),
                    horner(g, tail, u, work))
    edge = g("Equal", g("Abs", x), one)
    return g.where(edge, g("Mul", x, g.k(np.inf, work)), g("Mul", x, ratio))


# --- gamma, gammaln (float64) -------------------------------------------------------------------
def _lanczos(g: Builder, v: str) -> tuple[str, str]:
    """(t = v + g - 1/2, A(v) = c0 + sum c_k / (v - 1 + k)) for v >= 1/2."""
    coeffs = _LANCZOS
    total = g.k(coeffs[0], F64)
    for k in range(1, len(coeffs)):
        term = g("Div", g.k(coeffs[k], F64), g("Add", v, g.k(k - 1.0, F64)))
        total = g("Add", total, term)
    return g("Add", v, g.k(_LANCZOS_G - 0.5, F64)), total


def _sin_pi_onnx(g: Builder, x: str) -> str:
    """sin(pi x) as (-1)^n sin(pi (x - n)), n the nearest integer (exact offset)."""
    n = g("Round", x)
    parity = g("Mod", n, g.k(2, F64), fmod=1)
    sign = g.where(g("Equal", parity, g.k(0, F64)), g.k(1, F64), g.k(-1, F64))
    return g("Mul", sign, g("Sin", g("Mul", g("Sub", x, n), g.k(math.pi, F64))))


def _reflected(g: Builder, x: str) -> tuple[str, str]:
    """(x < 1/2, v): the Lanczos argument, ``1 - x`` on the reflected side (NaN goes right)."""
    left = g("Less", x, g.k(0.5, F64))
    return left, g.where(left, g("Sub", g.k(1, F64), x), x)


def gamma64(g: Builder, x: str) -> str:
    """C's tgamma: inf above ~171.62, +-inf at +-0, NaN at negative integers and -inf."""
    left, v = _reflected(g, x)
    t, total = _lanczos(g, v)
    half = g("Pow", t, g("Mul", g("Sub", v, g.k(0.5, F64)), g.k(0.5, F64)))  # t^(v-1/2) split
    core = g("Mul", g("Mul", g.k(math.sqrt(2 * math.pi), F64), half),
             g("Mul", half, g("Exp", g("Neg", t))))
    gv = g("Mul", core, total)
    right = g.where(g("Greater", v, g.k(_GAMMA_OVERFLOW, F64)), g.k(np.inf, F64), gv)
    refl = g("Div", g.k(math.pi, F64), g("Mul", _sin_pi_onnx(g, x), gv))
    zero = g.k(0, F64)
    pole = g("And", g("Equal", x, g("Floor", x)), g("Not", g("Equal", x, zero)))
    refl = g.where(pole, g.k(np.nan, F64), refl)
    refl = g.where(g("Equal", x, zero), g("Reciprocal", x), refl)  # 1/(+-0) = +-inf
    return _exact_factorials(g, x, g.where(left, refl, right))


def _exact_factorials(g: Builder, x: str, y: str) -> str:
    """``y`` with the table's (n - 1)! wherever ``x`` is a positive integer n <= 171, as
    :func:`gamma` does (other entries look up index 0, whose value the Where drops)."""
    one = g.k(1, F64)
    ints = g("And", g("Equal", x, g("Floor", x)),
             g("And", g("GreaterOrEqual", x, one),
               g("LessOrEqual", x, g.k(_GAMMA_INT_MAX, F64))))
    index = g.cast(g("Sub", g.where(ints, x, one), one), F64, np.int64)
    return g.where(ints, g("Gather", g.k(_FACTORIALS, F64), index), y)


def gammaln64(g: Builder, x: str) -> str:
    """C's lgamma: log|Gamma(x)|, inf at the poles 0, -1, -2, ... and at +-inf."""
    left, v = _reflected(g, x)
    t, total = _lanczos(g, v)
    lg = g("Add", g.k(0.5 * math.log(2 * math.pi), F64),
           g("Mul", g("Sub", v, g.k(0.5, F64)), g("Log", t)))
    lg = g("Add", g("Sub", lg, t), g("Log", total))
    inf = g.k(np.inf, F64)
    exact = g("Or", g("Equal", v, g.k(1, F64)), g("Equal", v, g.k(2, F64)))
    right = g.where(g("Equal", v, inf), inf, g.where(exact, g.k(0, F64), lg))
    refl = g("Sub", g("Log", g("Div", g.k(math.pi, F64), g("Abs", _sin_pi_onnx(g, x)))), lg)
    refl = g.where(g("Equal", x, g("Floor", x)), inf, refl)
    return g.where(left, refl, right)


# --- float64 trigonometry -----------------------------------------------------------------------
def tan64(g: Builder, x: str) -> str:
    return g("Div", g("Sin", x), g("Cos", x))


def atan64(g: Builder, x: str) -> str:
    """atan on ``z = min(|x|, 1/|x|)``: float32 seed, two Newton steps
    ``y -= (sin y - z cos y) cos y`` in double, then ``pi/2 - y`` above 1 and x's sign."""
    a = g("Abs", x)
    big = g("Greater", a, g.k(1, F64))
    z = g.where(big, g("Reciprocal", a), a)
    y = g.cast(g("Atan", g.cast(z, F64, F32)), F32, F64)
    for _ in range(2):  # cos y as sin(pi/2 - y): y <= pi/4, and 1.16 has no double Cos
        c = g("Sin", g("Sub", g.k(math.pi / 2, F64), y))
        y = g("Sub", y, g("Mul", g("Sub", g("Sin", y), g("Mul", z, c)), c))
    r = g.where(big, g("Sub", g.k(math.pi / 2, F64), y), y)
    return g.where(g("Less", x, g.k(0, F64)), g("Neg", r), r)


def asin64(g: Builder, x: str) -> str:
    """``atan(x / sqrt((1 - x)(1 + x)))`` (+-pi/2 at +-1, NaN beyond)."""
    one = g.k(1, F64)
    return atan64(g, g("Div", x, g("Sqrt", g("Mul", g("Sub", one, x), g("Add", one, x)))))


def acos64(g: Builder, x: str) -> str:
    """``2 atan(sqrt((1 - x) / (1 + x)))`` (pi at -1, NaN beyond [-1, 1])."""
    one = g.k(1, F64)
    half = atan64(g, g("Sqrt", g("Div", g("Sub", one, x), g("Add", one, x))))
    return g("Mul", g.k(2, F64), half)


# --- float64 hyperbolic functions --------------------------------------------------------------
def _odd(g: Builder, x: str, r: str) -> str:
    return g.where(g("Less", x, g.k(0, F64)), g("Neg", r), r)


def sinh64(g: Builder, x: str) -> str:
    """``(E + E / (E + 1)) / 2`` with ``E = expm1(|x|)`` (no cancellation near 0)."""
    e = expm1(g, g("Abs", x), F64)
    s = g("Mul", g.k(0.5, F64), g("Add", e, g("Div", e, g("Add", e, g.k(1, F64)))))
    s = g.where(g("Equal", e, g.k(np.inf, F64)), e, s)
    return _odd(g, x, s)


def cosh64(g: Builder, x: str) -> str:
    e = g("Exp", g("Abs", x))
    return g("Mul", g.k(0.5, F64), g("Add", e, g("Reciprocal", e)))


def _log_huge(g: Builder, a: str) -> str:
    """log(2a): asinh and acosh of a > 2**28."""
    return g("Add", g("Log", a), g.k(math.log(2.0), F64))


def asinh64(g: Builder, x: str) -> str:
    """``log1p(a + a^2 / (1 + sqrt(1 + a^2)))`` on ``a = |x|``, ``log(2a)`` for huge a."""
    a = g("Abs", x)
    one = g.k(1, F64)
    a2 = g("Mul", a, a)
    v = g("Add", a, g("Div", a2, g("Add", one, g("Sqrt", g("Add", one, a2)))))
    r = g.where(g("Greater", a, g.k(_HUGE, F64)), _log_huge(g, a), log1p(g, v, F64))
    return _odd(g, x, r)


def acosh64(g: Builder, x: str) -> str:
    """``log1p(t + sqrt(t (x + 1)))`` with ``t = x - 1`` (NaN below 1)."""
    one = g.k(1, F64)
    t = g("Sub", x, one)
    r = log1p(g, g("Add", t, g("Sqrt", g("Mul", t, g("Add", x, one)))), F64)
    return g.where(g("Greater", x, g.k(_HUGE, F64)), _log_huge(g, x), r)


def atanh64(g: Builder, x: str) -> str:
    """``log1p(2a / (1 - a)) / 2`` on ``a = |x|`` (inf at 1, NaN beyond)."""
    a = g("Abs", x)
    v = g("Div", g("Mul", g.k(2, F64), a), g("Sub", g.k(1, F64), a))
    return _odd(g, x, g("Mul", g.k(0.5, F64), log1p(g, v, F64)))


# --- digamma (the gradients of gamma and gammaln) -----------------------------------------------
# psi(x) = psi(x + 10) - sum_{k<10} 1 / (x + k), and at s = x + 10 >= 10 the asymptotic series
# log s - 1/(2s) - sum B_2k / (2k s^2k) (five terms: below 1e-16 there). x <= 0 reflects:
# psi(x) = psi(1 - x) - pi / tan(pi x), with tan's argument reduced to (-1/2, 1/2]. At the poles
# 0, -1, -2, ... cephes' psi (MXNet's) returns DBL_MAX; NaN stays NaN.
_PSI_SHIFT = 10
_PSI_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132)


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function psi = Gamma'/Gamma in float64 (cephes' conventions at the poles)."""
    x = np.asarray(x, np.float64)
    neg = x <= 0
    with np.errstate(all="ignore"):
        v = np.where(neg, 1.0 - x, x)
        shift = np.zeros_like(v)
        for k in range(_PSI_SHIFT):
            shift += 1.0 / (v + k)
        s = v + _PSI_SHIFT
        inv2 = 1.0 / (s * s)
        series = np.zeros_like(s)
        for c in reversed(_PSI_SERIES):
            series = (series + c) * inv2
        psi = np.log(s) - 0.5 / s - series - shift
        refl = np.pi / np.tan(np.pi * (x - np.round(x)))
        out = np.where(neg, psi - refl, psi)
        return np.where(neg & (x == np.floor(x)), np.finfo(np.float64).max, out)


def digamma64(g: Builder, x: str) -> str:
    """:func:`digamma` as ONNX nodes on a float64 tensor ``x``."""
    neg = g("LessOrEqual", x, g.k(0, F64))
    v = g.where(neg, g("Sub", g.k(1, F64), x), x)
    shift = g("Reciprocal", v)
    for k in range(1, _PSI_SHIFT):
        shift = g("Add", shift, g("Reciprocal", g("Add", v, g.k(k, F64))))
    s = g("Add", v, g.k(_PSI_SHIFT, F64))
    inv2 = g("Reciprocal", g("Mul", s, s))
    series = g.k(0, F64)
    for c in reversed(_PSI_SERIES):
        series = g("Mul", g("Add", series, g.k(c, F64)), inv2)
    psi = g("Sub", g("Sub", g("Sub", g("Log", s), g("Div", g.k(0.5, F64), s)), series), shift)
    frac = g("Sub", x, g("Round", x))
    refl = g("Div", g.k(math.pi, F64), tan64(g, g("Mul", g.k(math.pi, F64), frac)))
    out = g.where(neg, g("Sub", psi, refl), psi)
    pole = g("And", neg, g("Equal", x, g("Floor", x)))
    return g.where(pole, g.k(np.finfo(np.float64).max, F64), out)

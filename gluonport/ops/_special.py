"""Special functions numpy lacks, vectorized, to double precision: erf, erfc, erfinv, gamma, lgamma.

MXNet computes these with the C library (``erff``/``erf``, ``tgammaf``/``tgamma``,
``lgammaf``/``lgamma``) and cephes' ``ndtri`` for ``erfinv``. gluonport evaluates them in float64
here (no scipy dependency) and the op layer rounds to the array's dtype, so float32 results agree
with MXNet's to the last bit or two. Every function takes and returns float64 arrays and follows
C's conventions at poles and outside the domain (``tgamma(-1) = nan``, ``lgamma(0) = inf``,
``erfinv(1) = inf``, ``erfinv(2) = nan``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["erf", "erfc", "erfinv", "gamma", "lgamma"]

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


def gamma(x: np.ndarray) -> np.ndarray:
    """C's ``tgamma``: Gamma(x); +-inf at +-0, NaN at negative integers and -inf."""
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

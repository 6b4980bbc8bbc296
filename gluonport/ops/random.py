"""Random sampling operators: ``_random_*`` (scalar parameters), ``_random_*_like`` (shape of an
input), ``_sample_*`` (one distribution per element of parameter arrays), ``_sample_multinomial``
and ``_shuffle``.

The numbers come from one numpy ``Generator`` (:func:`gluonport.random.generator`, seeded with
:func:`gluonport.random.seed`), so they differ from MXNet's; distributions, shapes, dtypes,
parameters and errors follow MXNet 1.9.1 (``src/operator/random/``):

* ``_random_X`` outputs ``dtype`` (float32 when ``None``; int32 for ``randint``) of ``shape``;
* ``_sample_X`` output shape is the parameter arrays' shape followed by ``shape``, dtype float32
  unless ``dtype`` says otherwise;
* ``gamma(alpha, beta)`` has scale ``beta``; ``exponential(lam)`` rate ``lam``;
  ``negative_binomial(k, p)`` counts failures before ``k`` successes (mean ``k(1-p)/p``);
  ``generalized_negative_binomial(mu, alpha)`` has mean ``mu``, variance ``mu + alpha mu^2``;
* invalid parameters raise (``scale`` must be > 0, ``low <= high``...), as MXNet's CHECKs do.

ONNX export (:mod:`gluonport.ops._random_onnx`): uniform, normal, exponential (all three
forms), randint, multinomial and shuffle, built on ONNX's uniform/normal generators; gamma,
Poisson and the negative binomials have none (``no_onnx``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes
from .._rng import generator
from ..attrs import Bool, DType, Float, Int, Optional, Shape, Str
from ..errors import OpAttributeError, ShapeError
from ._shape import known
from .registry import OpDef, register

__all__ = ["DISTRIBUTIONS"]

_REAL = ("float16", "float32", "float64")
EXPORTED = ("uniform", "normal", "exponential")
"""Distributions with an ONNX lowering (gluonport/ops/_random_onnx.py)."""
_NO_ONNX = ("ONNX has no gamma or Poisson sampler (MXNet's samplers are rejection loops); "
            "exported are uniform, normal, exponential, randint, multinomial and shuffle")


def _rng() -> np.random.Generator:
    return generator()


def _require(ok: bool, op: str, message: str) -> None:
    if not ok:
        raise OpAttributeError(f"{op}: {message}")


_MAX_LAM = 1e18  # numpy's Poisson sampler refuses larger rates


# --- samplers: (rng, size, *parameter arrays) -> float64 samples ------------------------------
def _uniform(rng, size, low, high):
    return low + (high - low) * rng.random(size)


def _normal(rng, size, loc, scale):
    return loc + scale * rng.standard_normal(size)


def _gamma(rng, size, alpha, beta):
    return rng.gamma(alpha, 1.0, size) * beta


def _exponential(rng, size, lam):
    return rng.standard_exponential(size) / lam


def _poisson(rng, size, lam):
    return rng.poisson(lam, size).astype(np.float64)


def _negative_binomial(rng, size, k, p):
    """Gamma-Poisson mixture, as MXNet samples it (also valid for k = 0 and p = 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = rng.gamma(np.broadcast_to(k, size), 1.0) * ((1.0 - p) / p)
    lam = np.nan_to_num(lam, nan=0.0, posinf=_MAX_LAM)  # p = 0: no success ever
    return rng.poisson(lam, size).astype(np.float64)


def _gen_negative_binomial(rng, size, mu, alpha):
    """Poisson(mu) when alpha == 0, else Poisson(Gamma(1/alpha, alpha mu))."""
    alpha = np.broadcast_to(alpha, size)
    mu = np.broadcast_to(mu, size)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(alpha > 0, rng.gamma(np.where(alpha > 0, 1.0 / alpha, 1.0), 1.0)
                       * alpha * mu, mu)
    return rng.poisson(lam, size).astype(np.float64)


# name -> (parameter names with defaults, sampler, parameter check)
DISTRIBUTIONS: dict[str, tuple[tuple[tuple[str, object], ...], Callable, Callable]] = {
    "uniform": ((("low", Float(0.0)), ("high", Float(1.0))), _uniform,
                lambda low, high: (np.all(high >= low), "low must be less or equal to high")),
    "normal": ((("loc", Float(0.0)), ("scale", Float(1.0))), _normal,
               lambda loc, scale: (np.all(scale > 0), "scale must be positive")),
    "gamma": ((("alpha", Float(1.0)), ("beta", Float(1.0))), _gamma,
              lambda a, b: (np.all(a > 0) and np.all(b > 0), "alpha and beta must be positive")),
    "exponential": ((("lam", Float(1.0)),), _exponential,
                    lambda lam: (np.all(lam > 0), "lam must be positive")),
    "poisson": ((("lam", Float(1.0)),), _poisson,
                lambda lam: (np.all(lam >= 0), "lam must be non-negative")),
    "negative_binomial": ((("k", Int(1)), ("p", Float(1.0))), _negative_binomial,
                          lambda k, p: (np.all(k >= 0) and np.all(p >= 0),
                                        "k and p must be non-negative")),
    "generalized_negative_binomial": ((("mu", Float(1.0)), ("alpha", Float(1.0))),
                                      _gen_negative_binomial,
                                      lambda mu, a: (np.all(mu >= 0) and np.all(a >= 0),
                                                     "mu and alpha must be non-negative")),
}

# The names MXNet's sample ops give their array inputs (they differ from the scalar ones).
_SAMPLE_INPUTS = {"normal": ("mu", "sigma"), "negative_binomial": ("k", "p")}


def _draw(op: str, distr: str, size: tuple, args: list, dtype: np.dtype) -> np.ndarray:
    _, sampler, check = DISTRIBUTIONS[distr]
    ok, message = check(*args)
    _require(bool(ok), op, f"{message} (got {', '.join(map(str, args))})")
    rng = _rng()
    if distr == "uniform" and dtype == np.float32 and all(np.ndim(a) == 0 for a in args):
        u = rng.random(size, dtype=np.float32)  # float32 draws never round up to `high`
        return (np.float32(args[0]) + np.float32(args[1] - args[0]) * u).astype(dtype)
    return sampler(rng, size, *args).astype(dtype)


def _out_dtype(p, default: str = "float32") -> np.dtype:
    return dtypes.to_numpy(p.dtype or default)


def _param_shape(p) -> tuple | None:
    shape = tuple(p.shape) if p.shape is not None else ()
    return shape if shape else None


# --- _random_X: scalar parameters, output of `shape` ------------------------------------------
def _random_compute(op: str, distr: str, names: list[str]):
    def compute(p):
        shape = _param_shape(p)
        if not known(shape):
            raise ShapeError(f"{op}: shape={p.shape} is not fully known; give the output shape")
        return _draw(op, distr, shape, [getattr(p, n) for n in names], _out_dtype(p))

    return compute


def _random_params(fields: tuple, dtype_choices=_REAL) -> dict:
    params = dict(fields)
    params.update({"shape": Optional(Shape(), default=()), "ctx": Str(""),
                   "dtype": Optional(DType(choices=dtype_choices))})
    return params


def _no_input_shape(p, in_shapes):
    return [], [_param_shape(p)]


def _no_input_type(default: str):
    return lambda p, in_types: ([], [_out_dtype(p, default)])


def _register_random(distr: str, aliases: tuple[str, ...]) -> None:
    fields, _, _ = DISTRIBUTIONS[distr]
    op = f"_random_{distr}"
    register(OpDef(op, params=_random_params(fields), inputs=(),
                   compute=_random_compute(op, distr, [n for n, _ in fields]),
                   infer_shape=_no_input_shape, infer_type=_no_input_type("float32"),
                   aliases=aliases, no_onnx=None if distr in EXPORTED else _NO_ONNX))


def _register_like(distr: str) -> None:
    fields, _, _ = DISTRIBUTIONS[distr]
    op = f"_random_{distr}_like"
    names = [n for n, _ in fields]

    def compute(p, data):
        return _draw(op, distr, data.shape, [getattr(p, n) for n in names], data.dtype)

    register(OpDef(op, params=dict(fields), compute=compute,
                   no_onnx=None if distr in EXPORTED else _NO_ONNX))


# --- _sample_X: one distribution per element of the parameter arrays --------------------------
def _sample_shape(p, in_shapes):
    extra = tuple(p.shape or ())
    common = None
    for s in in_shapes:
        if s is not None:
            if common is not None and tuple(s) != tuple(common):
                raise ShapeError(f"parameter arrays differ in shape: {common} vs {tuple(s)}")
            common = tuple(s)
    out = None if common is None else common + extra
    return [common] * len(in_shapes), [out]


def _sample_type(p, in_types):
    known_t = next((t for t in in_types if t is not None), None)
    return [known_t] * len(in_types), [_out_dtype(p)]


def _register_sample(distr: str) -> None:
    fields, _, _ = DISTRIBUTIONS[distr]
    op = f"_sample_{distr}"
    inputs = _SAMPLE_INPUTS.get(distr, tuple(n for n, _ in fields))

    def compute(p, *params):
        extra = tuple(p.shape or ())
        size = params[0].shape + extra
        expand = (Ellipsis,) + (None,) * len(extra)
        args = [np.asarray(a, np.float64)[expand] for a in params]
        return _draw(op, distr, size, args, _out_dtype(p))

    register(OpDef(op, params={"shape": Shape(()), "dtype": Optional(DType(choices=_REAL))},
                   inputs=inputs, compute=compute, infer_shape=_sample_shape,
                   infer_type=_sample_type, aliases=(f"sample_{distr}",),
                   no_onnx=None if distr in EXPORTED else _NO_ONNX))


for _distr in DISTRIBUTIONS:
    _aliases = (f"random_{_distr}",) + (("uniform",) if _distr == "uniform" else
                                        ("normal",) if _distr == "normal" else ())
    _register_random(_distr, _aliases)
    _register_like(_distr)
    _register_sample(_distr)


def _randint(p):
    shape = _param_shape(p)
    if not known(shape):
        raise ShapeError(f"_random_randint: shape={p.shape} is not fully known; give the shape")
    _require(p.high >= p.low, "_random_randint",
             f"low must be less or equal to high (got low={p.low}, high={p.high})")
    dtype = _out_dtype(p, "int32")
    if p.high == p.low:
        return np.full(shape, p.low, dtype)
    return _rng().integers(p.low, p.high, shape, dtype=np.int64).astype(dtype)


register(OpDef(
    "_random_randint",
    params=_random_params((("low", Int()), ("high", Int())), dtype_choices=("int32", "int64")),
    inputs=(), compute=_randint, infer_shape=_no_input_shape,
    infer_type=_no_input_type("int32"), aliases=("random_randint", "_npi_random_randint")))


# --- multinomial and shuffle ------------------------------------------------------------------
def _multinomial_shape(p, in_shapes):
    data = in_shapes[0]
    n_out = 2 if p.get_prob else 1
    if data is None:
        return in_shapes, [None] * n_out
    extra = tuple(p.shape or ())
    if len(data) == 1:
        out = extra if extra else (1,)
    else:
        out = tuple(data[:-1]) + extra
    return in_shapes, [out] * n_out


def _multinomial_type(p, in_types):
    outs = [dtypes.to_numpy(p.dtype)]
    if p.get_prob:
        outs.append(in_types[0])
    return in_types, outs


def _multinomial(p, data: np.ndarray):
    """Inverse-CDF sampling per row, like MXNet's kernel: the first index whose running sum
    (float32) is >= a uniform draw."""
    k = data.shape[-1]
    extra = tuple(p.shape or ())
    rows = data.reshape(-1, k)
    n_draw = int(np.prod(extra)) if extra else 1
    cum = np.cumsum(rows, axis=1, dtype=np.float64).astype(np.float32)
    u = _rng().random((rows.shape[0], n_draw), dtype=np.float32)
    idx = np.minimum(np.sum(cum[:, None, :] < u[:, :, None], axis=2), k - 1)
    out_shape = _multinomial_shape(p, [data.shape])[1][0]
    samples = idx.reshape(out_shape).astype(dtypes.to_numpy(p.dtype))
    if not p.get_prob:
        return samples
    with np.errstate(divide="ignore"):
        logp = np.log(np.take_along_axis(rows, idx, axis=1).astype(np.float32))
    return samples, logp.reshape(out_shape).astype(data.dtype)


register(OpDef(
    "_sample_multinomial",
    params={"shape": Shape(()), "get_prob": Bool(False),
            "dtype": DType("int32", choices=("uint8", "int32", "float16", "float32",
                                             "float64"))},
    compute=_multinomial, num_outputs=lambda p: 2 if p.get_prob else 1,
    infer_shape=_multinomial_shape, infer_type=_multinomial_type,
    aliases=("sample_multinomial",)))


def _shuffle(p, data: np.ndarray) -> np.ndarray:
    """A random permutation along the first axis (a copy)."""
    return data[_rng().permutation(data.shape[0])] if data.ndim else data.copy()


register(OpDef("_shuffle", compute=_shuffle, aliases=("shuffle", "_npi_shuffle")))


from . import _random_onnx  # noqa: E402,F401  (attaches the ONNX export handlers)

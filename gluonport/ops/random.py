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

ONNX export (see below): uniform, normal, exponential (all three
forms), randint, multinomial and shuffle, built on ONNX's uniform/normal generators; gamma,
Poisson and the negative binomials have none (``no_onnx``).

ONNX lowerings (below in this file):

The numbers cannot equal MXNet's (nor gluonport's): what is exported is the distribution, with
the shape and dtype MXNet gives. Every sampler is built on ONNX's uniform and normal generators
(``seed`` left unset, so each run draws afresh):

* uniform, normal: ``RandomUniform``/``RandomNormal`` (static shape), their ``*Like`` forms on a
  tensor of the output's shape otherwise; ``_sample_*`` scale and shift those by the parameter
  arrays, unsqueezed over the extra ``shape`` dims;
* exponential: ``-log(max(1 - u, tiny)) / lam``; randint: ``floor(low + (high - low) u)`` in double;
* multinomial: MXNet's own inverse-CDF rule (the first index whose running sum reaches the
  draw, the last index past the end), so unnormalised rows behave as in MXNet (ONNX's
  Multinomial would renormalise them);
* shuffle: ``Gather`` along the first axis by the ``TopK`` order of uniform keys, a uniformly
  random permutation.

float16 is drawn in float32 and cast (onnxruntime has no float16 generators). Gamma, Poisson and
the negative binomials have no ONNX lowering (their samplers need rejection loops).

onnxruntime (1.16 to 1.31) implements the ONNX random operators only up to opset 21 (the opset-22
versions, which only added bfloat16, have no kernel): export random graphs with
``opset_version <= 21`` to run them there; the models are valid at every opset.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import dtypes
from .._core.attr_fields import Bool, DType, Float, Int, Optional, Shape, Str
from .._core.rng import generator
from ..errors import OpAttributeError, ShapeError
from .infer import known
from .lowering import LoweringContext, lowering
from .lowering.dims import onnx_dims, onnx_shape
from .registry import OpDef, register, zero_gradient

__all__ = ["DISTRIBUTIONS"]


_REAL = ("float16", "float32", "float64")
EXPORTED = ("uniform", "normal", "exponential")
"""Distributions with an ONNX lowering (below)."""
_NO_ONNX = ("ONNX has no gamma or Poisson sampler (MXNet's samplers are rejection loops); "
            "exported are uniform, normal, exponential, randint, multinomial and shuffle")


def _rng() -> np.random.Generator:
    return generator()


def _require(ok: bool, op: str, message: str) -> None:
    if not ok:
        raise OpAttributeError(f"{op}: {message}")


_NO_GRAD_RANDOM = ("MXNet 1.9.1 registers no FGradient for the _random_* samplers: they have "
                   "no inputs to differentiate")
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
                   aliases=aliases, no_onnx=None if distr in EXPORTED else _NO_ONNX,
                   no_gradient=_NO_GRAD_RANDOM))


def _register_like(distr: str) -> None:
    fields, _, _ = DISTRIBUTIONS[distr]
    op = f"_random_{distr}_like"
    names = [n for n, _ in fields]

    def compute(p, data):
        return _draw(op, distr, data.shape, [getattr(p, n) for n in names], data.dtype)

    register(OpDef(op, params=dict(fields), compute=compute,
                   no_onnx=None if distr in EXPORTED else _NO_ONNX, lists_input_names=False,
                   gradient=zero_gradient))  # MXNet: MakeZeroGradNodes


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
                   infer_type=_sample_type, aliases=(f"sample_{distr}",), sized_by_attrs=True,
                   no_onnx=None if distr in EXPORTED else _NO_ONNX,
                   gradient=zero_gradient))  # MXNet: MakeZeroGradNodes


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
    infer_type=_no_input_type("int32"), aliases=("random_randint", "_npi_random_randint"),
    no_gradient=_NO_GRAD_RANDOM))


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


def _multinomial_grad(F, p, inputs, outputs, ograds):
    """MXNet's FGradient: with ``get_prob``, ``_backward_sample_multinomial`` from the
    log-probability's head gradient, the data and the samples; else zero (the samples'
    gradient is never used)."""
    if not p.get_prob:
        return [None]
    return [F._internal._backward_sample_multinomial(ograds[1], inputs[0], outputs[0])]


register(OpDef(
    "_sample_multinomial",
    params={"shape": Shape(()), "get_prob": Bool(False),
            "dtype": DType("int32", choices=("uint8", "int32", "float16", "float32",
                                             "float64"))},
    compute=_multinomial, num_outputs=lambda p: 2 if p.get_prob else 1,
    infer_shape=_multinomial_shape, infer_type=_multinomial_type,
    aliases=("sample_multinomial",), sized_by_attrs=True, lists_input_names=False,
    gradient=_multinomial_grad))


def _multinomial_backward(p, og: np.ndarray, data: np.ndarray, samples: np.ndarray):
    """``grad[i, s] += og[i, j] / data[i, s]`` for every draw ``s = samples[i, j]`` of row
    ``i`` (MXNet's SampleMultinomialBackwardCPUKernel: the gradient of log p)."""
    k = data.shape[-1]
    rows = data.reshape(-1, k)
    idx = samples.reshape(rows.shape[0], -1).astype(np.int64)
    vals = og.reshape(idx.shape) / np.take_along_axis(rows, idx, axis=1)
    grad = np.zeros(rows.shape, dtype=data.dtype)
    np.add.at(grad, (np.arange(rows.shape[0])[:, None], idx), vals.astype(data.dtype))
    return grad.reshape(data.shape)


register(OpDef(
    "_backward_sample_multinomial", params={}, inputs=("ograd", "data", "samples"),
    compute=_multinomial_backward, infer_shape=lambda p, s: (s, [s[1]]),
    infer_type=lambda p, t: (t, [t[1]]),
    no_gradient="a backward kernel: MXNet 1.9.1 registers no gradient for it",
    doc="sample_multinomial's gradient (get_prob=True): inputs (ograd of the log-probability "
        "output, data, the samples output); ``ograd / p`` added at each drawn index."))


def _shuffle(p, data: np.ndarray) -> np.ndarray:
    """A random permutation along the first axis (a copy)."""
    return data[_rng().permutation(data.shape[0])] if data.ndim else data.copy()


register(OpDef("_shuffle", compute=_shuffle, aliases=("shuffle", "_npi_shuffle"),
               no_gradient="MXNet 1.9.1 registers no FGradient for _shuffle"))


# --- ONNX lowerings ---------------------------------------------------------------------------
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _work(dtype) -> np.dtype:
    """The dtype generators run in: float64 for float64, else float32."""
    return F64 if np.dtype(dtype) == F64 else F32


def _finish(ctx: LoweringContext, y: str, work: np.dtype, k: int = 0) -> None:
    """``y`` (of ``work``) as output ``k``, cast to the output dtype when it differs."""
    out = np.dtype(ctx.out_dtypes[k])
    if out == work:
        ctx.make("Identity", [y], outputs=[ctx.outputs[k]])
    else:
        ctx.make("Cast", [y], outputs=[ctx.outputs[k]], to=dtypes.onnx_of(out))


def _k(ctx: LoweringContext, value, dtype) -> str:
    return ctx.const(np.asarray(value, dtype=dtype), "k")


def _uniform(ctx: LoweringContext, work, shape=None, like: str | None = None, low=0.0,
             high=1.0) -> str:
    """Uniform draws on [low, high): of a static ``shape``, or of ``like``'s shape."""
    attrs = {"dtype": dtypes.onnx_of(work), "low": float(low), "high": float(high)}
    if like is None:
        return ctx.make("RandomUniform", [], shape=[int(d) for d in shape], **attrs)
    return ctx.make("RandomUniformLike", [like], **attrs)


def _normal(ctx: LoweringContext, work, shape=None, like: str | None = None, mean=0.0,
            scale=1.0) -> str:
    attrs = {"dtype": dtypes.onnx_of(work), "mean": float(mean), "scale": float(scale)}
    if like is None:
        return ctx.make("RandomNormal", [], shape=[int(d) for d in shape], **attrs)
    return ctx.make("RandomNormalLike", [like], **attrs)


def _exponential(ctx: LoweringContext, work, lam: str, **where) -> str:
    """``-log(max(1 - u, tiny)) / lam``. 1 - u lies in (0, 1] in exact arithmetic, but a
    runtime's float uniform can round up to exactly 1 (onnx's reference evaluator casts
    float64 draws to float32; some std::uniform_real_distribution<float> do too), and log(0)
    would make an inf sample once in some 10^7 draws; the clamp keeps every draw finite."""
    u = _uniform(ctx, work, **where)
    tiny = _k(ctx, np.finfo(work).tiny, work)
    tail = ctx.make("Log", [ctx.make("Max", [ctx.make("Sub", [_k(ctx, 1, work), u]), tiny])])
    return ctx.make("Div", [ctx.make("Neg", [tail]), lam])


def _scalar_draw(ctx: LoweringContext, distr: str, work, **where) -> str:
    """A draw with the op's scalar parameters (attributes)."""
    p = ctx.params
    if distr == "uniform":
        return _uniform(ctx, work, low=p.low, high=p.high, **where)
    if distr == "normal":
        return _normal(ctx, work, mean=p.loc, scale=p.scale, **where)
    return _exponential(ctx, work, _k(ctx, p.lam, work), **where)


def _random_onnx(distr: str):
    """``_random_X``: the output shape is the ``shape`` attribute."""

    def handler(ctx: LoweringContext) -> None:
        shape = _param_shape(ctx.params)
        if shape is None or not all(shape):
            raise ctx.fail(f"shape={ctx.params.shape} is not fully given; give the output shape")
        work = _work(_out_dtype(ctx.params))
        _finish(ctx, _scalar_draw(ctx, distr, work, shape=shape), work)

    return handler


def _like_onnx(distr: str):
    """``_random_X_like``: draws of the input's shape (read at run time) and dtype."""

    def handler(ctx: LoweringContext) -> None:
        work = _work(ctx.dtype)
        _finish(ctx, _scalar_draw(ctx, distr, work, like=ctx.inputs[0]), work)

    return handler


def _sample_params(ctx: LoweringContext, work) -> tuple[list[str], str | None]:
    """The parameter arrays in ``work``, unsqueezed over the extra ``shape`` dims, and a
    template tensor of the output shape (``None`` when the first parameter is one)."""
    extra = tuple(ctx.params.shape or ())
    rank = len(ctx.in_shapes[0])
    params = [ctx.inputs[i] if np.dtype(ctx.in_dtypes[i]) == work
              else ctx.cast_to(ctx.inputs[i], work) for i in range(len(ctx.inputs))]
    if not extra:
        return params, None
    axes = ctx.ints(list(range(rank, rank + len(extra))), "axes")
    params = [ctx.make("Unsqueeze", [x, axes]) for x in params]
    full = onnx_shape(ctx, [onnx_dims(ctx, 0, 0), [int(d) for d in extra]])
    return params, ctx.make("Expand", [params[0], full])


def _sample_onnx(distr: str):
    """``_sample_X``: one distribution per element of the parameter arrays."""

    def handler(ctx: LoweringContext) -> None:
        work = _work(ctx.out_dtypes[0])
        params, template = _sample_params(ctx, work)
        like = params[0] if template is None else template
        if distr == "exponential":
            y = _exponential(ctx, work, params[0], like=like)
        elif distr == "uniform":
            low, high = params
            u = _uniform(ctx, work, like=like)
            y = ctx.make("Add", [low, ctx.make("Mul", [ctx.make("Sub", [high, low]), u])])
        else:
            mu, sigma = params
            y = ctx.make("Add", [mu, ctx.make("Mul", [sigma, _normal(ctx, work, like=like)])])
        _finish(ctx, y, work)

    return handler


for _distr in EXPORTED:
    lowering(f"_random_{_distr}")(_random_onnx(_distr))
    lowering(f"_random_{_distr}_like")(_like_onnx(_distr))
    lowering(f"_sample_{_distr}")(_sample_onnx(_distr))
assert set(EXPORTED) <= set(DISTRIBUTIONS)


def _randint_onnx(ctx: LoweringContext) -> None:
    """``floor(low + (high - low) u)`` in double, kept below ``high`` (rounding could reach
    it), converted to the integer dtype; ``low == high`` gives ``low`` everywhere."""
    p = ctx.params
    shape = _param_shape(p)
    if shape is None or not all(shape):
        raise ctx.fail(f"shape={p.shape} is not fully given; give the output shape")
    if p.high == p.low:
        ctx.make("Identity", [ctx.const(np.full(shape, p.low, ctx.out_dtypes[0]), "low")],
                 outputs=[ctx.outputs[0]])
        return
    u = _uniform(ctx, F64, shape=shape)
    y = ctx.make("Add", [_k(ctx, p.low, F64), ctx.make("Mul", [_k(ctx, p.high - p.low, F64), u])])
    y = ctx.make("Min", [ctx.make("Floor", [y]), _k(ctx, p.high - 1, F64)])
    _finish(ctx, y, F64)


lowering("_random_randint")(_randint_onnx)


def _leading(ctx: LoweringContext) -> str | list[int]:
    """Dim 0 of input 0 as a list (fixed) or a 1-element int64 tensor (dynamic)."""
    return onnx_dims(ctx, 0, 0, 1)


def _uniform_of(ctx: LoweringContext, dims: list, work) -> str:
    """Uniform draws of the shape joined from ``dims`` (ints and 1-D int64 tensors)."""
    from onnx import numpy_helper

    if all(isinstance(d, list) for d in dims):
        return _uniform(ctx, work, shape=[v for d in dims for v in d])
    zeros = ctx.make("ConstantOfShape", [onnx_shape(ctx, dims)],
                     value=numpy_helper.from_array(np.zeros(1, work), "value"))
    return _uniform(ctx, work, like=zeros)


def _multinomial_onnx(ctx: LoweringContext) -> None:
    """Per row of probabilities: index = how many running sums (float32) lie below a uniform
    draw (MXNet's binary search), at most k - 1 (MXNet would index past the row; gluonport's
    compute clamps); ``get_prob`` adds log p of the drawn index."""
    p = ctx.params
    k = int(ctx.shape[-1])
    extra = [int(d) for d in p.shape or ()]
    n_draw = int(np.prod(extra)) if extra else 1
    data = ctx.inputs[0] if ctx.dtype == F32 else ctx.cast_to(ctx.inputs[0], F32)
    rows = ctx.make("Reshape", [data, ctx.ints([-1, k], "rows")])
    # float32 running sums (MXNet sums in double, then stores float32; onnxruntime 1.16 has no
    # double CumSum, and the last bit of a bin edge does not show in a distribution)
    cum = ctx.make("CumSum", [rows, ctx.const(np.int64(1), "axis")])
    lead = onnx_dims(ctx, 0, 0, len(ctx.shape) - 1)
    u = ctx.make("Reshape", [_uniform_of(ctx, [lead, [n_draw]], F32),
                             ctx.ints([-1, n_draw], "draws")])
    below = ctx.make("Less", [ctx.make("Unsqueeze", [cum, ctx.ints([1], "axes")]),
                              ctx.make("Unsqueeze", [u, ctx.ints([2], "axes")])])
    idx = ctx.make("ReduceSum", [ctx.cast_to(below, np.int64), ctx.ints([2], "axes")],
                   keepdims=0)
    idx = ctx.make("Min", [idx, ctx.const(np.int64(k - 1), "last")])
    # data.shape[:-1] + shape; a 1-d input gives shape, or (1,)
    out_shape = onnx_shape(ctx, [lead, extra]) if len(ctx.shape) > 1 else \
        ctx.ints(extra or [1], "out_shape")
    _finish(ctx, ctx.make("Reshape", [idx, out_shape]), np.dtype(np.int64))
    if p.get_prob and ctx.wants(1):
        logp = ctx.make("Log", [ctx.make("GatherElements", [rows, idx], axis=1)])
        _finish(ctx, ctx.make("Reshape", [logp, out_shape]), F32, 1)


lowering("_sample_multinomial")(_multinomial_onnx)


def _multinomial_backward_onnx(ctx: LoweringContext) -> None:
    """``ScatterElements`` (reduction add, opset 16+) of ``ograd / GatherElements(p)`` into
    zeros of the data's rows."""
    k = int(ctx.in_shapes[1][-1])
    rows = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([-1, k], "rows")])
    lead = ctx.make("Slice", [ctx.make("Shape", [rows]), ctx.ints([0], "s"), ctx.ints([1], "e")])
    two = ctx.make("Concat", [lead, ctx.ints([-1], "rest")], axis=0)
    idx = ctx.cast_to(ctx.make("Reshape", [ctx.inputs[2], two]), np.int64)
    og = ctx.make("Reshape", [ctx.inputs[0], two])
    vals = ctx.make("Div", [og, ctx.make("GatherElements", [rows, idx], axis=1)])
    from onnx import numpy_helper

    zero = numpy_helper.from_array(np.zeros(1, np.dtype(ctx.in_dtypes[1])), "value")
    zeros = ctx.make("ConstantOfShape", [ctx.make("Shape", [rows])], value=zero)
    grad = ctx.make("ScatterElements", [zeros, idx, vals], axis=1, reduction="add")
    ctx.make("Reshape", [grad, ctx.make("Shape", [ctx.inputs[1]])], outputs=[ctx.outputs[0]])


lowering("_backward_sample_multinomial", since=16)(_multinomial_backward_onnx)


def _shuffle_onnx(ctx: LoweringContext) -> None:
    """``Gather`` along axis 0 in the order ``TopK`` sorts uniform keys into."""
    if not ctx.shape:
        ctx.make("Identity", [ctx.inputs[0]], outputs=[ctx.outputs[0]])
        return
    n = _leading(ctx)
    keys = _uniform_of(ctx, [n], F32)
    k = ctx.ints(n, "n") if isinstance(n, list) else n
    _, order = ctx.make("TopK", [keys, k], outputs=2, axis=0)
    ctx.make("Gather", [ctx.inputs[0], order], outputs=[ctx.outputs[0]], axis=0)


lowering("_shuffle")(_shuffle_onnx)

"""ONNX export of the random family (gluonport/ops/random.py).

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

import numpy as np

from .. import dtypes
from .lowering import LoweringContext, lowering
from .random import DISTRIBUTIONS, EXPORTED, _out_dtype, _param_shape
from .reduce import onnx_dims, onnx_shape

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

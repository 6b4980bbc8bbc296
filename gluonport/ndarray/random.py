"""``nd.random``: sampling functions, mirroring ``mxnet.ndarray.random`` (1.9.1).

Each function takes its distribution parameters either as numbers, which runs the ``_random_X``
operator and draws ``shape`` samples (one sample, shape ``(1,)``, when no shape is given), or as
NDArrays, which runs ``_sample_X`` and draws ``shape`` samples per element (output shape
``params.shape + shape``). Mixing numbers and arrays is refused, as in MXNet. The other
``_random_*``/``_sample_*`` operators (``uniform_like``, ...) are added to this module from the
registry.

:func:`build` makes the same functions for the symbolic front end (``sym.random``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from ..context import current_context
from ..errors import OpAttributeError
from .ndarray import NDArray, invoke

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint", "build"]


def _drop_none(kwargs: dict) -> dict:
    return {k: v for k, v in kwargs.items() if v is not None}


def build(invoke_fn: Callable[..., Any], tensor_type: type, imperative: bool) -> dict[str, Any]:
    """The sampling functions for one front end.

    ``invoke_fn(op, args, kwargs)`` runs or builds an op; ``tensor_type`` is the front end's
    array class (NDArray or Symbol); ``imperative`` adds MXNet's imperative defaults (current
    context, one sample when no shape is given) and the ``out`` argument.
    """

    def helper(random_op: str, sample_op: str | None, params: list, shape: Any, dtype: Any,
               ctx: Any, out: Any, kwargs: dict) -> Any:
        if isinstance(params[0], tensor_type) and sample_op is not None:
            if not all(isinstance(p, tensor_type) for p in params[1:]):
                raise OpAttributeError(
                    f"{sample_op}: distribution parameters must all be {tensor_type.__name__}s "
                    f"or all numbers, got {[type(p).__name__ for p in params]}")
            extra = _drop_none({"shape": shape, "dtype": dtype, "out": out})
            return invoke_fn(sample_op, tuple(params), {**extra, **kwargs})
        if isinstance(params[0], numbers.Number):
            if not all(isinstance(p, numbers.Number) for p in params[1:]):
                raise OpAttributeError(
                    f"{random_op}: distribution parameters must all be numbers or all "
                    f"{tensor_type.__name__}s, got {[type(p).__name__ for p in params]}")
            if imperative:
                ctx = ctx if ctx is not None else current_context()
                if out is not None:  # MXNet infers the op's shape and dtype from `out`
                    shape = out.shape if shape is None else shape
                    dtype = out.dtype if dtype is None else dtype
                shape = 1 if shape is None else shape
            extra = _drop_none({"shape": shape, "dtype": dtype, "ctx": ctx, "out": out})
            return invoke_fn(random_op, tuple(params), {**extra, **kwargs})
        raise OpAttributeError(f"{random_op}: distribution parameters must be "
                               f"{tensor_type.__name__}s or numbers, got {type(params[0])}")

    def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None,
                ctx: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """Samples from U[low, high) (``_random_uniform`` / ``_sample_uniform``)."""
        return helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype, ctx, out,
                      kwargs)

    def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None,
               ctx: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """Samples from N(loc, scale^2) (``_random_normal`` / ``_sample_normal``)."""
        return helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype, ctx, out,
                      kwargs)

    def randn(*shape: int, **kwargs: Any) -> Any:
        """``normal`` with the shape given positionally: ``randn(2, 3, loc=5)``."""
        loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
        dtype, ctx, out = kwargs.pop("dtype", None), kwargs.pop("ctx", None), kwargs.pop("out",
                                                                                        None)
        return helper("_random_normal", "_sample_normal", [loc, scale], shape or None, dtype,
                      ctx, out, kwargs)

    def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
                out: Any = None, **kwargs: Any) -> Any:
        """Poisson samples with rate ``lam``, returned as floats."""
        return helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, ctx, out,
                      kwargs)

    def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
                    out: Any = None, **kwargs: Any) -> Any:
        """Exponential samples with mean ``scale`` (the op takes the rate ``1 / scale``)."""
        return helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape,
                      dtype, ctx, out, kwargs)

    def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None,
              ctx: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """Gamma samples with shape ``alpha`` and scale ``beta``."""
        return helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype, ctx, out,
                      kwargs)

    def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None,
                          ctx: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """Failures before ``k`` successes of probability ``p``, as floats."""
        return helper("_random_negative_binomial", "_sample_negative_binomial", [k, p], shape,
                      dtype, ctx, out, kwargs)

    def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None,
                                      dtype: Any = None, ctx: Any = None, out: Any = None,
                                      **kwargs: Any) -> Any:
        """Negative binomial with mean ``mu`` and dispersion ``alpha``, as floats."""
        return helper("_random_generalized_negative_binomial",
                      "_sample_generalized_negative_binomial", [mu, alpha], shape, dtype, ctx,
                      out, kwargs)

    def randint(low: int, high: int, shape: Any = None, dtype: Any = None, ctx: Any = None,
                out: Any = None, **kwargs: Any) -> Any:
        """Integers from [low, high), int32 unless ``dtype='int64'``."""
        return helper("_random_randint", None, [low, high], shape, dtype, ctx, out, kwargs)

    def multinomial(data: Any, shape: Any = None, get_prob: bool = False, out: Any = None,
                    dtype: Any = "int32", **kwargs: Any) -> Any:
        """Indices drawn from the distributions in the last axis of ``data``; with
        ``get_prob=True`` also their log-probabilities."""
        extra = _drop_none({"shape": shape, "out": out})
        return invoke_fn("_sample_multinomial", (data,),
                         {**extra, "get_prob": get_prob, "dtype": dtype, **kwargs})

    def shuffle(data: Any, **kwargs: Any) -> Any:
        """A copy of ``data`` with its first axis randomly permuted."""
        return invoke_fn("_shuffle", (data,), kwargs)

    fns = dict(uniform=uniform, normal=normal, randn=randn, poisson=poisson,
               exponential=exponential, gamma=gamma, negative_binomial=negative_binomial,
               generalized_negative_binomial=generalized_negative_binomial, randint=randint,
               multinomial=multinomial, shuffle=shuffle)
    for fn in fns.values():
        fn.__qualname__ = fn.__name__
        if not imperative:
            fn.__doc__ = (fn.__doc__ or "") + " (symbolic: builds a graph node)"
    return fns


def _nd_invoke(op: str, args: tuple, kwargs: dict) -> Any:
    return invoke(op, args, kwargs)


_FNS = build(_nd_invoke, NDArray, imperative=True)
uniform, normal, randn = _FNS["uniform"], _FNS["normal"], _FNS["randn"]
poisson, exponential, gamma = _FNS["poisson"], _FNS["exponential"], _FNS["gamma"]
negative_binomial = _FNS["negative_binomial"]
generalized_negative_binomial = _FNS["generalized_negative_binomial"]
randint, multinomial, shuffle = _FNS["randint"], _FNS["multinomial"], _FNS["shuffle"]

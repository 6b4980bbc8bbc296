"""Random number interface, mirroring ``mxnet.random``.

Every random operator (``nd.random.uniform``, ``Dropout`` in training...) draws from one numpy
``Generator`` held here. Like MXNet, it starts from a fixed seed, so a fresh process gives the
same numbers each run; :func:`seed` restarts it. The numbers differ from MXNet's own generator;
the distributions are the same.

The sampling functions are the ``nd.random`` ones (``mx.random.uniform`` is
``mx.nd.random.uniform``), as in MXNet.
"""

from __future__ import annotations

import numbers

import numpy as np

from .context import Context

__all__ = ["seed", "generator", "uniform", "normal", "randn", "poisson", "exponential", "gamma",
           "multinomial", "negative_binomial", "generalized_negative_binomial", "shuffle",
           "randint"]

_DEFAULT_SEED = 0
_state: dict[str, np.random.Generator] = {"rng": np.random.default_rng(_DEFAULT_SEED)}


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """Seed the random number generator.

    Parameters
    ----------
    seed_state : int
        The seed. The same seed gives the same sequence of numbers from every random op.
    ctx : Context or "all"
        MXNet keeps one generator per device and ``ctx`` picks one; gluonport computes on the
        host with a single generator, which any value of ``ctx`` reseeds.

    Raises
    ------
    ValueError
        When ``seed_state`` is not an integer (MXNet's message: ``seed_state must be int``).

    Examples
    --------
    >>> import gluonport as mx
    >>> mx.random.seed(128); a = mx.nd.random.normal(shape=(2, 2)).asnumpy()
    >>> mx.random.seed(128); b = mx.nd.random.normal(shape=(2, 2)).asnumpy()
    >>> bool((a == b).all())
    True
    """
    if not isinstance(seed_state, numbers.Integral) or isinstance(seed_state, bool):
        raise ValueError(f"seed_state must be int, got {type(seed_state).__name__} "
                         f"{seed_state!r}")
    if not (ctx == "all" or isinstance(ctx, Context)):
        raise ValueError(f"ctx must be a Context or 'all', got {ctx!r}")
    _state["rng"] = np.random.default_rng(int(seed_state) & 0xFFFFFFFFFFFFFFFF)


def generator() -> np.random.Generator:
    """The numpy ``Generator`` every random operator draws from (reseeded by :func:`seed`)."""
    return _state["rng"]


# The samplers are nd.random's (mx.random.uniform is mx.nd.random.uniform). Imported last so
# that an op module importing `generator` from here while the registry loads finds it defined.
from .ndarray.random import (  # noqa: E402
    exponential,
    gamma,
    generalized_negative_binomial,
    multinomial,
    negative_binomial,
    normal,
    poisson,
    randint,
    randn,
    shuffle,
    uniform,
)

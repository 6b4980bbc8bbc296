"""The state of the random number generator every random operator draws from.

One numpy ``Generator``, started from a fixed seed as MXNet's is, so a fresh process gives the
same numbers on each run. The op families (``ops/``) read it with :func:`generator`;
:mod:`gluonport.random` re-exports :func:`seed` and :func:`generator` as ``mx.random.seed`` and
``mx.random.generator``. It lives in this low-level module so that the op families need not
import ``gluonport.random``, which imports the ``nd`` front end for its samplers.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..context import Context

__all__ = ["seed", "generator"]

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

"""Random number interface, mirroring ``mxnet.random``.

Every random operator (``nd.random.uniform``, ``Dropout`` in training...) draws from one numpy
``Generator``, kept in ``gluonport._core.rng`` (below the op families, which read it there). Like
MXNet, it starts from a fixed seed, so a fresh process gives the same numbers each run;
:func:`seed` restarts it. The numbers differ from MXNet's own generator;
the distributions are the same.

The sampling functions are the ``nd.random`` ones (``mx.random.uniform`` is
``mx.nd.random.uniform``), as in MXNet.
"""

from __future__ import annotations

from ._core.rng import generator, seed
from .ndarray.random import (
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

# the samplers are nd.random's (mx.random.uniform is mx.nd.random.uniform), as in MXNet
__all__ = ["seed", "generator", "uniform", "normal", "randn", "poisson", "exponential", "gamma",
           "multinomial", "negative_binomial", "generalized_negative_binomial", "shuffle",
           "randint"]

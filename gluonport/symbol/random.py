"""``sym.random``: sampling functions, mirroring ``mxnet.symbol.random`` (1.9.1).

The same functions as :mod:`gluonport.ndarray.random`, building ``_random_X`` nodes when the
distribution parameters are numbers and ``_sample_X`` nodes when they are Symbols.
"""

from __future__ import annotations

from typing import Any

from ..ndarray.random import build
from .symbol import Symbol, invoke

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


def _sym_invoke(op: str, args: tuple, kwargs: dict) -> Any:
    return invoke(op, args, kwargs)


_FNS = build(_sym_invoke, Symbol, imperative=False)
uniform, normal, randn = _FNS["uniform"], _FNS["normal"], _FNS["randn"]
poisson, exponential, gamma = _FNS["poisson"], _FNS["exponential"], _FNS["gamma"]
negative_binomial = _FNS["negative_binomial"]
generalized_negative_binomial = _FNS["generalized_negative_binomial"]
randint, multinomial, shuffle = _FNS["randint"], _FNS["multinomial"], _FNS["shuffle"]

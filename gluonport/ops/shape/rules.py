"""Helpers shared by the shape and indexing op files (they register with
``registry.define(...,
name_errors=True)``): type rules, one-input shape rules, and the output names of a lowering.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...errors import ShapeError
from ..lowering import LoweringContext

__all__ = ["check", "types_from", "one_output", "out_list", "LIKE_TYPES", "grad_attrs"]


def check(cond: bool, message: str) -> None:
    """Raise :class:`ShapeError` with ``message`` unless ``cond``."""
    if not cond:
        raise ShapeError(message)


def types_from(same: Sequence[int] = (0,), fixed: str | None = None) -> Callable:
    """A type rule: the inputs listed in ``same`` share one dtype, which the output takes
    (unless ``fixed`` names the output dtype); other inputs (indices, shape donors) keep their
    own dtype, as MXNet's type functions for these ops do."""

    def rule(p, in_types):
        ins = list(in_types)
        group = next((ins[i] for i in same if ins[i] is not None), None)
        for i in same:
            ins[i] = group
        return ins, [np.dtype(fixed) if fixed else group]

    return rule


def one_output(fn: Callable) -> Callable:
    """A shape rule for one input and one output that only computes the output."""

    def rule(p, ins):
        return ins, [None if ins[0] is None else fn(p, tuple(ins[0]))]

    return rule


def grad_attrs(p) -> dict:
    """A node's parsed attributes as keyword arguments for its backward op (unset optional
    attributes left out)."""
    return {k: v for k, v in p.as_dict().items() if v is not None}


def out_list(ctx: LoweringContext, k: int = 0) -> list[str]:
    """``[ctx.outputs[k]]``: the ``outputs=`` of a lowering's last node."""
    return [ctx.outputs[k]]


#: The type rule of the ``*_like`` ops: the output takes input 0's dtype.
LIKE_TYPES = types_from((0,))

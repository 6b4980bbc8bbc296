"""Helpers shared by the shape and indexing op files: registration with op-named errors,
type rules, one-input shape rules, and the output names of a lowering.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...errors import GluonportError, ShapeError
from ..lowering import LoweringContext
from ..registry import OpDef, register

__all__ = ["check", "named", "types_from", "define", "one_output", "out_list", "LIKE_TYPES"]


def check(cond: bool, message: str) -> None:
    """Raise :class:`ShapeError` with ``message`` unless ``cond``."""
    if not cond:
        raise ShapeError(message)


def named(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a compute so its errors start with the op name (``nd`` calls have no node name)."""

    @functools.wraps(fn)  # keeps the family module for OPERATORS.md
    def run(p, *arrays):
        try:
            return fn(p, *arrays)
        except GluonportError as exc:
            if str(exc).startswith(f"{name}:"):
                raise
            raise type(exc)(f"{name}: {exc}") from None

    return run


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


def define(name: str, compute: Callable, shape: Callable, params: dict | None = None,
           inputs: Sequence[str] = ("data",), aliases: tuple[str, ...] = (), doc: str = "",
           **kw: Any) -> OpDef:
    """Register one op of this family (compute errors are prefixed with the op name)."""
    return register(OpDef(name, params=params or {}, compute=named(name, compute),
                          infer_shape=shape, inputs=inputs, aliases=aliases, doc=doc, **kw))


def one_output(fn: Callable) -> Callable:
    """A shape rule for one input and one output that only computes the output."""

    def rule(p, ins):
        return ins, [None if ins[0] is None else fn(p, tuple(ins[0]))]

    return rule




def out_list(ctx: LoweringContext, k: int = 0) -> list[str]:
    """``[ctx.outputs[k]]``: the ``outputs=`` of a lowering's last node."""
    return [ctx.outputs[k]]


#: The type rule of the ``*_like`` ops: the output takes input 0's dtype.
LIKE_TYPES = types_from((0,))

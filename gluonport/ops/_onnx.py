"""Building blocks for ONNX export handlers (used by the op family modules).

A handler is ``handler(ctx)`` with ``ctx`` an :class:`gluonport.onnx.ExportContext`; attach it
to an op with ``op.to_onnx(since=13)(handler)``. Families are tables, so most handlers come from
the small factories here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["simple", "scalar_binary", "attach", "const_like", "reshape_to_rank"]


def simple(op_type: str, **attrs: Any) -> Callable:
    """One ONNX node with the op's inputs and outputs (``Relu``, ``Add``...)."""

    def handler(ctx) -> None:
        ctx.make(op_type, ctx.inputs, outputs=ctx.outputs[:1], **attrs)

    handler.__name__ = f"to_{op_type}"
    return handler


def const_like(ctx, value: Any, i: int = 0, hint: str = "scalar") -> str:
    """A scalar constant in the dtype of input ``i`` (ONNX needs equal dtypes)."""
    dt = ctx.in_dtypes[i] if ctx.in_dtypes and ctx.in_dtypes[i] is not None else np.float32
    return ctx.const(np.asarray(value, dtype=dt), hint)


def scalar_binary(op_type: str, reverse: bool = False) -> Callable:
    """``x <op> scalar`` (or ``scalar <op> x``) with the scalar attribute as a constant."""

    def handler(ctx) -> None:
        s = const_like(ctx, ctx.params.scalar)
        ins = [s, ctx.inputs[0]] if reverse else [ctx.inputs[0], s]
        ctx.make(op_type, ins, outputs=ctx.outputs[:1])

    handler.__name__ = f"to_{op_type}_scalar"
    return handler


def attach(op_name: str, handler: Callable, since: int = 13) -> None:
    """Register ``handler`` for the registered op ``op_name``."""
    from .registry import get

    get(op_name).to_onnx(since=since)(handler)


def reshape_to_rank(ctx, tensor: str, rank: int, axis: int = 1) -> str:
    """Reshape a 1-D per-channel tensor (C,) to broadcast along ``axis`` of a rank-``rank``
    tensor: (C, 1, ..., 1) with ``rank - axis - 1`` trailing ones."""
    shape = [-1] + [1] * (rank - axis - 1)
    return ctx.make("Reshape", [tensor, ctx.ints(shape, "bshape")])

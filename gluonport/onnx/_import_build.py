"""Symbol-building helpers shared by the ONNX import handlers: axes and ranks, dtypes and casts,
reshapes and broadcasting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core import dtypes
from ..errors import DTypeError
from ..symbol import Symbol
from ._import_context import ImportContext, Value

__all__ = ["norm_axis", "norm_axes", "scalar_value", "cast", "mx_dtype", "as_rank",
           "broadcast_to", "broadcast_shape", "reshape", "int_attr_list", "named_dims",
           "broadcast_named", "broadcast_together"]


def norm_axis(axis: int, rank: int | None, ctx: ImportContext | None = None) -> int:
    """A non-negative axis; negative axes need the rank."""
    if axis >= 0:
        return axis
    if rank is None:
        if ctx is not None:
            raise ctx.fail(f"negative axis {axis} on a tensor of unknown rank")
        raise ValueError(f"negative axis {axis} needs the rank")
    return axis + rank


def norm_axes(axes: Sequence[int], rank: int | None, ctx: ImportContext) -> list[int]:
    return [norm_axis(int(a), rank, ctx) for a in axes]


def scalar_value(v: Value | None) -> float | int | None:
    """The single value of a constant with one element (any shape), else None."""
    if v is None or v.const is None or v.const.size != 1:
        return None
    item = v.const.reshape(-1)[0]
    return bool(item) if v.const.dtype == np.bool_ else item.item()


def mx_dtype(ctx: ImportContext, dtype: np.dtype) -> str:
    """MXNet's name of a numpy dtype that MXNet's Cast can produce."""
    try:
        name = dtypes.name_of(dtype)
    except DTypeError:
        name = str(np.dtype(dtype))
    from ..ops.math.unary import CAST_DTYPES

    if name not in CAST_DTYPES or name == "bfloat16":
        raise ctx.fail(f"tensor type {np.dtype(dtype)} has no MXNet 1.x equivalent (MXNet casts "
                       f"to {', '.join(c for c in CAST_DTYPES if c != 'bfloat16')})")
    return name


def cast(ctx: ImportContext, s: Symbol, dtype: np.dtype) -> Symbol:
    return ctx.op("Cast", s, dtype=mx_dtype(ctx, dtype))


def as_rank(ctx: ImportContext, v: Value, rank: int) -> Symbol:
    """``v`` with unit dims prepended up to ``rank`` (numpy broadcasting alignment)."""
    if v.const is not None:
        if v.const.ndim >= rank:
            return v.sym
        return ctx.new_param(f"{v.name}_r{rank}",
                             v.const.reshape((1,) * (rank - v.const.ndim) + v.const.shape))
    if v.rank is None:
        raise ctx.fail(f"input {v.name!r} has unknown rank")
    s = v.sym
    for _ in range(rank - max(v.rank, 1)):  # a 0-d ONNX tensor is (1,) in MXNet
        s = ctx.op("expand_dims", s, axis=0)
    return s


def broadcast_to(ctx: ImportContext, v: Value, shape: Sequence) -> Symbol:
    """``v`` broadcast to ``shape`` (dims may be unknown where ``v`` already has them)."""
    rank = len(shape)
    s = as_rank(ctx, v, rank)
    own = tuple(v.shape or ()) or (1,)
    have = (1,) * (rank - len(own)) + own
    target = []
    for h, want in zip(have, shape):
        if isinstance(want, int) and h != want:
            target.append(want)
        elif h == want or (isinstance(h, int) and h != 1) or not isinstance(want, int):
            target.append(0)  # keep the dim (MXNet's broadcast_to: 0 = unchanged)
        else:
            target.append(want)
    if all(t == 0 for t in target):
        return s
    return ctx.op("broadcast_to", s, shape=tuple(target))


def broadcast_shape(ctx: ImportContext, values: Sequence[Value]) -> tuple:
    """The output shape of a broadcast of ``values``: shape inference's, with unknown dims
    filled from any input that has a non-1 static size there."""
    ranks = [max(v.rank, 1) for v in values if v.rank is not None]
    out = ctx.out_shape()
    if out is None and len(ranks) < len(values):
        raise ctx.fail("the output shape is unknown (broadcasting needs it)")
    rank = len(out) if out is not None else max(ranks)
    dims = list(out) if out is not None else [None] * rank
    for i in range(rank):
        if isinstance(dims[i], int):
            continue
        for v in values:
            own = tuple(v.shape or ()) or (1,)
            k = i - (rank - len(own))
            if 0 <= k < len(own) and isinstance(own[k], int) and own[k] != 1:
                dims[i] = own[k]
    return tuple(dims)


def reshape(ctx: ImportContext, s: Symbol, shape: Sequence[int], **kw) -> Symbol:
    return ctx.op("Reshape", s, shape=tuple(int(d) for d in shape), **kw)


def int_attr_list(values: Sequence | None, n: int, default: int) -> list[int]:
    """An ONNX ints attribute, or ``n`` copies of ``default`` when absent."""
    if values is None or len(values) == 0:
        return [default] * n
    return [int(v) for v in values]


def named_dims(ctx: ImportContext, v: Value | None) -> list | None:
    """A shape-like input's entries: its constant's ints, or the folded shape vector with named
    dims (``['N', 6]`` from ``Shape`` of a dynamic-batch tensor); None when neither is known."""
    if v is None:
        return None
    if v.const is not None:
        return [int(d) for d in np.asarray(v.const).reshape(-1)]
    vec = ctx.symbolic.get(v.name)
    if vec is None or not all(isinstance(d, (int, str)) for d in vec):
        return None
    return list(vec)


def broadcast_named(ctx: ImportContext, s: Symbol, named: dict[int, str]) -> Symbol:
    """``s`` (size 1 on the axes of ``named``) broadcast there to the run-time size of the
    named dims, read from a tensor that has them (a graph input, or a node output shape
    inference named; MXNet's ``broadcast_like`` with ``lhs_axes``/``rhs_axes``)."""
    by_source: dict[int, tuple[Symbol, list[int], list[int]]] = {}
    for axis, name in sorted(named.items()):
        src = ctx.dim_sources.get(name)
        if src is None:
            raise ctx.fail(f"dim {name!r} is only known at run time and no tensor has it "
                           "(give the model static input shapes)")
        entry = by_source.setdefault(id(src[0]), (src[0], [], []))
        entry[1].append(axis)
        entry[2].append(src[1])
    for ref, lhs, rhs in by_source.values():
        s = ctx.op("broadcast_like", s, ref, lhs_axes=tuple(lhs), rhs_axes=tuple(rhs))
    return s


def broadcast_together(ctx: ImportContext, values: Sequence[Value]) -> list[Symbol]:
    """``values`` broadcast to one shape (MXNet's ``where`` needs equal shapes). Static dims
    by ``broadcast_to``; a dim unknown at import (a dynamic batch) where a value has size 1
    is taken from a value that has it, with ``broadcast_like``."""
    shape = broadcast_shape(ctx, values)
    rank = len(shape)
    syms = [broadcast_to(ctx, v, shape) for v in values]
    dims = [None if v.shape is None and v.const is None else
            (1,) * (rank - len(tuple(v.shape) or (1,))) + (tuple(v.shape) or (1,))
            for v in values]
    out = list(syms)
    for i, d in enumerate(dims):
        axes: dict[int, list[int]] = {}  # donor value -> axes
        for a in range(rank):
            if d is None or d[a] != 1 or isinstance(shape[a], int):
                continue
            donor = next((j for j, e in enumerate(dims) if e is not None
                          and isinstance(e[a], str)), None)
            if donor is not None:
                axes.setdefault(donor, []).append(a)
        for j, ax in axes.items():
            out[i] = ctx.op("broadcast_like", out[i], syms[j], lhs_axes=tuple(ax),
                            rhs_axes=tuple(ax))
    return out

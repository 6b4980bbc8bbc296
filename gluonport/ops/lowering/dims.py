"""Static and dynamic dims in ONNX lowerings.

The rule every lowering follows: a dim that varies with the exported model's dynamic axes
(``ctx.in_dynamic``) is never written into the graph as its example value. It is read at run time
from ``Shape(x)``; fixed dims stay constants, so a model without dynamic axes gets plain constant
shapes. Reshape-like ops (the output holds the input's elements) leave a single varying dim as
``-1`` and need no ``Shape`` node at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import LoweringContext

__all__ = ["Dims", "Entry", "build_shape", "reshape_to", "INT64_MAX", "INT64_MIN", "onnx_dims",
           "onnx_shape", "onnx_dim"]

INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)

Entry = int | Callable[[], str]  # a fixed dim, or a thunk making a 1-element int64 tensor


class Dims:
    """The dims of input ``i`` of the node being converted: constants where fixed, read from
    one shared ``Shape`` node where they vary with the dynamic axes."""

    def __init__(self, ctx: LoweringContext, i: int = 0):
        self.ctx, self.i = ctx, i
        self.static = tuple(ctx.in_shapes[i])
        dyn = ctx.in_dynamic[i] if i < len(ctx.in_dynamic) else ()
        self.dyn = tuple(dyn) if dyn else (False,) * len(self.static)
        self._shape: str | None = None

    def shape(self) -> str:
        """The whole shape as a 1-D int64 tensor (a constant when nothing varies)."""
        if not any(self.dyn):
            return self.ctx.ints(self.static, "shape")
        if self._shape is None:
            self._shape = self.ctx.make("Shape", [self.ctx.inputs[self.i]])
        return self._shape

    def get(self, axes: Sequence[int]) -> str:
        """Dims ``axes`` as a 1-D int64 tensor."""
        axes = list(axes)
        if not any(self.dyn[a] for a in axes):
            return self.ctx.ints([self.static[a] for a in axes], "dims")
        return self.ctx.make("Gather", [self.shape(), self.ctx.ints(axes, "axes")], axis=0)

    def scalar(self, axis: int) -> str:
        """Dim ``axis`` as a 0-d int64 tensor (Clip bounds, Range limits)."""
        if not self.dyn[axis]:
            return self.ctx.const(np.asarray(self.static[axis], np.int64), "dim")
        index = self.ctx.const(np.asarray(axis, np.int64), "axis")
        return self.ctx.make("Gather", [self.shape(), index], axis=0)

    def entry(self, axis: int) -> Entry:
        """Dim ``axis`` as a :func:`build_shape` entry."""
        return (lambda: self.get([axis])) if self.dyn[axis] else self.static[axis]


def build_shape(ctx: LoweringContext, entries: Sequence[Entry], same_size: bool = False) -> str:
    """A 1-D int64 shape tensor from fixed dims and run-time thunks.

    ``same_size``: the shape is a Reshape target holding the input's element count, so one
    varying dim can be left to ONNX as ``-1`` (a constant shape, no ``Shape`` node).
    """
    lazy = [k for k, e in enumerate(entries) if callable(e)]
    if not lazy or (same_size and len(lazy) == 1):
        return ctx.ints([-1 if callable(e) else e for e in entries], "shape")
    parts, run = [], []
    for e in entries:
        if callable(e):
            if run:
                parts.append(ctx.ints(run, "dims"))
                run = []
            parts.append(e())
        else:
            run.append(e)
    if run:
        parts.append(ctx.ints(run, "dims"))
    return ctx.make("Concat", parts, axis=0)


def reshape_to(ctx: LoweringContext, x: str, entries: Sequence[Entry],
               out: str | None = None) -> str:
    """``Reshape(x)`` to ``entries`` (see :func:`build_shape`; the size is unchanged)."""
    shape = build_shape(ctx, entries, same_size=True)
    fixed = [e for e in entries if not callable(e)]
    allowzero = None
    if 0 in fixed:  # ONNX's 0 copies the input dim; MXNet's means an empty dim here
        if ctx.opset < 14:
            raise ctx.fail("a zero-size Reshape result needs opset >= 14 (Reshape allowzero)")
        allowzero = 1
    return ctx.make("Reshape", [x, shape], outputs=[out] if out else None, allowzero=allowzero)


def onnx_dims(ctx: LoweringContext, i: int, start: int, end: int | None = None) -> list[int] | str:
    """Dims ``start:end`` of input ``i``: a list of ints, or an int64 tensor when one of them
    changes with the dynamic axes (never bake a dynamic dim into the graph)."""
    shape = ctx.in_shapes[i]
    end = len(shape) if end is None else end
    if not any(ctx.in_dynamic[i][start:end]):
        return [int(d) for d in shape[start:end]]
    if ctx.opset >= 15:
        return ctx.make("Shape", [ctx.inputs[i]], start=start, end=end)
    full = ctx.make("Shape", [ctx.inputs[i]])
    return ctx.make("Slice", [full, ctx.ints([start], "start"), ctx.ints([end], "end")])


def onnx_shape(ctx: LoweringContext, parts: list) -> str:
    """An int64 shape tensor joined from lists of ints and 1-D int64 tensors."""
    if all(isinstance(p, list) for p in parts):
        return ctx.ints([d for p in parts for d in p], "shape")
    pieces = [ctx.ints(p, "dims") if isinstance(p, list) else p for p in parts if p != []]
    return ctx.make("Concat", pieces, axis=0)


def onnx_dim(ctx: LoweringContext, i: int, axis: int) -> str:
    """Dim ``axis`` of input ``i`` as an int64 scalar tensor; read at run time when it varies
    with the dynamic axes (its example value must not be baked in)."""
    if not ctx.is_dynamic(i, axis):
        return ctx.const(np.int64(ctx.in_shapes[i][axis]), "dim")
    shape = ctx.make("Shape", [ctx.inputs[i]])
    return ctx.make("Gather", [shape, ctx.const(np.int64(axis), "axis")], axis=0)

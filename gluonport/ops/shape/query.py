"""Shape queries and generators: shape_array, size_array, _contrib_arange_like, diag, with
their ONNX lowerings.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Float, Int, Optional, Str
from ..infer import fmt, norm_axis
from ..lowering import LoweringContext, deliver, lowering
from ..lowering.dims import Dims, reshape_to
from ..registry import define, zero_gradient
from .reshape import (
    prod,
)
from .rules import check, grad_attrs, one_output, out_list, types_from

__all__ = []


# --- shape queries and generators ------------------------------------------------------------
# --- gradients (MXNet's FGradient): zero for the shape queries and arange_like ------------------
def _grad_diag(F, p, inputs, outputs, ograds):
    return [F._internal._backward_diag(ograds[0], inputs[0], **grad_attrs(p))]


define("shape_array", lambda p, x: np.array(x.shape, np.int64), one_output(lambda p, s: (len(s),)),
    infer_type=types_from((), "int64"), doc="The input's shape as an int64 array.",
    name_errors=True, lists_input_names=False, gradient=zero_gradient)
define("size_array", lambda p, x: np.array([x.size], np.int64), one_output(lambda p, s: (1,)),
    infer_type=types_from((), "int64"), doc="The input's size as an int64 array.", name_errors=True,
    lists_input_names=False, gradient=zero_gradient)


def _arange_like_shape(p, s):
    if p.axis is None:
        return s
    return (s[norm_axis(p.axis, len(s))],)


def _arange_like(p, x):
    shape = _arange_like_shape(p, x.shape)
    check(p.repeat >= 1, f"repeat={p.repeat} must be >= 1")
    k = np.arange(prod(shape), dtype=np.int64) // max(p.repeat, 1)
    dt = x.dtype
    if dt in (np.float32, np.float64):
        out = dt.type(p.start) + k.astype(dt) * dt.type(p.step)
    else:  # MXNet's kernel truncates start and step for integer and float16 outputs
        out = (int(p.start) + k * int(p.step)).astype(dt)
    return out.reshape(shape)


define("_contrib_arange_like", _arange_like, one_output(_arange_like_shape),
    params={"start": Float(0.0), "step": Float(1.0), "repeat": Int(1), "ctx": Str(""),
            "axis": Optional(Int())},
    doc="``start + (i // repeat) * step`` shaped like the input (or its ``axis``), in the "
        "input's dtype.", name_errors=True, lists_input_names=False, gradient=zero_gradient)


def _diag_shape(p, s):
    if len(s) == 1:
        return (s[0] + abs(p.k),) * 2 if s[0] else (0, 0)
    a1, a2 = norm_axis(p.axis1, len(s), "axis1"), norm_axis(p.axis2, len(s), "axis2")
    check(a1 != a2, f"axis1 and axis2 both refer to axis {a1}")
    h, w = s[a1], s[a2]
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    if not (h and w):
        return rest + (0,)
    n = min(h + min(p.k, 0), w - max(p.k, 0))
    check(n >= 0, f"diagonal k={p.k} does not exist in {fmt(s)}")
    return rest + (n,)


def _diag(p, x):
    _diag_shape(p, x.shape)
    if x.ndim == 1:
        return np.diag(x, p.k)
    return np.diagonal(x, p.k, norm_axis(p.axis1, x.ndim), norm_axis(p.axis2, x.ndim)).copy()


define("diag", _diag, one_output(_diag_shape),
       params={"k": Int(0), "axis1": Int(0), "axis2": Int(1)},
    doc="1-d input: a square matrix with it on diagonal ``k``; otherwise the ``k``-th "
        "diagonal over ``axis1``/``axis2``, appended as the last dim.", name_errors=True,
    gradient=_grad_diag)




# --- shape queries and generators ------------------------------------------------------------
def _shape_array_onnx(ctx: LoweringContext) -> None:
    ctx.make("Shape", ctx.inputs[:1], outputs=out_list(ctx))


def _size_array_onnx(ctx: LoweringContext) -> None:
    size = ctx.make("Size", ctx.inputs[:1])
    ctx.make("Reshape", [size, ctx.ints([1], "one")], outputs=out_list(ctx))


def _arange_like_onnx(ctx: LoweringContext) -> None:
    """``start + (i // repeat) * step`` over a run-time ``Range``; float32/64 compute in their
    dtype, other dtypes in int64 with start and step truncated (as MXNet's kernel)."""
    p, dims, dtype = ctx.params, Dims(ctx), np.dtype(ctx.dtype)
    if p.axis is None:
        n = ctx.make("Size", ctx.inputs[:1]) if any(dims.dyn) else \
            ctx.const(np.asarray(int(np.prod(dims.static)), np.int64), "n")
    else:
        n = dims.scalar(norm_axis(p.axis, len(dims.static)))
    zero, one = (ctx.const(np.asarray(v, np.int64), "i") for v in (0, 1))
    k = ctx.make("Range", [zero, n, one])
    if p.repeat != 1:
        k = ctx.make("Div", [k, ctx.const(np.asarray(p.repeat, np.int64), "repeat")])
    work = dtype if dtype in (np.float32, np.float64) else np.dtype(np.int64)
    cast = float if work.kind == "f" else int
    y = ctx.make("Mul", [ctx.cast_to(k, work) if work != np.int64 else k,
                         ctx.const(np.asarray(cast(p.step), work), "step")])
    y = ctx.make("Add", [y, ctx.const(np.asarray(cast(p.start), work), "start")])
    if work != dtype:
        y = ctx.cast_to(y, dtype)
    if p.axis is None and len(dims.static) != 1:
        reshape_to(ctx, y, [dims.entry(a) for a in range(len(dims.static))], ctx.outputs[0])
    else:
        deliver(ctx, y)


def _diag_onnx(ctx: LoweringContext) -> None:
    """1-d: Gather from ``[x, 0]`` at a fixed index map; n-d: move ``axis1``/``axis2`` last,
    flatten them, Gather the diagonal's flat positions. The diagonal's dims must be fixed."""
    p, dims = ctx.params, Dims(ctx)
    ndim = len(dims.static)
    if ndim == 1:
        return _diag_matrix(ctx, dims, p.k)
    a1, a2 = norm_axis(p.axis1, ndim), norm_axis(p.axis2, ndim)
    if dims.dyn[a1] or dims.dyn[a2]:
        raise ctx.fail("diag over a dynamic axis has no ONNX lowering; export with those "
                       "axes fixed")
    h, w = dims.static[a1], dims.static[a2]
    n = _diag_shape(p, dims.static)[-1]
    rows = np.arange(n) + max(-p.k, 0)
    flat = rows * w + rows + p.k
    rest = [a for a in range(ndim) if a not in (a1, a2)]
    x = ctx.make("Transpose", ctx.inputs[:1], perm=rest + [a1, a2])
    x = reshape_to(ctx, x, [dims.entry(a) for a in rest] + [h * w])
    ctx.make("Gather", [x, ctx.ints(flat, "diag")], outputs=out_list(ctx), axis=len(rest))


def _diag_matrix(ctx: LoweringContext, dims: Dims, k: int) -> None:
    if dims.dyn[0]:
        raise ctx.fail("diag of a dynamic-length vector has no ONNX lowering")
    n = dims.static[0]
    m = n + abs(k)
    index = np.full((m, m), n, np.int64)  # position n of [x, 0] is the zero
    i = np.arange(n)
    index[i + max(-k, 0), i + max(k, 0)] = i
    zero = ctx.const(np.zeros(1, ctx.dtype), "zero")
    padded = ctx.make("Concat", [ctx.inputs[0], zero], axis=0)
    ctx.make("Gather", [padded, ctx.const(index, "diag")], outputs=out_list(ctx), axis=0)


# --- ONNX lowerings attached ---------------------------------------------------------------
lowering("shape_array")(_shape_array_onnx)
lowering("size_array")(_size_array_onnx)
lowering("_contrib_arange_like")(_arange_like_onnx)
lowering("diag")(_diag_onnx)

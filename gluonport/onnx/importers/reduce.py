"""Import handlers: reductions, ArgMax/ArgMin, TopK and Einsum.

Reduction axes are an attribute before opset 13 (ReduceSum) / 18 (the others) and an input
after; both forms are accepted. Empty ``axes`` reduce everything unless
``noop_with_empty_axes``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._import_build import cast, norm_axes, norm_axis, reshape
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []


def _reduce_axes(ctx: ImportContext, x: Value, axes_in: Value | None,
                 axes: Sequence[int] | None) -> tuple[int, ...] | None:
    ax = axes_in.ints() if axes_in is not None else (list(axes) if axes is not None else [])
    return tuple(sorted(norm_axes(ax, x.rank, ctx))) if ax else None


def _reduce(ctx: ImportContext, kind: str, x: Value, axis, keep: bool):
    s = x.sym
    if kind in ("sum", "mean", "max", "min", "prod"):
        return ctx.op(kind, s, axis=axis, keepdims=keep)
    if kind in ("l1", "l2"):
        s = ctx.op("abs", s) if kind == "l1" else s
        if kind == "l1":
            return ctx.op("sum", s, axis=axis, keepdims=keep)
        return ctx.op("sqrt", ctx.op("sum", ctx.op("square", s), axis=axis, keepdims=keep))
    if kind == "sumsquare":
        return ctx.op("sum", ctx.op("square", s), axis=axis, keepdims=keep)
    if kind == "logsum":
        return ctx.op("log", ctx.op("sum", s, axis=axis, keepdims=keep))
    # logsumexp, stable: m + log(sum(exp(x - m)))
    m = ctx.op("max", s, axis=axis, keepdims=True)
    e = ctx.op("exp", ctx.op("broadcast_sub", s, m))
    out = ctx.op("broadcast_add", ctx.op("log", ctx.op("sum", e, axis=axis, keepdims=True)), m)
    if keep:
        return out
    return ctx.op("squeeze", out, axis=axis) if axis is not None else reshape(ctx, out, (1,))


# the reduction of an empty set (ONNX: the identity of the reduction; log of a zero sum)
_EMPTY = {"sum": 0.0, "l1": 0.0, "l2": 0.0, "sumsquare": 0.0, "prod": 1.0,
          "logsum": -np.inf, "logsumexp": -np.inf, "max": -np.inf, "min": np.inf,
          "mean": np.nan}


def _empty_reduction(ctx: ImportContext, kind: str, x: Value, axis, keep: bool):
    """A constant when a reduced axis has size 0 and the result does not: it does not depend
    on the data, and MXNet 1.x cannot bind the zero-size data of most reductions (0 reads as
    an unknown dim: abs, square, exp of it fail; ``sum`` alone passes). None otherwise."""
    shape = x.static_shape
    if shape is None:
        return None
    axes = range(len(shape)) if axis is None else axis
    if not any(shape[a] == 0 for a in axes):
        return None
    out = [1 if a in axes else d for a, d in enumerate(shape)] if keep else \
        [d for a, d in enumerate(shape) if a not in axes]
    dtype = np.dtype(x.dtype or np.float32)
    value = _EMPTY[kind]
    if 0 in out or (dtype.kind != "f" and not np.isfinite(value)):
        return None  # an empty result (MXNet cannot hold it), or no such integer value
    return ctx.new_param(f"{ctx.node_name}_empty", np.full(out or [1], value, dtype))


def _reduce_handler(kind: str):
    def handler(ctx: ImportContext, x: Value, axes_in: Value | None = None, *,
                axes: Sequence[int] | None = None, keepdims: int = 1,
                noop_with_empty_axes: int = 0) -> object:
        axis = _reduce_axes(ctx, x, axes_in, axes)
        if axis is None and noop_with_empty_axes:
            return ctx.op("_copy", x.sym)
        if axis is not None and x.rank is not None and len(axis) == x.rank:
            axis = None
        empty = _empty_reduction(ctx, kind, x, axis, bool(keepdims))
        if empty is not None:
            return empty
        return _reduce(ctx, kind, x, axis, bool(keepdims))

    handler.__name__ = f"reduce_{kind}"
    return handler


for _op, _kind in {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max",
                   "ReduceMin": "min", "ReduceProd": "prod", "ReduceL1": "l1", "ReduceL2": "l2",
                   "ReduceLogSum": "logsum", "ReduceLogSumExp": "logsumexp",
                   "ReduceSumSquare": "sumsquare"}.items():
    importer(_op, since=1)(_reduce_handler(_kind))


def _arg(mx_op: str):
    def handler(ctx: ImportContext, x: Value, *, axis: int = 0, keepdims: int = 1,
                select_last_index: int = 0) -> object:
        a = norm_axis(axis, x.rank, ctx)
        s = x.sym
        if select_last_index:
            n = x.shape[a] if x.shape is not None else None
            if not isinstance(n, int):
                raise ctx.fail("select_last_index needs the static size of the axis")
            s = ctx.op("reverse", s, axis=(a,))
            idx = ctx.op(mx_op, s, axis=a, keepdims=bool(keepdims))
            idx = ctx.op("_rminus_scalar", idx, scalar=float(n - 1))
        else:
            idx = ctx.op(mx_op, s, axis=a, keepdims=bool(keepdims))
        return cast(ctx, idx, np.dtype(np.int64))

    return handler


importer("ArgMax", since=1)(_arg("argmax"))
importer("ArgMin", since=1)(_arg("argmin"))


@importer("TopK", since=1)
def topk(ctx: ImportContext, x: Value, k_in: Value | None = None, *, axis: int = -1,
         k: int | None = None, largest: int = 1, sorted: int = 1) -> object:  # noqa: A002
    kk = k_in.ints()[0] if k_in is not None else int(k)
    a = norm_axis(axis, x.rank, ctx)
    both = ctx.op("topk", x.sym, axis=a, k=kk, ret_typ="both", is_ascend=not largest,
                  dtype="int64")
    return [both[0], both[1]]


# --- Einsum -----------------------------------------------------------------------------------
def _parse_einsum(ctx: ImportContext, equation: str, n_in: int) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise ctx.fail("Einsum with ellipsis '...' is not supported")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_in:
        raise ctx.fail(f"equation {equation!r} names {len(terms)} operands, got {n_in}")
    if not arrow:
        letters = "".join(terms)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for t in terms:
        if len(set(t)) != len(t):
            raise ctx.fail("Einsum with a repeated index in one operand (a diagonal) is not "
                           "supported")
    return terms, rhs


@importer("Einsum", since=12)
def einsum(ctx: ImportContext, *xs: Value, equation: str = "") -> object:
    """Einsum as transposes, sums, reshapes and ``batch_dot``. Operand dims may be unknown
    (a dynamic batch) where each reshape has at most one unknown group (MXNet's ``-1``)."""
    terms, out = _parse_einsum(ctx, equation, len(xs))
    sizes: dict[str, int | None] = {}
    for t, v in zip(terms, xs):
        if v.shape is None or len(v.shape) != len(t):
            raise ctx.fail("Einsum needs the operands' ranks")
        for c, d in zip(t, v.shape):
            if isinstance(d, int) or sizes.get(c) is None:
                sizes[c] = d if isinstance(d, int) else None
    cur, term = xs[0].sym, terms[0]
    for k in range(1, len(xs)):
        later = set(out).union(*terms[k + 1:])
        target = "".join(dict.fromkeys(c for c in term + terms[k] if c in later))
        cur, term = _pair(ctx, cur, term, xs[k].sym, terms[k], target, sizes), target
    return _single(ctx, cur, term, out)


def _single(ctx: ImportContext, s, term: str, out: str):
    gone = tuple(i for i, c in enumerate(term) if c not in out)
    if gone:
        s = ctx.op("sum", s, axis=gone)
        term = "".join(c for c in term if c in out)
    perm = tuple(term.index(c) for c in out)
    return s if perm == tuple(range(len(term))) else ctx.op("transpose", s, axes=perm)


def _pair(ctx: ImportContext, a, ta: str, b, tb: str, out: str, sizes: dict):
    a, ta = _sum_only(ctx, a, ta, tb, out)
    b, tb = _sum_only(ctx, b, tb, ta, out)
    batch = [c for c in ta if c in tb and c in out]
    contract = [c for c in ta if c in tb and c not in out]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]

    def size(cs: list[str]) -> int:  # -1: unknown at import (MXNet's Reshape infers it)
        dims = [sizes[c] for c in cs]
        return -1 if None in dims else int(np.prod(dims)) if cs else 1

    a3 = _arrange(ctx, a, ta, batch + fa + contract, (size(batch), size(fa), size(contract)))
    b3 = _arrange(ctx, b, tb, batch + contract + fb, (size(batch), size(contract), size(fb)))
    y = ctx.op("batch_dot", a3, b3)
    order = batch + fa + fb
    y = _reshape_one_unknown(ctx, y, [size([c]) for c in order] or [1])
    perm = tuple(order.index(c) for c in out)
    return y if perm == tuple(range(len(order))) else ctx.op("transpose", y, axes=perm)


def _sum_only(ctx: ImportContext, s, t: str, other: str, out: str):
    gone = tuple(i for i, c in enumerate(t) if c not in other and c not in out)
    if not gone:
        return s, t
    return ctx.op("sum", s, axis=gone), "".join(c for c in t if c in other or c in out)


def _arrange(ctx: ImportContext, s, t: str, order: list[str], shape3: tuple):
    perm = tuple(t.index(c) for c in order)
    if perm != tuple(range(len(t))):
        s = ctx.op("transpose", s, axes=perm)
    return _reshape_one_unknown(ctx, s, shape3)


def _reshape_one_unknown(ctx: ImportContext, s, shape: list | tuple):
    if list(shape).count(-1) > 1:
        raise ctx.fail("Einsum needs static sizes for all but one group of its indices "
                       "(batch, free, contracted); give the model static input shapes")
    return reshape(ctx, s, shape)

"""Indexing operators: take, pick, Embedding, one_hot, where, gather/scatter, masks, the legacy
NDArray functions ``_onehot_encode`` and ``fill_element_0index`` (float32 only, out-of-range
indices leave their row off / unchanged), ``_ravel_multi_index`` / ``_unravel_index`` (aliases
without the underscore; no bounds checks, C division for negative indices, and 1-d indices only
for unravel, whose N-d form MXNet 1.9.1 computes wrongly).

MXNet 1.9.1 semantics kept here (checked against the real library):

* float indices are truncated toward zero (C's ``static_cast``) before use: ``1.7 -> 1``,
  ``-0.5 -> 0``; ``mode='clip'`` then clips, ``'wrap'`` wraps like Python's ``%``;
* the output takes the data's dtype; index inputs keep their own dtype in type inference
  (``batch_take`` alone requires int32 indices);
* ``where`` accepts a 1-d condition selecting whole rows of ``x``/``y``;
* where MXNet would read or write out of bounds (``scatter_nd``/``index_copy`` with a bad
  index, ``batch_take`` on 3-d data) gluonport raises :class:`~gluonport.errors.ShapeError`.

ONNX export (handlers at the end of this module): indices are cast to int64 (ONNX's Cast
truncates as MXNet does) and clipped or wrapped to the axis size, read from ``Shape`` when that
axis is dynamic; ``mode='raise'`` exports as ``clip`` since an ONNX graph cannot raise (valid
indices pass unchanged). ``gather_nd``/``scatter_nd`` transpose MXNet's (M, ...) index layout to
ONNX's (..., M).
"""

from __future__ import annotations

import numpy as np

from ..._core import dtypes
from ..._core.attr_fields import Bool, DType, Enum, Float, Int, Optional, Shape
from ...errors import DTypeError, GluonportError, ShapeError
from ..infer import fmt, merge, norm_axis
from ..lowering import LoweringContext, deliver, lowering
from ..lowering.dims import Dims, reshape_to
from ..registry import define, zero_gradient
from ..shape.rules import check, types_from

__all__ = ["as_index", "onnx_index", "onnx_bounded", "nd_indices"]

_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def as_index(idx: np.ndarray) -> np.ndarray:
    """Indices as int64, truncating floats toward zero as MXNet's kernels do."""
    if idx.dtype.kind in "iub":
        return idx.astype(np.int64, copy=False)
    return np.trunc(idx).astype(np.int64)


def _fix_mode(idx: np.ndarray, size: int, mode: str, what: str) -> np.ndarray:
    if mode == "clip":
        return np.clip(idx, 0, size - 1)
    if mode == "wrap":
        return np.mod(idx, size)
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise ShapeError(f"{what} {int(idx[bad][0])} out of bounds for size {size} "
                         "(mode='raise')")
    return idx


# --- take / pick / batch_take ----------------------------------------------------------------
def _take_shape(p, a: tuple, idx: tuple) -> tuple:
    check(-len(a) <= p.axis < len(a), f"axis {p.axis} is out of range for {len(a)}-d data")
    axis = p.axis + len(a) if p.axis < 0 else p.axis
    return a[:axis] + idx + a[axis + 1:]


def _take(p, a, indices):
    axis = norm_axis(p.axis, a.ndim)
    check(a.shape[axis] > 0, f"cannot take from an empty axis {axis} of {fmt(a.shape)}")
    idx = _fix_mode(as_index(indices), a.shape[axis], p.mode, "index")
    return np.take(a, idx, axis=axis)


# --- gradients (MXNet's FGradient): one backward kernel each (indexing_grad.py); index inputs
# get none (MXNet: zeros), value-free ops zero, the legacy functions none ---------------------
def _grad_by(op: str):
    def rule(F, p, inputs, outputs, ograds):
        attrs = {k: v for k, v in p.as_dict().items() if v is not None}
        return [getattr(F._internal, op)(ograds[0], *inputs, **attrs)] + [None] * (
            len(inputs) - 1)
    return rule


def _grad_embedding(F, p, inputs, outputs, ograds):
    """The weight's gradient; data wanting one is refused, as MXNet refuses it."""
    if getattr(inputs[0], "_ag", None) is not None:
        raise GluonportError("Embedding: Embedding layer doesn't support calculate data "
                               "gradient (MXNet 1.9.1 refuses it too); do not attach_grad() "
                               "the indices")
    attrs = {k: v for k, v in p.as_dict().items() if v is not None}
    return [None, F._internal._backward_Embedding(ograds[0], *inputs, **attrs)]


def _grad_where(F, p, inputs, outputs, ograds):
    zeros = F.zeros_like(ograds[0])
    return [None, F.where(inputs[0], ograds[0], zeros), F.where(inputs[0], zeros, ograds[0])]


def _grad_scatter_nd(F, p, inputs, outputs, ograds):
    return [F.gather_nd(ograds[0], inputs[1]), None]


def _grad_index_copy(F, p, inputs, outputs, ograds):
    back = F.contrib.backward_index_copy(ograds[0], *inputs)
    return [back[0], None, back[1]]


_LEGACY = ("a legacy NDArray function: MXNet 1.9.1 registers no FGradient for it (its backward "
           "raises)")
_BATCH_TAKE = "MXNet 1.9.1 registers no FGradient for batch_take (its backward raises)"


define("take", _take,
    lambda p, ins: (ins, [None if None in ins else _take_shape(p, tuple(ins[0]),
                                                              tuple(ins[1]))]),
    inputs=("a", "indices"), infer_type=types_from((0,)),
    params={"axis": Int(0), "mode": Enum(("clip", "raise", "wrap"), "clip")},
    doc="Take slices of ``a`` along ``axis`` at ``indices``; out-of-range indices are "
        "clipped, wrapped or refused by ``mode``.", name_errors=True,
    gradient=_grad_by("_backward_take"))


def _pick_axis(p, ndim: int) -> int:
    check(p.axis is not None, "axis=None is not supported by pick (MXNet neither); give an axis")
    return norm_axis(p.axis, ndim)


def _pick_rule(p, ins):
    data, index = ins
    if data is None:
        return ins, [None]
    data = tuple(data)
    axis = _pick_axis(p, len(data))
    kept = data[:axis] + (1,) + data[axis + 1:]
    dropped = data[:axis] + data[axis + 1:]
    like = kept if index is not None and len(index) == len(data) else dropped
    return [data, merge(index, like, "index: ")], [kept if p.keepdims else dropped]


def _pick(p, data, index):
    axis = _pick_axis(p, data.ndim)
    _pick_rule(p, [data.shape, index.shape])
    idx = _fix_mode(as_index(index), data.shape[axis], p.mode, "index")
    if idx.ndim < data.ndim:
        idx = np.expand_dims(idx, axis)
    out = np.take_along_axis(data, idx, axis=axis)
    return out if p.keepdims else out.squeeze(axis)


define("pick", _pick, _pick_rule, inputs=("data", "index"), infer_type=types_from((0,)),
    params={"axis": Optional(Int(), default=-1), "keepdims": Bool(False),
            "mode": Enum(("clip", "wrap"), "clip")},
    aliases=("choose_element_0index",),
    doc="Pick one element per position along ``axis`` at ``index``.", name_errors=True,
    gradient=_grad_by("_backward_pick"))


def _batch_take_rule(p, ins):
    a, idx = ins
    if a is not None:
        check(len(a) >= 2, f"data must be at least 2-d, got {fmt(tuple(a))}")
    return ins, [idx]


def _batch_take(p, a, indices):
    if indices.dtype != np.int32:
        raise DTypeError(f"indices must be int32 (MXNet's type rule), got {indices.dtype}")
    check(a.ndim >= 2 and a.size // a.shape[-1] == a.shape[0],
          f"data {fmt(a.shape)} must be (N, K) (MXNet reads out of bounds otherwise)")
    check(indices.size == a.shape[0], f"{indices.size} indices for {a.shape[0]} rows")
    k = a.shape[-1]
    j = np.clip(indices.reshape(-1).astype(np.int64), 0, k - 1)
    return a.reshape(-1, k)[np.arange(a.shape[0]), j].reshape(indices.shape)


def _batch_take_types(p, in_types):
    return [in_types[0], np.dtype(np.int32)], [in_types[0]]



define("batch_take", _batch_take, _batch_take_rule, inputs=("a", "indices"),
    infer_type=_batch_take_types,
    doc="``out[i] = a[i, indices[i]]`` with indices clipped (deprecated in MXNet for pick).",
    name_errors=True, no_gradient=_BATCH_TAKE)


# --- Embedding / one_hot ---------------------------------------------------------------------
def _embedding_rule(p, ins):
    data, weight = ins
    weight = merge(weight, (p.input_dim, p.output_dim), "weight: ")
    out = None if data is None else tuple(data) + (p.output_dim,)
    return [data, weight], [out]


def _embedding_types(p, in_types):
    dt = in_types[1] if in_types[1] is not None else dtypes.to_numpy(p.dtype)
    return [in_types[0], dt], [dt]


def _embedding(p, data, weight):
    _embedding_rule(p, [data.shape, weight.shape])
    idx = np.clip(as_index(data), 0, p.input_dim - 1)
    return weight[idx]


def _embedding_hint(p, weight: tuple, node: str) -> str:
    """What the weight says about the data (``gluonport inspect``)."""
    return f"N,... of integer ids below {weight[0]} ({node} is an Embedding)"


define("Embedding", _embedding, _embedding_rule, inputs=("data", "weight"),
    input_hint=_embedding_hint,
    infer_type=_embedding_types, aliases=("_sparse_Embedding",),
    params={"input_dim": Int(), "output_dim": Int(), "dtype": DType("float32", choices=_DTYPES),
            "sparse_grad": Bool(False)},
    doc="Look up rows of ``weight`` (input_dim, output_dim) at the (clipped) indices "
        "``data``; the output adds a last dim of size output_dim.", name_errors=True,
    gradient=_grad_embedding)


def _one_hot(p, indices):
    check(p.depth >= 0, f"depth={p.depth} must be >= 0")
    idx = as_index(indices)[..., None]
    dt = dtypes.to_numpy(p.dtype)
    if idx.size == 0:  # no rows: a huge depth must not make np.arange(depth) for nothing
        return np.zeros(idx.shape[:-1] + (p.depth,), dt)
    hot = idx == np.arange(p.depth)  # out-of-range indices give an all-off row
    return np.where(hot, np.asarray(p.on_value).astype(dt), np.asarray(p.off_value).astype(dt))


define("one_hot", _one_hot,
    lambda p, ins: (ins, [None if ins[0] is None else tuple(ins[0]) + (p.depth,)]),
    inputs=("indices",), infer_type=lambda p, t: (t, [dtypes.to_numpy(p.dtype)]),
    sized_by_attrs=True,
    params={"depth": Int(), "on_value": Float(1.0), "off_value": Float(0.0),
            "dtype": DType("float32", choices=_DTYPES)},
    doc="One-hot rows of length ``depth`` (``on_value`` at the index, ``off_value`` "
        "elsewhere, all off for an out-of-range index), in ``dtype``.", name_errors=True,
    gradient=zero_gradient)


# --- where -----------------------------------------------------------------------------------
def _where_rule(p, ins):
    cond, x, y = ins
    t = merge(x, y, "x vs y: ")
    if t is None:
        return ins, [None]
    if cond is not None and len(cond) == len(t):
        cond = t = merge(cond, t, "condition vs x: ")
    elif cond is not None:
        check(len(cond) == 1, f"condition {fmt(tuple(cond))} must have x's shape {fmt(t)} "
                              "or be 1-d over its first axis")
        check(not (cond[0] and t[0]) or cond[0] == t[0],
              f"1-d condition of size {cond[0]} does not match x's first dim in {fmt(t)}")
    return [cond, t, t], [t]


def _where(p, cond, x, y):
    _where_rule(p, [cond.shape, x.shape, y.shape])
    c = cond != 0
    if c.shape != x.shape:  # 1-d condition: one flag per row
        c = c.reshape(c.shape + (1,) * (x.ndim - 1))
    return np.where(c, x, y)


define("where", _where, _where_rule, inputs=("condition", "x", "y"),
    infer_type=types_from((1, 2)), aliases=("_sparse_where",),
    doc="``x`` where ``condition`` is non-zero, else ``y``; a 1-d condition selects whole "
        "rows.", name_errors=True, gradient=_grad_where)


# --- gather / scatter ------------------------------------------------------------------------
def _nd_index_shape(ishape: tuple, what: str) -> int:
    check(len(ishape) >= 2, f"{what} indices must be at least 2-d (M, ...), got {fmt(ishape)}")
    m = ishape[0]
    check(m <= 10, f"{what} indexes at most 10 dims, got {m}")
    return m


def _gather_rule(p, ins):
    data, idx = ins
    if data is None or idx is None:
        return ins, [None]
    m = _nd_index_shape(tuple(idx), "gather_nd")
    check(m <= len(data), f"{m} index dims for {len(data)}-d data")
    return ins, [tuple(idx[1:]) + tuple(data[m:])]


def _gather_nd(p, data, indices):
    _gather_rule(p, [data.shape, indices.shape])
    dims = np.array(data.shape[:indices.shape[0]]).reshape((-1,) + (1,) * (indices.ndim - 1))
    bad = (indices < -dims) | (indices > dims - 1)  # MXNet checks the raw (float) value
    if bad.any():
        raise ShapeError(f"index {indices[bad][0]} is out of bounds for data "
                         f"{fmt(data.shape)}")
    # MXNet's kernel reads (int)(index + dim) % dim: floats round toward -inf here
    return data[tuple(as_index(indices + dims) % dims)]


define("gather_nd", _gather_nd, _gather_rule, inputs=("data", "indices"),
    infer_type=types_from((0,)),
    doc="``out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]`` (negative indices "
        "count from the end).", name_errors=True, gradient=_grad_by("_backward_gather_nd"))


def _scatter_rule(p, ins):
    data, idx = ins
    out = tuple(p.shape)
    if idx is None:
        return ins, [out]
    m = _nd_index_shape(tuple(idx), "scatter_nd")
    check(m <= len(out), f"{m} index dims for a {len(out)}-d output")
    want = tuple(idx[1:]) + out[m:]
    try:
        data = merge(data, want)
    except ShapeError:
        raise ShapeError(f"data {fmt(tuple(data))}, indices {fmt(tuple(idx))} and shape "
                         f"{fmt(out)} do not fit: data must be {fmt(want)}") from None
    return [data, idx], [out]


def _scatter_nd(p, data, indices):
    _scatter_rule(p, [data.shape, indices.shape])
    idx = as_index(indices)
    dims = np.array(p.shape[:idx.shape[0]]).reshape((-1,) + (1,) * (idx.ndim - 1))
    bad = (idx < 0) | (idx >= dims)
    if bad.any():
        raise ShapeError(f"index {int(idx[bad][0])} is out of bounds for shape "
                         f"{fmt(tuple(p.shape))} (MXNet writes out of bounds)")
    out = np.zeros(tuple(p.shape), data.dtype)
    out[tuple(idx)] = data
    return out


define("scatter_nd", _scatter_nd, _scatter_rule, inputs=("data", "indices"),
    params={"shape": Shape()}, infer_type=types_from((0,)),
    doc="Zeros of ``shape`` with ``data`` written at ``indices`` (the inverse of gather_nd).",
    name_errors=True, gradient=_grad_scatter_nd)


# --- masks and copies ------------------------------------------------------------------------
def _mask_rule(p, ins):
    data, index = ins
    check(p.axis == 0, f"axis={p.axis}: only axis=0 is supported (as in MXNet 1.9.1)")
    if data is None:
        return ins, [None]
    index = merge(index, (data[0],), "index: ")
    return [data, index], [(0,) + tuple(data[1:])]  # the first dim depends on the values


def _boolean_mask(p, data, index):
    _mask_rule(p, [data.shape, index.shape])
    return data[index != 0]


define("_contrib_boolean_mask", _boolean_mask, _mask_rule, inputs=("data", "index"),
    params={"axis": Int(0)}, infer_type=types_from((0,)),
    doc="The rows of ``data`` whose ``index`` entry is non-zero (output size depends on "
        "the values, so shape inference leaves the first dim unknown).", name_errors=True,
    gradient=_grad_by("_backward_contrib_boolean_mask"))


def _index_copy_rule(p, ins):
    old, idx, new = ins
    if idx is not None:
        check(len(idx) == 1, f"index_vector must be 1-d, got {fmt(tuple(idx))}")
    if old is not None and idx is not None:
        new = merge(new, tuple(idx) + tuple(old[1:]), "new_tensor: ")
    return [old, idx, new], [old]


def _index_copy(p, old, index, new):
    _index_copy_rule(p, [old.shape, index.shape, new.shape])
    idx = as_index(index)
    bad = (idx < 0) | (idx >= old.shape[0])
    if bad.any():
        raise ShapeError(f"index {int(idx[bad][0])} is out of bounds for {old.shape[0]} rows")
    out = old.copy()
    out[idx] = new
    return out


define("_contrib_index_copy", _index_copy, _index_copy_rule,
    inputs=("old_tensor", "index_vector", "new_tensor"), infer_type=types_from((0, 2)),
    doc="A copy of ``old_tensor`` whose rows ``index_vector`` are replaced by ``new_tensor``.",
    name_errors=True, gradient=_grad_index_copy)


def _index_axes(p, ndim: int) -> list[int]:
    if p.axes is None:
        return list(range(ndim))
    return [norm_axis(a, ndim) for a in p.axes]


def _index_array(p, data):
    grid = np.indices(data.shape, dtype=np.int64)[_index_axes(p, data.ndim)]
    return np.ascontiguousarray(np.moveaxis(grid, 0, -1))


define("_contrib_index_array", _index_array,
    lambda p, ins: (ins, [None if ins[0] is None else
                          tuple(ins[0]) + (len(_index_axes(p, len(ins[0]))),)]),
    params={"axes": Optional(Shape())}, infer_type=types_from((), "int64"),
    doc="Each element's index (along ``axes``, default all) as an int64 array of shape "
        "``data.shape + (len(axes),)``.", name_errors=True, lists_output_names=True,
    gradient=zero_gradient)


# --- legacy NDArray functions: _onehot_encode / fill_element_0index ------------------------------
def _float32_only(op: str, *arrays: np.ndarray) -> None:
    for a in arrays:
        if a.dtype != np.float32:
            raise DTypeError(f"{op}: MXNet supports float32 arrays only here, got {a.dtype}; cast "
                             "with .astype('float32')")


def _onehot_encode(p, index, proto):
    _float32_only("_onehot_encode", index, proto)
    _onehot_rule(p, [index.shape, proto.shape])
    return (as_index(index)[:, None] == np.arange(proto.shape[1])).astype(np.float32)


def _onehot_rule(p, ins):
    index, proto = ins
    check(index is None or len(index) == 1, f"indices must be 1-d, got {fmt(index)}")
    check(proto is None or len(proto) == 2, f"the output array must be 2-d, got {fmt(proto)}")
    if index is not None and proto is not None:
        merge(tuple(index), tuple(proto[:1]), f"indices {fmt(index)} and output {fmt(proto)}: ")
    return ins, [None if proto is None else tuple(proto)]


define("_onehot_encode", _onehot_encode, _onehot_rule, inputs=("lhs", "rhs"),
       doc="Legacy ``onehot_encode(indices, out)``: rows of ``out``'s shape with 1 at each "
           "(truncated) index, all 0 for an out-of-range index (float32 only).", name_errors=True,
    no_gradient=_LEGACY)


def _fill_element(p, lhs, mhs, rhs):
    _float32_only("fill_element_0index", lhs, mhs, rhs)
    _fill_rule(p, [lhs.shape, mhs.shape, rhs.shape])
    out = lhs.copy()
    idx = as_index(rhs)
    ok = (idx >= 0) & (idx < lhs.shape[1])
    out[np.flatnonzero(ok), idx[ok]] = mhs[ok]
    return out


def _fill_rule(p, ins):
    lhs = ins[0]
    check(lhs is None or len(lhs) == 2, f"lhs must be 2-d, got {fmt(lhs)}")
    rows = None if lhs is None else tuple(lhs[:1])
    for i in (1, 2):
        check(ins[i] is None or len(ins[i]) == 1, f"input {i} must be 1-d, got {fmt(ins[i])}")
        rows = merge(rows, ins[i], "lhs, mhs and rhs need one row count: ")
    lhs = None if lhs is None else tuple(lhs)
    return [lhs, rows, rows], [lhs]


define("fill_element_0index", _fill_element, _fill_rule, inputs=("lhs", "mhs", "rhs"),
       doc="A copy of ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` per row (truncated indices; an "
           "out-of-range index leaves its row unchanged; float32 only).", name_errors=True,
    no_gradient=_LEGACY)


# --- ravel_multi_index / unravel_index -------------------------------------------------------
def _ravel_dims(p, op: str) -> tuple[int, ...]:
    check(bool(p.shape) and all(d > 0 for d in p.shape),
          f"{op}: shape={p.shape} must be a non-empty tuple of positive sizes")
    return tuple(p.shape)


def _ravel(p, data):
    dims = _ravel_dims(p, "ravel_multi_index")
    _ravel_rule(p, [data.shape])
    # MXNet: ret = index_t(ret * shape[j] + x_j), the sum in the data's type (half in float)
    work = np.float32 if data.dtype == np.float16 else data.dtype
    ret = np.zeros(data.shape[1], np.int64)
    with np.errstate(invalid="ignore"):
        for j, size in enumerate(dims):
            if data.dtype.kind == "f":
                ret = np.trunc((ret * size).astype(work) + data[j].astype(work)).astype(np.int64)
            else:
                ret = ret * size + data[j].astype(np.int64)
    return ret.astype(data.dtype)


def _ravel_rule(p, ins):
    dims = _ravel_dims(p, "ravel_multi_index")
    data = ins[0]
    if data is None:
        return ins, [None]
    check(len(data) == 2 and data[0] in (0, len(dims)),
          f"ravel_multi_index: data {fmt(data)} must be 2-d with {len(dims)} rows (one per "
          f"dim of shape={dims})")
    return [(len(dims), data[1])], [(data[1],)]


def _unravel(p, data):
    dims = _ravel_dims(p, "unravel_index")
    check(data.ndim == 1, f"unravel_index: indices must be 1-d, got {fmt(data.shape)} (MXNet "
                          "1.9.1 mixes up the elements of N-d indices)")
    idx = as_index(data)
    out = np.empty((len(dims), idx.size), np.int64)
    for j in range(len(dims) - 1, 0, -1):  # C division and remainder (toward zero)
        q = np.sign(idx) * (np.abs(idx) // dims[j])
        out[j] = idx - q * dims[j]
        idx = q
    out[0] = idx
    return out.astype(data.dtype)


def _unravel_rule(p, ins):
    dims = _ravel_dims(p, "unravel_index")
    data = ins[0]
    if data is None:
        return ins, [None]
    return ins, [(len(dims), data[0])]


_RAVEL_PARAMS = {"shape": Optional(Shape())}
define("_ravel_multi_index", _ravel, _ravel_rule, params=_RAVEL_PARAMS,
       aliases=("ravel_multi_index",),
       doc="Flat indices of the (len(shape), N) multi-indices into an array of ``shape`` (row "
           "major; out-of-range coordinates are not checked, as in MXNet).", name_errors=True,
    gradient=zero_gradient)
define("_unravel_index", _unravel, _unravel_rule, params=_RAVEL_PARAMS,
       aliases=("unravel_index",),
       doc="(len(shape), N) multi-indices of flat (truncated) indices into ``shape``.",
       name_errors=True, gradient=zero_gradient)


# --- ONNX export -----------------------------------------------------------------------------
def onnx_index(ctx: LoweringContext, i: int, floor: bool = False) -> str:
    """Input ``i`` as int64 indices; float indices truncate toward zero as MXNet's kernels do
    (ONNX Cast truncates), or round down with ``floor`` (gather_nd's kernel)."""
    x, dt = ctx.inputs[i], np.dtype(ctx.in_dtypes[i])
    if dt == np.int64:
        return x
    if floor and dt.kind == "f":
        x = ctx.make("Floor", [x])
    return ctx.cast_to(x, np.int64)


def onnx_bounded(ctx: LoweringContext, idx: str, size: str, mode: str) -> str:
    """Indices into an axis of run-time ``size`` (0-d int64): clipped (``clip``; ``raise``
    too, since ONNX cannot raise: valid indices pass unchanged) or wrapped (``wrap``)."""
    if mode == "wrap":
        return ctx.make("Mod", [idx, size])
    top = ctx.make("Sub", [size, ctx.const(np.asarray(1, np.int64), "one")])
    return ctx.make("Clip", [idx, ctx.const(np.asarray(0, np.int64), "zero"), top])


def _take_onnx(ctx: LoweringContext) -> None:
    """Gather on ``axis`` with indices cast to int64 and clipped or wrapped to the axis size
    (read from Shape when the axis is dynamic)."""
    axis = norm_axis(ctx.params.axis, len(ctx.shape))
    size = Dims(ctx, 0).scalar(axis)
    idx = onnx_bounded(ctx, onnx_index(ctx, 1), size, ctx.params.mode)
    ctx.make("Gather", [ctx.inputs[0], idx], outputs=ctx.outputs[:1], axis=axis)


def _pick_onnx(ctx: LoweringContext) -> None:
    """GatherElements along ``axis`` with the index given that axis (size 1), then squeezed
    unless ``keepdims``."""
    p, ndim = ctx.params, len(ctx.shape)
    axis = _pick_axis(p, ndim)
    axes = ctx.ints([axis], "axes")
    idx = onnx_bounded(ctx, onnx_index(ctx, 1), Dims(ctx, 0).scalar(axis), p.mode)
    if len(ctx.in_shapes[1]) < ndim:
        idx = ctx.make("Unsqueeze", [idx, axes])
    y = ctx.make("GatherElements", [ctx.inputs[0], idx], axis=axis)
    if p.keepdims:
        deliver(ctx, y)
    else:
        ctx.make("Squeeze", [y, axes], outputs=ctx.outputs[:1])


def _batch_take_onnx(ctx: LoweringContext) -> None:
    """``a`` viewed as (N, K); GatherElements of one clipped column per row."""
    a, k = ctx.inputs[0], ctx.shape[-1]
    if len(ctx.shape) != 2:
        a = reshape_to(ctx, a, [Dims(ctx, 0).entry(0), k])
    idx = onnx_bounded(ctx, onnx_index(ctx, 1), ctx.const(np.asarray(k, np.int64), "k"),
                        "clip")
    col = ctx.make("Reshape", [idx, ctx.ints([-1, 1], "column")])
    y = ctx.make("GatherElements", [a, col], axis=1)
    reshape_to(ctx, y, [Dims(ctx, 1).entry(d) for d in range(len(ctx.in_shapes[1]))],
               ctx.outputs[0])


def _embedding_onnx(ctx: LoweringContext) -> None:
    """Gather rows of the weight at the int64-cast indices, clipped to ``input_dim``."""
    size = ctx.const(np.asarray(ctx.params.input_dim, np.int64), "input_dim")
    idx = onnx_bounded(ctx, onnx_index(ctx, 0), size, "clip")
    ctx.make("Gather", [ctx.inputs[1], idx], outputs=ctx.outputs[:1], axis=0)


# onnxruntime implements OneHot's output for these dtypes (with int64 indices)
_ONE_HOT_NATIVE = ("float32", "float16", "int64")


def _one_hot_onnx(ctx: LoweringContext) -> None:
    """OneHot with MXNet's out-of-range rule: ONNX counts negative indices from the end, so
    they are first moved past ``depth`` (all off, as in MXNet)."""
    p = ctx.params
    dt = dtypes.to_numpy(p.dtype)
    depth = ctx.const(np.asarray(p.depth, np.int64), "depth")
    idx = onnx_index(ctx, 0)
    neg = ctx.make("Less", [idx, ctx.const(np.asarray(0, np.int64), "zero")])
    idx = ctx.make("Where", [neg, depth, idx])
    on, off = np.asarray(p.on_value).astype(dt), np.asarray(p.off_value).astype(dt)
    if dt.name in _ONE_HOT_NATIVE:
        ctx.make("OneHot", [idx, depth, ctx.const(np.stack([off, on]), "values")],
                 outputs=ctx.outputs[:1], axis=-1)
        return
    hot = ctx.make("OneHot", [idx, depth, ctx.const(np.array([0, 1], np.int64), "values")],
                   axis=-1)
    ctx.make("Where", [ctx.cast_to(hot, np.bool_), ctx.const(on, "on"), ctx.const(off, "off")],
             outputs=ctx.outputs[:1])


def _where_onnx(ctx: LoweringContext) -> None:
    """Where on the condition cast to bool; a 1-d condition is given trailing size-1 dims so
    it selects whole rows."""
    cond = ctx.inputs[0]
    if np.dtype(ctx.in_dtypes[0]) != np.bool_:
        cond = ctx.cast_to(cond, np.bool_)
    ndim, cdim = len(ctx.in_shapes[1]), len(ctx.in_shapes[0])
    if cdim != ndim:
        cond = ctx.make("Unsqueeze", [cond, ctx.ints(range(1, ndim), "axes")])
    ctx.make("Where", [cond, ctx.inputs[1], ctx.inputs[2]], outputs=ctx.outputs[:1])


def nd_indices(ctx: LoweringContext, i: int, floor: bool) -> str:
    """MXNet's (M, Y...) index layout as ONNX's (Y..., M), int64."""
    idx = onnx_index(ctx, i, floor)
    rank = len(ctx.in_shapes[i])
    return ctx.make("Transpose", [idx], perm=list(range(1, rank)) + [0])


def _gather_nd_onnx(ctx: LoweringContext) -> None:
    ctx.make("GatherND", [ctx.inputs[0], nd_indices(ctx, 1, floor=True)],
             outputs=ctx.outputs[:1])


def _scatter_nd_onnx(ctx: LoweringContext) -> None:
    """ScatterND into zeros of ``shape`` (a broadcast scalar, not a stored tensor)."""
    zero = ctx.const(np.zeros((), ctx.in_dtypes[0]), "zero")
    zeros = ctx.make("Expand", [zero, ctx.ints(ctx.params.shape, "shape")])
    ctx.make("ScatterND", [zeros, nd_indices(ctx, 1, floor=False), ctx.inputs[0]],
             outputs=ctx.outputs[:1])


def _boolean_mask_onnx(ctx: LoweringContext) -> None:
    """Compress on axis 0 (the output's first dim depends on the values)."""
    mask = ctx.inputs[1]
    if np.dtype(ctx.in_dtypes[1]) != np.bool_:
        mask = ctx.cast_to(mask, np.bool_)
    ctx.make("Compress", [ctx.inputs[0], mask], outputs=ctx.outputs[:1], axis=0)


def _index_copy_onnx(ctx: LoweringContext) -> None:
    """ScatterND of the new rows at the (truncated) row indices."""
    idx = ctx.make("Unsqueeze", [onnx_index(ctx, 1), ctx.ints([1], "axes")])
    ctx.make("ScatterND", [ctx.inputs[0], idx, ctx.inputs[2]], outputs=ctx.outputs[:1])


def _index_array_onnx(ctx: LoweringContext) -> None:
    """Per selected axis a ``Range`` over its size, shaped to broadcast along that axis and
    expanded to the input's shape; the pieces are joined on a new last axis."""
    dims = Dims(ctx, 0)
    ndim = len(dims.static)
    zero, one = (ctx.const(np.asarray(v, np.int64), "i") for v in (0, 1))
    shape, last = dims.shape(), ctx.ints([ndim], "last")
    parts = []
    for a in _index_axes(ctx.params, ndim):
        r = ctx.make("Range", [zero, dims.scalar(a), one])
        r = ctx.make("Reshape", [r, ctx.ints([-1 if k == a else 1 for k in range(ndim)],
                                             "along")])
        parts.append(ctx.make("Unsqueeze", [ctx.make("Expand", [r, shape]), last]))
    ctx.make("Concat", parts, outputs=ctx.outputs[:1], axis=ndim)


def _columns(ctx: LoweringContext, i: int, axis: int) -> str:
    """``arange(dim)`` of input ``i``'s ``axis`` (a constant when static, else ``Range``)."""
    dims = Dims(ctx, i)
    if not dims.dyn[axis]:
        return ctx.ints(np.arange(dims.static[axis]), "columns")
    zero, one = (ctx.const(np.asarray(v, np.int64), "c") for v in (0, 1))
    return ctx.make("Range", [zero, dims.scalar(axis), one])


def _hits(ctx: LoweringContext, i: int, width_input: int) -> str:
    """``(N, M)`` booleans: where input ``width_input``'s columns equal input ``i``'s indices."""
    rows = ctx.make("Unsqueeze", [onnx_index(ctx, i), ctx.ints([1], "axes")])
    return ctx.make("Equal", [rows, _columns(ctx, width_input, 1)])


def _onehot_encode_onnx(ctx: LoweringContext) -> None:
    ctx.make("Cast", [_hits(ctx, 0, 1)], outputs=ctx.outputs[:1], to=1)  # FLOAT


def _fill_element_onnx(ctx: LoweringContext) -> None:
    values = ctx.make("Unsqueeze", [ctx.inputs[1], ctx.ints([1], "axes")])
    ctx.make("Where", [_hits(ctx, 2, 0), values, ctx.inputs[0]], outputs=ctx.outputs[:1])


def _ravel_onnx(ctx: LoweringContext) -> None:
    """MXNet's ``ret = index_t(ret * size + x_j)`` per dim, the addition in the data's type
    (float16 in float32; Cast to int64 truncates as index_t does)."""
    dims, dt = _ravel_dims(ctx.params, "ravel_multi_index"), np.dtype(ctx.dtype)
    is_float = dt.kind == "f"
    work = np.dtype(np.float32 if dt == np.float16 else dt if is_float else np.int64)
    ret = None
    for j, size in enumerate(dims):
        x = ctx.make("Gather", [ctx.inputs[0], ctx.const(np.asarray(j, np.int64), "row")],
                     axis=0)
        x = x if work == dt else ctx.cast_to(x, work)
        if ret is not None:
            scaled = ctx.make("Mul", [ret, ctx.const(np.asarray(size, np.int64), "size")])
            x = ctx.make("Add", [ctx.cast_to(scaled, work) if is_float else scaled, x])
        ret = ctx.cast_to(x, np.int64) if is_float else x
    deliver(ctx, ctx.cast_to(ret, dt) if dt != np.int64 else ret)


def _unravel_onnx(ctx: LoweringContext) -> None:
    """C division and remainder (ONNX's integer Div truncates toward zero as C does)."""
    dims, dt = _ravel_dims(ctx.params, "unravel_index"), np.dtype(ctx.dtype)
    idx = onnx_index(ctx, 0)
    parts = []
    for j in range(len(dims) - 1, 0, -1):
        size = ctx.const(np.asarray(dims[j], np.int64), "size")
        q = ctx.make("Div", [idx, size])
        parts.append(ctx.make("Sub", [idx, ctx.make("Mul", [q, size])]))
        idx = q
    parts.append(idx)
    rows = [ctx.make("Unsqueeze", [t, ctx.ints([0], "axes")]) for t in reversed(parts)]
    y = ctx.make("Concat", rows, axis=0) if len(rows) > 1 else rows[0]
    deliver(ctx, ctx.cast_to(y, dt) if dt != np.int64 else y)


for _name, _handler in (
            ("take", _take_onnx), ("pick", _pick_onnx), ("batch_take", _batch_take_onnx),
            ("Embedding", _embedding_onnx), ("one_hot", _one_hot_onnx), ("where", _where_onnx),
            ("gather_nd", _gather_nd_onnx), ("scatter_nd", _scatter_nd_onnx),
            ("_contrib_boolean_mask", _boolean_mask_onnx),
            ("_contrib_index_copy", _index_copy_onnx),
            ("_contrib_index_array", _index_array_onnx),
            ("_onehot_encode", _onehot_encode_onnx), ("fill_element_0index", _fill_element_onnx),
            ("_ravel_multi_index", _ravel_onnx), ("_unravel_index", _unravel_onnx)):
    lowering(_name)(_handler)

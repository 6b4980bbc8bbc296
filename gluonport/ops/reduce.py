"""Reductions: ``sum``, ``mean``, ``prod``, ``nansum``, ``nanprod``, ``max``, ``min``, ``norm``,
``argmax``, ``argmin``, ``argmax_channel``.

MXNet 1.9.1 (legacy, non-numpy mode) semantics kept here:

* ``axis=None`` and ``axis=()`` both reduce over every axis, and a full reduction without
  ``keepdims`` gives shape ``(1,)``, never a 0-d array; ``exclude=True`` reduces over the axes
  *not* listed (and is ignored when ``axis`` is empty).
* The output keeps the input dtype: integer sums wrap around in that dtype, an integer ``mean``
  divides the wrapped sum with truncation toward zero.
* ``max``/``min`` propagate NaN; ``argmax``/``argmin`` return the first maximum / minimum (a NaN
  counts as the maximum and the minimum) and, like MXNet 1.x, in the *input* dtype (float32
  indices for float32 data).
* ``norm`` with ``ord=2`` on integer data follows MXNet's scaled reduction carried out in integer
  arithmetic: the result is ``trunc(max|x| * sqrt(count of elements equal to max|x|))``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..attrs import Bool, Enum, Int, Optional, Shape
from ..errors import OpAttributeError, ShapeError
from ._shape import fmt, known, norm_axis
from .registry import OpDef, register

__all__ = ["reduce_axes", "reduced_shape"]

_AXES_PARAMS = {"axis": Optional(Shape()), "keepdims": Bool(False), "exclude": Bool(False)}
_AXIS_PARAMS = {"axis": Optional(Int()), "keepdims": Bool(False)}
_NORM_DTYPES = ("float16", "float32", "float64", "int64", "int32", "int8")


def reduce_axes(axis: tuple | None, ndim: int, exclude: bool = False) -> tuple[int, ...]:
    """The sorted, non-negative axes MXNet reduces over for ``axis``/``exclude``.

    ``None`` or ``()`` means every axis (``exclude`` is then ignored, as in MXNet). Duplicates
    and out-of-range axes raise :class:`ShapeError`.

    >>> reduce_axes((-1, 0), 3), reduce_axes((1,), 3, exclude=True), reduce_axes((), 2, True)
    ((0, 2), (0, 2), (0, 1))
    """
    if not axis:
        return tuple(range(ndim))
    axes = sorted(norm_axis(int(a), ndim, "reduction axis") for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"reduction axes {tuple(axis)} have duplicates; list each axis once")
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(axes)


def reduced_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple:
    """Output shape of a reduction: reduced axes become 1 (``keepdims``) or disappear; a result
    with no axis left is ``(1,)``."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept or (1,)


def _axes_rule(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None]
    axes = reduce_axes(p.axis, len(shape), p.exclude)
    return in_shapes, [reduced_shape(tuple(shape), axes, p.keepdims)]


def _minmax_rule(p, in_shapes):
    shape = in_shapes[0]
    if known(shape) and int(np.prod(shape)) == 0:
        raise ShapeError(f"cannot take max/min of an empty array of shape {fmt(shape)}")
    return _axes_rule(p, in_shapes)


def _acc_dtype(dtype: np.dtype) -> np.dtype:
    """Accumulate float16 in float32 (MXNet's safe accumulation); others in their own dtype."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


ReduceFn = Callable[[np.ndarray, tuple, np.dtype], np.ndarray]


def _mean(x: np.ndarray, axes: tuple, acc: np.dtype) -> np.ndarray:
    total = np.sum(x, axis=axes, dtype=acc, keepdims=True)
    count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if np.issubdtype(acc, np.integer):  # C integer division truncates toward zero
        return np.trunc(total.astype(np.float64) / count)
    return total / acc.type(count)


_REDUCERS: list[tuple[str, ReduceFn, tuple[str, ...], bool]] = [
    # (name, fn(x, axes, accumulation dtype) keeping dims, aliases, is max/min)
    ("sum", lambda x, a, t: np.sum(x, axis=a, dtype=t, keepdims=True),
     ("sum_axis", "_sparse_sum"), False),
    ("mean", _mean, ("_sparse_mean",), False),
    ("prod", lambda x, a, t: np.prod(x, axis=a, dtype=t, keepdims=True), (), False),
    ("nansum", lambda x, a, t: np.nansum(x, axis=a, dtype=t, keepdims=True), (), False),
    ("nanprod", lambda x, a, t: np.nanprod(x, axis=a, dtype=t, keepdims=True), (), False),
    ("max", lambda x, a, t: np.max(x, axis=a, keepdims=True), ("max_axis",), True),
    ("min", lambda x, a, t: np.min(x, axis=a, keepdims=True), ("min_axis",), True),
]


def _reducer(fn: ReduceFn) -> Callable:
    def compute(p, x: np.ndarray) -> np.ndarray:
        axes = reduce_axes(p.axis, x.ndim, p.exclude)
        out = fn(x, axes, _acc_dtype(x.dtype))
        return np.asarray(out).astype(x.dtype, copy=False).reshape(
            reduced_shape(x.shape, axes, p.keepdims))

    return compute


for _name, _fn, _aliases, _minmax in _REDUCERS:
    register(OpDef(_name, params=_AXES_PARAMS, compute=_reducer(_fn),
                   infer_shape=_minmax_rule if _minmax else _axes_rule, aliases=_aliases,
                   doc=f"``{_name}`` over ``axis`` (all axes by default)."))


# --- norm ------------------------------------------------------------------------------------
def _int_l2(x: np.ndarray, axes: tuple) -> np.ndarray:
    """MXNet's scaled L2 reduction run in integer arithmetic (see the module docstring)."""
    mag = np.abs(x.astype(np.int64))
    scale = np.max(mag, axis=axes, keepdims=True)
    count = np.sum((mag == scale) & (mag != 0), axis=axes, keepdims=True)
    return np.trunc(scale * np.sqrt(count.astype(np.float64)))


def _norm(p, x: np.ndarray) -> np.ndarray:
    if p.ord not in (1, 2):
        raise OpAttributeError(f"norm: ord={p.ord} is not supported; MXNet's norm takes ord=1 "
                               "or ord=2")
    axes = reduce_axes(p.axis, x.ndim)
    if p.ord == 1:
        out = np.sum(np.abs(x), axis=axes, dtype=_acc_dtype(x.dtype), keepdims=True)
    elif np.issubdtype(x.dtype, np.integer):
        out = _int_l2(x, axes)
    else:
        wide = x.astype(np.float64)
        out = np.sqrt(np.sum(wide * wide, axis=axes, keepdims=True))
    dtype = np.dtype(p.out_dtype) if p.out_dtype is not None else x.dtype
    return out.astype(dtype).reshape(reduced_shape(x.shape, axes, p.keepdims))


def _norm_shape(p, in_shapes):
    shape = in_shapes[0]
    if shape is None:
        return in_shapes, [None]
    return in_shapes, [reduced_shape(tuple(shape), reduce_axes(p.axis, len(shape)), p.keepdims)]


def _norm_type(p, in_types):
    dt = in_types[0]
    if p.out_dtype is not None:
        return in_types, [np.dtype(p.out_dtype)]
    return in_types, [dt]


register(OpDef(
    "norm",
    params={"ord": Int(2), "axis": Optional(Shape()),
            "out_dtype": Optional(Enum(_NORM_DTYPES)), "keepdims": Bool(False)},
    compute=_norm, infer_shape=_norm_shape, infer_type=_norm_type, aliases=("_sparse_norm",),
    doc="L1 (``ord=1``) or L2 (``ord=2``, Frobenius over several axes) norm."))


# --- argmax / argmin -------------------------------------------------------------------------
def _axis_shape(shape: tuple, axis: int | None, keepdims: bool) -> tuple:
    """MXNet's ReduceAxisShapeImpl: a global search (or a 1-d input) gives ``(1,)``."""
    if axis is None or len(shape) == 1:
        if axis is not None:
            norm_axis(axis, len(shape))
        return (1,) * len(shape) if keepdims else (1,)
    ax = norm_axis(axis, len(shape))
    if keepdims:
        return tuple(1 if i == ax else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i != ax)


def _axis_rule(p, in_shapes):
    shape = in_shapes[0]
    if not known(shape):  # MXNet needs the full input shape here
        return in_shapes, [None]
    return in_shapes, [_axis_shape(tuple(shape), p.axis, p.keepdims)]


def _search(fn: Callable) -> Callable:
    def compute(p, x: np.ndarray) -> np.ndarray:
        shape = _axis_shape(x.shape, p.axis, p.keepdims)
        if p.axis is None:
            return np.asarray(fn(x.reshape(-1))).astype(x.dtype).reshape(shape)
        out = fn(x, axis=norm_axis(p.axis, x.ndim))
        return np.asarray(out).astype(x.dtype).reshape(shape)

    return compute


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(OpDef(_name, params=_AXIS_PARAMS, compute=_search(_fn), infer_shape=_axis_rule,
                   doc=f"``{_name}`` along ``axis`` (flattened when None), in the input dtype."))

_CHANNEL = type("ChannelParams", (), {"axis": 1, "keepdims": False})()


def _argmax_channel(p, x: np.ndarray) -> np.ndarray:
    return _search(np.argmax)(_CHANNEL, x)


register(OpDef(
    "argmax_channel", compute=_argmax_channel,
    infer_shape=lambda p, s: _axis_rule(_CHANNEL, s),
    doc="Legacy ``argmax(data, axis=1)``: the index of the largest channel of each row."))

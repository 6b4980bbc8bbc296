"""Shape-inference helpers shared by the op families.

Shapes follow MXNet 1.x legacy semantics: a tuple of ints where ``0`` is an unknown dim, or
``None`` when the whole shape is unknown. A shape is *known* when it is not None and has no 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ShapeError

__all__ = [
    "known",
    "merge",
    "same_shape",
    "broadcast_shapes",
    "fmt",
    "norm_axis",
]


def known(shape: tuple | None) -> bool:
    """True when every dim is known (no None, no 0)."""
    return shape is not None and all(d > 0 for d in shape)


def fmt(shape: tuple | None) -> str:
    return "unknown" if shape is None else str(tuple(shape))


def merge(a: tuple | None, b: tuple | None, what: str = "") -> tuple | None:
    """Combine two partial views of one shape; 0 dims are filled from the other side.

    Raises :class:`ShapeError` naming both shapes when they disagree.
    """
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if len(a) != len(b):
        raise ShapeError(f"{what}shape mismatch: {fmt(a)} vs {fmt(b)}")
    out = []
    for x, y in zip(a, b):
        if x == 0:
            out.append(y)
        elif y == 0 or x == y:
            out.append(x)
        else:
            raise ShapeError(f"{what}shape mismatch: {fmt(a)} vs {fmt(b)}")
    return tuple(out)


def same_shape(in_shapes: Sequence[tuple | None], n_out: int = 1) -> tuple[list, list]:
    """MXNet's ElemwiseShape: all inputs and outputs share one shape."""
    common: tuple | None = None
    for i, s in enumerate(in_shapes):
        common = merge(common, s, f"input {i}: ")
    return [common] * len(in_shapes), [common] * n_out


def broadcast_shapes(a: tuple | None, b: tuple | None) -> tuple | None:
    """numpy/MXNet broadcasting of two shapes (``None`` when either is unknown)."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif x == 0 or y == 0:
            out.append(max(x, y))
        else:
            raise ShapeError(f"operands could not be broadcast together: {fmt(a)} and {fmt(b)}")
    return tuple(out)


def norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """A possibly negative axis made non-negative; :class:`ShapeError` when out of range."""
    if not -ndim <= axis < max(ndim, 1):
        raise ShapeError(f"{what} {axis} is out of range for {ndim}-d input")
    return axis + ndim if axis < 0 else axis

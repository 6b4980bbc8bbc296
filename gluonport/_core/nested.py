"""Nested lists of arrays or symbols flattened to one list and regrouped (MXNet's
``_flatten``/``_regroup``, which ``HybridBlock`` and the control-flow front ends each use), and
the control-flow front ends' conversion of a loop bound or predicate to a Python value.

A *format* records the structure: ``0`` a single leaf, ``n > 0`` a leaf that stands for ``n``
items (a grouped Symbol), ``-1`` a ``None`` leaf (an optional input), a list of formats a
nested list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ..errors import ArgumentError

__all__ = ["flatten", "regroup", "python_scalar"]


def python_scalar(value: Any, type_: type, what: str) -> Any:
    """``value`` (a Python number or a one-element array) as ``type_``; MXNet's
    ``_to_python_scalar`` and its message when it cannot be converted."""
    if hasattr(value, "asscalar"):
        value = value.asscalar()
    try:
        return type_(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"Cannot convert {what} to python {type_.__name__}") from None


def flatten(args: Any, leaf: Callable[[Any], tuple[list, int] | None],
            refuse: Callable[[Any], NoReturn], allow_none: bool = False) -> tuple[list, Any]:
    """``(flat list, format)``. ``leaf(x)`` gives ``(items, format)`` when ``x`` is a leaf
    (``([x], 0)``; a grouped Symbol as its callers count it), else ``None``; ``refuse(x)``
    raises for anything that is neither a leaf nor a list/tuple (nor ``None`` with
    ``allow_none``)."""
    got = leaf(args)
    if got is not None:
        return got
    if args is None and allow_none:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        refuse(args)
    flat: list = []
    fmts = []
    for a in args:
        f, fmt = flatten(a, leaf, refuse, allow_none)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(items: list, fmt: Any) -> tuple[Any, list]:
    """The inverse of :func:`flatten`: ``(nested value, items left over)``."""
    if isinstance(fmt, int):
        if fmt == 0:
            return items[0], items[1:]
        if fmt == -1:
            return None, items[1:]
        return items[:fmt], items[fmt:]
    ret = []
    for f in fmt:
        res, items = regroup(items, f)
        ret.append(res)
    return ret, items

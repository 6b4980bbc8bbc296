"""Flattening nested inputs/outputs of a block and regrouping them (MXNet's
``_flatten``/``_regroup``); ``HookHandle`` is in :mod:`gluonport.gluon.utils`, as in MXNet."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..symbol import Symbol

__all__ = ["flatten", "regroup"]


def flatten(args: Any, what: str) -> tuple[list, Any]:
    """Nested lists/tuples of arrays/symbols -> a flat list and a format to regroup with.

    ``None`` leaves are kept (format -1), as MXNet allows optional inputs.
    """
    if isinstance(args, (NDArray, Symbol)):
        if isinstance(args, Symbol) and len(args) > 1:
            outs = list(args)
            return outs, len(outs)
        return [args], 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"HybridBlock {what} must be (nested) list of Symbol or NDArray, but "
                         f"got {args!r} of type {type(args).__name__}")
    flat, fmts = [], []
    for a in args:
        f, fmt = flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(flat: list, fmt: Any) -> Any:
    """Inverse of :func:`flatten`."""
    def _rec(items: list, f: Any) -> tuple[Any, list]:
        if isinstance(f, int):
            if f == 0:
                return items[0], items[1:]
            if f == -1:
                return None, items[1:]
            return items[:f], items[f:]
        ret = []
        for sub in f:
            r, items = _rec(items, sub)
            ret.append(r)
        return ret, items

    out, rest = _rec(list(flat), fmt)
    return out

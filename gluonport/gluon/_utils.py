"""Flattening nested inputs/outputs (MXNet's ``_flatten``/``_regroup``) and hook handles."""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Any

from ..ndarray import NDArray
from ..symbol import Symbol

__all__ = ["flatten", "regroup", "HookHandle"]


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


class HookHandle:
    """Returned by ``register_forward_hook``; ``detach()`` removes the hook."""

    _ids = itertools.count()

    def __init__(self) -> None:
        self._hooks_dict_ref: Any = None
        self._id = next(HookHandle._ids)

    def attach(self, hooks_dict: OrderedDict, hook: Any) -> None:
        if self._hooks_dict_ref is not None:
            raise RuntimeError("The same handle cannot be attached twice.")
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

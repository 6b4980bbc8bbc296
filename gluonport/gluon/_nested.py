"""Flattening nested inputs/outputs of a block and regrouping them (MXNet's
``_flatten``/``_regroup``); ``HookHandle`` is in :mod:`gluonport.gluon.utils`, as in MXNet."""

from __future__ import annotations

from typing import Any, NoReturn

from .._core import nested
from ..ndarray import NDArray
from ..symbol import Symbol

__all__ = ["flatten", "regroup"]


def flatten(args: Any, what: str) -> tuple[list, Any]:
    """Nested lists/tuples of arrays/symbols -> a flat list and a format to regroup with.

    ``None`` leaves are kept (format -1), as MXNet allows optional inputs; a grouped Symbol
    contributes its outputs.
    """
    def leaf(x: Any) -> tuple[list, int] | None:
        if isinstance(x, Symbol) and len(x) > 1:
            outs = list(x)
            return outs, len(outs)
        return ([x], 0) if isinstance(x, (NDArray, Symbol)) else None

    def refuse(x: Any) -> NoReturn:
        raise ValueError(f"HybridBlock {what} must be (nested) list of Symbol or NDArray, but "
                         f"got {x!r} of type {type(x).__name__}")

    return nested.flatten(args, leaf, refuse, allow_none=True)


def regroup(flat: list, fmt: Any) -> Any:
    """Inverse of :func:`flatten`."""
    return nested.regroup(list(flat), fmt)[0]

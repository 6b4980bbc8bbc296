"""Graph-level shape and type inference, MXNet 1.x style.

Each op's rule sees its inputs' partial shapes and may complete them (that is how
``FullyConnected`` fills in an unknown ``weight`` shape from the data), so the graph is swept
forward repeatedly until nothing changes. Variables start from the caller's shapes, then their
``__shape__`` / ``__dtype__`` attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._core import dtypes
from .._core.attr_fields import Shape as ShapeField
from .._core.budget import check_graph
from ..errors import DTypeError, GluonportError, ResourceLimitError, ShapeError
from ..ops.infer import fmt, merge
from ._graph import Node, check_supported, is_known

__all__ = ["infer_shapes", "infer_types", "var_shape_attr", "var_dtype_attr", "check_budget"]

_MAX_SWEEPS = 8


def var_shape_attr(node: Node) -> tuple | None:
    text = node.attrs.get("__shape__")
    if text is None:
        return None
    try:
        shape = ShapeField().parse(text)
    except ValueError:
        raise ShapeError(f"variable {node.name!r}: __shape__={text!r} is not a shape") from None
    # np-shape files write -1 for unknown dims; legacy semantics use 0.
    return tuple(0 if d is None or d < 0 else d for d in shape)


def var_dtype_attr(node: Node) -> np.dtype | None:
    text = node.attrs.get("__dtype__")
    if text is None:
        return None
    try:
        return dtypes.from_flag(int(text)).numpy
    except (ValueError, DTypeError):
        raise DTypeError(f"variable {node.name!r}: __dtype__={text!r} is not an MXNet dtype "
                         "flag") from None


def _sweep(order: list[Node], values: dict, rule: Callable, combine: Callable,
           what: str) -> bool:
    """One forward pass; returns whether anything changed."""
    changed = False
    for node in order:
        if node.op is None:
            continue
        ins = [values.get((id(src), idx)) for src, idx in node.inputs]
        outs_before = [values.get((id(node), i)) for i in range(node.num_outputs())]
        try:
            new_ins, new_outs = rule(node, ins)
        except GluonportError as exc:
            raise type(exc)(f"node {node.name!r} ({node.op.name}): {what} failed: {exc}") \
                from None
        for (src, idx), old, new in zip(node.inputs, ins, new_ins):
            merged = _combine(combine, old, new, node, f"input {src.name!r}")
            if _differs(merged, old):
                values[(id(src), idx)] = merged
                changed = True
        for i, (old, new) in enumerate(zip(outs_before, new_outs)):
            merged = _combine(combine, old, new, node, f"output {i}")
            if _differs(merged, old):
                values[(id(node), i)] = merged
                changed = True
    return changed


def _differs(new: Any, old: Any) -> bool:
    """``new != old`` that also holds for float64 vs None (``np.dtype(None)`` is float64, so
    ``np.dtype('float64') != None`` is False)."""
    if new is None or old is None:
        return (new is None) != (old is None)
    return bool(new != old)


def _combine(combine: Callable, old: Any, new: Any, node: Node, what: str) -> Any:
    try:
        return combine(old, new)
    except GluonportError as exc:
        raise type(exc)(f"node {node.name!r} ({node.op.name}): {what}: {exc}") from None


def infer_shapes(order: list[Node], given: Mapping[str, tuple], strict: bool = True,
                 budget: bool = True) -> dict:
    """Shapes of every output of every node, keyed ``(id(node), index)``.

    ``given`` maps variable names to shapes. Raises :class:`ShapeError` naming the node and
    both shapes on a contradiction. Unknown ops raise :class:`UnsupportedOpError` under
    ``strict``; otherwise their outputs stay unknown (the exporter relies on that for ops a
    user registered a converter for). Under ``budget`` (the default) every known size is
    checked against the size budget (:mod:`gluonport._core.budget`): a tensor or a graph too large
    raises :class:`~gluonport.errors.ResourceLimitError`; ``budget=False`` is for probes that
    never allocate.
    """
    if strict:
        check_supported(order, "infer shapes of")
    values: dict = {}
    for node in order:
        if node.op is None:
            shape = var_shape_attr(node)
            if node.name in given:
                user = tuple(int(d) for d in given[node.name])
                try:
                    shape = merge(shape, user)
                except ShapeError:
                    raise ShapeError(f"variable {node.name!r}: given shape {fmt(user)} does not "
                                     f"match its __shape__ {fmt(shape)}") from None
            if shape is not None:
                values[(id(node), 0)] = shape

    def rule(node: Node, ins: list) -> tuple[list, list]:
        outs = [values.get((id(node), i)) for i in range(node.num_outputs())]
        if not is_known(node.op):
            return ins, outs
        return node.op.shapes(node.params, ins, outs)

    def combine(old, new):
        return merge(old, tuple(new) if new is not None else None)

    for _ in range(_MAX_SWEEPS):
        if not _sweep(order, values, rule, combine, "shape inference"):
            break
    if budget:
        check_graph(order, values)
    return values


def check_budget(order: list[Node], given: Mapping[str, tuple] | None = None) -> None:
    """Refuse a graph (nodes in topological order) whose sizes, as far as ``given`` shapes,
    ``__shape__`` attributes and creation-op attributes fix them, exceed the size budget
    (:class:`~gluonport.errors.ResourceLimitError`, see :mod:`gluonport._core.budget`). Inference
    failing for another reason is left for the run to report in its own words."""
    try:
        infer_shapes(order, dict(given or {}), strict=False)
    except ResourceLimitError:
        raise
    except GluonportError:
        pass


def _merge_dtype(old: Any, new: Any) -> Any:
    if new is None:
        return old
    new = np.dtype(new)
    if old is None or old == new:
        return new
    raise DTypeError(f"dtype mismatch: {old} vs {new}")


def infer_types(order: list[Node], given: Mapping[str, Any], strict: bool = True) -> dict:
    """Dtypes of every output of every node, keyed ``(id(node), index)`` (see
    :func:`infer_shapes` for ``strict``)."""
    if strict:
        check_supported(order, "infer types of")
    values: dict = {}
    for node in order:
        if node.op is None:
            dt = dtypes.to_numpy(given[node.name]) if node.name in given else var_dtype_attr(node)
            if dt is not None:
                values[(id(node), 0)] = np.dtype(dt)

    def rule(node: Node, ins: list) -> tuple[list, list]:
        if not is_known(node.op):
            return ins, [values.get((id(node), i)) for i in range(node.num_outputs())]
        return node.op.types(node.params, ins)

    for _ in range(_MAX_SWEEPS):
        if not _sweep(order, values, rule, _merge_dtype, "type inference"):
            break
    return values

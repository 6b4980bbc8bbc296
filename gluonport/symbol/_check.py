"""Structural checks of a graph read from symbol JSON, run once when it is loaded.

The reader (:mod:`gluonport.formats.symbol_json`) checks what needs no operator knowledge: keys,
types, node references. What needs the operator is checked here, before any consumer
(``list_outputs``, shape inference, the executor, the ONNX exporter) sees the graph:

* arity: an operator node has exactly the inputs its op declares for its parameters
  (``FullyConnected`` with ``no_bias=False`` takes data, weight, bias; a variadic op with
  ``num_args=N`` takes N);
* output indexes: every input entry and head reads an output the source node has (a variable
  has one; an operator ``num_outputs`` of its parameters, hidden outputs included, as nnvm
  counts them).

So per-op shape rules and compute functions can index their inputs and outputs freely. Errors
are :class:`FormatError` naming the file and the node.
"""

from __future__ import annotations

from .._core.attr_fields import Params
from ..errors import FormatError, OpAttributeError
from ._graph import Node, is_known

__all__ = ["check_arity", "check_entry", "describe"]


def describe(k: int, node: Node) -> str:
    """``node 3 'fc1' (FullyConnected)`` / ``node 0 'data' (variable)``."""
    kind = "variable" if node.op is None else node.op.name
    return f"node {k} {node.name!r} ({kind})"


def check_arity(k: int, node: Node, path: str | None) -> None:
    """Refuse an operator node whose input count does not fit its op and parameters.

    Needs the node's parsed attributes (``no_bias`` drops an input).
    """
    op = node.op
    if op is None or not is_known(op):
        return  # variables have no inputs (the reader checks); stand-ins take any number
    given = len(node.inputs)
    p = _params(node)
    if p is None:
        return
    if op.variadic is not None:
        fixed = op.inputs(p) if callable(op.inputs) else None
        if fixed is None:
            _check_variadic(k, node, given, path)
            return
        names = list(fixed)
    else:
        names = op.input_names(p)
    if given != len(names):
        what = ", ".join(names) if names else "none"
        raise FormatError(
            f"{describe(k, node)} has {given} input(s), but {op.name} with these attributes "
            f"takes {len(names)} ({what}); the file is damaged or was not written by MXNet",
            path)


def _params(node: Node) -> Params | None:
    """The node's parsed attributes, or None when they do not parse: such a node still loads
    (to be inspected), and every use of it raises the :class:`OpAttributeError` that names it,
    before any rule could index its inputs or outputs."""
    try:
        return node.params
    except OpAttributeError:
        return None


def _check_variadic(k: int, node: Node, given: int, path: str | None) -> None:
    op = node.op
    assert op is not None
    if given < 1:
        raise FormatError(f"{describe(k, node)} has no inputs; {op.name} takes at least one",
                          path)
    if op.variadic and op.variadic in node.attrs:
        count = node.params.get(op.variadic)
        if count != given:
            raise FormatError(
                f"{describe(k, node)} has {given} input(s), but its attribute "
                f"{op.variadic}={node.attrs[op.variadic]!r} says {count}; they must agree",
                path)


def check_entry(what: str, src_id: int, src: Node, index: int, path: str | None) -> None:
    """Refuse an entry (``what``: ``node 4 'fc' (FullyConnected) input 0``, ``head 1``) that
    reads an output its source node does not have."""
    if src.op is not None and _params(src) is None:
        return  # unparseable attributes: see _params
    count = src.num_outputs()
    if not 0 <= index < count:
        plural = "output" if count == 1 else "outputs"
        raise FormatError(
            f"{what} reads output {index} of {describe(src_id, src)}, which has {count} "
            f"{plural} (indexes 0..{count - 1})", path)

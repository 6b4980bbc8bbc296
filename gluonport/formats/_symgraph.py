"""The normalized nnvm graph that :mod:`gluonport.formats.symbol_json` reads and writes.

This is the "graph dict" level: plain dataclasses that mirror one ``-symbol.json`` file after the
legacy keys are folded in, with no knowledge of operators. The Symbol layer converts to and from
it. Every attribute value stays the verbatim string MXNet wrote, so a graph that is read and
written back gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Entry", "Node", "Graph", "MXNET_VERSION", "node_row_ptr", "make_version"]

Entry = tuple[int, int, int]
"""``(node_id, output_index, version)``: one output of one node. ``version`` is 1 on the entries
MXNet writes for inputs that an op mutates (BatchNorm's moving statistics), 0 elsewhere."""

MXNET_VERSION = 10901
"""The MXNet version gluonport writes and emulates on load (1.9.1 = 1*10000 + 9*100 + 1)."""


def make_version(major: int, minor: int, patch: int) -> int:
    """MXNet's ``MXNET_MAKE_VERSION``: ``major*10000 + minor*100 + patch`` (0.9.5 -> 905)."""
    return major * 10000 + minor * 100 + patch


@dataclass
class Node:
    """One node of an nnvm graph.

    Attributes
    ----------
    op:
        Operator name as written in the file (aliases are kept), ``"null"`` for a variable.
    name:
        Node name. MXNet does not check that names are unique.
    attrs:
        ``str -> str``: operator parameters and hidden keys (``__shape__``, ``__lr_mult__``...),
        verbatim. Legacy ``attr`` and ``param`` are merged in here on load.
    inputs:
        Entries ``(node_id, output_index, version)``; ``node_id`` is an index into the graph's
        ``nodes`` and always smaller than this node's own index.
    control_deps:
        Node ids that must run before this node (rare; no public MXNet API writes them).
    subgraphs:
        Nested graphs of control-flow and fused ops (``_foreach``, ``_while_loop``, ``_cond``).
    """

    op: str
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    inputs: list[Entry] = field(default_factory=list)
    control_deps: list[int] = field(default_factory=list)
    subgraphs: list[Graph] = field(default_factory=list)

    @property
    def is_variable(self) -> bool:
        """True for a variable (``op == "null"``): an input, a parameter or an aux state."""
        return self.op == "null"


@dataclass
class Graph:
    """An nnvm graph: the content of one ``-symbol.json`` file (or of one subgraph).

    Attributes
    ----------
    nodes:
        The nodes in topological order (MXNet writes a DFS post-order from the heads).
    heads:
        The graph outputs, as entries, in output order. An entry may repeat.
    arg_nodes:
        Indices of the variable nodes, ascending, as in the file. ``None`` means "compute from
        ``nodes`` when writing". MXNet only checks on load that each one is a variable.
    attrs:
        Graph attributes, each an "any" pair ``[type_name, value]``, e.g.
        ``{"mxnet_version": ["int", 10901]}``; ``is_np_shape`` (``["int", 1]``) marks a graph
        exported in NumPy-shape mode. Subgraphs have none.
    node_row_ptr:
        Prefix sums of each node's number of outputs, or ``None`` when the file had none.
        MXNet ignores it on load; see :func:`node_row_ptr` to compute one.
    mxnet_version:
        The version the file said it was written by (``attrs["mxnet_version"]`` as read), or
        800 (0.8.0) when it had none, as MXNet assumes. After the legacy upgrade ``attrs`` says
        10901 while this keeps the version read.
    """

    nodes: list[Node] = field(default_factory=list)
    heads: list[Entry] = field(default_factory=list)
    arg_nodes: list[int] | None = None
    attrs: dict[str, list[Any]] = field(default_factory=dict)
    node_row_ptr: list[int] | None = None
    # The version *read* is provenance, not content: graphs that differ only in it are equal.
    mxnet_version: int = field(default=MXNET_VERSION, compare=False)

    @property
    def is_np_shape(self) -> bool:
        """True when the graph was saved in NumPy-shape mode (``is_np_shape`` is nonzero)."""
        pair = self.attrs.get("is_np_shape")
        return bool(pair and len(pair) == 2 and pair[1])

    def variable_ids(self) -> list[int]:
        """Indices of the variable nodes, ascending (what MXNet writes as ``arg_nodes``)."""
        return [i for i, n in enumerate(self.nodes) if n.is_variable]


def node_row_ptr(graph: Graph, num_outputs: Callable[[str, dict[str, str]], int]) -> list[int]:
    """Compute ``node_row_ptr``: prefix sums of every node's number of outputs.

    MXNet writes this from each op's ``num_outputs()``, which counts hidden outputs too (BatchNorm
    3, MKLDNN max-Pooling 2), so it is build-dependent; MXNet never reads it back.

    Parameters
    ----------
    graph:
        The graph; it is not changed (assign the result to ``graph.node_row_ptr``).
    num_outputs:
        ``num_outputs(op, attrs) -> int`` for operator nodes; variables count 1.

    Examples
    --------
    >>> g = Graph(nodes=[Node("null", "x"), Node("SliceChannel", "s", {"num_outputs": "3"},
    ...                                             [(0, 0, 0)])], heads=[(1, 0, 0)])
    >>> node_row_ptr(g, lambda op, attrs: int(attrs.get("num_outputs", 1)))
    [0, 1, 4]
    """
    ptr = [0]
    for node in graph.nodes:
        count = 1 if node.is_variable else int(num_outputs(node.op, node.attrs))
        ptr.append(ptr[-1] + count)
    return ptr

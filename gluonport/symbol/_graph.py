"""Graph nodes and traversal shared by Symbol, inference, the executor and the exporters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._core.attr_fields import Params
from ..errors import UnsupportedOpError
from ..ops import registry
from ..ops.registry import OpDef

__all__ = ["Node", "Entry", "topo_order", "unknown_op", "check_supported", "label_inputs",
           "composing_beside"]


class Node:
    """One graph node: a variable (``op is None``) or an operator application.

    ``attrs`` holds MXNet's attribute strings verbatim (op parameters and ``__hidden__``
    annotations alike); ``inputs`` are ``(node, output_index)`` pairs.

    Like nnvm, a variable counts how many op nodes have mutated it (``var_version``: BatchNorm's
    moving statistics), and an op node built by the ``sym`` API records each variable input's
    version at composition time (``in_versions``), which is the third number of a JSON input
    entry. A Gluon parameter variable traced twice (deferred init, then hybridize) thus shows
    version 2, as in MXNet's exports. ``in_versions`` is None for loaded graphs (the writer then
    uses 1 on auxiliary inputs).
    """

    __slots__ = ("op", "name", "attrs", "inputs", "control_deps", "subgraphs", "_params",
                 "var_version", "in_versions", "__weakref__")

    def __init__(self, op: OpDef | None, name: str, attrs: dict[str, str] | None = None,
                 inputs: list[tuple[Node, int]] | None = None):
        self.op = op
        self.name = name
        self.attrs: dict[str, str] = dict(attrs or {})
        self.inputs: list[tuple[Node, int]] = list(inputs or [])
        self.control_deps: list[Node] = []
        self.subgraphs: list[Any] = []
        self._params: Params | None = None
        self.var_version = 0
        self.in_versions: list[int] | None = None

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def op_name(self) -> str:
        return "null" if self.op is None else self.op.name

    @property
    def params(self) -> Params:
        """Parsed attributes (cached; files are parsed leniently: unknown keys warn); a node
        with subgraphs also has them under ``subgraphs`` (``symbol/_subgraph.py``)."""
        if self._params is None:
            params = self.op.parse(self.attrs, node=self.name, strict=False)
            if self.subgraphs:  # control-flow ops: their bodies travel in the params
                from ._subgraph import with_subgraphs

                params = with_subgraphs(params, self.subgraphs)
            self._params = params
        return self._params

    def invalidate(self) -> None:
        self._params = None

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.n_outputs(self.params)

    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.op.n_visible_outputs(self.params)

    def output_names(self) -> list[str]:
        """Names as ``list_outputs`` prints them: ``fc1_output``, ``bn_mean``, or a var name."""
        if self.op is None:
            return [self.name]
        return [f"{self.name}_{n}" for n in self.op.list_output_names(self.params)]

    def aux_input_indices(self) -> Sequence[int]:
        return () if self.op is None else self.op.aux_indices(self.params)

    def __repr__(self) -> str:
        return f"<Node {self.op_name} {self.name}>"


Entry = tuple  # (Node, output_index)


def topo_order(heads: Iterable[Node]) -> list[Node]:
    """Post-order DFS from ``heads`` (inputs in order, then control deps), as nnvm's DFSVisit.

    This is the node order of symbol JSON and of ``list_arguments``. Iterative, so deep graphs
    do not hit Python's recursion limit.
    """
    order: list[Node] = []
    seen: set[int] = set()
    for head in heads:
        if id(head) in seen:
            continue
        stack: list[tuple[Node, int]] = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, i = stack[-1]
            preds = node.inputs
            n_in = len(preds)
            if i < n_in + len(node.control_deps):
                stack[-1] = (node, i + 1)
                nxt = preds[i][0] if i < n_in else node.control_deps[i - n_in]
                if id(nxt) not in seen:
                    seen.add(id(nxt))
                    stack.append((nxt, 0))
            else:
                stack.pop()
                order.append(node)
    return order


class _StandInOp(OpDef):
    """An operator gluonport does not know: its attributes are kept verbatim, never parsed."""

    def parse(self, attrs, node: str = "", strict: bool = False) -> Params:
        return Params({})


def unknown_op(name: str, n_inputs: int, n_outputs: int, why: str | None = None) -> OpDef:
    """A stand-in OpDef for an operator gluonport does not know (or cannot build for this node:
    ``why``), so the graph still loads (to inspect it, or to report every unsupported op at
    once). It cannot run or export."""
    return _StandInOp(name, compute=None, inputs=tuple(f"arg{i}" for i in range(n_inputs)),
                      num_outputs=max(1, n_outputs), no_onnx=why or _NOT_SUPPORTED)


_NOT_SUPPORTED = "not supported by gluonport"


def is_known(op: OpDef) -> bool:
    return registry.find(op.name) is op


def op_listing(missing: dict[str, list[str]], reasons: dict[str, str] | None = None,
               limit: int = 5) -> str:
    """``"Op [reason] (nodes: a, b, ...); Op2 (...)"`` for error messages, ops sorted."""
    def one(op: str, names: list[str]) -> str:
        why = f" [{reasons[op]}]" if reasons and op in reasons else ""
        more = ", ..." if len(names) > limit else ""
        return f"{op}{why} (nodes: {', '.join(names[:limit])}{more})"

    return "; ".join(one(op, names) for op, names in sorted(missing.items()))


def check_supported(nodes: Iterable[Node], what: str = "run") -> None:
    """Raise one :class:`UnsupportedOpError` listing every unknown op and its nodes."""
    missing: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for n in nodes:
        if n.op is not None and not is_known(n.op):
            missing.setdefault(n.op.name, []).append(n.name)
            if n.op.no_onnx and n.op.no_onnx != _NOT_SUPPORTED:
                reasons[n.op.name] = n.op.no_onnx
    if missing:
        listing = op_listing(missing, reasons)
        raise UnsupportedOpError(
            f"cannot {what} the graph: {len(missing)} operator(s) not supported by gluonport: "
            f"{listing}. Supported ops: see gluonport/ops/OPERATORS.md", missing)


def label_inputs(order: Iterable[Node]) -> set[str]:
    """Variables used only as the ``label`` input of ops (the legacy output ops such as
    ``SoftmaxOutput``): not needed at inference, and never an ONNX input."""
    roles: dict[str, set[str]] = {}
    for node in order:
        if node.op is None:
            continue
        names = node.op.input_names(node.params, len(node.inputs))
        # an op whose forward pass reads its label (CTCLoss) marks it so
        read = getattr(node.op, "forward_reads_label", False)
        for (src, _), role in zip(node.inputs, names):
            if src.op is None:
                roles.setdefault(src.name, set()).add("read" if read else role)
    return {v for v, r in roles.items() if r == {"label"}}


@contextmanager
def composing_beside(order: Iterable[Node]) -> Iterator[None]:
    """Compose new nodes with the ``sym`` API next to an existing graph (a backward graph, a
    training-mode rewrite) without changing it: the API bumps the versions of variables it
    uses as auxiliary inputs and sets ``__init__`` attributes on compose, and draws names from
    the process-wide name counters. Within this block names come from a fresh
    ``NameManager``; the graph's variables get their versions and attributes back on exit,
    also when composing fails."""
    from .. import name as _name

    variables = [n for n in order if n.op is None]
    kept = [(n.var_version, dict(n.attrs)) for n in variables]
    try:
        with _name.NameManager():
            yield
    finally:
        for n, (version, attrs) in zip(variables, kept):
            n.var_version, n.attrs = version, attrs

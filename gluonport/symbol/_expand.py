"""A training-mode copy of a graph in which ops with a training behaviour are written out with
registered ops (:attr:`gluonport.ops.registry.OpDef.train_graph`).

ONNX lowerings have inference semantics (BatchNorm normalises with its moving statistics,
Dropout is the identity). To run a hybridized block's training step on onnxruntime, each such
node is replaced by its training-mode forward built from ops that export as they are (batch
moments, a uniform draw and a comparison), and whose gradients come from those ops' own rules.
The new values of auxiliary states (BatchNorm's moving statistics) become extra entries the
runner writes back after the backward pass, when MXNet's backward kernel writes them.

The graph is copied: the caller's Symbol (the block's cached graph, exported later) is never
changed.
"""

from __future__ import annotations

from ..errors import GluonportError
from ._graph import Node, composing_beside, topo_order
from .symbol import Symbol

__all__ = ["expand_for_training"]


def expand_for_training(sym: Symbol) -> tuple[Symbol, list[tuple[str, tuple[Node, int]]]]:
    """``(training graph, [(aux variable name, entry of its new value)])``.

    Raises :class:`GluonportError` when a node with a training behaviour has no training-mode
    form (no ``train_graph``, or its ``train_graph`` refuses these params). A ``train_graph``
    returning ``None`` says the op trains as it infers for these params (BatchNorm with
    ``use_global_stats``): the node is kept.
    """
    from .. import symbol as F

    order = topo_order(n for n, _ in sym._outputs)
    remap: dict[tuple[int, int], tuple[Node, int]] = {}
    updates: list[tuple[str, tuple[Node, int]]] = []

    def entry(e: tuple[Node, int]) -> tuple[Node, int]:
        return remap.get((id(e[0]), e[1]), e)

    with composing_beside(order):
        for node in order:
            if node.op is None:
                continue
            inputs = [entry(e) for e in node.inputs]
            if node.op.train_compute is not None:
                if node.op.train_graph is None:
                    raise GluonportError(f"node {node.name!r}: {node.op.name} has no "
                                         "training-mode form built from exportable ops")
                got = node.op.train_graph(F, node.params, [Symbol([e]) for e in inputs])
            else:
                got = None
            if got is not None:
                outs, aux = got
                for i, o in enumerate(outs):
                    remap[(id(node), i)] = o._outputs[0]
                for k, value in aux.items():
                    src = node.inputs[k][0]
                    if src.op is None:
                        updates.append((src.name, value._outputs[0]))
                continue
            if any(e is not o for e, o in zip(inputs, node.inputs)):
                copy = _copy(node, inputs)
                for i in range(node.num_outputs()):
                    remap[(id(node), i)] = (copy, i)
    return Symbol([entry(e) for e in sym._outputs]), updates


def _copy(node: Node, inputs: list[tuple[Node, int]]) -> Node:
    new = Node(node.op, node.name, dict(node.attrs), inputs)
    new._params = node._params
    new.in_versions = node.in_versions
    new.control_deps = list(node.control_deps)
    new.subgraphs = list(node.subgraphs)
    return new


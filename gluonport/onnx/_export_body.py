"""Subgraphs of MXNet's control-flow ops (``_foreach``, ``_while_loop``, ``_cond``) as ONNX
graph attributes (Scan/Loop/If bodies).

:func:`export_body` converts one subgraph Symbol with the exporter (``export_symbol`` is handed
in by ``export.py``, which imports this module) at the outer graph's opset, then renames every
tensor of it with a prefix unique in the outer graph, since ONNX names are unique across a
model's graphs. Inputs the caller binds to outer tensors (``outer``) are read from the
enclosing scope by name instead of being body inputs. :func:`node_reads` is what a node reads,
outer-scope names of its subgraphs included, for the exporter's liveness pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConversionError

__all__ = ["export_body", "node_reads", "outer_reads"]


def _graphs(node: Any) -> list:
    from onnx import AttributeProto

    out = []
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def outer_reads(graph: Any) -> set[str]:
    """The names ``graph`` (an ONNX GraphProto) reads from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    reads: set[str] = set()
    for n in graph.node:
        reads.update(i for i in n.input if i and i not in defined)
        for g in _graphs(n):
            reads.update(r for r in outer_reads(g) if r not in defined)
        defined.update(n.output)
    reads.update(o.name for o in graph.output if o.name not in defined)
    return reads


def node_reads(node: Any) -> set[str]:
    """The tensor names ``node`` reads: its inputs and what its subgraphs read from outside."""
    reads = {i for i in node.input if i}
    for g in _graphs(node):
        reads |= outer_reads(g)
    return reads


def _rename_graph(graph: Any, rename: Callable[[str], str], prefix: str) -> None:
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        vi.name = rename(vi.name)
    for t in graph.initializer:
        t.name = rename(t.name)
    for n in graph.node:
        n.name = f"{prefix}/{n.name}"
        n.input[:] = [rename(i) if i else i for i in n.input]
        n.output[:] = [rename(o) if o else o for o in n.output]
        for g in _graphs(n):
            _rename_graph(g, rename, prefix)


def export_body(export_symbol: Callable, ctx: Any, symbol: Any, formal: Sequence[int],
                outer: Mapping[int, str], shapes: Sequence[Any], dtypes: Sequence[Any],
                dynamic: Sequence[Any] | None = None) -> Any:
    """``symbol`` (a subgraph; its inputs are ``list_inputs()``) as an ONNX ``GraphProto``.

    ``formal``: the indices of the inputs that are body inputs, in the order the body declares
    them; ``outer``: index -> outer tensor name, for inputs read from the enclosing graph.
    ``shapes``/``dtypes`` (and ``dynamic``, per input which dims vary) describe every input.
    The body's outputs are the Symbol's outputs in order.
    """
    names = symbol.list_inputs()
    missing = [names[k] for k in range(len(names)) if k not in outer and k not in formal]
    if missing:
        raise ctx.fail(f"subgraph inputs {missing} are neither body inputs nor outer tensors")
    axes = {}
    for k, name in enumerate(names):
        dyn = dynamic[k] if dynamic is not None and k < len(dynamic) else ()
        if dyn and any(dyn):
            axes[name] = {a: f"{name}_dim{a}" for a, d in enumerate(dyn) if d}
    try:
        model = export_symbol(symbol, {}, {n: tuple(s) for n, s in zip(names, shapes)},
                              {n: np.dtype(t) for n, t in zip(names, dtypes)},
                              opset_version=ctx.opset, dynamic_axes=axes or None)
    except ConversionError as exc:
        raise ctx.fail(f"cannot export its subgraph: {exc}") from None
    graph = model.graph
    prefix = ctx.fresh("body")
    bound = {names[k]: v for k, v in outer.items()}

    def rename(name: str) -> str:
        return bound.get(name, f"{prefix}/{name}")

    by_name = {vi.name: vi for vi in graph.input}
    kept = [by_name[names[k]] for k in formal]
    del graph.input[:]
    graph.input.extend(kept)
    _rename_graph(graph, rename, prefix)
    graph.name = prefix
    return graph

"""ONNX control-flow bodies (If branches, Loop and Scan bodies) imported as MXNet subgraphs,
for the ``_cond``/``_while_loop``/``_foreach`` nodes of ``importers/control.py``.

A body becomes a model of its own: its declared inputs (with shapes the caller knows from the
enclosing graph), plus one input per tensor it reads from the enclosing scope (constants
become initializers, so folding inside the body sees them), and is imported with the
importer itself (handed in through ``ImportContext.graph_importer``). The result's variables
are then sorted out: the body's declared inputs, enclosing-graph tensors (the node's inputs),
and the body's own parameters, which become parameters of the enclosing graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .._core import dtypes
from ..errors import DTypeError, GluonportError
from ..symbol import Group, Symbol
from ..symbol.symbol import invoke, var
from ._export_body import outer_reads
from ._import_context import ImportContext

__all__ = ["Body", "import_body"]


@dataclass
class Body:
    """An imported body: ``symbol`` (outputs in the ONNX body's order, a variable output
    behind an identity), ``formal`` (the body's declared input names, in order),
    ``outer`` (variable name -> the enclosing graph's Symbol it reads)."""

    symbol: Symbol
    formal: list[str]
    outer: dict[str, Symbol] = field(default_factory=dict)

    def outputs(self) -> list[Symbol]:
        return [Symbol([o]) for o in self.symbol._outputs]

    def var(self, name: str) -> Symbol:
        """The subgraph's variable ``name`` (a new one when the body does not read it)."""
        for node in _variables(self.symbol):
            if node.name == name:
                return Symbol([(node, 0)])
        return var(name)


def _variables(sym: Symbol) -> list:
    from ..symbol._graph import topo_order

    return [n for n in topo_order(n for n, _ in sym._outputs) if n.op is None]


def _value_info(name: str, dtype: Any, shape: Any) -> Any:
    try:
        elem = dtypes.onnx_of(np.dtype(dtype)) if dtype is not None else onnx.TensorProto.FLOAT
    except (DTypeError, TypeError):
        elem = onnx.TensorProto.FLOAT
    dims = None if shape is None else [d if isinstance(d, int) else None for d in shape]
    return helper.make_tensor_value_info(name, elem, dims)


def import_body(ctx: ImportContext, graph: Any, formal_types: list[tuple[Any, Any] | None],
                what: str) -> Body:
    """Import ``graph``; ``formal_types[k]`` overrides the (dtype, shape) of its ``k``-th
    declared input (``None``: keep the declared type)."""
    if ctx.graph_importer is None or ctx.lookup is None:
        raise ctx.fail("control-flow bodies are imported only through import_graph")
    inputs = []
    for k, vi in enumerate(graph.input):
        t = formal_types[k] if k < len(formal_types) else None
        inputs.append(vi if t is None else _value_info(vi.name, t[0], t[1]))
    inits = list(graph.initializer)
    outer_syms: dict[str, Symbol] = {}
    for name in sorted(outer_reads(graph)):
        v = ctx.lookup(name)
        if v is None:
            raise ctx.fail(f"its {what} reads {name!r}, which is not computed before it")
        if v.const is not None:
            inits.append(numpy_helper.from_array(np.asarray(v.const), name))
        else:
            inputs.append(_value_info(name, v.dtype, v.shape))
            outer_syms[name] = v.sym
    model = helper.make_model(
        helper.make_graph(list(graph.node), graph.name or what, inputs, list(graph.output),
                          initializer=inits, value_info=list(graph.value_info)),
        opset_imports=[helper.make_opsetid(d, v) for d, v in ctx.opsets.items()])
    model.ir_version = min(model.ir_version, 10)
    try:
        g = ctx.graph_importer(model, strict=ctx.strict, check=False, restore_mxnet_ops="never")
    except GluonportError as exc:
        raise ctx.fail(f"its {what} cannot be imported: {exc}") from None
    outs = []
    for o in (g.sym._outputs if len(g.sym._outputs) > 1 else [g.sym._outputs[0]]):
        s = Symbol([o])
        outs.append(invoke("_copy", (s,), {}) if o[0].op is None else s)
    body = Body(Group(outs), [vi.name for vi in graph.input])
    params = {**g.arg_params, **g.aux_params}
    for node in _variables(body.symbol):
        if node.name in outer_syms:
            body.outer[node.name] = outer_syms[node.name]
        elif node.name in params:
            body.outer[node.name] = ctx.new_param(f"{ctx.node_name}_{node.name}",
                                                  params[node.name])
        elif node.name not in body.formal:
            raise ctx.fail(f"its {what} reads {node.name!r}, which is neither a body input "
                           "nor a tensor of the enclosing graph")
    return body

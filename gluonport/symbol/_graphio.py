"""Symbol <-> the graph dict of symbol JSON (``formats/symbol_json.py`` handles the file)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FormatError
from ..ops import registry
from ._check import check_arity, check_entry, describe
from ._graph import Node, topo_order, unknown_op

__all__ = ["symbol_to_graph", "graph_to_symbol", "dumps_symbol", "loads_symbol", "load_symbol",
           "MXNET_VERSION"]

MXNET_VERSION = 10901


def symbol_to_graph(sym: Any, remove_amp_cast: bool = True) -> dict[str, Any]:
    """The JSON graph MXNet 1.9.1 writes for ``sym``: nodes in DFS post-order, 3-element
    entries with the versions recorded at composition or read from the file (1 on
    auxiliary-state inputs when there are none), ``node_row_ptr`` from output counts."""
    outputs = list(sym._outputs)
    if remove_amp_cast:
        outputs = [_skip_amp(n, i) for n, i in outputs]
    order = topo_order(n for n, _ in outputs)
    if remove_amp_cast:
        order = [n for n in order if not _is_amp(n)]
    index = {id(n): k for k, n in enumerate(order)}
    nodes = []
    for node in order:
        aux = set(node.aux_input_indices())
        ins = []
        versions = node.in_versions
        for j, (src, idx) in enumerate(node.inputs):
            if versions is not None and j < len(versions):
                version = versions[j]
            else:
                version = 1 if (j in aux and src.op is None) else 0
            if remove_amp_cast and _is_amp(src):
                src, idx, version = _skip_amp_entry(src, idx)
            ins.append([index[id(src)], idx, version])
        entry: dict[str, Any] = {"op": node.op_name, "name": node.name}
        if node.attrs:
            entry["attrs"] = dict(node.attrs)
        entry["inputs"] = ins
        if node.control_deps:
            entry["control_deps"] = [index[id(c)] for c in node.control_deps]
        if node.subgraphs:  # MXNet writes a subgraph without the top level's "attrs"
            entry["subgraphs"] = [_subgraph_dict(sub, remove_amp_cast) for sub in node.subgraphs]
        nodes.append(entry)
    row_ptr = [0]
    for node in order:
        row_ptr.append(row_ptr[-1] + node.num_outputs())
    return {
        "nodes": nodes,
        "arg_nodes": [k for k, n in enumerate(order) if n.op is None],
        "node_row_ptr": row_ptr,
        "heads": [[index[id(n)], i, 0] for n, i in outputs],
        "attrs": {"mxnet_version": ["int", MXNET_VERSION]},
    }


def _subgraph_dict(sub: Any, remove_amp_cast: bool) -> dict[str, Any]:
    graph = symbol_to_graph(sub, remove_amp_cast)
    del graph["attrs"]
    return graph


def _is_amp(node: Node) -> bool:
    """An AMP cast node (``OpDef.amp_cast_input``), which MXNet's ``RemoveAmpCast`` drops."""
    return node.op is not None and node.op.amp_cast_input is not None


def _skip_amp(node: Node, idx: int) -> tuple[Node, int]:
    return _skip_amp_entry(node, idx)[:2]


def _skip_amp_entry(node: Node, idx: int) -> tuple[Node, int, int]:
    """The entry an amp_cast chain reads, with the version its last amp node recorded."""
    version = 0
    while _is_amp(node):
        j = node.op.amp_cast_input(idx)
        versions = node.in_versions
        version = versions[j] if versions is not None and j < len(versions) else 0
        node, idx = node.inputs[j]
    return node, idx, version


def graph_to_symbol(graph: Mapping[str, Any], path: str | None = None) -> Any:
    """Build a Symbol from a (validated, upgraded) JSON graph dict.

    Unknown operators load as stand-ins so the graph can be inspected; running or exporting it
    raises one :class:`UnsupportedOpError` listing them all.
    """
    from .symbol import Symbol

    raw_nodes = graph["nodes"]
    n_out = _outputs_needed(graph)
    built: list[Node] = []
    for k, raw in enumerate(raw_nodes):
        op_name = raw["op"]
        attrs = dict(raw.get("attrs") or {})
        inputs = []
        for e in raw.get("inputs", []):
            src = e[0]
            if not 0 <= src < k:
                raise FormatError(f"node {k} {raw.get('name')!r}: input refers to node {src}, "
                                  "which does not come before it", path)
            inputs.append((built[src], e[1]))
        if op_name == "null":
            op = None
        else:
            op = registry.find(op_name)
            why = op.unavailable(attrs) if op is not None and op.unavailable else None
            if op is None or why:
                op = unknown_op(op_name, len(inputs), n_out.get(k, 1), why)
        node = Node(op, raw["name"], attrs, inputs)
        # Keep each entry's version as read: MXNet writes back what it read (Gluon exports
        # carry 2 on BatchNorm's moving statistics, traced twice).
        node.in_versions = [e[2] if len(e) > 2 else 0 for e in raw.get("inputs", [])]
        node.control_deps = [built[c] for c in raw.get("control_deps", [])]
        # control-flow bodies (_foreach, _while_loop, _cond): Symbols of their own
        node.subgraphs = [graph_to_symbol(sub, path) for sub in raw.get("subgraphs", [])]
        check_arity(k, node, path)
        for j, e in enumerate(raw.get("inputs", [])):
            check_entry(f"{describe(k, node)} input {j}", e[0], built[e[0]], e[1], path)
        built.append(node)
    heads = []
    for j, h in enumerate(graph["heads"]):
        if not 0 <= h[0] < len(built):
            raise FormatError(f"head {h} refers to node {h[0]}, out of range", path)
        check_entry(f"head {j}", h[0], built[h[0]], h[1], path)
        heads.append((built[h[0]], h[1]))
    return Symbol(heads)


def _outputs_needed(graph: Mapping[str, Any]) -> dict[int, int]:
    """Output counts per node from node_row_ptr, or from the highest index consumed."""
    need: dict[int, int] = {}
    rp = graph.get("node_row_ptr")
    if isinstance(rp, list) and len(rp) == len(graph["nodes"]) + 1:
        need = {k: rp[k + 1] - rp[k] for k in range(len(graph["nodes"]))}
    for raw in graph["nodes"]:
        for e in raw.get("inputs", []):
            need[e[0]] = max(need.get(e[0], 1), e[1] + 1)
    for h in graph["heads"]:
        need[h[0]] = max(need.get(h[0], 1), h[1] + 1)
    return need


def _input_names(op_name: str, attrs: dict[str, str]) -> list[str] | None:
    """For the legacy (< 0.9) upgrade: the op's declared inputs, aux states included."""
    op = registry.find(op_name)
    if op is None or op.variadic is not None:
        return None
    return op.input_names(op.parse(attrs, strict=False))


def dumps_symbol(sym: Any, remove_amp_cast: bool = True) -> str:
    from ..formats import symbol_json

    return symbol_json.dumps(symbol_json.from_dict(symbol_to_graph(sym, remove_amp_cast)))


def loads_symbol(text: str, path: str | None = None) -> Any:
    from ..formats import symbol_json

    graph = symbol_json.loads(text, path=path, input_names=_input_names,
                              input_var_attrs=registry.input_var_attrs_by_name)
    return graph_to_symbol(symbol_json.to_dict(graph), path)


def load_symbol(path: str) -> Any:
    from ..formats import symbol_json

    graph = symbol_json.load(path, input_names=_input_names,
                             input_var_attrs=registry.input_var_attrs_by_name)
    return graph_to_symbol(symbol_json.to_dict(graph), str(path))

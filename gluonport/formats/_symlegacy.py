"""MXNet's legacy symbol-JSON upgraders (``src/nnvm/legacy_json_util.cc``, MXNet 1.9.1).

MXNet 1.9.1 runs, on every load, each upgrader whose version is greater than the file's
``mxnet_version`` (0.8.0 when absent), in this order:

1. ``FixParsing`` (version 1.9.1, so every older file): attribute keys that are a hidden key
   (``lr_mult``) become ``__lr_mult__``; a key ``<argname>_<hidden>`` on an operator node
   (``weight_lr_mult``) moves to that input variable as ``__lr_mult__``.
2. 0.9.0: operators with fewer inputs than they declare (0.8 files did not list aux states)
   get new variables ``<opname>_<argname>`` that copy the operator's attributes.
3. 0.9.4: ``FSetInputVarAttrOnCompose``: BatchNorm-like ops give their moving-stat variables
   ``__init__`` ``["zero", {}]``/``["one", {}]``, PReLU its gamma ``["Constant", {"value": 0.25}]``,
   UpSampling its input 1 ``["bilinear", {}]``, unless the variable already has an ``__init__``.
   Which ops and inputs is a fact of each operator: the caller passes ``input_var_attrs`` (the
   Symbol layer reads ``OpDef.var_attrs``); this layer knows no operator.
4. 0.9.5: ``argmax``/``argmin`` lose ``axis="-1"`` (the axis became optional).

MXNet also re-parses every node's attributes (``UpgradeJSON_Parse``); that is the Symbol
layer's job here. Like MXNet, the upgraders look only at the top-level graph, never into
subgraphs, and visit nodes in order (files are in MXNet's DFS order, which is what it visits).
"""

from __future__ import annotations

from collections.abc import Callable

from ._symgraph import MXNET_VERSION, Graph, Node, make_version

__all__ = ["InputNames", "InputVarAttrs", "upgrade_graph", "HIDDEN_KEYS"]

InputNames = Callable[[str, dict[str, str]], "list[str] | None"]
"""``input_names(op, attrs) -> list of argument names`` (MXNet's ``FListInputNames``, aux
states included), or ``None`` for an unknown op."""

InputVarAttrs = Callable[[str, dict[str, str], int], "list[dict[str, str]] | None"]
"""``input_var_attrs(op, attrs, n_inputs) -> attributes per input position`` for a node with
``n_inputs`` inputs: what MXNet's ``FSetInputVarAttrOnCompose`` gives a variable at each position
(``{}`` where nothing), or ``None`` for an op without the rule (or unknown)."""

HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
"""MXNet 1.9.1 ``kHiddenKeys`` (src/c_api/c_api_symbolic.cc), in its order."""


def _looks_hidden(key: str) -> bool:
    """MXNet's test for a key to hold back while parsing: it starts or ends with a hidden key."""
    for hidden in HIDDEN_KEYS:
        pos = key.rfind(hidden)
        if pos == 0 or (pos != -1 and pos == len(key) - len(hidden)):
            return True
    return False


def _move_to_input(graph: Graph, node: Node, arg: str, hidden: str, value: str,
                   input_names: InputNames | None) -> bool:
    """Move ``<arg>_<hidden>`` from an op node to its input variable ``arg``; False if not."""
    if node.is_variable or input_names is None:
        return False
    names = input_names(node.op, dict(node.attrs))
    if names is None or arg not in names:
        return False
    idx = names.index(arg)
    # MXNet indexes n->inputs unchecked here; an input missing from a 0.8 file stays on the op.
    if idx >= len(node.inputs):
        return False
    source = graph.nodes[node.inputs[idx][0]]
    if not source.is_variable:
        return False
    source.attrs[f"__{hidden}__"] = value
    return True


def _restore_key(graph: Graph, node: Node, key: str, value: str,
                 input_names: InputNames | None) -> None:
    for hidden in HIDDEN_KEYS:
        pos = key.rfind(hidden)
        if pos == 0 and len(hidden) == len(key):
            node.attrs[f"__{hidden}__"] = value
            return
        if pos > 1 and pos == len(key) - len(hidden):
            # MXNet drops the one character before the hidden key, assuming it is "_".
            if _move_to_input(graph, node, key[: pos - 1], hidden, value, input_names):
                return
            break
    node.attrs[key] = value


def fix_parsing(graph: Graph, input_names: InputNames | None) -> None:
    """``UpgradeJSON_FixParsing``: hidden keys -> ``__key__``; ``<arg>_<key>`` -> input var."""
    for node in graph.nodes:
        held = [(k, v) for k, v in node.attrs.items() if _looks_hidden(k)]
        for key, _ in held:
            del node.attrs[key]
        for key, value in held:
            _restore_key(graph, node, key, value, input_names)


def _default_var_name(op_name: str, arg_name: str) -> str:
    return f"{op_name}_{arg_name}" if op_name else arg_name


def add_missing_inputs(graph: Graph, input_names: InputNames | None) -> None:
    """``UpgradeJSON_000800_000900``: add the variables 0.8 files left out (aux states).

    Each new variable is named ``<opname>_<argname>``, copies the op's attributes, and is fed with
    entry version 0, as MXNet does. It is placed right before its op, where MXNet's DFS save puts
    it, so the ids of later nodes shift.
    """
    if input_names is None:
        return
    nodes: list[Node] = []
    new_id: list[int] = []
    for node in graph.nodes:
        node.inputs = [(new_id[n], i, v) for n, i, v in node.inputs]
        node.control_deps = [new_id[n] for n in node.control_deps]
        names = None if node.is_variable else input_names(node.op, dict(node.attrs))
        for arg in (names or [])[len(node.inputs):]:
            nodes.append(Node("null", _default_var_name(node.name, arg), dict(node.attrs)))
            node.inputs.append((len(nodes) - 1, 0, 0))
        new_id.append(len(nodes))
        nodes.append(node)
    if len(nodes) == len(graph.nodes):
        return
    graph.nodes = nodes
    graph.heads = [(new_id[n], i, v) for n, i, v in graph.heads]
    graph.arg_nodes = graph.variable_ids()
    graph.node_row_ptr = None  # the old one no longer lines up; MXNet ignores it anyway


def set_input_var_attrs(graph: Graph, input_var_attrs: InputVarAttrs | None) -> None:
    """``UpgradeJSON_000903_000904``: the ``__init__`` MXNet's ops give their input variables
    (BatchNorm's moving statistics, PReLU's gamma), where a variable has none yet."""
    if input_var_attrs is None:
        return
    for node in graph.nodes:
        if node.is_variable:
            continue
        table = input_var_attrs(node.op, dict(node.attrs), len(node.inputs))
        for index, (source_id, _, _) in enumerate(node.inputs):
            source = graph.nodes[source_id]
            if (table and index < len(table) and table[index] and source.is_variable
                    and "__init__" not in source.attrs):
                source.attrs.update(table[index])


def drop_argmax_axis(graph: Graph) -> None:
    """``UpgradeJSON_000904_000905``: ``argmax``/``argmin`` with ``axis="-1"`` lose the axis."""
    for node in graph.nodes:
        if node.op in ("argmax", "argmin") and node.attrs.get("axis") == "-1":
            del node.attrs["axis"]


_UPGRADERS = (
    (MXNET_VERSION, lambda g, names, var_attrs: fix_parsing(g, names)),
    (make_version(0, 9, 0), lambda g, names, var_attrs: add_missing_inputs(g, names)),
    (make_version(0, 9, 4), lambda g, names, var_attrs: set_input_var_attrs(g, var_attrs)),
    (make_version(0, 9, 5), lambda g, names, var_attrs: drop_argmax_axis(g)),
)


def upgrade_graph(graph: Graph, input_names: InputNames | None = None,
                  input_var_attrs: InputVarAttrs | None = None) -> Graph:
    """Run MXNet 1.9.1's upgraders on ``graph`` in place, as ``mx.sym.load`` does; return it.

    Each upgrader runs when its version is greater than ``graph.mxnet_version``, in MXNet's list
    order. A graph older than 1.9.1 then says ``mxnet_version`` 10901 in ``attrs`` (what MXNet
    writes when it saves the loaded symbol); ``graph.mxnet_version`` keeps the version read.
    Without ``input_names`` (``input_var_attrs``) the steps that need argument names (the
    operators' variable attributes) are skipped.
    """
    for version, step in _UPGRADERS:
        if version > graph.mxnet_version:
            step(graph, input_names, input_var_attrs)
    if graph.mxnet_version < MXNET_VERSION:
        graph.attrs["mxnet_version"] = ["int", MXNET_VERSION]
    return graph

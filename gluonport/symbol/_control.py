"""``sym.contrib.foreach``, ``sym.contrib.while_loop`` and ``sym.contrib.cond``: build MXNet
1.9.1's ``_foreach``/``_while_loop``/``_cond`` nodes, their bodies as subgraphs, as
``python/mxnet/symbol/contrib.py`` builds them.

The body functions run once on new variables inside an ``AttrScope(__subgraph_name__=...)``
(``foreach0``, ``while_loop_cond0``, ``cond_then0``: one process-wide counter per stem, as
MXNet's ``AttrScope._subgraph_names``), so every node they create carries that attribute.
Loop data and states become variables named ``<name>-<output index>`` (``data-0``). Then the
subgraph is cut as MXNet's ``MXSymbolCutSubgraph`` cuts it: each input a subgraph node reads
from outside the subgraph becomes a new variable named after that output (``w``,
``_greater_scalar1_output``), once per distinct entry, and the outside entry becomes an input
of the op. Outputs that are subgraph inputs or come from outside get an ``identity``.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable
from typing import Any, NoReturn

from .. import attribute
from .. import name as _name
from .._core import nested
from .._core.attr_fields import to_attr_string
from ..errors import ArgumentError
from ..ops import registry
from ._graph import Node, topo_order
from .symbol import Group, Symbol, invoke, var

__all__ = ["foreach", "while_loop", "cond", "control_node"]

_SUBGRAPH_ATTR = "__subgraph_name__"
_subgraph_names: defaultdict[str, int] = defaultdict(int)


def _flatten(args: Any, what: str) -> tuple[list[Symbol], Any]:
    def refuse(x: Any) -> NoReturn:
        raise ArgumentError(f"{what} must be a (nested) list of Symbol, but got {x!r} of "
                            f"type {type(x).__name__}")

    def leaf(x: Any) -> tuple[list, int] | None:
        if not isinstance(x, Symbol):
            return None
        n = len(x.list_outputs())
        return [x], (n if n > 1 else 0)  # a grouped Symbol: one item, its outputs counted

    return nested.flatten(args, leaf, refuse)


_regroup = nested.regroup


def _uniq_name(sym: Symbol) -> str:
    """MXNet's ``_get_sym_uniq_name``: ``<node name>-<output index>``."""
    node, idx = _single(sym, "a loop input")
    return f"{node.name}-{idx}"


def _single(sym: Symbol, what: str) -> tuple[Node, int]:
    if not isinstance(sym, Symbol) or len(sym._outputs) != 1:
        raise ArgumentError(f"{what} must be a single-output Symbol, got {sym!r}")
    return sym._outputs[0]


def _unique_subgraph_name(stem: str) -> str:
    outer = attribute.current().get(None).get(_SUBGRAPH_ATTR, "")
    if outer:
        stem = f"{outer}${stem}"
    _subgraph_names[stem] += 1
    return f"{stem}{_subgraph_names[stem] - 1}"


def _in_subgraph(node: Node, name: str) -> bool:
    return node.attrs.get(_SUBGRAPH_ATTR, "") == name


def _identity(sym: Symbol) -> Symbol:
    return invoke("_copy", (sym,), {}, hint="identity")


def _cut_subgraph(graph: Symbol) -> list[Symbol]:
    """MXNet's ``MXSymbolCutSubgraph``: in place, every entry a subgraph node reads from a node
    outside the subgraph becomes a variable named after that output (one per distinct entry);
    returns the outside entries, one per cut edge, in DFS order."""
    head = graph._outputs[0][0]
    name = head.attrs.get(_SUBGRAPH_ATTR)
    if name is None:
        return []
    edges = []
    for node in topo_order(n for n, _ in graph._outputs):
        if _in_subgraph(node, name):
            edges.extend((node, j) for j, (src, _) in enumerate(node.inputs)
                         if not _in_subgraph(src, name))
    cut: list[Symbol] = []
    made: dict[tuple[int, int], Node] = {}
    for node, j in edges:
        src, idx = node.inputs[j]
        key = (id(src), idx)
        if key not in made:
            made[key] = Node(None, src.output_names()[idx])
        cut.append(Symbol([(src, idx)]))
        node.inputs[j] = (made[key], 0)
        if node.in_versions is not None and j < len(node.in_versions):
            node.in_versions[j] = 0
        node.invalidate()
    return cut


def _graph_inputs(graph: Symbol) -> list[Symbol]:
    """MXNet's ``MXSymbolGetInputSymbols``: every variable entry read, node by node."""
    return [Symbol([(src, idx)]) for node in topo_order(n for n, _ in graph._outputs)
            for src, idx in node.inputs if src.op is None]


def _output_name(sym: Symbol) -> str:
    node, idx = sym._outputs[0]
    return node.output_names()[idx]


def control_node(op_name: str, subgraphs: list[Symbol], inputs: list[Symbol],
                 attrs: dict[str, Any], name: str | None = None) -> list[Symbol]:
    """A ``_foreach``/``_while_loop``/``_cond`` node with these subgraphs, single-output
    input Symbols and attributes (lists as MXNet's Python writes them, ``"[0, 2]"``); returns
    one Symbol per output. For builders other than the front ends here (the ONNX importer)."""
    node = _node(op_name, subgraphs, inputs, attrs, name)
    return [Symbol([(node, i)]) for i in range(node.num_outputs())]


def _node(op_name: str, subgraphs: list[Symbol], inputs: list[Symbol],
          attrs: dict[str, Any], name: str | None = None) -> Node:
    op = registry.get(op_name)
    entries = [_single(s, f"{op_name} input") for s in inputs]
    node_attrs = attribute.current().get(None)
    node_attrs.update({k: _locs(v) if isinstance(v, (list, tuple)) else to_attr_string(v)
                       for k, v in attrs.items()})
    node = Node(op, _name.current().get(name, op_name.lower()), node_attrs, entries)
    node.in_versions = [src.var_version if src.op is None else 0 for src, _ in entries]
    node.subgraphs = list(subgraphs)
    return node


def _copy_var(sym: Symbol) -> Symbol:
    node, _ = sym._outputs[0]
    return Symbol([(Node(None, node.name, dict(node.attrs)), 0)])


def _locs(values: list[int]) -> str:
    return str(list(values))


def foreach(body: Callable, data: Any, init_states: Any, name: str = "foreach") -> tuple:
    """Run ``body`` over axis 0 of ``data`` (MXNet's ``sym.contrib.foreach``).

    ``out, states = body(data_slice, states)``; ``data`` and ``init_states`` are Symbols or
    nested lists of them. Returns ``(outputs, states)``: the per-step outputs stacked along a
    new axis 0, and the states after the last step, in the formats ``body`` returned.
    ``name`` is the subgraph's name stem (the node is named ``_foreach<n>``).
    """
    flat_data, data_fmt = _flatten(data, "foreach input")
    flat_states, state_fmt = _flatten(init_states, "foreach states")
    name = _unique_subgraph_name(name)
    with attribute.AttrScope(**{_SUBGRAPH_ATTR: name}):
        in_eles, _ = _regroup([var(_uniq_name(s)) for s in flat_data], data_fmt)
        states, _ = _regroup([var(_uniq_name(s)) for s in flat_states],
                             copy.deepcopy(state_fmt))
        sym_out, sym_states = body(in_eles, states)
        sym_out, out_fmt = _flatten(sym_out, "foreach output")
        sym_states, new_fmt = _flatten(sym_states, "foreach loop_vars")
        if new_fmt != state_fmt:
            raise ArgumentError("foreach: the input and output loop_vars have different format")
        graph = _construct_subgraph(sym_out, sym_states, name)
    cut = {_output_name(s): s for s in _cut_subgraph(graph)}
    graph_inputs = {_single(s, "input")[0].name: s for s in _graph_inputs(graph)}
    sub_names = graph.list_inputs()
    if len(set(sub_names)) != len(sub_names):
        raise ArgumentError(f"foreach: the inputs of the subgraph don't have unique names: "
                            f"{sub_names}")
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_states]
    ordered = list(flat_data) + list(flat_states)
    in_data_locs, in_state_locs, remain_locs = [], [], []
    for names, locs, what in ((data_names, in_data_locs, "data"),
                              (state_names, in_state_locs, "state")):
        for n in names:
            if n not in sub_names:
                raise ArgumentError(f"foreach: the {what} arrays have to be used in the loop "
                                    "body")
            locs.append(sub_names.index(n))
    for k, n in enumerate(sub_names):
        if n in cut:
            ordered.append(cut[n])
            remain_locs.append(k)
        elif n not in data_names and n not in state_names:
            ordered.append(_copy_var(graph_inputs[n]))
            remain_locs.append(k)
    n_out, n_states = len(sym_out), len(sym_states)
    node = _node("_foreach", [graph], ordered, {
        "num_args": len(ordered) + 1, "num_outputs": n_out + n_states, "num_out_data": n_out,
        "in_state_locs": _locs(in_state_locs), "in_data_locs": _locs(in_data_locs),
        "remain_locs": _locs(remain_locs)})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n_out)], out_fmt)
    final, _ = _regroup([Symbol([(node, n_out + i)]) for i in range(n_states)], state_fmt)
    return outs, final


def _construct_subgraph(sym_out: list[Symbol], sym_states: list[Symbol], name: str) -> Symbol:
    everything = Group(sym_out + sym_states) if sym_out + sym_states else None
    inputs = set(everything.list_inputs()) if everything is not None else set()
    out_names = {s.name for s in sym_out}
    flat = []
    for o in sym_out:
        node = _single(o, "a foreach output")[0]
        outside = o.name in inputs or not _in_subgraph(node, name)
        flat.append(_identity(o) if outside else o)
    for s in sym_states:
        node = _single(s, "a foreach state")[0]
        outside = s.name in inputs or s.name in out_names or not _in_subgraph(node, name)
        flat.append(_identity(s) if outside else s)
    return Group(flat)


def _branch_subgraph(graph_vars: list[Symbol], fn: Callable, stem: str, loop: bool
                     ) -> tuple[Symbol, int, int, Any]:
    """A cond/func/branch subgraph (the ``_create_subgraph`` helpers of MXNet's
    while_loop and cond): ``fn`` runs on new variables inside the subgraph's scope."""
    name = _unique_subgraph_name(stem)
    with attribute.AttrScope(**{_SUBGRAPH_ATTR: name}):
        if loop:
            flat, fmt = _flatten(graph_vars, "while loop_vars")
            new_vars, _ = _regroup([var(_uniq_name(s)) for s in flat], fmt)
            outputs, states, out_fmt = fn(new_vars)
        else:
            new_vars = [var(s.name) for s in graph_vars]
            outputs, out_fmt = _flatten(fn(*new_vars), "cond outputs")
            states = []
        everything = outputs + states
        inputs = set(Group(everything).list_inputs()) if everything else set()

        def make_identity(x: Symbol) -> Symbol:
            node = _single(x, "a subgraph output")[0]
            return _identity(x) if x.name in inputs or not _in_subgraph(node, name) else x

        graph = Group([make_identity(x) for x in everything])
    return graph, len(outputs), len(everything), out_fmt


def while_loop(cond: Callable, func: Callable, loop_vars: Any, max_iterations: Any = None,
               name: str = "while_loop") -> tuple:
    """MXNet's ``sym.contrib.while_loop``: while ``cond(*loop_vars)`` holds (at most
    ``max_iterations`` times), ``step_output, loop_vars = func(*loop_vars)``.

    Returns ``(outputs, final_loop_vars)``: each step output stacked along a new axis 0 of
    ``max_iterations`` rows (rows past the last step are zeros here; MXNet leaves them
    uninitialized), and the loop variables after the last step.
    """
    flat_vars, var_fmt = _flatten(loop_vars, "while loop_vars")
    if max_iterations is None:
        raise ArgumentError("max_iterations should be specified")
    max_iterations = nested.python_scalar(max_iterations, int, "max_iteration")
    if len(flat_vars) == 0:
        raise ArgumentError("loop_vars should contain at least one element")

    def cond_wrapper(vars_: list) -> tuple:
        result = cond(*vars_)
        if not isinstance(result, Symbol):
            raise ArgumentError("Return of cond must be a Symbol")
        return [], [result], []

    def func_wrapper(vars_: list) -> tuple:
        step_output, new_vars = func(*vars_)
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        step_output, out_fmt = _flatten(list(step_output) if isinstance(step_output, tuple)
                                        else step_output, "while output")
        new_vars, _ = _flatten(list(new_vars) if isinstance(new_vars, tuple) else new_vars,
                               "while loop_vars")
        if len(vars_) != len(new_vars):
            raise ArgumentError("The number of loop_vars should be consistent during the loop")
        return step_output, new_vars, out_fmt

    cond_g, n_data, n_out, _ = _branch_subgraph(loop_vars, cond_wrapper, name + "_cond", True)
    if n_data != 0 or n_out != 1:
        raise ArgumentError("while_loop: cond must return a single Symbol")
    func_g, n_data, n_out, out_fmt = _branch_subgraph(loop_vars, func_wrapper, name + "_func",
                                                      True)
    by_name = {_uniq_name(s): s for s in flat_vars}
    var_pos = {_uniq_name(s): i for i, s in enumerate(flat_vars)}
    inputs: list[Symbol] = []
    loc_of: dict[int, int] = {}
    locs = []
    for graph in (cond_g, func_g):
        cut = {_output_name(s): s for s in _cut_subgraph(graph)}
        graph_inputs = {_single(s, "input")[0].name: s for s in _graph_inputs(graph)}
        input_locs: list[int] = []
        var_locs = [-1] * len(flat_vars)
        sub_names = graph.list_inputs()
        if len(set(sub_names)) != len(sub_names):
            raise ArgumentError(f"while_loop: the inputs of the subgraph don't have unique "
                                f"names: {sub_names}")
        for n in sub_names:
            sym = _pick(n, by_name, cut, graph_inputs)
            if id(sym) not in loc_of:
                loc_of[id(sym)] = len(inputs)
                inputs.append(sym)
            input_locs.append(loc_of[id(sym)])
            if n in var_pos:
                var_locs[var_pos[n]] = len(input_locs) - 1
        locs.append((input_locs, var_locs))
    (cond_locs, _), (func_locs, func_var_locs) = locs
    for i, loc in enumerate(func_var_locs, 1):
        if loc == -1:
            raise ArgumentError(f"The {i}-th loop_var doesn't involve into the computation")
    node = _node("_while_loop", [cond_g, func_g], inputs, {
        "num_args": len(inputs) + 2, "num_outputs": n_out, "num_out_data": n_data,
        "max_iterations": max_iterations, "cond_input_locs": _locs(cond_locs),
        "func_input_locs": _locs(func_locs), "func_var_locs": _locs(func_var_locs)})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n_data)], out_fmt)
    final, _ = _regroup([Symbol([(node, i)]) for i in range(n_data, n_out)], var_fmt)
    return outs, final


def _pick(name: str, first: dict, cut: dict, graph_inputs: dict) -> Symbol:
    """The op input for subgraph input ``name``: a loop variable (or an input already taken),
    else the entry cut from outside, else a copy of a variable made inside the body."""
    for table in (first, cut):
        if name in table:
            return table[name]
    return _copy_var(graph_inputs[name])


def cond(pred: Symbol, then_func: Callable, else_func: Callable, name: str = "cond") -> Any:
    """MXNet's ``sym.contrib.cond``: ``then_func()`` if the scalar ``pred`` is true, else
    ``else_func()``; both return (nested lists of) Symbols of the same shapes."""
    cond_g, _, n_cond, _ = _branch_subgraph([], lambda: pred, name + "_pred", False)
    if n_cond != 1:
        raise ArgumentError("pred should always be a single output")
    then_g, _, n_then, then_fmt = _branch_subgraph([], then_func, name + "_then", False)
    else_g, _, n_else, _ = _branch_subgraph([], else_func, name + "_else", False)
    if n_then != n_else:
        raise ArgumentError("Number of outputs differs between then-branch and else-branch")
    inputs: list[Symbol] = []
    loc_of: dict[int, int] = {}
    all_locs = []
    for graph in (cond_g, then_g, else_g):
        by_name = {s.name: s for s in inputs}
        cut = {_output_name(s): s for s in _cut_subgraph(graph)}
        graph_inputs = {_single(s, "input")[0].name: s for s in _graph_inputs(graph)}
        input_locs = []
        for n in graph.list_inputs():
            sym = _pick(n, by_name, cut, graph_inputs)
            if id(sym) not in loc_of:
                loc_of[id(sym)] = len(inputs)
                inputs.append(sym)
            input_locs.append(loc_of[id(sym)])
        all_locs.append(input_locs)
    node = _node("_cond", [cond_g, then_g, else_g], inputs, {
        "num_args": len(inputs) + 3, "num_outputs": n_then,
        "cond_input_locs": _locs(all_locs[0]), "then_input_locs": _locs(all_locs[1]),
        "else_input_locs": _locs(all_locs[2])})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n_then)], then_fmt)
    return outs

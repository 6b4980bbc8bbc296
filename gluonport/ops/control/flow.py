"""``_foreach``, ``_while_loop`` and ``_cond``: MXNet 1.9.1's control-flow operators
(src/operator/control_flow.cc), whose bodies are subgraphs.

MXNet keeps a body in the node's ``subgraphs`` (symbol JSON writes them as the node's
``"subgraphs"`` list), not among its inputs: ``num_args`` counts the subgraphs too (``_foreach``
one, ``_while_loop`` two, ``_cond`` three), so a node has ``num_args`` minus that many inputs.
The symbol layer hands the bodies in through the node's params (``p.subgraphs``, objects with
``input_names``, ``n_outputs``, ``run(arrays)``, ``shapes(in_shapes)``, ``types(in_dtypes)``;
``gluonport/symbol/_subgraph.py``); a subgraph's inputs are its variables in DFS order, which
the ``*_locs`` attributes index.

* ``_foreach``: inputs are the data arrays, then the loop states, then the other arrays the
  body reads (``remain``); ``in_data_locs``/``in_state_locs``/``remain_locs`` place them among
  the body's inputs. The body runs on each slice along axis 0; its first ``num_out_data``
  outputs are stacked, the rest are the next states. Outputs: the stacked data, then the
  final states.
* ``_while_loop``: ``cond_input_locs``/``func_input_locs`` pick the cond's and the body's inputs
  from the node's; ``func_var_locs`` are the loop variables among the body's inputs. While
  ``cond`` is true and fewer than ``max_iterations`` steps ran, the body runs; its first
  ``num_out_data`` outputs are stacked into arrays of ``max_iterations`` rows, the rest replace
  the loop variables. Rows past the last step: MXNet leaves them uninitialized (its
  ``nd.contrib.while_loop`` pads with ``nd.empty``); gluonport writes zeros.
* ``_cond``: ``cond_input_locs``/``then_input_locs``/``else_input_locs`` pick each subgraph's
  inputs; the branch the condition's scalar selects gives the outputs.

Shape inference: MXNet 1.9.1 registers none for ``_while_loop`` and ``_cond`` (their output
shapes are known after a run; its ``infer_shape`` returns ``None`` for such graphs); gluonport
infers them from the bodies (``_while_loop`` step outputs with ``max_iterations`` rows; a
``_cond`` output whose branches disagree stays unknown), which the ONNX export and the size
budget need. ``_foreach`` follows MXNet's ForeachShape.

Gradients: as MXNet registers FGradient for all three, each rule builds the op's
``_backward_*`` node with the same subgraphs (``flow_grad.py``), through ``Subgraph.call``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core.attr_fields import Int, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..registry import OpDef, register

__all__ = ["bodies", "scalar_true", "foreach_split", "foreach_args", "FOREACH_PARAMS",
           "WHILE_LOOP_PARAMS", "COND_PARAMS"]



def bodies(p: Any, op: str, count: int) -> tuple:
    """The node's subgraphs (``p.subgraphs``), checked to be ``count`` of them."""
    subs = p.get("subgraphs")
    if not subs or len(subs) != count:
        got = len(subs) if subs else 0
        raise OpAttributeError(f"{op} needs {count} subgraph(s) in its node, got {got}; build it "
                               f"with sym.contrib.{op.strip('_')} or load MXNet's symbol JSON")
    return subs


def scalar_true(x: np.ndarray, op: str) -> bool:
    """MXNet's ``as_bool_scalar``: the condition must hold exactly one element."""
    x = np.asarray(x)
    if x.size != 1:
        raise ShapeError(f"{op}: the condition must be a scalar (one element), got shape "
                         f"{fmt(x.shape)}")
    return bool(x.reshape(-1)[0])


def _check_locs(name: str, locs: Sequence[int], n: int, op: str) -> None:
    if any(not 0 <= loc < n for loc in locs):
        raise OpAttributeError(f"{op}: {name}={list(locs)} refers outside 0..{n - 1}")


# --- _foreach ---------------------------------------------------------------------------------
def foreach_split(p: Any, items: Sequence[Any]) -> tuple[list, list, list]:
    """A ``_foreach`` node's inputs as (data arrays, states, remaining inputs)."""
    nd, ns = len(p.in_data_locs), len(p.in_state_locs)
    return list(items[:nd]), list(items[nd:nd + ns]), list(items[nd + ns:])


def foreach_args(p: Any, body: Any, data: list, states: list, remain: list) -> list:
    """The body's inputs for one step, placed by ``in_data_locs``/``in_state_locs``/
    ``remain_locs``."""
    args: list[Any] = [None] * len(body.input_names)
    for name, locs, vals in (("in_data_locs", p.in_data_locs, data),
                             ("in_state_locs", p.in_state_locs, states),
                             ("remain_locs", p.remain_locs, remain)):
        _check_locs(name, locs, len(args), "_foreach")
        for loc, v in zip(locs, vals):
            args[loc] = v
    return args


def _foreach(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    (body,) = bodies(p, "_foreach", 1)
    data, states, remain = foreach_split(p, inputs)
    if not data:
        raise OpAttributeError("_foreach: in_data_locs is empty (it needs a data array)")
    length = data[0].shape[0] if data[0].ndim else 0
    for d in data[1:]:
        if not d.ndim or d.shape[0] != length:
            raise ShapeError(f"_foreach: data arrays differ in length along axis 0: "
                             f"{[fmt(x.shape) for x in data]}")
    nod = p.num_out_data
    stacked: list[list[np.ndarray]] = [[] for _ in range(nod)]
    for i in range(length):
        args = foreach_args(p, body, [d[i] for d in data], states, remain)
        res = body.run(args)
        for k in range(nod):
            stacked[k].append(res[k])
        states = res[nod:]
    if length == 0:  # no step ran: the shapes come from inference on the body
        _, outs = _foreach_shape(p, [x.shape for x in inputs])
        _, dts = _foreach_type(p, [x.dtype for x in inputs])
        return [np.zeros(s, d) for s, d in zip(outs[:nod], dts[:nod])] + list(states)
    return [np.stack(s) for s in stacked] + list(states)


def _foreach_shape(p: Any, ins: list) -> tuple[list, list]:
    (body,) = bodies(p, "_foreach", 1)
    data, states, remain = foreach_split(p, ins)
    length = next((d[0] for d in data if d is not None and len(d) and d[0]), 0)
    sub_data = [None if d is None else tuple(d[1:]) for d in data]
    sub_ins, sub_outs = body.shapes(foreach_args(p, body, sub_data, states, remain))
    nod = p.num_out_data
    new_data = [merge(d, (length,) + tuple(s)) if s is not None else d
                for d, s in zip(data, [sub_ins[loc] for loc in p.in_data_locs])]
    new_states = [merge(merge(s, sub_ins[loc]), o) for s, loc, o in
                  zip(states, p.in_state_locs, sub_outs[nod:])]
    new_remain = [merge(r, sub_ins[loc]) for r, loc in zip(remain, p.remain_locs)]
    out_data = [None if s is None else (length,) + tuple(s) for s in sub_outs[:nod]]
    return new_data + new_states + new_remain, out_data + new_states


def _foreach_type(p: Any, ins: list) -> tuple[list, list]:
    (body,) = bodies(p, "_foreach", 1)
    data, states, remain = foreach_split(p, ins)
    sub_ins, sub_outs = body.types(foreach_args(p, body, data, states, remain))
    new = ([sub_ins[loc] for loc in p.in_data_locs] + [sub_ins[loc] for loc in p.in_state_locs]
           + [sub_ins[loc] for loc in p.remain_locs])
    return [a if a is not None else b for a, b in zip(ins, new)], list(sub_outs)


# --- _while_loop ------------------------------------------------------------------------------
def _while_locs(p: Any, n_in: int, cond: Any, func: Any) -> None:
    _check_locs("cond_input_locs", p.cond_input_locs, n_in, "_while_loop")
    _check_locs("func_input_locs", p.func_input_locs, n_in, "_while_loop")
    _check_locs("func_var_locs", p.func_var_locs, len(p.func_input_locs), "_while_loop")
    if len(p.cond_input_locs) != len(cond.input_names):
        raise OpAttributeError(f"_while_loop: cond_input_locs has {len(p.cond_input_locs)} "
                               f"entries for a cond of {len(cond.input_names)} inputs")
    if len(p.func_input_locs) != len(func.input_names):
        raise OpAttributeError(f"_while_loop: func_input_locs has {len(p.func_input_locs)} "
                               f"entries for a func of {len(func.input_names)} inputs")
    if p.num_outputs - p.num_out_data != len(p.func_var_locs):
        raise OpAttributeError("_while_loop: num_outputs - num_out_data must equal the number "
                               f"of loop variables (func_var_locs={list(p.func_var_locs)})")


def _while_loop(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    cond, func = bodies(p, "_while_loop", 2)
    _while_locs(p, len(inputs), cond, func)
    cond_in = [inputs[k] for k in p.cond_input_locs]
    func_in = [inputs[k] for k in p.func_input_locs]
    # which cond input each loop variable also is (MXNet's oi_map: the last match)
    oi_map = []
    for v in p.func_var_locs:
        pos = p.func_input_locs[v]
        hits = [j for j, c in enumerate(p.cond_input_locs) if c == pos]
        oi_map.append(hits[-1] if hits else -1)
    nod = p.num_out_data
    stacked: list[list[np.ndarray]] = [[] for _ in range(nod)]
    steps = 0
    while steps < p.max_iterations and scalar_true(cond.run(cond_in)[0], "_while_loop"):
        res = func.run(func_in)
        for k in range(nod):
            stacked[k].append(res[k])
        for i, v in enumerate(p.func_var_locs):
            func_in[v] = res[nod + i]
            if oi_map[i] != -1:
                cond_in[oi_map[i]] = res[nod + i]
        steps += 1
    outs = []
    if nod and steps == 0:
        sub_shapes = func.shapes([x.shape for x in func_in])[1]
        sub_types = func.types([x.dtype for x in func_in])[1]
    for k in range(nod):
        if steps:
            step = np.stack(stacked[k])
            pad = np.zeros((p.max_iterations - steps,) + step.shape[1:], step.dtype)
            outs.append(np.concatenate([step, pad]) if steps < p.max_iterations else step)
        else:
            shape = sub_shapes[k]
            outs.append(np.zeros((p.max_iterations,) + tuple(shape or ()), sub_types[k]))
    return outs + [func_in[v] for v in p.func_var_locs]


def _while_shape(p: Any, ins: list) -> tuple[list, list]:
    cond, func = bodies(p, "_while_loop", 2)
    _while_locs(p, len(ins), cond, func)
    sub_ins, sub_outs = func.shapes([ins[k] for k in p.func_input_locs])
    new = list(ins)
    for k, s in zip(p.func_input_locs, sub_ins):
        new[k] = merge(new[k], s)
    nod = p.num_out_data
    out_data = [None if s is None else (p.max_iterations,) + tuple(s) for s in sub_outs[:nod]]
    out_vars = [merge(new[p.func_input_locs[v]], o) for v, o in
                zip(p.func_var_locs, sub_outs[nod:])]
    return new, out_data + out_vars


def _while_type(p: Any, ins: list) -> tuple[list, list]:
    cond, func = bodies(p, "_while_loop", 2)
    sub_ins, sub_outs = func.types([ins[k] for k in p.func_input_locs])
    new = list(ins)
    for k, t in zip(p.func_input_locs, sub_ins):
        new[k] = new[k] if new[k] is not None else t
    return new, list(sub_outs)


# --- _cond ------------------------------------------------------------------------------------
def _cond_locs(p: Any, n_in: int, subs: tuple) -> None:
    for name, sub in zip(("cond_input_locs", "then_input_locs", "else_input_locs"), subs):
        locs = p.get(name)
        _check_locs(name, locs, n_in, "_cond")
        if len(locs) != len(sub.input_names):
            raise OpAttributeError(f"_cond: {name} has {len(locs)} entries for a subgraph of "
                                   f"{len(sub.input_names)} inputs")


def _cond(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    subs = bodies(p, "_cond", 3)
    _cond_locs(p, len(inputs), subs)
    pred = subs[0].run([inputs[k] for k in p.cond_input_locs])[0]
    if scalar_true(pred, "_cond"):
        return subs[1].run([inputs[k] for k in p.then_input_locs])
    return subs[2].run([inputs[k] for k in p.else_input_locs])


def _cond_shape(p: Any, ins: list) -> tuple[list, list]:
    subs = bodies(p, "_cond", 3)
    _cond_locs(p, len(ins), subs)
    new = list(ins)
    outs: list = [None] * p.num_outputs
    for name, sub in zip(("cond_input_locs", "then_input_locs", "else_input_locs"), subs):
        locs = p.get(name)
        sub_ins, sub_outs = sub.shapes([new[k] for k in locs])
        for k, s in zip(locs, sub_ins):
            new[k] = merge(new[k], s)
        if sub is subs[1]:
            outs = list(sub_outs)
        elif sub is subs[2]:  # branches of other shapes: known only once run, as in MXNet
            outs = [_merge_or_unknown(a, b) for a, b in zip(outs, sub_outs)]
    return new, outs


def _merge_or_unknown(a: Any, b: Any) -> Any:
    try:
        return merge(a, b)
    except ShapeError:
        return None


def _cond_type(p: Any, ins: list) -> tuple[list, list]:
    subs = bodies(p, "_cond", 3)
    sub_ins, then_out = subs[1].types([ins[k] for k in p.then_input_locs])
    _, else_out = subs[2].types([ins[k] for k in p.else_input_locs])
    new = list(ins)
    for k, t in zip(p.then_input_locs, sub_ins):
        new[k] = new[k] if new[k] is not None else t
    return new, [a if a is not None else b for a, b in zip(then_out, else_out)]


def _data_names(n_graphs: int):
    return lambda p: [f"data{i}" for i in range(max(0, p.num_args - n_graphs))]


def _rule(name: str, fields: tuple[str, ...], n_graphs: int) -> Any:
    """MXNet's FGradient: the ``_backward_<name>`` node (flow_grad.py) on the output
    gradients and the inputs, with this node's subgraphs attached (``Subgraph.call``)."""
    def rule(F: Any, p: Any, inputs: list, outputs: list, ograds: list) -> list:
        subs = bodies(p, f"_{name}", n_graphs)
        attrs = {k: p.get(k) for k in fields}
        return list(subs[0].call(F, f"_backward_{name}", p, attrs, list(ograds) + list(inputs)))
    return rule


#: MXNet's ForeachParam, WhileLoopParam and CondParam (declaration order)
FOREACH_PARAMS = {"num_args": Int(), "num_outputs": Int(), "num_out_data": Int(),
                  "in_state_locs": Shape(), "in_data_locs": Shape(), "remain_locs": Shape()}
WHILE_LOOP_PARAMS = {"num_args": Int(), "num_outputs": Int(), "num_out_data": Int(),
                     "max_iterations": Int(), "cond_input_locs": Shape(),
                     "func_input_locs": Shape(), "func_var_locs": Shape()}
COND_PARAMS = {"num_args": Int(), "num_outputs": Int(), "cond_input_locs": Shape(),
               "then_input_locs": Shape(), "else_input_locs": Shape()}

register(OpDef(
    "_foreach", params=FOREACH_PARAMS,
    compute=_foreach, inputs=_data_names(1), variadic="num_args",
    num_outputs=lambda p: p.num_outputs, infer_shape=_foreach_shape, infer_type=_foreach_type,
    gradient=_rule("foreach", tuple(FOREACH_PARAMS), 1),
    doc="Run a for loop over an NDArray with user-defined computation (MXNet's ``_foreach``; "
        "use ``sym.contrib.foreach``)."))

register(OpDef(
    "_while_loop", params=WHILE_LOOP_PARAMS,
    compute=_while_loop, inputs=_data_names(2), variadic="num_args",
    num_outputs=lambda p: p.num_outputs, infer_shape=_while_shape, infer_type=_while_type,
    gradient=_rule("while_loop", tuple(WHILE_LOOP_PARAMS), 2),
    doc="Run a while loop with user-defined condition and computation (MXNet's "
        "``_while_loop``; use ``sym.contrib.while_loop``)."))

register(OpDef(
    "_cond", params=COND_PARAMS,
    compute=_cond, inputs=_data_names(3), variadic="num_args",
    num_outputs=lambda p: p.num_outputs, infer_shape=_cond_shape, infer_type=_cond_type,
    gradient=_rule("cond", tuple(COND_PARAMS), 3),
    doc="Run an if-then-else with user-defined condition and computation (MXNet's ``_cond``; "
        "use ``sym.contrib.cond``)."))

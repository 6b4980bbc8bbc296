"""The gradients of ``_foreach``, ``_while_loop`` and ``_cond`` (MXNet's ``ForeachGradient``,
``WhileLoopGradient``, ``CondGradient``): ``_backward_foreach``, ``_backward_while_loop`` and
``_backward_cond``, which carry the forward node's subgraphs.

Inputs: the output gradients (one per forward output), then the forward inputs (MXNet's
backward nodes also take the forward outputs and keep state from the forward run; these run
the forward loop again instead). Outputs: one gradient per forward input. Each step's
gradient is the body's vector-Jacobian product (``Subgraph.vjp``: the body's own backward
graph), taken in reverse step order with the states' gradients carried back; inputs read by
every step (``remain``) sum their gradients over the steps. A ``_while_loop``'s condition is
not differentiated; its step outputs' gradients past the last step are ignored (those rows
are padding). A ``_cond`` differentiates the branch its condition selected; inputs only the
other branch reads get zeros.

The forward ops' rules build these nodes through ``F`` with the subgraphs attached
(``Subgraph.call``), so the imperative tape and the backward graphs of hybridized blocks and
executors both use them. They run on the numpy executor (no ONNX lowering).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import OpDef, register
from .flow import (
    COND_PARAMS,
    FOREACH_PARAMS,
    WHILE_LOOP_PARAMS,
    bodies,
    foreach_args,
    foreach_split,
    scalar_true,
)

__all__: list[str] = []

_NO_ONNX = ("the backward of a control-flow op runs its subgraph's backward graph per step; "
            "training steps through it run on the numpy executor")
_NO_GRAD = "MXNet 1.9.1 registers no gradient for its _backward_ control-flow ops"


def _zeros(x: np.ndarray) -> np.ndarray:
    return np.zeros_like(np.asarray(x))


def _add(acc: np.ndarray, g: Any) -> None:
    if g is not None:
        acc += np.asarray(g, dtype=acc.dtype)


def _backward_foreach(p: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    (body,) = bodies(p, "_foreach", 1)
    n_out, nod = p.num_outputs, p.num_out_data
    ograds, inputs = arrays[:n_out], arrays[n_out:]
    data, states, remain = foreach_split(p, inputs)
    length = data[0].shape[0]
    history = [list(states)]
    for i in range(length - 1):
        res = body.run(foreach_args(p, body, [d[i] for d in data], history[-1], remain))
        history.append(res[nod:])
    g_data = [_zeros(d) for d in data]
    g_remain = [_zeros(r) for r in remain]
    g_states = [np.array(ograds[nod + k], dtype=states[k].dtype) for k in range(len(states))]
    for i in reversed(range(length)):
        args = foreach_args(p, body, [d[i] for d in data], history[i], remain)
        gin = body.vjp(args, [ograds[k][i] for k in range(nod)] + g_states)
        for k, loc in enumerate(p.in_data_locs):
            if gin[loc] is not None:
                g_data[k][i] = gin[loc]
        g_states = [_zeros(s) if gin[loc] is None else gin[loc]
                    for s, loc in zip(states, p.in_state_locs)]
        for k, loc in enumerate(p.remain_locs):
            _add(g_remain[k], gin[loc])
    return g_data + g_states + g_remain


def _backward_while_loop(p: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    cond, func = bodies(p, "_while_loop", 2)
    n_out, nod = p.num_outputs, p.num_out_data
    ograds, inputs = arrays[:n_out], arrays[n_out:]
    cond_in = [inputs[k] for k in p.cond_input_locs]
    func_in = [inputs[k] for k in p.func_input_locs]
    oi_map = []
    for v in p.func_var_locs:
        hits = [j for j, c in enumerate(p.cond_input_locs) if c == p.func_input_locs[v]]
        oi_map.append(hits[-1] if hits else -1)
    history = []
    while len(history) < p.max_iterations and scalar_true(cond.run(cond_in)[0], "_while_loop"):
        history.append(list(func_in))
        res = func.run(func_in)
        for i, v in enumerate(p.func_var_locs):
            func_in[v] = res[nod + i]
            if oi_map[i] != -1:
                cond_in[oi_map[i]] = res[nod + i]
    grads = [_zeros(x) for x in inputs]
    g_vars = [np.array(ograds[nod + i], dtype=np.asarray(func_in[v]).dtype)
              for i, v in enumerate(p.func_var_locs)]
    var_set = set(p.func_var_locs)
    for t in reversed(range(len(history))):
        gin = func.vjp(history[t], [ograds[k][t] for k in range(nod)] + g_vars)
        g_vars = [_zeros(history[t][v]) if gin[v] is None else gin[v] for v in p.func_var_locs]
        for j, g in enumerate(gin):
            if j not in var_set:
                _add(grads[p.func_input_locs[j]], g)
    for v, g in zip(p.func_var_locs, g_vars):
        _add(grads[p.func_input_locs[v]], g)
    return grads


def _backward_cond(p: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    cond, then_g, else_g = bodies(p, "_cond", 3)
    n_out = p.num_outputs
    ograds, inputs = arrays[:n_out], arrays[n_out:]
    taken = scalar_true(cond.run([inputs[k] for k in p.cond_input_locs])[0], "_cond")
    branch, locs = (then_g, p.then_input_locs) if taken else (else_g, p.else_input_locs)
    grads = [_zeros(x) for x in inputs]
    for k, g in zip(locs, branch.vjp([inputs[k] for k in locs], list(ograds))):
        _add(grads[k], g)
    return grads


def _grads_shape(p: Any, ins: list) -> tuple[list, list]:
    return ins, list(ins[p.num_outputs:])


def _grads_type(p: Any, ins: list) -> tuple[list, list]:
    return ins, list(ins[p.num_outputs:])


def _backward_op(name: str, compute: Any, params: dict, n_graphs: int) -> None:
    register(OpDef(
        f"_backward_{name}", params=params, compute=compute,
        inputs=lambda p: ([f"ograd{i}" for i in range(p.num_outputs)]
                          + [f"data{i}" for i in range(p.num_args - n_graphs)]),
        variadic="num_args", num_outputs=lambda p: p.num_args - n_graphs,
        infer_shape=_grads_shape, infer_type=_grads_type, no_onnx=_NO_ONNX,
        no_gradient=_NO_GRAD,
        doc=f"The gradient of ``_{name}`` (MXNet's ``_backward_{name}``): inputs are the "
            "output gradients, then the forward inputs; outputs the input gradients."))


for _name, _fn, _params, _n in (("foreach", _backward_foreach, FOREACH_PARAMS, 1),
                                ("while_loop", _backward_while_loop, WHILE_LOOP_PARAMS, 2),
                                ("cond", _backward_cond, COND_PARAMS, 3)):
    _backward_op(_name, _fn, _params, _n)

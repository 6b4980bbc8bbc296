"""Import handlers for ONNX control flow: If, Loop, Scan.

An ``If`` with a constant condition and a short ``Loop`` with a constant trip count whose body
passes its condition through are unrolled during folding (:mod:`.._import_unroll`: the taken
branch; the body per step, its iteration number folding to a constant). What reaches these
handlers maps onto MXNet 1.9.1's control-flow ops, each body imported as a subgraph
(:mod:`.._import_body`):

* ``If`` -> ``_cond`` (the condition through an identity subgraph; branches without inputs);
* ``Scan`` (opset 9+) -> ``_foreach`` over axis 0: scan inputs on another axis are transposed
  first, reverse directions reversed, and scan outputs moved and reversed back;
* ``Loop`` -> ``_while_loop`` whose loop variables are the iteration count, the condition
  and the carried values; the trip count bounds it (``max_iterations`` when constant, else a
  comparison in the condition subgraph). A Loop with scan outputs whose step count is not
  known while importing is refused: ``_while_loop`` pads step outputs to ``max_iterations``
  rows, where ONNX's have one row per step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...symbol import Group, Symbol
from ...symbol._control import control_node
from ...symbol.symbol import invoke, var
from .._import_body import Body, import_body
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_MAX_ITERATIONS = 2**31 - 1  # MXNet's max_iterations is an int


class _Inputs:
    """The op's inputs: each enclosing-graph entry once, in order of first use."""

    def __init__(self) -> None:
        self.syms: list[Symbol] = []
        self._at: dict[tuple[int, int], int] = {}

    def add(self, sym: Symbol) -> int:
        node, idx = sym._outputs[0]
        key = (id(node), idx)
        if key not in self._at:
            self._at[key] = len(self.syms)
            self.syms.append(sym)
        return self._at[key]


def _op(name: str, *args: Symbol, **kw: Any) -> Symbol:
    return invoke(name, args, kw)


def _keep_reading(sub_names: set[str], body: Body, name: str, new: Symbol) -> Symbol:
    """``new``, made to read the body input ``name`` when the body does not (MXNet's loop ops
    find a loop variable among the subgraph's inputs): ``where(zeros_like(v), v, new)``."""
    if name in sub_names:
        return new
    v = body.var(name)
    return _op("where", _op("zeros_like", v), v, new)


def _float(x: Symbol) -> Symbol:
    """A condition as MXNet's control-flow ops read it: float32 (their type rules give the
    condition subgraph's output float32; a bool or int64 one fails MXNet 1.9.1's check)."""
    return _op("Cast", x, dtype="float32")


@importer("If", since=1)
def if_(ctx: ImportContext, cond: Value, *, then_branch: Any, else_branch: Any,
        **_: object) -> object:
    then_b = import_body(ctx, then_branch, [], "then_branch")
    else_b = import_body(ctx, else_branch, [], "else_branch")
    n = len(then_b.symbol._outputs)
    if len(else_b.symbol._outputs) != n:
        raise ctx.fail("its branches return different numbers of outputs")
    ins = _Inputs()
    cond_loc = ins.add(_float(cond.sym))
    pred = Group([_op("_copy", var("cond"))])
    locs = [[ins.add(b.outer[name]) for name in b.symbol.list_inputs()]
            for b in (then_b, else_b)]
    return control_node("_cond", [pred, then_b.symbol, else_b.symbol], ins.syms, {
        "num_args": len(ins.syms) + 3, "num_outputs": n, "cond_input_locs": [cond_loc],
        "then_input_locs": locs[0], "else_input_locs": locs[1]}, name=ctx.node_name)


def _axis(ax: int, rank: int | None, ctx: ImportContext, what: str) -> int:
    if rank is None:
        raise ctx.fail(f"the rank of {what} is unknown")
    if not -rank <= ax < rank:
        raise ctx.fail(f"axis {ax} of {what} is out of range for rank {rank}")
    return ax % rank


@importer("Scan", since=9)
def scan(ctx: ImportContext, *inputs: Value, body: Any, num_scan_inputs: int,
         scan_input_axes: list | None = None, scan_input_directions: list | None = None,
         scan_output_axes: list | None = None, scan_output_directions: list | None = None,
         **_: object) -> object:
    n_states = len(inputs) - num_scan_inputs
    states, scans = inputs[:n_states], inputs[n_states:]
    in_axes = list(scan_input_axes or [0] * num_scan_inputs)
    in_dirs = list(scan_input_directions or [0] * num_scan_inputs)
    types: list[Any] = [(s.dtype, s.shape) for s in states]
    data = []
    for k, v in enumerate(scans):
        ax = _axis(in_axes[k], v.rank, ctx, f"scan input {k}")
        x = v.sym
        if ax:
            x = _op("transpose", x, axes=(ax, *[d for d in range(v.rank) if d != ax]))
        if in_dirs[k]:
            x = _op("reverse", x, axis=0)
        data.append(x)
        types.append((v.dtype, tuple(d for i, d in enumerate(v.shape) if i != ax)))
    b = import_body(ctx, body, types, "body")
    outs = b.outputs()
    n_out = len(outs) - n_states
    names = set(b.symbol.list_inputs())
    new_states = [_keep_reading(names, b, b.formal[k], outs[k]) for k in range(n_states)]
    sub = Group(outs[n_states:] + new_states)
    sub_names = sub.list_inputs()
    data_locs, data_in = [], []
    for k, x in enumerate(data):
        if b.formal[n_states + k] in sub_names:
            data_locs.append(sub_names.index(b.formal[n_states + k]))
            data_in.append(x)
    if not data_locs:
        raise ctx.fail("its body reads none of its scan inputs")
    remain = [(i, b.outer[n]) for i, n in enumerate(sub_names) if n in b.outer]
    op_inputs = data_in + [s.sym for s in states] + [s for _, s in remain]
    res = control_node("_foreach", [sub], op_inputs, {
        "num_args": len(op_inputs) + 1, "num_outputs": n_out + n_states, "num_out_data": n_out,
        "in_state_locs": [sub_names.index(b.formal[k]) for k in range(n_states)],
        "in_data_locs": data_locs, "remain_locs": [i for i, _ in remain]},
        name=ctx.node_name)
    out_axes = list(scan_output_axes or [0] * n_out)
    out_dirs = list(scan_output_directions or [0] * n_out)
    stacked = []
    for k, y in enumerate(res[:n_out]):
        if out_dirs[k]:
            y = _op("reverse", y, axis=0)
        ax = out_axes[k]
        if ax:
            rank = _scan_output_rank(ctx, n_states + k, body.output[n_states + k])
            ax = _axis(ax, rank, ctx, f"scan output {k}")
        if ax:
            y = _op("transpose", y, axes=(*range(1, ax + 1), 0, *range(ax + 1, rank)))
        stacked.append(y)
    return list(res[n_out:]) + stacked


def _scan_output_rank(ctx: ImportContext, i: int, body_out: Any) -> int | None:
    """The rank of Scan output ``i`` (a stacked step output): ONNX shape inference's, else
    the body output's declared rank plus one."""
    shape = ctx.out_shape(i)
    if shape is not None:
        return len(shape)
    t = body_out.type.tensor_type
    if t.HasField("shape"):
        return len(t.shape.dim) + 1
    return None


@importer("Loop", since=1)
def loop(ctx: ImportContext, trip: Value | None = None, cond: Value | None = None,
         *carried: Value, body: Any, **_: object) -> object:
    n_scan = len(body.output) - 1 - len(carried)
    if n_scan:  # the ONNX backend may specialize on these inputs, then it unrolls
        need = [v for v in (trip, cond) if v is not None and v.const is None]
        ctx.needs_const.update(v.name for v in need)
        what = f"the trip count {trip.name!r} must fold to a constant" if trip is not None \
            and trip.const is None else "it needs a constant trip count"
        raise ctx.fail(f"a Loop with scan outputs is imported by unrolling: {what}, and "
                       "only a loop whose body passes its condition through is unrolled "
                       "(MXNet's _while_loop pads step outputs to max_iterations rows, where "
                       "ONNX's have one row per step run)")
    bound = None
    max_iterations = _MAX_ITERATIONS
    if trip is not None and trip.const is not None:
        m = int(np.asarray(trip.const).reshape(-1)[0])
        if m <= 0:
            return [v.sym for v in carried]
        max_iterations = min(m, _MAX_ITERATIONS)
    elif trip is not None:
        bound = trip.sym
    b = import_body(ctx, body, [(np.int64, (1,)), (np.float32, (1,))]
                    + [(v.dtype, v.shape) for v in carried], "body")
    outs = b.outputs()
    names = set(b.symbol.list_inputs())
    i_next = _op("_plus_scalar", b.var(b.formal[0]), scalar=1)
    c_next = _float(outs[0])
    if b.formal[1] not in names:  # read the condition input too (0 or 1), whatever its shape
        c_in = b.var(b.formal[1])
        c_next = _op("broadcast_logical_and", c_next,
                     _op("broadcast_logical_or", c_in, _op("ones_like", c_in)))
    new_vars = [_keep_reading(names, b, b.formal[2 + k], outs[1 + k])
                for k in range(len(carried))]
    func = Group([i_next, c_next] + new_vars)
    i_var, c_var = var("i"), var("cond")
    test = c_var if bound is None else _op("broadcast_mul", c_var, _float(
        _op("broadcast_lesser", i_var, var("trip_count"))))
    cond_g = Group([_op("_copy", test)])
    ins = _Inputs()
    first = [ctx.const(np.zeros(1, np.int64), np.int64, "iter"),
             _float(cond.sym) if cond is not None else ctx.const(np.ones(1), np.float32,
                                                                 "cond")]
    loop_locs = [ins.add(s) for s in first + [v.sym for v in carried]]
    local = {"i": loop_locs[0], "cond": loop_locs[1]}
    if bound is not None:
        local["trip_count"] = ins.add(bound)
    cond_locs = [local[n] for n in cond_g.list_inputs()]
    func_names = func.list_inputs()
    formal_at = dict(zip(b.formal, loop_locs))
    func_locs = [formal_at[n] if n in formal_at else ins.add(b.outer[n]) for n in func_names]
    var_locs = [func_names.index(n) for n in b.formal]
    res = control_node("_while_loop", [cond_g, func], ins.syms, {
        "num_args": len(ins.syms) + 2, "num_outputs": 2 + len(carried), "num_out_data": 0,
        "max_iterations": max_iterations, "cond_input_locs": cond_locs,
        "func_input_locs": func_locs, "func_var_locs": var_locs}, name=ctx.node_name)
    return list(res[2:])


@importer("Scan", since=8)
def scan8(ctx: ImportContext, seq_lens: Value | None, *inputs: Value, body: Any,
          num_scan_inputs: int, directions: list | None = None, **_: object) -> object:
    """Scan-8: a batch axis first on every state and scan input (the scan axis is 1), the body
    per batch element. A ``_foreach`` over the batch whose body is a ``_foreach`` over the
    sequence; ``sequence_lens`` must be absent or the full length everywhere."""
    n_states = len(inputs) - num_scan_inputs
    states, scans = inputs[:n_states], inputs[n_states:]
    if any(v.rank is None for v in inputs):
        raise ctx.fail("the ranks of its inputs are unknown")
    if seq_lens is not None:
        lengths = {s.shape[1] for s in scans}
        if seq_lens.const is None or len(lengths) != 1 or not isinstance(
                next(iter(lengths)), int) or set(np.asarray(seq_lens.const).reshape(-1)) \
                != lengths:
            if seq_lens.const is None:
                ctx.needs_const.add(seq_lens.name)
            raise ctx.fail("sequence_lens shorter than the sequences (or not constant) has no "
                           "MXNet _foreach equivalent")
    dirs = list(directions or [0] * num_scan_inputs)
    types = ([(s.dtype, s.shape[1:]) for s in states]
             + [(v.dtype, v.shape[2:]) for v in scans])
    b = import_body(ctx, body, types, "body")
    outs = b.outputs()
    n_out = len(outs) - n_states
    names = set(b.symbol.list_inputs())
    inner_sub = Group(outs[n_states:] + [_keep_reading(names, b, b.formal[k], outs[k])
                                         for k in range(n_states)])
    inner_names = inner_sub.list_inputs()
    # the outer body: one batch element of each state and scan input, and the outer tensors
    st_vars = [var(f"state{k}") for k in range(n_states)]
    sc_vars = [var(f"scan{k}") for k in range(num_scan_inputs)]
    data_locs, data_in = [], []
    for k, v in enumerate(sc_vars):
        if b.formal[n_states + k] in inner_names:
            data_locs.append(inner_names.index(b.formal[n_states + k]))
            data_in.append(_op("reverse", v, axis=0) if dirs[k] else v)
    if not data_locs:
        raise ctx.fail("its body reads none of its scan inputs")
    remain = [(i, n) for i, n in enumerate(inner_names) if n in b.outer]
    remain_vars = [var(f"outer{k}") for k in range(len(remain))]
    inner = control_node("_foreach", [inner_sub], data_in + st_vars + remain_vars, {
        "num_args": len(data_in) + n_states + len(remain) + 1,
        "num_outputs": n_out + n_states, "num_out_data": n_out,
        "in_state_locs": [inner_names.index(b.formal[k]) for k in range(n_states)],
        "in_data_locs": data_locs, "remain_locs": [i for i, _ in remain]})
    outer_sub = Group(list(inner[n_out:]) + list(inner[:n_out]))
    outer_names = outer_sub.list_inputs()
    by_var = {f"state{k}": s.sym for k, s in enumerate(states)}
    by_var.update({f"scan{k}": v.sym for k, v in enumerate(scans)})
    by_var.update({f"outer{k}": b.outer[n] for k, (_, n) in enumerate(remain)})
    data = [(i, n) for i, n in enumerate(outer_names) if not n.startswith("outer")]
    rest = [(i, n) for i, n in enumerate(outer_names) if n.startswith("outer")]
    op_inputs = [by_var[n] for _, n in data] + [by_var[n] for _, n in rest]
    return control_node("_foreach", [outer_sub], op_inputs, {
        "num_args": len(op_inputs) + 1, "num_outputs": n_states + n_out,
        "num_out_data": n_states + n_out, "in_state_locs": [],
        "in_data_locs": [i for i, _ in data], "remain_locs": [i for i, _ in rest]},
        name=ctx.node_name)

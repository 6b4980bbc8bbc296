"""ONNX lowerings of ``_foreach`` (Scan), ``_while_loop`` (Loop) and ``_cond`` (If).

Each subgraph becomes a body through ``ctx.body`` (the exporter converts it at the same opset
and renames its tensors uniquely); subgraph inputs that are neither loop data nor states read
the op's input tensors from the enclosing scope. A condition subgraph's output (MXNet reads its
one element as a bool) is ``Squeeze``'d to a scalar and ``Cast`` to bool.

* ``_foreach`` -> ``Scan``: initial states, then the data arrays (``num_scan_inputs``); the
  body declares states then data slices and returns new states then step outputs, so the
  Scan outputs are the final states then the stacked outputs.
* ``_while_loop`` -> ``Loop`` with trip count ``max_iterations`` and the condition evaluated
  before the loop; the body runs the loop function, then the condition on the new loop
  variables. Stacked step outputs have one row per step run and are padded with zeros to
  ``max_iterations`` rows, as the numpy compute gives them.
* ``_cond`` -> ``If``: the condition inlined before it, each branch a body without inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lowering import LoweringContext, lowering

__all__: list[str] = []


def _inline(ctx: LoweringContext, graph: Any) -> list[str]:
    """Emit a body's nodes into the enclosing graph (its inputs all read outer tensors)."""
    from onnx import numpy_helper

    for t in graph.initializer:
        ctx.initializers[t.name] = numpy_helper.to_array(t)
    ctx.nodes.extend(graph.node)
    return [o.name for o in graph.output]


def _bool_scalar(ctx: LoweringContext, tensor: str, nodes: list | None = None) -> str:
    """MXNet's ``as_bool_scalar``: the one element, as a bool scalar (``Squeeze`` of every
    axis, then ``Cast``); into ``nodes`` for a body, else into the graph."""
    from onnx import TensorProto, helper

    if nodes is None:
        return ctx.make("Cast", [ctx.make("Squeeze", [tensor])], to=TensorProto.BOOL)
    flat, out = ctx.fresh("cond_scalar"), ctx.fresh("cond_bool")
    nodes.append(helper.make_node("Squeeze", [tensor], [flat]))
    nodes.append(helper.make_node("Cast", [flat], [out], to=TensorProto.BOOL))
    return out


def _locs_view(ctx: LoweringContext, locs: Any) -> tuple[list, list, list]:
    return ([ctx.in_shapes[k] for k in locs], [ctx.in_dtypes[k] for k in locs],
            [ctx.in_dynamic[k] for k in locs])


@lowering("_foreach")
def _foreach_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    (body,) = p.subgraphs
    nd, ns, nod = len(p.in_data_locs), len(p.in_state_locs), p.num_out_data
    n_sub = len(body.input_names)
    shapes: list[Any] = [None] * n_sub
    dts: list[Any] = [None] * n_sub
    dyn: list[Any] = [()] * n_sub
    outer = {}
    for k, loc in enumerate(p.in_data_locs):
        if ctx.in_shapes[k] is None:
            raise ctx.fail(f"the shape of data input {k} is unknown")
        shapes[loc], dts[loc] = tuple(ctx.in_shapes[k][1:]), ctx.in_dtypes[k]
        dyn[loc] = tuple(ctx.in_dynamic[k][1:])
    for k, loc in enumerate(list(p.in_state_locs) + list(p.remain_locs)):
        j = nd + k
        shapes[loc], dts[loc], dyn[loc] = ctx.in_shapes[j], ctx.in_dtypes[j], ctx.in_dynamic[j]
        if k >= ns:
            outer[loc] = ctx.inputs[j]
    graph = ctx.body(body.symbol, list(p.in_state_locs) + list(p.in_data_locs), outer, shapes,
                     dts, dyn)
    outs = list(graph.output)
    del graph.output[:]
    graph.output.extend(outs[nod:] + outs[:nod])
    ctx.make("Scan", ctx.inputs[nd:nd + ns] + ctx.inputs[:nd],
             outputs=ctx.outputs[nod:] + ctx.outputs[:nod], body=graph, num_scan_inputs=nd)


@lowering("_while_loop")
def _while_loop_onnx(ctx: LoweringContext) -> None:
    from onnx import TensorProto, helper

    p = ctx.params
    cond, func = p.subgraphs
    nod = p.num_out_data
    cin, fin = list(p.cond_input_locs), list(p.func_input_locs)
    first = ctx.body(cond.symbol, [], {j: ctx.inputs[k] for j, k in enumerate(cin)},
                     *_locs_view(ctx, cin))
    c0 = _bool_scalar(ctx, _inline(ctx, first)[0])
    var_pos = list(p.func_var_locs)
    outer = {j: ctx.inputs[k] for j, k in enumerate(fin) if j not in var_pos}
    fbody = ctx.body(func.symbol, var_pos, outer, *_locs_view(ctx, fin))
    new_vars = [o.name for o in fbody.output[nod:]]
    # the condition again, on the new loop variables
    by_input = {fin[v]: new_vars[i] for i, v in enumerate(var_pos)}
    again = ctx.body(cond.symbol, [], {j: by_input.get(k, ctx.inputs[k])
                                       for j, k in enumerate(cin)}, *_locs_view(ctx, cin))
    nodes = list(fbody.node) + list(again.node)
    c_next = _bool_scalar(ctx, again.output[0].name, nodes)
    it, c_in = ctx.fresh("iter"), ctx.fresh("cond_in")
    graph = helper.make_graph(
        nodes, ctx.fresh("while_body"),
        [helper.make_tensor_value_info(it, TensorProto.INT64, []),
         helper.make_tensor_value_info(c_in, TensorProto.BOOL, [])] + list(fbody.input),
        [helper.make_tensor_value_info(c_next, TensorProto.BOOL, [])]
        + list(fbody.output[nod:]) + list(fbody.output[:nod]),
        initializer=list(fbody.initializer) + list(again.initializer))
    stacked = [ctx.fresh("steps") for _ in range(nod)]
    trips = ctx.const(np.array(p.max_iterations, np.int64), "max_iterations")
    ctx.make("Loop", [trips, c0] + [ctx.inputs[fin[v]] for v in var_pos],
             outputs=ctx.outputs[nod:] + stacked, body=graph)
    for k, s in enumerate(stacked):  # pad to max_iterations rows with zeros
        shape = ctx.out_shapes[k]
        if shape is None:
            raise ctx.fail(f"the shape of step output {k} is unknown")
        rows = ctx.make("Slice", [ctx.make("Shape", [s]), ctx.ints([0]), ctx.ints([1])])
        more = ctx.make("Sub", [ctx.ints([p.max_iterations]), rows])
        pads = ctx.make("Concat", [ctx.ints([0] * len(shape)), more,
                                   ctx.ints([0] * (len(shape) - 1))], axis=0)
        ctx.make("Pad", [s, pads], outputs=[ctx.outputs[k]])


@lowering("_cond")
def _cond_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    cond, then_g, else_g = p.subgraphs
    bodies = []
    for sub, locs in ((cond, p.cond_input_locs), (then_g, p.then_input_locs),
                      (else_g, p.else_input_locs)):
        bodies.append(ctx.body(sub.symbol, [], {j: ctx.inputs[k] for j, k in enumerate(locs)},
                               *_locs_view(ctx, locs)))
    c0 = _bool_scalar(ctx, _inline(ctx, bodies[0])[0])
    ctx.make("If", [c0], outputs=list(ctx.outputs), then_branch=bodies[1],
             else_branch=bodies[2])

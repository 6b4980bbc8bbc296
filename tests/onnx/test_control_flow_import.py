"""ONNX If / Scan / Loop whose iterations are known only at run time, imported onto MXNet
1.9.1's _cond / _foreach / _while_loop (gluonport/onnx/importers/control.py,
_import_body.py), against onnxruntime on the same model (the independent reference); and
gluonport's own Scan/Loop/If exports imported back. Tolerances 1e-5 relative, 1e-6 absolute
(float32 sums in another order)."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import gluonport as mx
from gluonport.errors import UnsupportedOpError
from gluonport.onnx import export_model
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import make_model, vi

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
_model = partial(make_model, opset=16, name="control")


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


def _ops(sym):
    return {n["op"] for n in json.loads(sym.tojson())["nodes"]}


def _run_imported(model, feeds):
    g = import_graph(model)
    args = {k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}
    args.update({k: mx.nd.array(v, dtype=v.dtype) for k, v in g.arg_params.items()})
    outs = g.sym.bind(mx.cpu(), args, aux_states={
        k: mx.nd.array(v, dtype=v.dtype) for k, v in g.aux_params.items()}).forward()
    return g, [o.asnumpy() for o in outs]


def _check(model, feeds, op):
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    g, got = _run_imported(model, feeds)
    if op is None:  # unrolled: plain ops only
        assert not _ops(g.sym) & {"_foreach", "_while_loop", "_cond"}
    else:
        assert op in _ops(g.sym)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.reshape(b.shape), b, rtol=1e-5, atol=1e-6)
    return g


def _if_model():
    """y = sum(x) > 0 ? x * w : -x (w an initializer read by the branch)."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"])], "then", [],
                             [vi("t", F, ["N", 3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [vi("e", F, ["N", 3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             _const("zero", np.array(0, np.float32)),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    w = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "w")
    return _model(nodes, [vi("x", F, ["N", 3])], [vi("y", F, ["N", 3])], [w])


@pytest.mark.parametrize("sign", [1, -1])
def test_if_on_a_run_time_condition_is_cond(sign):
    x = sign * np.abs(np.random.default_rng(0).standard_normal((2, 3))).astype(np.float32)
    _check(_if_model(), {"x": x}, "_cond")


def _scan_model():
    """A running sum over axis 1 of x (reverse) and a product over y; outputs stacked on
    axis 0 and (reversed) on the last axis; the sequence length T is symbolic."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
         helper.make_node("Mul", ["p_in", "yt"], ["p_out"]),
         helper.make_node("Sub", ["s_out", "p_out"], ["d"]),
         helper.make_node("Mul", ["s_out", "k"], ["so"])],
        "body", [vi("s_in", F, [2]), vi("p_in", F, [2]), vi("xt", F, [2]), vi("yt", F, [2])],
        [vi("s_out", F, [2]), vi("p_out", F, [2]), vi("d", F, [2]), vi("so", F, [2])])
    node = helper.make_node("Scan", ["s0", "p0", "x", "y"], ["s", "p", "ds", "sos"],
                            body=body, num_scan_inputs=2, scan_input_axes=[1, 0],
                            scan_input_directions=[1, 0], scan_output_axes=[0, -1],
                            scan_output_directions=[0, 1])
    k = numpy_helper.from_array(np.array([2, -1], np.float32), "k")
    return _model([node], [vi("s0", F, [2]), vi("p0", F, [2]), vi("x", F, [2, "T"]),
                           vi("y", F, ["T", 2])],
                  [vi("s", F, [2]), vi("p", F, [2]), vi("ds", F, ["T", 2]),
                   vi("sos", F, [2, "T"])], [k])


@pytest.mark.parametrize("length", [5, 1])
def test_scan_of_run_time_length_is_foreach(length):
    rng = np.random.default_rng(length)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "p0": np.ones(2, np.float32),
             "x": rng.standard_normal((2, length)).astype(np.float32),
             "y": rng.uniform(0.5, 1.5, (length, 2)).astype(np.float32)}
    _check(_scan_model(), feeds, "_foreach")


def _loop_model(with_cond: bool):
    """acc += i (as float) each step, M steps from a graph input; with_cond: also stop once
    sum(acc) >= 10 (a while loop)."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Add", ["acc_in", "fi"], ["acc_out"])]
    if with_cond:
        nodes += [_const("ten", np.array(10, np.float32)),
                  helper.make_node("ReduceSum", ["acc_out"], ["tot"], keepdims=0),
                  helper.make_node("Less", ["tot", "ten"], ["c_out"])]
    else:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    body = helper.make_graph(nodes, "body",
                             [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [3])],
                             [vi("c_out", B, []), vi("acc_out", F, [3])])
    node = helper.make_node("Loop", ["M", "c0", "a0"], ["acc"], body=body, name="loop")
    return _model([node], [vi("a0", F, [3]), vi("M", I64, []), vi("c0", B, [])],
                  [vi("acc", F, [3])])


@pytest.mark.parametrize("with_cond", [False, True])
@pytest.mark.parametrize("trips", [0, 1, 4, 9])
def test_loop_with_run_time_trip_count_is_while_loop(trips, with_cond):
    feeds = {"a0": np.array([0.5, -1, 2], np.float32), "M": np.array(trips, np.int64),
             "c0": np.array(True)}
    _check(_loop_model(with_cond), feeds, "_while_loop")


def test_loop_that_does_not_start():
    feeds = {"a0": np.array([0.5, -1, 2], np.float32), "M": np.array(4, np.int64),
             "c0": np.array(False)}
    _check(_loop_model(True), feeds, "_while_loop")


def test_loop_with_run_time_steps_and_scan_outputs_is_refused():
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Identity", ["a"], ["a2"]),
                              helper.make_node("Identity", ["a"], ["s"])], "body",
                             [vi("i", I64, []), vi("c_in", B, []), vi("a", F, [2])],
                             [vi("c_out", B, []), vi("a2", F, [2]), vi("s", F, [2])])
    model = _model([helper.make_node("Loop", ["M", "", "a0"], ["af", "ss"], body=body,
                                     name="loop")],
                   [vi("a0", F, [2]), vi("M", I64, [])],
                   [vi("af", F, [2]), vi("ss", F, ["K", 2])])
    with pytest.raises(UnsupportedOpError, match="pads step outputs to max_iterations"):
        import_graph(model)


def test_exported_foreach_imports_back_and_reexports(tmp_path):
    """The RNN foreach (MXNet's JSON) exported with a dynamic length imports back as a
    _foreach, runs like the original and exports again to a Scan onnxruntime runs."""
    sym = mx.sym.load("tests/golden/ops/control_flow/foreach_rnn-symbol.json")
    path = tmp_path / "rnn.onnx"
    export_model(sym, {}, {"data": (5, 2, 3), "h": (2, 4), "w": (4, 3), "u": (4, 4)},
                 np.float32, str(path), opset_version=17, dynamic_axes={"data": {0: "T"}})
    rng = np.random.default_rng(3)
    feeds = {"data": rng.standard_normal((7, 2, 3)).astype(np.float32),
             "h": rng.standard_normal((2, 4)).astype(np.float32),
             "w": rng.standard_normal((4, 3)).astype(np.float32),
             "u": rng.standard_normal((4, 4)).astype(np.float32)}
    ref = [o.asnumpy() for o in sym.bind(
        mx.cpu(), {k: mx.nd.array(v) for k, v in feeds.items()}).forward()]
    g, got = _run_imported(str(path), feeds)
    assert "_foreach" in _ops(g.sym)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    again = tmp_path / "again.onnx"
    export_model(g.sym, {**g.arg_params, **g.aux_params},
                 {"data": (7, 2, 3), "h": (2, 4), "w": (4, 3), "u": (4, 4)}, np.float32,
                 str(again), opset_version=17)
    sess = ort.InferenceSession(str(again), providers=["CPUExecutionProvider"])
    for a, b in zip(sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()}), ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_exported_while_loop_without_step_outputs_imports_back(tmp_path):
    i, acc, limit = mx.sym.var("i"), mx.sym.var("acc"), mx.sym.var("limit")
    _, final = mx.sym.contrib.while_loop(lambda i, a: i < limit,
                                         lambda i, a: ([], [i + 1, mx.sym.broadcast_add(a * 2, i)]),
                                         [i, acc], max_iterations=20)
    sym = mx.sym.Group(final)
    path = tmp_path / "w.onnx"
    export_model(sym, {}, {"i": (1,), "limit": (1,), "acc": (3,)}, np.float32, str(path),
                 opset_version=17)
    for lim in (0.0, 3.0, 50.0):
        feeds = {"i": np.zeros(1, np.float32), "limit": np.array([lim], np.float32),
                 "acc": np.array([1, -2, 0.5], np.float32)}
        ref = [o.asnumpy() for o in sym.bind(
            mx.cpu(), {k: mx.nd.array(v) for k, v in feeds.items()}).forward()]
        g, got = _run_imported(str(path), feeds)
        assert "_while_loop" in _ops(g.sym)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)


def test_imported_cond_saves_json_that_loads_back():
    g = import_graph(_if_model())
    text = g.sym.tojson()
    assert mx.sym.load_json(text).tojson() == text
    assert json.loads(text)["nodes"][-1]["subgraphs"]


@pytest.mark.parametrize("length", [5, 300])
def test_static_scan_is_foreach(length):
    """A Scan of static length imports as _foreach too (it is not unrolled: as fast, and its
    import does not grow with the length)."""
    model = _scan_model()
    for vi_ in list(model.graph.input) + list(model.graph.output):
        for d in vi_.type.tensor_type.shape.dim:
            if d.dim_param == "T":
                d.dim_value = length
    rng = np.random.default_rng(7)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "p0": np.ones(2, np.float32),
             "x": (rng.standard_normal((2, length)) * 0.1).astype(np.float32),
             "y": rng.uniform(0.99, 1.01, (length, 2)).astype(np.float32)}
    _check(model, feeds, "_foreach")


def _loop_const_model(trips: int):
    """acc = acc * 0.5 + i, M constant, the body passing its condition through."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         _const("half", np.array(0.5, np.float32)),
         helper.make_node("Mul", ["acc_in", "half"], ["h"]),
         helper.make_node("Add", ["h", "fi"], ["acc_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [3])],
        [vi("c_out", B, []), vi("acc_out", F, [3])])
    node = helper.make_node("Loop", ["M", "", "a0"], ["acc"], body=body, name="loop")
    m = numpy_helper.from_array(np.array(trips, np.int64), "M")
    return _model([node], [vi("a0", F, [3])], [vi("acc", F, [3])], [m])


@pytest.mark.parametrize("trips,op", [(5, None), (300, "_while_loop")])
def test_constant_loop_unrolls_up_to_the_limit(trips, op):
    """A Loop of constant trip count without scan outputs is unrolled while it adds at most
    MAX_UNROLL_WITH_OP_NODES nodes (5 per step: 5 steps); a longer one is a _while_loop."""
    from gluonport.onnx._import_unroll import MAX_UNROLL_WITH_OP_NODES

    assert 5 * 5 <= MAX_UNROLL_WITH_OP_NODES < 300 * 5
    _check(_loop_const_model(trips), {"a0": np.array([0.5, -1, 2], np.float32)}, op)


def _scan8_model(seq_lens=None):
    """Scan-8: batch axis 0, sequence axis 1; a running sum of x (reversed) and a product
    with y scaled by an outer initializer k; sequence_lens optional."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
         helper.make_node("Mul", ["yt", "k"], ["yk"]),
         helper.make_node("Mul", ["s_out", "yk"], ["o"])],
        "body", [vi("s_in", F, [2]), vi("xt", F, [2]), vi("yt", F, [2])],
        [vi("s_out", F, [2]), vi("o", F, [2])])
    node = helper.make_node("Scan", ["lens" if seq_lens is not None else "", "s0", "x", "y"],
                            ["s", "os"], body=body, num_scan_inputs=2, directions=[1, 0])
    inits = [numpy_helper.from_array(np.array([2, -1], np.float32), "k")]
    if seq_lens is not None:
        inits.append(numpy_helper.from_array(np.array(seq_lens, np.int64), "lens"))
    return make_model([node], [vi("s0", F, [3, 2]), vi("x", F, [3, 4, 2]),
                               vi("y", F, [3, 4, 2])],
                      [vi("s", F, [3, 2]), vi("os", F, [3, 4, 2])], inits, opset=8)


@pytest.mark.parametrize("seq_lens", [None, [4, 4, 4]])
def test_scan8_batch_axis_is_nested_foreach(seq_lens):
    rng = np.random.default_rng(8)
    feeds = {"s0": rng.standard_normal((3, 2)).astype(np.float32),
             "x": rng.standard_normal((3, 4, 2)).astype(np.float32),
             "y": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    g = _check(_scan8_model(seq_lens), feeds, "_foreach")
    inner = [n for n in json.loads(g.sym.tojson())["nodes"] if n["op"] == "_foreach"]
    assert any(m["op"] == "_foreach" for m in inner[0]["subgraphs"][0]["nodes"])


def test_scan8_with_short_sequences_is_refused():
    with pytest.raises(UnsupportedOpError, match="sequence_lens"):
        import_graph(_scan8_model([4, 2, 4]))

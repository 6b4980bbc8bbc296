"""If / Loop whose iterations are known while importing, unrolled
(gluonport/onnx/_import_unroll.py), and Scan (imported as _foreach), against onnxruntime on
the same model; and the clear refusal of control flow that cannot be imported."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

_vi = vi
_model = partial(make_model, opset=16, name="control")
_check = partial(check_import, rtol=1e-5, atol=1e-6, check_dtype=False, every_output=True,
                 skip_without_kernel=False)


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


def test_if_on_a_shape_is_inlined():
    """The condition folds (the batch is static): only the taken branch is imported; the
    branch reads a tensor of the enclosing graph."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                             [_vi("t", F, [3, 4])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [_vi("e", F, [3, 4])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             _const("i0", np.array(0, np.int64)),
             helper.make_node("Gather", ["s", "i0"], ["n"]),
             _const("lim", np.array(2, np.int64)),
             helper.make_node("Greater", ["n", "lim"], ["c"]),
             _const("two", np.array(2, np.float32)),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    model = _model(nodes, [_vi("x", F, [3, 4])], [_vi("y", F, [3, 4])])
    g = import_graph(model)
    assert "negative" not in g.sym.tojson()
    _check(model, {"x": np.arange(12, dtype=np.float32).reshape(3, 4)})


def test_scan_two_states_reverse_and_axes():
    """A running sum and product over axis 1 of x (reverse), a forward scan of y; scan
    outputs stacked on axis 0 and (reversed) axis 1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
         helper.make_node("Mul", ["p_in", "yt"], ["p_out"]),
         helper.make_node("Sub", ["s_out", "p_out"], ["d"]),
         helper.make_node("Identity", ["s_out"], ["so"])],
        "body", [_vi("s_in", F, [2]), _vi("p_in", F, [2]), _vi("xt", F, [2]),
                 _vi("yt", F, [2])],
        [_vi("s_out", F, [2]), _vi("p_out", F, [2]), _vi("d", F, [2]), _vi("so", F, [2])])
    node = helper.make_node("Scan", ["s0", "p0", "x", "y"], ["s", "p", "ds", "sos"],
                            body=body, num_scan_inputs=2, scan_input_axes=[1, 0],
                            scan_input_directions=[1, 0], scan_output_axes=[0, -1],
                            scan_output_directions=[0, 1])
    model = _model([node], [_vi("s0", F, [2]), _vi("p0", F, [2]), _vi("x", F, [2, 5]),
                            _vi("y", F, [5, 2])],
                   [_vi("s", F, [2]), _vi("p", F, [2]), _vi("ds", F, [5, 2]),
                    _vi("sos", F, [2, 5])])
    rng = np.random.default_rng(0)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "p0": np.ones(2, np.float32),
             "x": rng.standard_normal((2, 5)).astype(np.float32),
             "y": rng.uniform(0.5, 1.5, (5, 2)).astype(np.float32)}
    _check(model, feeds)


def _loop_model(trip_input: bool, cond_in_body: bool = False):
    body_nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
                  helper.make_node("Add", ["acc_in", "fi"], ["acc_out"]),
                  helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"])]
    if cond_in_body:  # a while loop: the body computes its own condition
        body_nodes += [_const("ten", np.array(10, np.float32)),
                       helper.make_node("ReduceSum", ["acc_out"], ["tot"], keepdims=0),
                       helper.make_node("Less", ["tot", "ten"], ["c_out"])]
    else:
        body_nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    body = helper.make_graph(body_nodes, "body",
                             [_vi("i", I64, []), _vi("c_in", B, []), _vi("acc_in", F, [3])],
                             [_vi("c_out", B, []), _vi("acc_out", F, [3]), _vi("sq", F, [3])])
    node = helper.make_node("Loop", ["M", "", "a0"], ["acc", "sqs"], body=body, name="loop")
    inputs = [_vi("a0", F, [3])] + ([_vi("M", I64, [])] if trip_input else [])
    inits = [] if trip_input else [numpy_helper.from_array(np.array(4, np.int64), "M")]
    return _model([node], inputs, [_vi("acc", F, [3]), _vi("sqs", F, [4, 3])], inits)


def test_loop_with_constant_trip_count():
    _check(_loop_model(False), {"a0": np.array([0.5, -1, 2], np.float32)})


def test_loop_with_a_run_time_trip_count_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"'loop'.*trip count 'M' must fold"):
        import_graph(_loop_model(True))


def test_while_loop_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"'loop'.*passes its condition through"):
        import_graph(_loop_model(False, cond_in_body=True))

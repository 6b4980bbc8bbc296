"""The training graphs' onnxruntime runner (gluonport/gluon/_train_graph.py): graph outputs that
a reshaping node makes from a computed tensor are returned as that tensor and reshaped in numpy
(onnxruntime would copy them), with the same values and shapes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from gluonport.gluon._train_graph import _return_unreshaped


def _ints(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _model():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Reshape", ["r", "s1"], ["y1"]),      # elided: r is computed
        helper.make_node("Reshape", ["x", "s1"], ["y2"]),      # kept: x is a graph input
        helper.make_node("Neg", ["x"], ["n"]),
        helper.make_node("Flatten", ["n"], ["y3"], axis=1),    # elided
        helper.make_node("Reshape", ["n", "s2"], ["y4"]),      # kept: n is already output y3's
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Reshape", ["a", "s1"], ["y5"]),      # kept: y5 is read by a node
        helper.make_node("Exp", ["y5"], ["y6"]),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, [2, 3, 4])],
        [helper.make_tensor_value_info(n, f, s) for n, s in
         (("y1", [6, 4]), ("y2", [6, 4]), ("y3", [2, 12]), ("y4", [24]), ("y5", [6, 4]),
          ("y6", [6, 4]))],
        [_ints("s1", [6, 4]), _ints("s2", [24])])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def test_reshaped_outputs_come_back_unreshaped():
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    want = _run(_model(), x)
    model = _model()
    shapes = _return_unreshaped(model)
    assert shapes == [(6, 4), None, (2, 12), None, None, None]
    assert [o.name for o in model.graph.output] == ["r", "y2", "n", "y4", "y5", "y6"]
    assert [n.op_type for n in model.graph.node].count("Reshape") == 3
    assert "Flatten" not in [n.op_type for n in model.graph.node]
    got = _run(model, x)
    for g, s, w in zip(got, shapes, want):
        g = g if s is None else g.reshape(s)
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)

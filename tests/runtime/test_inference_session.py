"""gluonport.runtime.ort.inference_session: a session onnxruntime's own fusion breaks is built
again without it (onnxruntime 1.19 fuses a float64 Transpose + MatMul into a FusedMatMul it has
no float64 kernel for); any other load error is raised as it is."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from gluonport.runtime.ort import inference_session


def _model(op: str = "MatMul", elem: int = TensorProto.DOUBLE) -> bytes:
    a = helper.make_tensor_value_info("a", elem, [3, 4])
    b = helper.make_tensor_value_info("b", elem, [5, 4])
    y = helper.make_tensor_value_info("y", elem, [3, 5])
    nodes = [helper.make_node("Transpose", ["b"], ["bt"], perm=[1, 0]),
             helper.make_node(op, ["a", "bt"], ["y"])]
    graph = helper.make_graph(nodes, "g", [a, b], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("elem, dtype", [(TensorProto.DOUBLE, np.float64),
                                         (TensorProto.FLOAT, np.float32)])
def test_transposed_matmul_loads_and_runs(elem, dtype):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((5, 4)).astype(dtype)
    sess = inference_session(_model(elem=elem), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"a": a, "b": b})[0], a @ b.T,
                               rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_other_load_errors_are_raised():
    with pytest.raises(Exception, match="NoSuchOp"):
        inference_session(_model("NoSuchOp"), providers=["CPUExecutionProvider"])


def test_the_tests_skip_only_for_a_listed_kernel_and_type():
    """tests._ort.missing_kernel (the tests' skip on an older onnxruntime) names the listed
    (op, type) pairs only: float64 Cos skips, float32 Cos or an unlisted op fails."""
    from tests._ort import missing_kernel

    def model(op: str, elem: int):
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="n")], "g",
                                  [helper.make_tensor_value_info("x", elem, [2])],
                                  [helper.make_tensor_value_info("y", elem, [2])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    err = type("NotImplemented", (Exception,), {})
    text = ("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for "
            "{op}(7) node with name 'n'")
    assert "float64 Cos" in missing_kernel(err(text.format(op="Cos")),
                                           model("Cos", TensorProto.DOUBLE))
    assert missing_kernel(err(text.format(op="Cos")), model("Cos", TensorProto.FLOAT)) is None
    assert missing_kernel(err(text.format(op="Sin")), model("Sin", TensorProto.DOUBLE)) is None
    assert missing_kernel(RuntimeError(text.format(op="Cos")),
                          model("Cos", TensorProto.DOUBLE)) is None

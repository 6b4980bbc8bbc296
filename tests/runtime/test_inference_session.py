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

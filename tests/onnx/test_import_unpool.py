"""MaxUnpool imported as MXNet's ``scatter_nd`` into the flattened unpooled shape
(gluonport/onnx/importers/nn.py), against onnxruntime on the same model.

The indices come from onnxruntime's own MaxPool (its Indices output, flattened over the whole
tensor) on random data, batch and channels > 1, with strides and pads; a larger
``output_shape`` is checked against onnx's reference evaluator, which onnxruntime disagrees
with.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from gluonport.onnx.backend import prepare
from gluonport.onnx.opset import ir_version_for
from tests.onnx._import_check import check_import, make_model, vi

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _pool(x, attrs):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph([node], "pool", [vi("x", F, list(x.shape))],
                              [vi("y", F, None), vi("i", I64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)],
                              ir_version=ir_version_for(12))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


@pytest.mark.parametrize("size, attrs", [
    ((8, 6), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((8, 7), dict(kernel_shape=[2, 3], strides=[2, 1]))])
def test_max_unpool_matches_onnxruntime(size, attrs):
    x = np.random.default_rng(5).normal(size=(2, 3) + size).astype(np.float32)
    pooled, idx = _pool(x, attrs)
    node = helper.make_node("MaxUnpool", ["p", "i"], ["y"], **attrs)
    model = make_model([node], [vi("p", F, list(pooled.shape)), vi("i", I64, list(idx.shape))],
                       vi("y", F, list(x.shape)), opset=11)
    check_import(model, {"p": pooled, "i": idx}, rtol=0, atol=0, skip_without_kernel=False)


def test_output_shape_pads_the_default_layout():
    """With a larger ``output_shape`` the indices keep the default layout and the end of each
    axis is padded: onnx's reference and its node test (onnxruntime instead reads the indices
    in the larger layout)."""
    x = np.random.default_rng(6).normal(size=(2, 3, 8, 6)).astype(np.float32)
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    pooled, idx = _pool(x, attrs)
    shape = numpy_helper.from_array(np.array([2, 3, 9, 7], np.int64), "shape")
    node = helper.make_node("MaxUnpool", ["p", "i", "shape"], ["y"], **attrs)
    model = make_model([node], [vi("p", F, list(pooled.shape)), vi("i", I64, list(idx.shape))],
                       vi("y", F, [2, 3, 9, 7]), [shape], opset=11)
    want = ReferenceEvaluator(model).run(None, {"p": pooled, "i": idx})[0]
    got = prepare(model).run({"p": pooled, "i": idx})[0]
    np.testing.assert_array_equal(got, want)
    unpooled = np.zeros(x.size, np.float32)
    unpooled[idx.reshape(-1)] = pooled.reshape(-1)
    np.testing.assert_array_equal(got[:, :, :8, :6], unpooled.reshape(x.shape))
    assert not got[:, :, 8:].any() and not got[:, :, :, 6:].any()

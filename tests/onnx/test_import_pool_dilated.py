"""MaxPool / AveragePool / LpPool with dilations, which MXNet's Pooling lacks, imported as one
strided ``slice`` per kernel tap combined by ``broadcast_maximum`` or ``add_n``
(gluonport/onnx/importers/nn.py), against onnxruntime on the same model.

The cases cover 1-D, 2-D and 3-D windows, strides, asymmetric pads, ceil mode (whose last
window can run past the padded input) and count_include_pad both ways; values are random
normals, so a tap read at the wrong offset or a wrong divisor shows at well over the
tolerance (float32 sums of at most 27 terms: rtol 1e-5).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests._ort import avgpool_ceil_mode_differs
from tests.onnx._import_check import check_import, make_model, vi

_model = partial(make_model, opset=19, name="pool_dilated")
_check = partial(check_import, rtol=1e-5, atol=1e-6, skip_without_kernel=False)

# (op, spatial shape, attributes)
CASES = [
    ("MaxPool", (9,), dict(kernel_shape=[3], dilations=[2], strides=[2], pads=[1, 2])),
    ("MaxPool", (8, 7), dict(kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 0, 1, 2],
                             ceil_mode=1, strides=[2, 2])),
    ("MaxPool", (6, 6, 5), dict(kernel_shape=[2, 2, 2], dilations=[2, 1, 2])),
    ("AveragePool", (8, 7), dict(kernel_shape=[3, 2], dilations=[2, 3], pads=[1, 1, 2, 0],
                                 strides=[2, 1], count_include_pad=0)),
    ("AveragePool", (8, 7), dict(kernel_shape=[3, 2], dilations=[2, 3], pads=[1, 1, 2, 0],
                                 strides=[2, 1], count_include_pad=1)),
    ("AveragePool", (7, 6, 5), dict(kernel_shape=[2, 3, 2], dilations=[2, 2, 1],
                                    strides=[2, 2, 3], pads=[1, 0, 1, 1, 1, 0], ceil_mode=1,
                                    count_include_pad=1)),
    ("AveragePool", (7, 6, 5), dict(kernel_shape=[2, 3, 2], dilations=[2, 2, 1],
                                    strides=[2, 2, 3], pads=[1, 0, 1, 1, 1, 0], ceil_mode=1,
                                    count_include_pad=0)),
    ("LpPool", (8, 9), dict(kernel_shape=[2, 2], dilations=[3, 2], p=3, strides=[1, 2],
                            pads=[0, 1, 1, 0])),
]


def _out_shape(node, shape, elem) -> list:
    """The output shape onnx's shape inference gives (the model must declare one)."""
    graph = helper.make_graph([node], "g", [vi("x", elem, list(shape))], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    out = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.value_info[0]
    return [d.dim_value for d in out.type.tensor_type.shape.dim]


@pytest.mark.parametrize("op,spatial,attrs", CASES,
                         ids=[f"{c[0]}-{len(c[1])}d-{i}" for i, c in enumerate(CASES)])
def test_dilated_pool_matches_onnxruntime(op, spatial, attrs):
    if op == "AveragePool" and attrs.get("ceil_mode"):
        why = avgpool_ceil_mode_differs(19, attrs.get("count_include_pad", 0))
        if why:
            pytest.skip(why)
    shape = (2, 3) + spatial
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    model = _model([node], [vi("x", TensorProto.FLOAT, list(shape))],
                   vi("y", TensorProto.FLOAT, _out_shape(node, shape, TensorProto.FLOAT)))
    x = np.random.default_rng(len(spatial)).standard_normal(shape).astype(np.float32)
    want = _spec_where_ort_differs(model, {"x": x}) if op == "AveragePool" else None
    if want is not None:
        # onnxruntime 1.23's dilated AveragePool with count_include_pad=1 (the newest
        # onnxruntime for Python 3.10) disagrees with onnx's reference evaluator, the spec's
        # own implementation: gluonport is held to the reference there instead
        got = prepare(model).run({"x": x})[0]
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
        return
    _check(model, {"x": x})


def _spec_where_ort_differs(model, feeds):
    """onnx's reference output where onnxruntime's differs from it, else None."""
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    same = np.allclose(sess.run(None, feeds)[0], want, rtol=1e-5, atol=1e-6)
    return None if same else want


def test_dilated_max_pool_int8_keeps_the_dtype():
    """Integer max pooling: the pads hold the dtype's minimum, which never wins."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2],
                            pads=[1, 1, 1, 1])
    model = _model([node], [vi("x", TensorProto.INT8, [1, 2, 5, 6])],
                   vi("y", TensorProto.INT8, _out_shape(node, (1, 2, 5, 6), TensorProto.INT8)))
    x = np.random.default_rng(5).integers(-128, 0, (1, 2, 5, 6)).astype(np.int8)
    _check(model, {"x": x})


def test_dilated_pool_needs_the_static_size():
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])
    model = _model([node], [vi("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                   vi("y", TensorProto.FLOAT, [1, 3, "oh", "ow"]))
    with pytest.raises(UnsupportedOpError, match="static input size"):
        import_graph(model)

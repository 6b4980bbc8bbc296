"""CumProd, ReverseSequence, QuantizeLinear, DequantizeLinear composed from MXNet 1.x ops
(gluonport/onnx/importers/composed.py), against onnxruntime on the same model."""

from __future__ import annotations

from functools import partial

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

_vi = vi
_model = partial(make_model, opset=19, name="composed")
_check = check_import


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumprod(exclusive, reverse):
    if onnx.defs.onnx_opset_version() < 26:
        pytest.skip(f"onnx {onnx.__version__} has no opset 26 (CumProd)")
    node = helper.make_node("CumProd", ["x", "ax"], ["y"], exclusive=exclusive, reverse=reverse)
    ax = numpy_helper.from_array(np.array(-1, np.int64), "ax")
    model = _model([node], [_vi("x", TensorProto.INT32, [3, 5])],
                   [_vi("y", TensorProto.INT32, [3, 5])], [ax], opset=26)
    x = np.random.default_rng(0).integers(-4, 5, (3, 5)).astype(np.int32)
    _check(model, {"x": x})


@pytest.mark.parametrize("batch_axis,time_axis", [(1, 0), (0, 1)])
def test_reverse_sequence(batch_axis, time_axis):
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis,
                            time_axis=time_axis)
    shape = [5, 3, 2] if time_axis == 0 else [3, 5, 2]
    model = _model([node], [_vi("x", TensorProto.FLOAT, shape),
                            _vi("lens", TensorProto.INT64, [3])],
                   [_vi("y", TensorProto.FLOAT, shape)])
    x = np.arange(30, dtype=np.float32).reshape(shape)
    _check(model, {"x": x, "lens": np.array([5, 1, 3])})


@pytest.mark.parametrize("elem", [TensorProto.UINT8, TensorProto.INT8])
def test_quantize_rounds_half_to_even_and_saturates(elem):
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    inits = [numpy_helper.from_array(np.array([0.5, 1.0, 2.0], np.float32), "s"),
             numpy_helper.from_array(np.array([3, 0, 7], dtype), "z")]
    model = _model([node], [_vi("x", TensorProto.FLOAT, [4, 3, 2])],
                   [_vi("y", elem, [4, 3, 2])], inits)
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1000, -1000, 0.25, 0.75, 7.5],
                      np.float32)
    x = np.concatenate([halves, halves * 0.5]).reshape(4, 3, 2)
    _check(model, {"x": x})


def test_dequantize_per_axis():
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)
    inits = [numpy_helper.from_array(np.array([0.5, 0.25], np.float32), "s"),
             numpy_helper.from_array(np.array([-3, 4], np.int8), "z")]
    model = _model([node], [_vi("x", TensorProto.INT8, [2, 6])],
                   [_vi("y", TensorProto.FLOAT, [2, 6])], inits)
    x = np.random.default_rng(1).integers(-128, 128, (2, 6)).astype(np.int8)
    _check(model, {"x": x})


def test_quantize_to_a_type_mxnet_lacks_is_refused():
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.int16), "z")]
    model = _model([node], [_vi("x", TensorProto.FLOAT, [4])],
                   [_vi("y", TensorProto.INT16, [4])], inits, opset=21)
    with pytest.raises(UnsupportedOpError, match=r"'q'.*int16"):
        import_graph(model)


@pytest.mark.parametrize("complex_in,inverse,onesided,length", [
    (False, 0, 0, None), (False, 0, 1, None), (True, 1, 0, None), (False, 0, 0, 12),
    (True, 0, 0, 6)])
def test_dft_matches_onnxruntime(complex_in, inverse, onesided, length):
    """Real or complex input along axis 1, forward/inverse, one-sided, zero-padded (12 > 8)
    and truncated (6 < 8) lengths."""
    inputs = ["x"] + (["n"] if length else [])
    node = helper.make_node("DFT", inputs, ["y"], axis=1, inverse=inverse, onesided=onesided)
    inits = [numpy_helper.from_array(np.array(length, np.int64), "n")] if length else []
    c = 2 if complex_in else 1
    size = length or 8
    model = _model([node], [_vi("x", TensorProto.FLOAT, [2, 8, 3, c])],
                   [_vi("y", TensorProto.FLOAT, [2, size // 2 + 1 if onesided else size, 3, 2])],
                   inits, opset=17)
    x = np.random.default_rng(2).standard_normal((2, 8, 3, c)).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})[0]
    got = prepare(model).run({"x": x})[0]
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-5)

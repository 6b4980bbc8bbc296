"""The importer's warning when MXNet 1.9.1 itself cannot run what it wrote
(gluonport/onnx/_import_mxlimits.py; each limit was seen failing in MXNet 1.9.1 by
tests/golden/onnx/check_backend_in_mxnet.py) -- and its silence when MXNet can."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.onnx.importer import import_graph


def _model(nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s)
                                           for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _limits(model) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import_graph(model)
    return [str(w.message) for w in caught if "MXNet 1.9.1" in str(w.message)]


F, H, I16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT16


@pytest.mark.parametrize("elem, name", [(I16, "int16"), (TensorProto.UINT16, "uint16"),
                                        (TensorProto.UINT32, "uint32"),
                                        (TensorProto.UINT64, "uint64")])
def test_dtype_mxnet_lacks(elem, name):
    m = _model([helper.make_node("Add", ["x", "y"], ["z"])], [("x", elem, [2]),
                                                             ("y", elem, [2])],
               [("z", elem, [2])])
    (msg,) = _limits(m)
    assert "MXNet 1.9.1 cannot run" in msg and f"no {name} dtype" in msg
    assert "load only in gluonport" in msg


@pytest.mark.parametrize("a, b, mx_op", [([2, 3, 4], [2, 4, 5], "batch_dot"),
                                         ([3, 4], [4, 5], "dot")])
def test_float16_products(a, b, mx_op):
    m = _model([helper.make_node("MatMul", ["a", "b"], ["c"])], [("a", H, a), ("b", H, b)],
               [("c", H, a[:-1] + b[-1:])])
    (msg,) = _limits(m)
    assert f"float16 MatMul (as {mx_op})" in msg and "refuse float16" in msg
    m32 = _model([helper.make_node("MatMul", ["a", "b"], ["c"])], [("a", F, a), ("b", F, b)],
                 [("c", F, a[:-1] + b[-1:])])
    assert _limits(m32) == []


def test_float16_conv():
    m = _model([helper.make_node("Conv", ["x", "w"], ["y"])], [("x", H, [1, 2, 5, 5])],
               [("y", H, [1, 3, 3, 3])], [("w", np.ones((3, 2, 3, 3), np.float16))])
    (msg,) = _limits(m)
    assert "float16 Conv (as Convolution)" in msg


def _col2im(image, block, channels=1, n=1, **attrs):
    dims = len(image)
    dil = attrs.get("dilations", [1] * dims)
    st = attrs.get("strides", [1] * dims)
    pads = attrs.get("pads", [0] * 2 * dims)
    blocks = [(i + pads[a] + pads[a + dims] - d * (b - 1) - 1) // s + 1
              for a, (i, b, d, s) in enumerate(zip(image, block, dil, st))]
    cols = channels * int(np.prod(block))
    return _model([helper.make_node("Col2Im", ["x", "i", "b"], ["y"], **attrs)],
                  [("x", F, [n, cols, int(np.prod(blocks))])],
                  [("y", F, [n, channels] + list(image))],
                  [("i", np.array(image, np.int64)), ("b", np.array(block, np.int64))])


@pytest.mark.parametrize("image, block, attrs", [
    ([3, 4, 5], [1, 2, 2], {}),
    ([5, 6, 7], [2, 3, 2], {"strides": [2, 1, 3], "dilations": [1, 2, 1]}),
    ([4, 5, 6], [2, 2, 3], {"pads": [1, 0, 2, 1, 1, 0], "strides": [1, 2, 2]}),
    ([4, 4, 4], [3, 1, 2], {"pads": [1, 1, 1, 1, 1, 1], "strides": [2, 2, 1]})])
def test_col2im_3d_as_deconvolution(image, block, attrs):
    """3-D Col2Im, which MXNet 1.9.1's col2im fails on, is a grouped Deconvolution with
    one-hot taps: equal to onnx's reference (strides, dilations, asymmetric pads, trailing
    positions no block reaches), and no warning."""
    from onnx.reference import ReferenceEvaluator

    from gluonport.onnx.backend import prepare

    m = _model_checked(_col2im(image, block, channels=2, n=2, **attrs))
    x = np.random.default_rng(0).standard_normal(
        [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = prepare(m).run([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert _limits(m) == []


def _model_checked(m):
    import onnx

    onnx.checker.check_model(m)
    return m


def test_col2im_2d_is_mxnet_col2im():
    assert _limits(_col2im([3, 4], [2, 2])) == []


def test_zero_size_input_may_not_run():
    m = _model([helper.make_node("Abs", ["x"], ["y"])], [("x", F, [2, 0, 3])],
               [("y", F, [2, 0, 3])])
    (msg,) = _limits(m)
    assert "MXNet 1.9.1 may not run" in msg and "zero-size" in msg and "'x'" in msg


def test_zero_size_inside_graph_is_not_flagged():
    """A split's empty part joined back (onnx's RotaryEmbedding with rotary_embedding_dim =
    the head size) runs in MXNet: only graph inputs, outputs and weights count."""
    m = _model([helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1),
                helper.make_node("Concat", ["b", "a"], ["y"], axis=1)],
               [("x", F, [2, 4])], [("y", F, [2, 4])], [("s", np.array([4, 0], np.int64))])
    assert _limits(m) == []


def test_plain_float32_graph_is_silent():
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2, 3])],
               [("y", F, [2, 3])])
    assert _limits(m) == []


def test_export_mxnet_marks_the_files_mxnet_cannot_run(tmp_path):
    """The warned import's symbol file carries the warning as a top-level ``gluonport_only``
    attribute (MXNet 1.9.1 loads such a file and ignores the key -- checked in the oracle);
    gluonport loads the pair and runs it; a float32 model's file has no mark."""
    import json

    import gluonport
    from gluonport.onnx import export_mxnet

    m16 = _model([helper.make_node("Add", ["x", "y"], ["z"])], [("x", I16, [2]),
                                                               ("y", I16, [2])],
                 [("z", I16, [2])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sym_file, _ = export_mxnet(m16, str(tmp_path / "i16"))
    with open(sym_file) as f:
        mark = json.load(f)["attrs"]
    assert mark["mxnet_version"] == ["int", 10901]
    assert mark["gluonport_only"][0] == "str"
    assert "MXNet 1.9.1 cannot run" in mark["gluonport_only"][1] and "int16" in mark[
        "gluonport_only"][1]
    model = gluonport.load(str(tmp_path / "i16"), backend="numpy")
    x = np.array([300, -7], np.int16)
    np.testing.assert_array_equal(model(x=x, y=x), x + x)
    m32 = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2, 3])],
                 [("y", F, [2, 3])])
    sym_file, _ = export_mxnet(m32, str(tmp_path / "f32"))
    with open(sym_file) as f:
        assert "gluonport_only" not in json.load(f)["attrs"]

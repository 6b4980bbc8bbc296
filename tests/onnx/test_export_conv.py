"""ONNX export of Convolution, Convolution_v1, Deconvolution and UpSampling (ops/nn/conv.py)
against MXNet 1.9.1's goldens (tests/golden/ops/conv.npz), at opset 13 and the newest opset,
with weights as graph inputs and as initializers; plus what the table cannot say: channels-last
layouts, target_shape with dynamic spatial dims, the float64 im2col lowering, dynamic batch.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_dynamic, export_case, run_ort
from tests.ops import cases_conv
from tests.ops._check import _compare, forward, load_golden

GOLDEN = load_golden("conv")
CASES = {c["name"]: c for c in cases_conv.CASES}


def _weights(case: dict) -> list[str]:
    """Inputs that are parameters in a model: every input after the data (weight, bias), but
    nearest UpSampling's extra inputs are data."""
    if case["op"] == "UpSampling" and case["attrs"]["sample_type"] == "nearest":
        return []
    return [f"in{i}" for i in range(1, len(case["inputs"]))]


# --- what the table cannot say -------------------------------------------------------------------
def _ops(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


def test_conv_is_one_node_with_initializer_weight():
    case = CASES["conv2d_stride2_pad1"]
    model, _, _, _ = export_case(case, GOLDEN[case["name"]], 17, params=["in1", "in2"])
    assert _ops(model) == ["Conv"]
    conv = model.graph.node[0]
    attrs = {a.name: list(a.ints) or a.i for a in conv.attribute}
    assert attrs["pads"] == [1, 1, 1, 1] and attrs["strides"] == [2, 2]
    assert {tuple(i.dims) for i in model.graph.initializer} == {(4, 3, 3, 3), (4,)}


@pytest.mark.parametrize("name", ["conv2d_float64", "deconv2d_target_shape_f64"])
def test_float64_has_no_conv_node(name):
    """onnxruntime has no double Conv/ConvTranspose kernel: float64 is im2col + MatMul."""
    model, _, _, _ = export_case(CASES[name], GOLDEN[name], 17, params=["in1"])
    assert "MatMul" in _ops(model) and not {"Conv", "ConvTranspose"} & set(_ops(model))


def test_deconv_adj_is_output_padding():
    name = "deconv2d_stride2_pad1_adj1_bias"
    model, _, _, _ = export_case(CASES[name], GOLDEN[name], 17, params=["in1", "in2"])
    node = model.graph.node[0]
    attrs = {a.name: list(a.ints) for a in node.attribute}
    assert node.op_type == "ConvTranspose"
    assert attrs["output_padding"] == [1, 1] and attrs["pads"] == [1, 1, 1, 1]


def _random(shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


CHANNELS_LAST = [
    ("Convolution", (2, 6, 7, 4), (6, 3, 3, 2),
     {"kernel": (3, 3), "stride": (2, 1), "pad": (1, 1), "num_filter": 6, "num_group": 2,
      "layout": "NHWC", "no_bias": True}),
    ("Convolution", (1, 4, 5, 4, 2), (3, 2, 3, 2, 2),
     {"kernel": (2, 3, 2), "num_filter": 3, "layout": "NDHWC", "no_bias": True}),
    ("Deconvolution", (1, 3, 4, 2), (2, 3, 3, 3),
     {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "adj": (1, 0), "num_filter": 3,
      "layout": "NHWC"}),
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("weights", ["inputs", "params"])
@pytest.mark.parametrize("op, xshape, wshape, attrs", CHANNELS_LAST,
                         ids=[f"{c[0]}-{c[3]['layout']}" for c in CHANNELS_LAST])
def test_channels_last_layouts(op, xshape, wshape, attrs, weights, opset):
    """MXNet 1.9.1 runs NHWC convolution only on GPU: checked against the numpy executor."""
    x, w = _random(xshape), _random(wshape, 1)
    sym = mx.sym.invoke(op, [mx.sym.var("x"), mx.sym.var("w")], dict(attrs))
    want = forward(sym, {"x": x, "w": w})
    params = {"w": w} if weights == "params" else {}
    shapes = {"x": x.shape} if params else {"x": x.shape, "w": w.shape}
    model = export_symbol(sym, params, in_shapes=shapes, opset_version=opset)
    got = run_ort(model, {"x": x, "w": w})
    _compare({"name": op, "rtol": 1e-5, "atol": 1e-6}, got, want, "channels last")


@pytest.mark.parametrize("opset", OPSETS)
def test_deconv_target_shape_with_dynamic_spatial_dims(opset):
    """target_shape fixes the output whatever the input size: ``output_shape`` puts the odd
    padding unit first, as MXNet's InferPad does."""
    sym = mx.sym.Deconvolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(3, 3), stride=(2, 2),
                               target_shape=(9, 10), num_filter=2)
    w = _random((3, 2, 3, 3), 1)
    model = export_symbol(sym, {"w": w}, in_shapes={"x": (1, 3, 5, 5)}, opset_version=opset,
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    for shape in [(1, 3, 5, 5), (2, 3, 5, 6), (1, 3, 4, 5)]:
        x = _random(shape, 2)
        want = forward(sym, {"x": x, "w": w})
        got = run_ort(model, {"x": x})
        _compare({"name": "deconv", "rtol": 1e-5, "atol": 1e-6}, got, want, f"size {shape}")


def test_float64_conv_with_dynamic_spatial_dims_is_refused():
    sym = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=2, no_bias=True,
                             name="c")
    w = _random((2, 1, 3, 3), dtype=np.float64)
    with pytest.raises(ConversionError, match="'c'.*spatial dims fixed"):
        export_symbol(sym, {"c_weight": w}, in_shapes=[(1, 1, 5, 5)],
                      in_types=np.float64, dynamic_axes={"x": {2: "h"}})


@pytest.mark.parametrize("opset", OPSETS)
def test_int8_conv_sums_beyond_float32_are_exact(opset):
    """Sums that float32 would round (C*k*k*127*128 > 2^24) are computed in float64."""
    rng = np.random.RandomState(4)
    x = rng.randint(-128, 128, (1, 64, 5, 5)).astype(np.int8)
    w = rng.randint(-128, 128, (2, 64, 3, 3)).astype(np.int8)
    sym = mx.sym.Convolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(3, 3), num_filter=2,
                             no_bias=True)
    want = forward(sym, {"x": x, "w": w})
    model = export_symbol(sym, {"w": w}, in_shapes=[x.shape], in_types=np.int8,
                          opset_version=opset)
    np.testing.assert_array_equal(run_ort(model, {"x": x})[0], want[0])


F64_GEOMETRIES = [  # the im2col lowering over what the table's float64 cases do not reach
    ("Convolution", (2, 4, 7, 6), (6, 2, 3, 2),
     {"kernel": (3, 2), "stride": (2, 3), "dilate": (2, 1), "pad": (2, 1), "num_filter": 6,
      "num_group": 2, "no_bias": False}),
    ("Convolution", (1, 3, 9), (2, 3, 4),
     {"kernel": (4,), "stride": (5,), "num_filter": 2, "no_bias": True}),
    ("Convolution", (1, 2, 4, 5, 3), (3, 2, 2, 3, 1),
     {"kernel": (2, 3, 1), "pad": (1, 0, 1), "num_filter": 3, "no_bias": True}),
    ("Deconvolution", (2, 4, 3, 4), (4, 3, 3, 2),
     {"kernel": (3, 2), "stride": (2, 3), "dilate": (1, 2), "pad": (1, 2), "adj": (1, 2),
      "num_filter": 6, "num_group": 2, "no_bias": False}),
    ("Deconvolution", (1, 2, 4), (2, 2, 5),
     {"kernel": (5,), "stride": (3,), "pad": (5,), "num_filter": 2}),  # pad > reach: a crop
    ("Deconvolution", (1, 2, 2, 3, 2), (2, 1, 2, 2, 3),
     {"kernel": (2, 2, 3), "stride": (3, 1, 2), "num_filter": 1}),
    ("UpSampling", (1, 2, 3, 4), (2, 1, 5, 5),
     {"scale": 3, "sample_type": "bilinear", "num_filter": 2}),
]


@pytest.mark.parametrize("weights", ["inputs", "params"])
@pytest.mark.parametrize("op, xshape, wshape, attrs", F64_GEOMETRIES,
                         ids=[f"{g[0]}-{i}" for i, g in enumerate(F64_GEOMETRIES)])
def test_float64_im2col_geometries(op, xshape, wshape, attrs, weights):
    """Checked against the numpy executor (itself checked against MXNet's goldens)."""
    ins = [_random(xshape, 0, np.float64), _random(wshape, 1, np.float64)]
    if attrs.get("no_bias") is False:
        ins.append(_random((attrs["num_filter"],), 2, np.float64))
    names = [f"in{i}" for i in range(len(ins))]
    sym = mx.sym.invoke(op, [mx.sym.var(n) for n in names], dict(attrs))
    feed = dict(zip(names, ins))
    params = {k: v for k, v in feed.items() if k != "in0" and weights == "params"}
    data = {k: v for k, v in feed.items() if k not in params}
    model = export_symbol(sym, params, in_shapes={k: v.shape for k, v in data.items()},
                          in_types=np.float64, opset_version=17,
                          dynamic_axes={"in0": {0: "n"}})
    assert not {"Conv", "ConvTranspose"} & set(_ops(model))
    _compare({"name": op, "rtol": 1e-12, "atol": 1e-12}, run_ort(model, data),
             forward(sym, feed), "float64 im2col")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", [np.float16, np.float64])
@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_nearest_upsampling_dtypes(mode, dtype, opset):
    """float16 goes through a float32 Resize; float64 (no onnxruntime double Resize) repeats
    pixels with Unsqueeze/Expand/Reshape; both exact."""
    a, b = _random((2, 2, 2, 3), 0, dtype), _random((2, 2, 4, 6), 1, dtype)
    sym = mx.sym.UpSampling(mx.sym.var("a"), mx.sym.var("b"), scale=4, num_args=2,
                            sample_type="nearest", multi_input_mode=mode)
    model = export_symbol(sym, {}, in_shapes=[a.shape, b.shape], in_types=dtype,
                          opset_version=opset, dynamic_axes={"a": {0: "n"}, "b": {0: "n"}})
    feed = {"a": a, "b": b}
    _compare({"name": "nearest", "rtol": 0, "atol": 0}, run_ort(model, feed),
             forward(sym, feed), f"nearest {dtype}")


# --- dynamic batch -------------------------------------------------------------------------------
DYNAMIC = ["conv2d_basic", "conv2d_depthwise", "conv2d_1x1_stride2", "conv1d_stride2_pad1",
           "conv3d_pad1", "conv_v1_2d", "conv2d_float64", "conv2d_int8_saturates",
           "deconv2d_stride2_pad1_adj1_bias", "deconv2d_target_shape_f64", "deconv2d_groups",
           "upsampling_nearest_2", "upsampling_nearest_concat", "upsampling_nearest_sum",
           "upsampling_bilinear_2", "im2col_2d", "im2col_float64", "col2im_2d",
           "col2im_dilate_stride_pad"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    case = CASES[name]
    axes = {"in0": 0}
    if case["op"] == "UpSampling" and case["attrs"]["sample_type"] == "nearest":
        axes = {f"in{i}": 0 for i in range(len(case["inputs"]))}
    check_dynamic(case, GOLDEN[name], opset, axes, params=_weights(case))

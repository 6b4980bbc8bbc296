"""ONNX export of dense layers, activations, dropout and the softmax family
(gluonport/ops/nn/dense.py) against MXNet 1.9.1's goldens (tests/golden/ops/nn.npz), at opset 13 and
the newest opset, with weights as graph inputs and as initializers; plus what a case table
cannot say: PReLU's slope layout, rrelu's mask, dropout in mode='always', dynamic batch.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_dynamic, check_export, export_case, run_ort
from tests.ops import cases_nn
from tests.ops._check import _compare, load_golden

GOLDEN = load_golden("nn")
CASES = {c["name"]: c for c in cases_nn.CASES}


def _weights(case: dict) -> list[str]:
    """The inputs that are parameters in a model: FullyConnected's weight/bias, PReLU's gamma."""
    n = len(case["inputs"])
    if case["op"] == "FullyConnected" or case.get("attrs", {}).get("act_type") == "prelu":
        return [f"in{i}" for i in range(1, n)]
    return []


# --- what the table cannot say -------------------------------------------------------------------
@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", ["rrelu_inference", "rrelu_bounds"])
def test_rrelu_output0_is_leaky_relu_with_mean_slope(name, opset):
    case, golden = CASES[name], GOLDEN[name]
    x = mx.sym.var("in0")
    out = mx.sym.LeakyReLU(x, **case["attrs"])[0]
    model = export_symbol(out, {}, in_shapes=[golden["inputs"][0].shape], opset_version=opset)
    assert [n.op_type for n in model.graph.node] == ["LeakyRelu"]
    got = run_ort(model, {"in0": golden["inputs"][0]})
    np.testing.assert_allclose(got[0], golden["outputs"][0], rtol=1e-6, atol=1e-7)


def test_rrelu_mask_read_is_refused():
    out = mx.sym.LeakyReLU(mx.sym.var("x"), act_type="rrelu", name="rr")
    with pytest.raises(ConversionError, match="rr.*mask.*unwritten"):
        export_symbol(out, {}, in_shapes=[(2, 3)])


def test_prelu_4d_slope_is_channel_laid_out():
    """A (C,) slope on NCHW data must scale axis 1: (1, C, 1, 1) (a (C,) slope would broadcast
    over W, and onnxruntime refuses it when C != W)."""
    case, golden = CASES["prelu_channel_4d"], GOLDEN["prelu_channel_4d"]
    model, _, data, _ = export_case(case, golden, 17, params=["in1"])
    slope = next(i for i in model.graph.initializer)
    assert list(slope.dims) == [1, 3, 1, 1]
    np.testing.assert_allclose(run_ort(model, data)[0], golden["outputs"][0], rtol=1e-6)


def test_prelu_4d_gamma_input_runs():
    x = np.random.RandomState(0).uniform(-1, 1, (2, 5, 3, 4)).astype(np.float32)
    gamma = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    out = mx.sym.LeakyReLU(mx.sym.var("x"), mx.sym.var("g"), act_type="prelu")
    model = export_symbol(out, {}, in_shapes=[x.shape, gamma.shape])
    got = run_ort(model, {"x": x, "g": gamma})[0]
    want = np.where(x > 0, x, x * gamma.reshape(1, 5, 1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", ["dropout_always", "dropout_always_axes"])
def test_dropout_always_drops_at_inference(name, opset):
    """mode='always' drops at inference too: every output is 0 or x / keep, with one draw per
    mask element (shared along ``axes``), and about p of them dropped."""
    case = CASES[name]
    x = mx.sym.var("x")
    out = mx.sym.Dropout(x, **case["attrs"])
    shape = (4, 300, 5) if case["attrs"].get("axes") else (200, 60)  # >= 300 mask draws
    data = np.random.RandomState(1).uniform(0.5, 1.5, shape).astype(np.float32)
    model = export_symbol(out, {}, in_shapes=[shape], opset_version=opset)
    got = run_ort(model, {"x": data})[0]
    keep = 1 - case["attrs"]["p"]
    kept = got != 0
    np.testing.assert_allclose(got[kept], data[kept] / keep, rtol=1e-6)
    assert 0.4 < kept.mean() < 0.6
    for ax in case["attrs"].get("axes", ()):
        assert (kept == kept.take([0], axis=ax)).all(), "mask not shared along axes"


def test_dropout_inference_is_identity_node():
    out = mx.sym.Dropout(mx.sym.var("x"), p=0.3)
    model = export_symbol(out, {}, in_shapes=[(2, 3)])
    assert [n.op_type for n in model.graph.node] == ["Identity"]


def test_fc_flatten_keeps_weight_layout_and_gemm():
    case, golden = CASES["fc_flatten_4d"], GOLDEN["fc_flatten_4d"]
    model, _, _, _ = export_case(case, golden, 17, params=["in1", "in2"])
    assert [n.op_type for n in model.graph.node] == ["Flatten", "Gemm"]
    assert {tuple(i.dims) for i in model.graph.initializer} == {(4, 12), (4,)}


def test_gelu_uses_gelu_op_from_opset_20():
    case, golden = CASES["gelu"], GOLDEN["gelu"]
    assert "Gelu" in {n.op_type for n in export_case(case, golden, 20)[0].graph.node}
    assert "Erf" in {n.op_type for n in export_case(case, golden, 19)[0].graph.node}


# --- dynamic batch -------------------------------------------------------------------------------
DYNAMIC = {
    "fc_basic": {"in0": 0}, "fc_flatten_4d": {"in0": 0}, "fc_no_flatten_3d": {"in0": 0},
    "fc_1d": {"in0": 0}, "prelu_channel_4d": {"in0": 0}, "gelu": {"in0": 0},
    "softmax_default": {"in0": 0}, "softmax_temperature": {"in0": 0},
    "softmax_length": {"in0": 0, "in1": 0}, "softmax_length_axis0": {"in0": 0},
    "softmin_axis1_temperature": {"in0": 0}, "softmax_act_channel_4d": {"in0": 0},
    "dropout_identity": {"in0": 0},
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_batch(name, opset):
    case = CASES[name]
    check_dynamic(case, GOLDEN[name], opset, DYNAMIC[name], params=_weights(case))


def test_softmax_length_dynamic_axis_zero_length():
    """The masked axis is the dynamic one: its size is read with Shape, lengths of 0 give 0."""
    case = CASES["softmax_length_axis0"]
    model, sym, _, _ = export_case(case, GOLDEN[case["name"]], 17,
                                   dynamic_axes={"in0": {0: "n"}})
    x = np.random.RandomState(3).uniform(-1, 1, (6, 3)).astype(np.float32)
    lens = np.array([0, 6, 4], np.int32)
    got = run_ort(model, {"in0": x, "in1": lens})
    from tests.ops._check import forward
    _compare(case, got, forward(sym, {"in0": x, "in1": lens}), "dynamic length axis")
    assert (got[0][:, 0] == 0).all()


# --- dtype paths the MXNet cases do not reach (reference: the numpy executor) -------------------
def _executor_golden(case: dict) -> dict:
    """Random inputs for ``case`` and the numpy executor's outputs for them (that executor is
    checked against MXNet for these dtypes in tests/ops)."""
    from tests.ops._check import _build_sym, forward

    rng = np.random.RandomState(11)
    inputs = [rng.uniform(-3, 3, spec["shape"]).astype(spec["dtype"])
              for spec in case["inputs"]]
    sym, feed = _build_sym(case, {"inputs": inputs})
    return {"inputs": inputs, "outputs": forward(sym, feed)}


def _f(*shape, dtype="float64"):
    return {"shape": shape, "dtype": dtype}


F32_IN_F64 = {"rtol": 1e-6, "atol": 1e-7}  # computed in float32: no double kernel in onnxruntime
F16 = {"rtol": 2e-3, "atol": 2e-3}
DTYPE_CASES = [
    {"name": "softrelu_f64", "op": "Activation", "inputs": [_f(3, 4)],
     "attrs": {"act_type": "softrelu"}, **F32_IN_F64},
    {"name": "softsign_f64", "op": "Activation", "inputs": [_f(3, 4)],
     "attrs": {"act_type": "softsign"}, **F32_IN_F64},
    {"name": "elu_f64", "op": "LeakyReLU", "inputs": [_f(3, 4)], "attrs": {"act_type": "elu"},
     **F32_IN_F64},
    {"name": "selu_f64", "op": "LeakyReLU", "inputs": [_f(3, 4)], "attrs": {"act_type": "selu"},
     **F32_IN_F64},
    {"name": "gelu_f64", "op": "LeakyReLU", "inputs": [_f(3, 4)], "attrs": {"act_type": "gelu"},
     **F32_IN_F64},
    {"name": "leaky_f64", "op": "LeakyReLU", "inputs": [_f(3, 4)], **F32_IN_F64},
    {"name": "prelu_f64", "op": "LeakyReLU", "inputs": [_f(2, 3, 4), _f(3)],
     "attrs": {"act_type": "prelu"}, **F32_IN_F64},
    {"name": "gelu_f16", "op": "LeakyReLU", "inputs": [_f(3, 4, dtype="float16")],
     "attrs": {"act_type": "gelu"}, **F16},
    {"name": "prelu_f16", "op": "LeakyReLU",
     "inputs": [_f(2, 3, 4, dtype="float16"), _f(3, dtype="float16")],
     "attrs": {"act_type": "prelu"}, **F16},
    {"name": "fc_f16", "op": "FullyConnected",
     "inputs": [_f(2, 3, 4, dtype="float16"), _f(5, 12, dtype="float16"),
                _f(5, dtype="float16")], "attrs": {"num_hidden": 5}, **F16},
    {"name": "fc_no_flatten_f64", "op": "FullyConnected",
     "inputs": [_f(2, 3, 4), _f(5, 4)], "attrs": {"num_hidden": 5, "flatten": False,
                                                  "no_bias": True}, "rtol": 1e-12},
    {"name": "softmin_temperature_f16", "op": "softmin", "inputs": [_f(3, 5, dtype="float16")],
     "attrs": {"temperature": 3.0}, **F16},
    {"name": "log_softmax_f16_to_f64", "op": "log_softmax",
     "inputs": [_f(3, 5, dtype="float16")], "attrs": {"dtype": "float64"}, **F16},
    {"name": "softmax_act_channel_f16", "op": "SoftmaxActivation",
     "inputs": [_f(2, 3, 4, dtype="float16")], "attrs": {"mode": "channel"}, **F16},
]


@pytest.mark.parametrize("opset", sorted({13, 20, max(OPSETS)}))
@pytest.mark.parametrize("case", DTYPE_CASES, ids=[c["name"] for c in DTYPE_CASES])
def test_dtype_paths(case, opset):
    params = _weights(case)
    check_export(case, _executor_golden(case), opset, params)

"""ONNX export of the normalisation ops (ops/nn/norm.py) against MXNet 1.9.1's goldens
(tests/golden/ops/norm.npz), at opset 13 and the newest opset, with gamma/beta/moving
statistics as graph inputs and as initializers; plus BatchNorm's fix_gamma (MXNet's own exporter
used gamma's stored value), the lowering choices, and dynamic batch.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_dynamic, check_export, export_case, run_ort
from tests.ops import cases_norm
from tests.ops._check import load_golden

GOLDEN = load_golden("norm")
CASES = {c["name"]: c for c in cases_norm.CASES}


def _weights(case: dict) -> list[str]:
    """Inputs that are parameters in a model: everything but the data."""
    return [f"in{i}" for i in range(1, len(case["inputs"]))]


# --- BatchNorm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", OPSETS)
def test_bn_fix_gamma_ignores_stored_gamma(opset):
    """fix_gamma=True (the default) treats gamma as 1 whatever the .params file holds; MXNet's
    own exporter fed the stored gamma to BatchNormalization."""
    case, golden = CASES["bn_default"], GOLDEN["bn_default"]
    gamma = golden["inputs"][1]
    assert not np.allclose(gamma, 1), "the case must store a gamma that is not 1"
    model, _, data, _ = export_case(case, golden, opset, params=_weights(case))
    assert "in1" not in {i.name for i in model.graph.initializer}
    got = run_ort(model, data)[0]
    np.testing.assert_allclose(got, golden["outputs"][0], rtol=1e-5, atol=1e-6)
    x, _, beta, mean, var = golden["inputs"]
    with_gamma = ((x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-3)
                  * gamma[:, None, None] + beta[:, None, None])
    assert not np.allclose(got, with_gamma, atol=1e-3)


@pytest.mark.parametrize("name", ["bn_axis_neg1", "bn_axis2_4d"])
def test_bn_other_axis_is_transposed_to_axis1(name):
    model, _, data, _ = export_case(CASES[name], GOLDEN[name], 17)
    assert [n.op_type for n in model.graph.node] == ["Transpose", "BatchNormalization",
                                                     "Transpose"]


def test_bn_output_mean_var_outputs():
    """At inference MXNet's mean/var outputs are moving_mean and 1/sqrt(moving_var + eps)."""
    case, golden = CASES["bn_output_mean_var"], GOLDEN["bn_output_mean_var"]
    model, _, data, _ = export_case(case, golden, 17, params=_weights(case))
    got = run_ort(model, data)
    assert len(got) == 3
    for g, w in zip(got, golden["outputs"]):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_bn_hidden_outputs_not_exported():
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    params = {"bn_gamma": np.ones(3, np.float32), "bn_beta": np.zeros(3, np.float32),
              "bn_moving_mean": np.zeros(3, np.float32), "bn_moving_var": np.ones(3, np.float32)}
    model = export_symbol(bn, params, in_shapes=[(2, 3, 4)])
    assert [n.op_type for n in model.graph.node] == ["BatchNormalization"]
    assert len(model.graph.node[0].output) == 1


# --- LayerNorm / GroupNorm / hidden outputs ------------------------------------------------------
@pytest.mark.parametrize("opset, name, fused", [
    (17, "ln_default", True), (13, "ln_default", False), (17, "ln_axis1", False),
    (17, "ln_output_mean_var", False)])
def test_ln_lowering(opset, name, fused):
    """LayerNormalization only where ONNX's axis..end equals MXNet's single axis."""
    types = {n.op_type for n in export_case(CASES[name], GOLDEN[name], opset)[0].graph.node}
    assert ("LayerNormalization" in types) == fused


def test_gn_is_grouped_instance_norm():
    """Per-group gamma/beta (MXNet 1.9.1): Reshape(N, G, -1) + InstanceNormalization + back."""
    name = "gn_three_groups_4d"
    model = export_case(CASES[name], GOLDEN[name], 17, params=["in1", "in2"])[0]
    assert [n.op_type for n in model.graph.node] == ["Reshape", "InstanceNormalization",
                                                     "Reshape"]


def test_lrn_default_knorm_is_mxnets():
    """MXNet's knorm default is 2 (MXNet's own exporter wrote ONNX's bias default of 1)."""
    model = export_symbol(mx.sym.LRN(mx.sym.var("x"), nsize=3), {}, in_shapes=[(1, 3, 2, 2)])
    bias = next(a.f for a in model.graph.node[0].attribute if a.name == "bias")
    assert bias == 2.0


def _read_hidden(sym, in_shapes: dict):
    """Export a graph whose JSON also returns the last node's hidden output 1 (the Symbol API
    cannot index it, a hand-edited JSON can)."""
    import json

    graph = json.loads(sym.tojson())
    node_id = len(graph["nodes"]) - 1
    graph["heads"] = [[node_id, 0, 0], [node_id, 1, 0]]
    return export_symbol(mx.sym.load_json(json.dumps(graph)), {}, in_shapes=in_shapes)


@pytest.mark.parametrize("make, shapes", [
    (lambda x: mx.sym.InstanceNorm(x, mx.sym.var("g"), mx.sym.var("b"), name="node"),
     {"x": (2, 3, 4), "g": (3,), "b": (3,)}),
    (lambda x: mx.sym.InstanceNorm(x, mx.sym.var("g"), mx.sym.var("b"), eps=0.1, name="node"),
     {"x": (2, 3, 2, 3), "g": (3,), "b": (3,)}),
    (lambda x: mx.sym.L2Normalization(x, name="node"), {"x": (2, 3)}),
    (lambda x: mx.sym.L2Normalization(x, name="node"), {"x": (5,)}),
    (lambda x: mx.sym.L2Normalization(x, mode="channel", name="node"), {"x": (2, 3, 2, 2)}),
    (lambda x: mx.sym.L2Normalization(x, mode="spatial", name="node"), {"x": (2, 3, 4)}),
    (lambda x: mx.sym.LRN(x, nsize=3, name="node"), {"x": (1, 3, 2, 2)}),
    (lambda x: mx.sym.LRN(x, nsize=5, alpha=0.01, beta=0.5, knorm=1.0, name="node"),
     {"x": (2, 6, 2, 3)}),
], ids=["in_3d", "in_4d", "l2_instance", "l2_1d", "l2_channel", "l2_spatial", "lrn3", "lrn5"])
def test_hidden_output_read_is_exported(make, shapes):
    """A graph reading a hidden output (a backward graph reads InstanceNorm's mean/var,
    L2Normalization's norm, LRN's tmp_norm) exports it, equal to the numpy compute (rtol 1e-5:
    the composition's float32 rounding)."""
    sym = make(mx.sym.var("x"))
    assert len(sym.list_outputs()) == 1  # the output is hidden
    rng = np.random.RandomState(0)
    feed = {k: rng.uniform(0.5, 1.5, v).astype(np.float32) for k, v in shapes.items()}
    got = run_ort(_read_hidden(sym, shapes), feed)
    op = sym.get_internals()._outputs[-1][0]
    want = op.op.run(op.params, [feed[k] for k in shapes])
    for k in (0, 1):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6,
                                   err_msg=f"output {k}")


# --- dynamic batch -------------------------------------------------------------------------------
DYNAMIC = ["bn_default", "bn_axis_neg1", "bn_f16_data", "sync_bn", "ln_default", "ln_axis1",
           "ln_output_mean_var", "in_4d", "gn_three_groups_4d", "gn_output_mean_var",
           "l2_instance_4d", "l2_channel", "lrn_nsize3", "bn_relu_default",
           "bn_relu_output_mean_var"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, {"in0": 0}, params=_weights(CASES[name]))


# --- dtype paths the MXNet cases do not reach (reference: the numpy executor) -------------------
def _executor_golden(case: dict) -> dict:
    """Random inputs for ``case`` and the numpy executor's outputs for them (that executor is
    checked against MXNet for these dtypes in tests/ops)."""
    from tests.ops._check import _build_sym, forward

    rng = np.random.RandomState(12)
    inputs = [rng.uniform(0.5, 2, spec["shape"]).astype(spec["dtype"])
              for spec in case["inputs"]]
    sym, feed = _build_sym(case, {"inputs": inputs})
    return {"inputs": inputs, "outputs": forward(sym, feed)}


def _f(*shape, dtype="float64"):
    return {"shape": shape, "dtype": dtype}


F64 = {"rtol": 1e-10, "atol": 1e-12}
F16 = {"rtol": 2e-3, "atol": 2e-3}
DTYPE_CASES = [
    {"name": "in_f64", "op": "InstanceNorm", "inputs": [_f(2, 3, 4), _f(3), _f(3)], **F64},
    {"name": "in_f16", "op": "InstanceNorm",
     "inputs": [_f(2, 3, 4, dtype="float16"), _f(3, dtype="float16"), _f(3, dtype="float16")],
     **F16},
    {"name": "gn_f64", "op": "GroupNorm", "inputs": [_f(2, 4, 3), _f(2), _f(2)],
     "attrs": {"num_groups": 2}, **F64},
    {"name": "gn_f16", "op": "GroupNorm",
     "inputs": [_f(2, 4, 3, dtype="float16"), _f(2, dtype="float16"), _f(2, dtype="float16")],
     "attrs": {"num_groups": 2, "output_mean_var": True}, **F16},
    {"name": "ln_axis0_f64", "op": "LayerNorm", "inputs": [_f(3, 2, 4), _f(3), _f(3)],
     "attrs": {"axis": 0, "output_mean_var": True}, **F64},
    {"name": "ln_f16_stats", "op": "LayerNorm",
     "inputs": [_f(2, 6, dtype="float16"), _f(6, dtype="float16"), _f(6, dtype="float16")],
     "attrs": {"output_mean_var": True}, **F16},
    {"name": "l2_spatial_f16", "op": "L2Normalization", "inputs": [_f(2, 3, 4, dtype="float16")],
     "attrs": {"mode": "spatial"}, **F16},
    {"name": "lrn_f64", "op": "LRN", "inputs": [_f(1, 4, 2, 2)], "attrs": {"nsize": 3},
     "rtol": 1e-6, "atol": 1e-7},  # float32 inside: onnxruntime has no double LRN
    {"name": "lrn_f16", "op": "LRN", "inputs": [_f(1, 4, 2, 2, dtype="float16")],
     "attrs": {"nsize": 3}, **F16},
    {"name": "bn_1d", "op": "BatchNorm", "inputs": [_f(3), _f(3), _f(3), _f(3), _f(3)],
     "attrs": {"axis": 0, "fix_gamma": False}, **F64},
    {"name": "bn_axis0_f64", "op": "BatchNorm",
     "inputs": [_f(3, 2, 2), _f(3), _f(3), _f(3), _f(3)], "attrs": {"axis": 0}, **F64},
    {"name": "sync_bn_f16_stats", "op": "_contrib_SyncBatchNorm",
     "inputs": [_f(2, 3, 2, dtype="float16"), _f(3, dtype="float32"), _f(3, dtype="float32"),
                _f(3, dtype="float32"), _f(3, dtype="float32")],
     "attrs": {"fix_gamma": False, "output_mean_var": True, "key": "k"}, **F16},
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", DTYPE_CASES, ids=[c["name"] for c in DTYPE_CASES])
def test_dtype_paths(case, opset):
    check_export(case, _executor_golden(case), opset, _weights(case))

"""ONNX export of the legacy output heads (ops/nn/output.py) against MXNet 1.9.1's
goldens (tests/golden/ops/output.npz), at opset 13 and the newest opset. Their label inputs are
not ONNX inputs (the exporter drops variables used only as labels).

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_dynamic, export_case, run_ort
from tests.ops import cases_output
from tests.ops._check import _compare, load_golden

GOLDEN = load_golden("output")
CASES = {c["name"]: c for c in cases_output.CASES}
TRAIN = {c["name"]: c for c in cases_output.TRAIN_CASES}


@pytest.mark.parametrize("name", ["softmax_output_2d", "linear_regression", "svm_output_3d",
                                  "logistic_regression"])
def test_label_is_not_an_input(name):
    model = export_case(CASES[name], GOLDEN[name], 17)[0]
    assert [i.name for i in model.graph.input] == ["in0"]


def test_legacy_mlp_head_exports_with_data_only():
    """fc -> SoftmaxOutput with an implicit softmax_label variable, weights as params: the
    ONNX model has one input, ``data``, and gives the softmax of the dense layer."""
    rng = np.random.RandomState(0)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="softmax")
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]
    params = {"fc_weight": rng.uniform(-1, 1, (4, 6)).astype(np.float32),
              "fc_bias": rng.uniform(-1, 1, 4).astype(np.float32)}
    model = export_symbol(net, params, in_shapes=[(3, 6)])
    assert [i.name for i in model.graph.input] == ["data"]
    x = rng.uniform(-1, 1, (3, 6)).astype(np.float32)
    z = x @ params["fc_weight"].T + params["fc_bias"]
    want = np.exp(z - z.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(run_ort(model, {"data": x})[0], want, rtol=1e-5, atol=1e-7)


DYNAMIC = ["softmax_output_2d", "softmax_output_3d_flattened", "softmax_output_multi",
           "softmax_output_preserve_shape", "logistic_regression", "svm_output_3d"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    """Batch 1 and 4 vs the numpy executor; the label input is resized with the batch too (the
    executor infers from it; the ONNX model has no label input)."""
    axes = {"in0": 0, "in1": 0}
    check_dynamic(CASES[name], GOLDEN[name], opset, axes)


def test_softmax_output_flattened_dynamic_keeps_shape():
    case = TRAIN["train_softmax_output_4d_flattened"]
    model, sym, data, _ = export_case(case, GOLDEN[case["name"]], 17,
                                      dynamic_axes={"in0": {0: "n"}})
    x = np.random.RandomState(5).uniform(-3, 3, (5, 3, 2, 2)).astype(np.float32)
    got = run_ort(model, {"in0": x})
    flat = np.exp(x.reshape(5, -1) - x.reshape(5, -1).max(1, keepdims=True))
    want = (flat / flat.sum(1, keepdims=True)).reshape(x.shape)
    _compare(case, got, [want], "dynamic flattened")


# CTCLoss: the Loop runs as many steps as the data has; time and batch vary at run time.
CTC_FEEDS = {
    "ctc_blank_first": lambda rng, t, n: [
        rng.uniform(-2, 2, (t, n, 5)).astype(np.float32),
        rng.randint(0, 5, (n, 3)).astype(np.float32)],
    "ctc_both_lengths_last": lambda rng, t, n: [
        rng.uniform(-2, 2, (t, n, 4)).astype(np.float32),
        rng.randint(0, 3, (n, 3)).astype(np.int32),
        rng.randint(0, t + 1, n).astype(np.float32),
        rng.randint(0, 4, n).astype(np.int32)],
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(CTC_FEEDS))
def test_ctc_dynamic_time_and_batch(name, opset):
    """ONNX (a Loop over time) equals the numpy executor at other sequence lengths and batch
    sizes, infeasible samples (0) and empty labels included."""
    from tests.ops._check import forward

    case = CASES[name]
    n_in = len(case["inputs"])
    dyn = {"in0": {0: "t", 1: "n"}, "in1": {0: "n"}}
    dyn.update({f"in{i}": {0: "n"} for i in range(2, n_in)})
    model, sym, _, _ = export_case(case, GOLDEN[name], opset, dynamic_axes=dyn)
    assert [i.name for i in model.graph.input] == [f"in{i}" for i in range(n_in)]
    rng = np.random.RandomState(3)
    for t, n in ((3, 1), (9, 6)):
        feed = dict(zip([f"in{i}" for i in range(n_in)], CTC_FEEDS[name](rng, t, n)))
        want = forward(sym, feed)
        assert want[0].shape == (n,)
        _compare(case, run_ort(model, feed), want, f"dynamic t={t} n={n}")

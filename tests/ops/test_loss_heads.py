"""The loss heads' backward rules against MXNet 1.9.1 (issue 14), beyond the case rows.

``tests/golden/ops/loss_heads.npz`` (made by ``tests/golden/ops/gen_loss_heads.py``) crosses
SoftmaxOutput's settings (normalization null/batch/valid, use_ignore/ignore_label,
multi_output, preserve_shape, smooth_alpha, out_grad, probability labels) and the regression,
SVM and MakeLoss heads; each case's data gradient for a fixed head gradient is compared through
the imperative tape (rtol 1e-5 / atol 1e-6: the same float32 formula) and through the backward
graph exported to ONNX where the kernel lowers (rtol 1e-5 / atol 1e-6).

CTCLoss's gradient (float32 only, so the float64 finite differences of test_grads.py cannot
run) is checked here against float32 central differences of its loss (eps 1e-2, rtol 2e-3 /
atol 2e-4: float32 differences of a float32 loss), and its exported backward (onnxruntime)
against the numpy kernel.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from tests.ops import cases_output
from tests.ops._gradcheck import GOLDEN_DIR, graph_grads, make_inputs, tape_grads

_PATH = os.path.join(GOLDEN_DIR, "loss_heads.npz")
GOLDEN = dict(np.load(_PATH)) if os.path.exists(_PATH) else {}

# as gen_loss_heads.py's CASES: name -> (op, attrs)
CASES = {
    "so_batch": ("SoftmaxOutput", {"normalization": "batch"}),
    "so_valid_ignore": ("SoftmaxOutput", {"normalization": "valid", "use_ignore": True,
                                          "ignore_label": 2}),
    "so_valid_no_use_ignore": ("SoftmaxOutput", {"normalization": "valid", "ignore_label": 2}),
    "so_ignore_null": ("SoftmaxOutput", {"use_ignore": True, "ignore_label": 0,
                                         "grad_scale": 0.5}),
    "so_smooth_batch": ("SoftmaxOutput", {"smooth_alpha": 0.2, "normalization": "batch"}),
    "so_smooth_ignore": ("SoftmaxOutput", {"smooth_alpha": 0.1, "use_ignore": True,
                                           "ignore_label": 1}),
    "so_out_grad": ("SoftmaxOutput", {"out_grad": True, "grad_scale": 3.0}),
    "so_multi_null": ("SoftmaxOutput", {"multi_output": True}),
    "so_multi_batch": ("SoftmaxOutput", {"multi_output": True, "normalization": "batch"}),
    "so_multi_valid_ignore": ("SoftmaxOutput", {"multi_output": True, "normalization": "valid",
                                                "use_ignore": True, "ignore_label": 1}),
    "so_multi_smooth_ignored": ("SoftmaxOutput", {"multi_output": True, "smooth_alpha": 0.3}),
    "so_preserve_batch": ("SoftmaxOutput", {"preserve_shape": True, "normalization": "batch"}),
    "so_preserve_valid_ignore": ("SoftmaxOutput", {"preserve_shape": True,
                                                   "normalization": "valid", "use_ignore": True,
                                                   "ignore_label": 3}),
    "so_flat_3d": ("SoftmaxOutput", {"normalization": "batch"}),
    "so_prob_label": ("SoftmaxOutput", {"grad_scale": 2.0}),
    "so_prob_label_out_grad": ("SoftmaxOutput", {"out_grad": True}),
    "linear_scale": ("LinearRegressionOutput", {"grad_scale": 2.0}),
    "linear_col": ("LinearRegressionOutput", {}),
    "mae_3d": ("MAERegressionOutput", {"grad_scale": 0.5}),
    "logistic": ("LogisticRegressionOutput", {}),
    "svm_l2": ("SVMOutput", {"margin": 0.5, "regularization_coefficient": 2.0}),
    "svm_l1": ("SVMOutput", {"use_linear": True}),
    "make_loss_batch": ("MakeLoss", {"normalization": "batch", "grad_scale": 2.0}),
    "make_loss_valid": ("MakeLoss", {"normalization": "valid", "valid_thresh": 0.3}),
}


def _case(name: str) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    if not GOLDEN:
        pytest.skip("tests/golden/ops/loss_heads.npz is missing")
    ins = [GOLDEN[f"{name}/data"]]
    if f"{name}/label" in GOLDEN:
        ins.append(GOLDEN[f"{name}/label"])
    return ins, GOLDEN[f"{name}/hg"], GOLDEN[f"{name}/grad"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_tape_matches_mxnet(name):
    op, attrs = CASES[name]
    ins, hg, want = _case(name)
    got = tape_grads(op, ins, attrs, [hg])
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    if len(ins) > 1:  # the label gets no gradient, as in MXNet
        assert not got[1].any()


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_backward_matches_mxnet(name):
    op, attrs = CASES[name]
    ins, hg, want = _case(name)
    case = {"op": op, "attrs": attrs}
    got = graph_grads(case, ins, [hg], backend="onnx")
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)


def test_head_gradient_ignored_unless_out_grad():
    """MXNet's loss heads ignore the head gradient: scaling it changes nothing."""
    ins, hg, want = _case("so_batch")
    op, attrs = CASES["so_batch"]
    np.testing.assert_allclose(tape_grads(op, ins, attrs, [hg * 7])[0], want, rtol=1e-5,
                               atol=1e-6)


CTC_ROWS = [pytest.param(c, id=c["name"]) for c in cases_output.CASES
            if c["op"] in ("CTCLoss", "_contrib_CTCLoss", "ctc_loss", "_contrib_ctc_loss")]


@pytest.mark.parametrize("case", CTC_ROWS)
def test_ctc_gradient_is_its_loss_derivative(case):
    inputs = make_inputs(case)
    attrs = case.get("attrs", {})
    hg = np.random.RandomState(0).standard_normal(inputs[1].shape[0]).astype(np.float32)
    got = tape_grads(case["op"], inputs, attrs, [hg])[0]

    def loss(data: np.ndarray) -> float:
        args = [mx.nd.array(data)] + [mx.nd.array(x) for x in inputs[1:]]
        out = mx.nd.invoke(case["op"], args, dict(attrs)).asnumpy().astype(np.float64)
        return float(np.sum(out * hg))

    eps = 1e-2
    num = np.zeros(inputs[0].shape)
    for idx in np.ndindex(*inputs[0].shape):
        plus, minus = inputs[0].copy(), inputs[0].copy()
        plus[idx] += eps
        minus[idx] -= eps
        num[idx] = (loss(plus) - loss(minus)) / (2 * eps)
    if attrs.get("use_data_lengths"):  # MXNet masks t >= trunc(length), even where lround
        cut = np.trunc(inputs[2]).astype(int)  # makes the loss depend on the step
        num[np.arange(num.shape[0])[:, None] >= cut[None, :]] = 0
    np.testing.assert_allclose(got, num, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("case", CTC_ROWS)
def test_ctc_exported_backward_matches_numpy(case):
    """The CTC backward lowering (two ONNX Loops and a class scatter) run by onnxruntime gives
    the numpy kernel's gradient (rtol 1e-4 / atol 1e-5: float32 log-space sums in another
    order), rows MXNet has no reference for included."""
    inputs = make_inputs(case)
    attrs = case.get("attrs", {})
    hg = np.random.RandomState(0).standard_normal(inputs[1].shape[0]).astype(np.float32)
    want = tape_grads(case["op"], inputs, attrs, [hg])[0]
    got = graph_grads({"op": case["op"], "attrs": attrs}, inputs, [hg], backend="onnx")[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

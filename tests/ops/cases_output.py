"""Case table for ops/nn/output.py (plain data; see tests/ops/_check.py).

``TRAIN_CASES`` are generated under MXNet's ``autograd.train_mode()``. The forward pass of these
ops is the same in training, but there MXNet always runs its reference kernels: MXNet 1.9.1's
CPU (oneDNN) *inference* path for ``SoftmaxOutput`` on float32 data of rank 1, 2 or 4 normalises
over the last axis instead of flattening to ``(N, -1)`` as the reference (and GPU) kernel does.
gluonport follows the reference kernel, so 4-d float32 cases live here.
"""


# float32 forward algorithm over a few steps (MXNet sums in float32; here in float64)
CTC_TOL = {"rtol": 1e-5, "atol": 1e-5}


def _f(*shape, dtype="float32", low=-1.0, high=1.0):
    return {"shape": shape, "dtype": dtype, "low": low, "high": high}


def _label(*shape, classes=3, dtype="float32"):
    return {"shape": shape, "dtype": dtype, "low": 0, "high": classes}


CASES = [
    # SoftmaxOutput: label only matters for backward; its shape is checked / inferred
    {"name": "softmax_output_2d", "op": "SoftmaxOutput",
     "inputs": [_f(2, 5, low=-3, high=3), _label(2)]},
    # float64 never takes MXNet's oneDNN path: the reference kernel flattens to (N, -1)
    {"name": "softmax_output_4d_f64_flattened", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, dtype="float64", low=-3, high=3), _label(2, 3, 2, dtype="float64")],
     "rtol": 1e-12, "atol": 1e-12},
    {"name": "softmax_output_3d_flattened", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 4, low=-3, high=3), _label(2, 3)]},
    {"name": "softmax_output_multi", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, low=-3, high=3), _label(2, 4)], "attrs": {"multi_output": True}},
    {"name": "softmax_output_multi_label_nd", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, low=-3, high=3), _label(2, 2, 2)],
     "attrs": {"multi_output": True}},
    {"name": "softmax_output_preserve_shape", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 4, low=-3, high=3), _label(2, 3)], "attrs": {"preserve_shape": True}},
    {"name": "softmax_output_prob_label", "op": "SoftmaxOutput",
     "inputs": [_f(2, 4, low=-3, high=3), _f(2, 4, low=0, high=1)]},
    {"name": "softmax_output_attrs", "op": "SoftmaxOutput",
     "inputs": [_f(3, 4, low=-3, high=3), _label(3)],
     "attrs": {"grad_scale": 2.0, "ignore_label": 1.0, "use_ignore": True,
               "normalization": "valid", "smooth_alpha": 0.1, "out_grad": False}},
    {"name": "softmax_alias", "op": "Softmax", "inputs": [_f(2, 5, low=-3, high=3), _label(2)]},
    {"name": "softmax_output_f64", "op": "SoftmaxOutput",
     "inputs": [_f(2, 5, dtype="float64"), _label(2, dtype="float64")],
     "rtol": 1e-12, "atol": 1e-12},
    # regression heads
    {"name": "linear_regression", "op": "LinearRegressionOutput", "inputs": [_f(2, 3), _f(2, 3)]},
    {"name": "linear_regression_col", "op": "LinearRegressionOutput",
     "inputs": [_f(4, 1), _f(4)], "attrs": {"grad_scale": 0.5}},
    {"name": "mae_regression", "op": "MAERegressionOutput", "inputs": [_f(2, 3, 2), _f(2, 3, 2)]},
    {"name": "logistic_regression", "op": "LogisticRegressionOutput",
     "inputs": [_f(3, 4, low=-6, high=6), _f(3, 4, low=0, high=1)]},
    {"name": "logistic_regression_f64", "op": "LogisticRegressionOutput",
     "inputs": [_f(3, 2, dtype="float64", low=-6, high=6), _f(3, 2, dtype="float64")],
     "rtol": 1e-12, "atol": 1e-12},
    {"name": "svm_output", "op": "SVMOutput", "inputs": [_f(3, 4), _label(3, classes=4)],
     "attrs": {"margin": 0.5, "regularization_coefficient": 2.0, "use_linear": True}},
    {"name": "svm_output_3d", "op": "SVMOutput", "inputs": [_f(2, 3, 4), _label(2, 3)]},
    # identity markers
    {"name": "make_loss_legacy", "op": "MakeLoss", "inputs": [_f(2, 3)],
     "attrs": {"grad_scale": 3.0, "valid_thresh": 0.1, "normalization": "batch"}},
    {"name": "make_loss", "op": "make_loss", "inputs": [_f(2, 3)]},
    {"name": "block_grad", "op": "BlockGrad", "inputs": [_f(2, 3, 4)]},
    {"name": "stop_gradient_int32", "op": "stop_gradient",
     "inputs": [_f(2, 3, dtype="int32", low=-9, high=9)]},
    # CTCLoss: (T, N, C) activations, (N, L) labels; 0 pads with blank 'first', -1 with 'last'
    {"name": "ctc_blank_first", "op": "CTCLoss",
     "inputs": [_f(6, 4, 5, low=-2, high=2),
                {"value": [[1, 2, 0], [3, 3, 0], [4, 1, 2], [0, 0, 0]]}], **CTC_TOL},
    {"name": "ctc_blank_last", "op": "CTCLoss",
     "inputs": [_f(6, 3, 5, low=-2, high=2), {"value": [[0, 1, -1], [2, 2, 2], [3, 0, 1]]}],
     "attrs": {"blank_label": "last"}, **CTC_TOL},
    # 3 labels with 2 repeats need 5 steps: no alignment fits in 4, MXNet gives 0
    {"name": "ctc_infeasible_is_zero", "op": "CTCLoss",
     "inputs": [_f(4, 2, 3, low=-2, high=2), {"value": [[1, 1, 1, 0], [2, 1, 0, 0]]}],
     **CTC_TOL},
    # lengths are rounded half away from zero (C lround): 4.5 -> 5, 2.4 -> 2
    {"name": "ctc_data_lengths", "op": "CTCLoss",
     "inputs": [_f(7, 3, 4, low=-2, high=2), {"value": [[1, 2, 0], [3, 0, 0], [2, 2, 1]]},
                {"value": [7, 2.4, 4.5]}],
     "attrs": {"use_data_lengths": True}, **CTC_TOL},
    # with label lengths a 0 inside the length is a label (the blank's own value)
    {"name": "ctc_label_lengths", "op": "_contrib_CTCLoss",
     "inputs": [_f(5, 3, 4, low=-2, high=2), {"value": [[1, 0, 3], [2, 2, 9], [3, 1, 2]]},
                {"value": [2, 0, 3]}],
     "attrs": {"use_label_lengths": True}, **CTC_TOL,
     # sample 0's label holds the blank's value inside its length: MXNet's loss is matched, but
     # its (warp-ctc) gradient there is not that loss's derivative (ours is, by differences)
     "no_grad_golden": "MXNet's gradient for a label equal to the blank is not the derivative "
                       "of its loss"},
    {"name": "ctc_both_lengths_last", "op": "ctc_loss",
     "inputs": [_f(6, 2, 4, low=-3, high=3), {"value": [[0, 1, 5], [2, 2, 1]], "dtype": "int32"},
                {"value": [5, 6]}, {"value": [2, 3], "dtype": "int32"}],
     "attrs": {"use_data_lengths": True, "use_label_lengths": True, "blank_label": "last"},
     **CTC_TOL},
    {"name": "ctc_label_values_rounded", "op": "_contrib_ctc_loss",
     "inputs": [_f(5, 2, 4, low=-2, high=2), {"value": [[1.4, 2.5, 0.0], [0.6, 3.0, 0.3]]}],
     **CTC_TOL},
]

TRAIN_CASES = [
    {"name": "train_softmax_output_4d_flattened", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, low=-3, high=3), _label(2, 3, 2)]},
    {"name": "train_softmax_output_4d_preserve_shape", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, low=-3, high=3), _label(2, 3, 2)],
     "attrs": {"preserve_shape": True}},
    {"name": "train_softmax_output_4d_multi", "op": "SoftmaxOutput",
     "inputs": [_f(2, 3, 2, 2, low=-3, high=3), _label(2, 4)], "attrs": {"multi_output": True}},
]


# Gradients: these heads have MXNet's loss backward (the head gradient ignored: softmax minus
# one-hot, output minus label, hinge rows, grad_scale), not the derivative of their forward
# pass, so finite differences cannot check them; the MXNet golden does. CTCLoss computes in
# float32 only (finite differences run in float64); its golden checks it, and
# tests/ops/test_train_mode.py differentiates it in float32.
_NO_FD = {
    "SoftmaxOutput": "MXNet's loss backward (softmax - onehot(label)), not the forward's "
                     "derivative",
    "Softmax": "MXNet's loss backward (softmax - onehot(label)), not the forward's derivative",
    "LinearRegressionOutput": "MXNet's loss backward (output - label)",
    "MAERegressionOutput": "MXNet's loss backward (sign(output - label))",
    "LogisticRegressionOutput": "MXNet's loss backward (sigmoid(x) - label)",
    "SVMOutput": "MXNet's hinge-loss backward",
    "MakeLoss": "MXNet's loss backward (grad_scale, the head gradient ignored)",
    "make_loss": "MXNet's loss backward (ones, the head gradient ignored)",
    "CTCLoss": "CTCLoss computes in float32 only",
    "_contrib_CTCLoss": "CTCLoss computes in float32 only",
    "ctc_loss": "CTCLoss computes in float32 only",
    "_contrib_ctc_loss": "CTCLoss computes in float32 only",
}
for _case in CASES + TRAIN_CASES:
    if _case["op"] in _NO_FD:
        _case.setdefault("no_fd", _NO_FD[_case["op"]])

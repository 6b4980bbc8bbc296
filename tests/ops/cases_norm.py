"""Case table for ops/nn/norm.py (plain data; see tests/ops/_check.py).

``TRAIN_CASES`` run in MXNet under ``autograd.train_mode()`` (batch statistics); the tests
compare them with the ops' training-mode compute.
"""


def _f(*shape, dtype="float32", low=-1.0, high=1.0):
    return {"shape": shape, "dtype": dtype, "low": low, "high": high}


def _bn_inputs(data_shape, c, dtype="float32", pdtype=None):
    """data, gamma, beta, moving_mean, moving_var (positive)."""
    pdtype = pdtype or dtype
    return [_f(*data_shape, dtype=dtype, low=-2, high=2), _f(c, dtype=pdtype, low=0.5, high=1.5),
            _f(c, dtype=pdtype), _f(c, dtype=pdtype, low=-0.5, high=0.5),
            _f(c, dtype=pdtype, low=0.5, high=2.0)]


def _ln_inputs(data_shape, c, dtype="float32"):
    return [_f(*data_shape, dtype=dtype, low=-2, high=2), _f(c, dtype=dtype, low=0.5, high=1.5),
            _f(c, dtype=dtype)]


F16 = {"rtol": 2e-3, "atol": 2e-3}
# MXNet 1.9.1 runs BatchNormWithReLU's backward through oneDNN, whose mask is the workspace its
# *training* forward writes; after an inference forward it reads an unwritten workspace (zeros
# or stale values). The training row checks the gradient against MXNet.
BN_RELU_INFER = {"no_grad_golden": "MXNet's oneDNN backward reads a workspace its inference "
                                   "forward never writes; train_bn_relu checks the gradient"}
# MXNet's rules pass only the data output's head gradient back: those of the visible mean/var
# (std) outputs are ignored, which finite differences of all outputs cannot reproduce.
STATS_IGNORED = {"no_fd": "MXNet ignores the head gradients of the mean/var outputs; the "
                          "golden checks the rule"}
F64 = {"rtol": 1e-10, "atol": 1e-12}

CASES = [
    # BatchNorm (inference: moving statistics; fix_gamma=True by default)
    {"name": "bn_default", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2, 2), 3)},
    {"name": "bn_fix_gamma_false", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2, 2), 3),
     "attrs": {"fix_gamma": False}},
    {"name": "bn_2d", "op": "BatchNorm", "inputs": _bn_inputs((4, 3), 3),
     "attrs": {"fix_gamma": False}},
    {"name": "bn_axis_neg1", "op": "BatchNorm", "inputs": _bn_inputs((2, 2, 3), 3),
     "attrs": {"fix_gamma": False, "axis": -1}},
    {"name": "bn_axis2_4d", "op": "BatchNorm", "inputs": _bn_inputs((2, 2, 3, 2), 3),
     "attrs": {"fix_gamma": False, "axis": 2}},
    {"name": "bn_eps", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2), 3),
     "attrs": {"fix_gamma": False, "eps": 0.5}},
    {"name": "bn_use_global_stats", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2), 3),
     "attrs": {"use_global_stats": True, "fix_gamma": False}},
    {"name": "bn_output_mean_var", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2), 3),
     "attrs": {"fix_gamma": False, "output_mean_var": True}},
    {"name": "bn_f64", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2), 3, "float64"),
     "attrs": {"fix_gamma": False}, **F64},
    {"name": "bn_f16_data", "op": "BatchNorm",
     "inputs": _bn_inputs((2, 3, 2), 3, "float16", "float32"),
     "attrs": {"fix_gamma": False}, **F16},
    {"name": "sync_bn", "op": "_contrib_SyncBatchNorm", "inputs": _bn_inputs((2, 3, 2, 2), 3),
     "attrs": {"key": "sbn0"}},
    {"name": "sync_bn_fix_gamma_false", "op": "_contrib_SyncBatchNorm",
     "inputs": _bn_inputs((2, 3, 4), 3), "attrs": {"key": "sbn1", "fix_gamma": False}},
    # inference mean/var outputs are left unwritten by MXNet: compare the output only
    {"name": "sync_bn_output_mean_var", "op": "_contrib_SyncBatchNorm",
     "inputs": _bn_inputs((2, 3, 4), 3),
     "attrs": {"key": "sbn2", "fix_gamma": False, "output_mean_var": True}, "compare": [0]},
    # LayerNorm
    {"name": "ln_default", "op": "LayerNorm", "inputs": _ln_inputs((2, 3, 4), 4)},
    {"name": "ln_axis1", "op": "LayerNorm", "inputs": _ln_inputs((2, 3, 4), 3),
     "attrs": {"axis": 1}},
    {"name": "ln_axis_neg2_4d", "op": "LayerNorm", "inputs": _ln_inputs((2, 3, 4, 2), 4),
     "attrs": {"axis": -2}},
    {"name": "ln_output_mean_var", "op": "LayerNorm", "inputs": _ln_inputs((2, 3, 4), 4),
     "attrs": {"output_mean_var": True}, **STATS_IGNORED},
    {"name": "ln_eps", "op": "LayerNorm", "inputs": _ln_inputs((3, 5), 5), "attrs": {"eps": 0.1}},
    {"name": "ln_f64", "op": "LayerNorm", "inputs": _ln_inputs((2, 5), 5, "float64"), **F64},
    {"name": "ln_f16", "op": "LayerNorm", "inputs": _ln_inputs((2, 8), 8, "float16"), **F16},
    # InstanceNorm
    {"name": "in_3d", "op": "InstanceNorm", "inputs": _ln_inputs((2, 3, 4), 3)},
    {"name": "in_4d", "op": "InstanceNorm", "inputs": _ln_inputs((2, 3, 2, 3), 3)},
    {"name": "in_eps", "op": "InstanceNorm", "inputs": _ln_inputs((2, 2, 5), 2),
     "attrs": {"eps": 0.25}},
    # GroupNorm: gamma/beta per group
    {"name": "gn_default", "op": "GroupNorm", "inputs": _ln_inputs((2, 4, 3), 1)},
    {"name": "gn_two_groups", "op": "GroupNorm", "inputs": _ln_inputs((2, 4, 3), 2),
     "attrs": {"num_groups": 2}},
    {"name": "gn_three_groups_4d", "op": "GroupNorm", "inputs": _ln_inputs((2, 6, 2, 2), 3),
     "attrs": {"num_groups": 3, "eps": 0.01}},
    {"name": "gn_output_mean_var", "op": "GroupNorm", "inputs": _ln_inputs((2, 4, 3), 2),
     "attrs": {"num_groups": 2, "output_mean_var": True}, **STATS_IGNORED},
    # L2Normalization
    {"name": "l2_instance_2d", "op": "L2Normalization", "inputs": [_f(3, 4)]},
    {"name": "l2_instance_4d", "op": "L2Normalization", "inputs": [_f(2, 3, 2, 2)]},
    {"name": "l2_instance_1d", "op": "L2Normalization", "inputs": [_f(5)]},
    {"name": "l2_channel", "op": "L2Normalization", "inputs": [_f(2, 3, 2, 2)],
     "attrs": {"mode": "channel"}},
    {"name": "l2_spatial", "op": "L2Normalization", "inputs": [_f(2, 3, 2, 2)],
     "attrs": {"mode": "spatial"}},
    {"name": "l2_spatial_3d_eps", "op": "L2Normalization", "inputs": [_f(2, 3, 4)],
     "attrs": {"mode": "spatial", "eps": 0.5}},
    {"name": "l2_f64", "op": "L2Normalization", "inputs": [_f(2, 6, dtype="float64")], **F64},
    # LRN
    {"name": "lrn_nsize3", "op": "LRN", "inputs": [_f(2, 5, 3, 3, low=-3, high=3)],
     "attrs": {"nsize": 3}},
    {"name": "lrn_nsize5_params", "op": "LRN", "inputs": [_f(1, 6, 2, 3, low=-3, high=3)],
     "attrs": {"nsize": 5, "alpha": 0.01, "beta": 0.5, "knorm": 1.0}},
    {"name": "lrn_nsize1", "op": "LRN", "inputs": [_f(1, 3, 2, 2, low=-3, high=3)],
     "attrs": {"nsize": 1, "alpha": 0.1}},
    # _contrib_BatchNormWithReLU: MXNet runs it (oneDNN) for 4-d float32 data, axis 1 only
    {"name": "bn_relu_default", "op": "_contrib_BatchNormWithReLU",
     "inputs": _bn_inputs((2, 3, 3, 4), 3), **BN_RELU_INFER},
    {"name": "bn_relu_fix_gamma_false_eps", "op": "_contrib_BatchNormWithReLU",
     "inputs": _bn_inputs((2, 4, 2, 3), 4), "attrs": {"fix_gamma": False, "eps": 0.01},
     **BN_RELU_INFER},
    {"name": "bn_relu_output_mean_var", "op": "_contrib_BatchNormWithReLU",
     "inputs": _bn_inputs((1, 3, 4, 4), 3),
     "attrs": {"fix_gamma": False, "output_mean_var": True, "use_global_stats": True},
     **BN_RELU_INFER},
]

TRAIN_CASES = [
    {"name": "train_bn_default", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2, 2), 3),
     "attrs": {"output_mean_var": True}},
    {"name": "train_bn_fix_gamma_false", "op": "BatchNorm", "inputs": _bn_inputs((4, 3), 3),
     "attrs": {"fix_gamma": False, "output_mean_var": True}},
    {"name": "train_bn_axis_neg1", "op": "BatchNorm", "inputs": _bn_inputs((2, 2, 3), 3),
     "attrs": {"fix_gamma": False, "axis": -1, "output_mean_var": True}},
    {"name": "train_bn_use_global_stats", "op": "BatchNorm", "inputs": _bn_inputs((2, 3, 2), 3),
     "attrs": {"fix_gamma": False, "use_global_stats": True}},
    {"name": "train_sync_bn", "op": "_contrib_SyncBatchNorm", "inputs": _bn_inputs((2, 3, 4), 3),
     "attrs": {"key": "tsbn", "fix_gamma": False, "output_mean_var": True}},
    {"name": "train_bn_relu", "op": "_contrib_BatchNormWithReLU",
     "inputs": _bn_inputs((2, 3, 2, 3), 3), "attrs": {"fix_gamma": False,
                                                     "output_mean_var": True}},
]

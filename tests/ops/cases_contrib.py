"""Case table for the contrib ops (ops/nn/attention.py, deformable.py, math/contrib.py,
vision/sampling.py, correlation.py) (plain data; see tests/ops/_check.py)."""

F = {"shape": (2, 3, 4)}
# interleaved projections: (seq, batch, heads * k * head_dim)
QKV = {"shape": (4, 2, 18)}          # heads=2, head_dim=3, k=3 (q, k, v)
ATT_SELF = {"shape": (4, 4, 4), "low": 0, "high": 1}     # (batch*heads, seq, seq)
Q = {"shape": (3, 2, 12)}            # heads=3, head_dim=4
KV = {"shape": (5, 2, 24)}
ATT_ENCDEC = {"shape": (6, 3, 5), "low": 0, "high": 1}   # (batch*heads, seq_q, seq_k)
AFFINE = {"value": [[0.9, 0.1, 0.05, -0.2, 1.1, 0.1], [1.2, -0.3, 0.0, 0.25, 0.8, -0.15]]}

CASES = [
    {"name": "div_sqrt_dim", "op": "_contrib_div_sqrt_dim", "inputs": [F]},
    {"name": "div_sqrt_dim_float16", "op": "_contrib_div_sqrt_dim",
     "inputs": [{"shape": (3, 5), "dtype": "float16"}], "rtol": 1e-3, "atol": 1e-3},
    {"name": "div_sqrt_dim_float64", "op": "_contrib_div_sqrt_dim",
     "inputs": [{"shape": (2, 7), "dtype": "float64"}]},
    {"name": "div_sqrt_dim_int32", "op": "_contrib_div_sqrt_dim",
     "inputs": [{"shape": (2, 9), "dtype": "int32", "low": -20, "high": 20}]},
    {"name": "selfatt_qk", "op": "_contrib_interleaved_matmul_selfatt_qk", "inputs": [QKV],
     "attrs": {"heads": 2}},
    {"name": "selfatt_qk_one_head", "op": "_contrib_interleaved_matmul_selfatt_qk",
     "inputs": [{"shape": (3, 1, 6)}], "attrs": {"heads": 1}},
    {"name": "selfatt_valatt", "op": "_contrib_interleaved_matmul_selfatt_valatt",
     "inputs": [QKV, ATT_SELF], "attrs": {"heads": 2}},
    {"name": "encdec_qk", "op": "_contrib_interleaved_matmul_encdec_qk", "inputs": [Q, KV],
     "attrs": {"heads": 3}},
    {"name": "encdec_valatt", "op": "_contrib_interleaved_matmul_encdec_valatt",
     "inputs": [KV, ATT_ENCDEC], "attrs": {"heads": 3}},
    {"name": "quadratic", "op": "_contrib_quadratic", "inputs": [F],
     "attrs": {"a": 1.5, "b": -2.0, "c": 0.25}},
    {"name": "quadratic_default", "op": "_contrib_quadratic", "inputs": [F]},
    {"name": "quadratic_int32", "op": "_contrib_quadratic",
     "inputs": [{"shape": (2, 5), "dtype": "int32", "low": -6, "high": 7}],
     "attrs": {"a": 1.5, "b": 2.0, "c": 0.5}},
    {"name": "quadratic_float16", "op": "_contrib_quadratic",
     "inputs": [{"shape": (2, 5), "dtype": "float16"}], "attrs": {"a": 0.5, "b": 3.0},
     "rtol": 1e-3, "atol": 1e-3},
    {"name": "gradientmultiplier", "op": "_contrib_gradientmultiplier", "inputs": [F],
     "attrs": {"scalar": -2.0},
     "no_fd": "by design its gradient is scalar * ograd while the forward is the identity"},
    {"name": "bilinear_sampler", "op": "BilinearSampler",
     "inputs": [{"shape": (2, 3, 5, 6)}, {"shape": (2, 2, 4, 3), "low": -1.3, "high": 1.3}]},
    {"name": "bilinear_sampler_upsample_float64", "op": "BilinearSampler",
     "inputs": [{"shape": (1, 2, 3, 4), "dtype": "float64"},
                {"shape": (1, 2, 6, 7), "low": -1, "high": 1, "dtype": "float64"}]},
    {"name": "bilinear_sampler_float16", "op": "BilinearSampler",
     "inputs": [{"shape": (1, 2, 3, 4), "dtype": "float16"},
                {"shape": (1, 2, 3, 3), "low": -1.1, "high": 1.1, "dtype": "float16"}],
     "rtol": 1e-2, "atol": 1e-2},
    {"name": "grid_affine", "op": "GridGenerator", "inputs": [AFFINE],
     "attrs": {"transform_type": "affine", "target_shape": (4, 5)}},
    {"name": "grid_warp", "op": "GridGenerator",
     "inputs": [{"shape": (2, 2, 3, 4), "low": -2, "high": 2}],
     "attrs": {"transform_type": "warp"}},
    {"name": "spatial_transformer", "op": "SpatialTransformer",
     "inputs": [{"shape": (2, 3, 6, 7)}, AFFINE],
     "attrs": {"transform_type": "affine", "sampler_type": "bilinear", "target_shape": (4, 5)},
     "no_fd": "a sample of image 0 lands exactly on the last pixel row (y = 5.0), a kink of "
              "bilinear sampling where MXNet takes the one-sided derivative"},
]

# deformable convolution: data (2, 4, 6, 7); offsets push samples across the border
DCN_DATA = {"shape": (2, 4, 6, 7)}
DCN_W = {"shape": (3, 4, 3, 3), "low": -0.5, "high": 0.5}
DCN_B = {"shape": (3,)}


def _offset(channels, h, w):
    return {"shape": (2, channels, h, w), "low": -1.7, "high": 1.7}


MASK9 = {"shape": (2, 9, 6, 7), "low": 0, "high": 1}

CASES += [
    {"name": "dcn", "op": "_contrib_DeformableConvolution",
     "inputs": [DCN_DATA, _offset(18, 6, 7), DCN_W, DCN_B],
     "attrs": {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1)}, "rtol": 1e-4, "atol": 1e-5},
    {"name": "dcn_stride_dilate_no_bias", "op": "_contrib_DeformableConvolution",
     "inputs": [DCN_DATA, _offset(18, 2, 3), DCN_W],
     "attrs": {"kernel": (3, 3), "num_filter": 3, "stride": (2, 2), "dilate": (2, 2),
               "pad": (1, 1), "no_bias": True}, "rtol": 1e-4, "atol": 1e-5},
    {"name": "dcn_groups", "op": "_contrib_DeformableConvolution",
     "inputs": [DCN_DATA, _offset(36, 4, 5), {"shape": (4, 2, 3, 3)}, {"shape": (4,)}],
     "attrs": {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "num_deformable_group": 2},
     "rtol": 1e-4, "atol": 1e-5},
    {"name": "dcn_float64", "op": "_contrib_DeformableConvolution",
     "inputs": [dict(DCN_DATA, dtype="float64"), dict(_offset(8, 5, 8), dtype="float64"),
                {"shape": (3, 4, 2, 2), "dtype": "float64"}, {"shape": (3,), "dtype": "float64"}],
     "attrs": {"kernel": (2, 2), "num_filter": 3, "pad": (0, 1)}},
    {"name": "mdcn", "op": "_contrib_ModulatedDeformableConvolution",
     "inputs": [DCN_DATA, _offset(18, 6, 7), MASK9, DCN_W, DCN_B],
     "attrs": {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1)}, "rtol": 1e-4, "atol": 1e-5},
    {"name": "mdcn_groups_no_bias", "op": "_contrib_ModulatedDeformableConvolution",
     "inputs": [DCN_DATA, _offset(36, 4, 5), {"shape": (2, 18, 4, 5), "low": 0, "high": 1},
                {"shape": (4, 2, 3, 3)}],
     "attrs": {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "num_deformable_group": 2,
               "no_bias": True}, "rtol": 1e-4, "atol": 1e-5},
]

CORR = {"shape": (2, 3, 7, 8)}
CASES += [
    {"name": "correlation_default", "op": "Correlation", "inputs": [CORR, CORR]},
    {"name": "correlation_flownet_like", "op": "Correlation", "inputs": [CORR, CORR],
     "attrs": {"kernel_size": 3, "max_displacement": 2, "stride1": 2, "stride2": 2,
               "pad_size": 2}},
    {"name": "correlation_abs_diff", "op": "Correlation",
     "inputs": [{"shape": (1, 3, 5, 6)}, {"shape": (1, 3, 5, 6)}],
     "attrs": {"kernel_size": 1, "max_displacement": 2, "stride2": 1, "pad_size": 1,
               "is_multiply": False}},
    {"name": "correlation_float64", "op": "Correlation",
     "inputs": [dict(CORR, dtype="float64"), dict(CORR, dtype="float64")],
     "attrs": {"kernel_size": 3, "max_displacement": 1, "stride1": 3, "pad_size": 1}},
    # khatri_rao: column-wise Kronecker product, the first matrix outermost
    {"name": "khatri_rao_two", "op": "khatri_rao",
     "inputs": [{"value": [[1, -1], [2, -3]]}, {"value": [[1, 4], [2, 5], [3, 6]]}]},
    {"name": "khatri_rao_three", "op": "khatri_rao",
     "inputs": [{"shape": (2, 4)}, {"shape": (3, 4)}, {"shape": (2, 4)}]},
    {"name": "khatri_rao_one", "op": "khatri_rao", "inputs": [{"shape": (3, 2)}]},
    {"name": "khatri_rao_float64", "op": "khatri_rao",
     "inputs": [{"shape": (3, 5), "dtype": "float64"}, {"shape": (4, 5), "dtype": "float64"}]},
]

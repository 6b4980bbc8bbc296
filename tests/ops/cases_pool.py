"""Case table for ops/nn/pool.py (plain data; see tests/ops/_check.py).

MXNet's oneDNN kernels refuse some legal settings on float32 (max pooling with pad >= kernel,
max pooling with the 'same' convention); those cases use float64, which MXNet runs on its
native kernel.
"""


def _t(*shape, dtype="float32", low=-1.0, high=1.0):
    return {"shape": shape, "dtype": dtype, "low": low, "high": high}


X = _t(1, 2, 6, 6)
X7 = _t(2, 2, 7, 7)
F16 = {"rtol": 2e-3, "atol": 2e-3}


def _pool(name, data, **attrs):
    return {"name": name, "op": "Pooling", "inputs": [data], "attrs": attrs}


CASES = [
    # --- Pooling 2-D: type x convention x padding -----------------------------------------
    _pool("max_valid_k2s2", X, kernel=(2, 2), stride=(2, 2)),
    _pool("max_valid_k3s2", X, kernel=(3, 3), stride=(2, 2)),
    _pool("max_full_k3s2", X, kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
    _pool("max_pad1_resnet", X7, kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    _pool("max_full_pad1", X7, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
          pooling_convention="full"),
    _pool("max_default_stride", X, kernel=(2, 3)),
    _pool("max_window_all_padding_f64", _t(1, 1, 4, 4, dtype="float64"), kernel=(1, 1),
          stride=(2, 2), pad=(1, 1), pooling_convention="full"),
    _pool("avg_valid_pad1", X7, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"),
    _pool("avg_valid_pad1_exclude", X7, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
          pool_type="avg", count_include_pad=False),
    _pool("avg_full_include", X, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
          pooling_convention="full"),
    _pool("avg_full_exclude", X, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
          pooling_convention="full", count_include_pad=False),
    _pool("avg_full_no_pad", _t(1, 2, 5, 6), kernel=(2, 2), stride=(2, 2), pool_type="avg",
          pooling_convention="full"),
    _pool("sum_valid", X, kernel=(2, 2), stride=(1, 2), pool_type="sum"),
    _pool("sum_full_pad", X7, kernel=(3, 2), stride=(2, 2), pad=(1, 1), pool_type="sum",
          pooling_convention="full"),
    _pool("lp1", X, kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=1),
    _pool("lp2_pad", X7, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="lp", p_value=2),
    _pool("lp3_full", X, kernel=(3, 3), stride=(2, 2), pool_type="lp", p_value=3,
          pooling_convention="full"),
    # --- global ---------------------------------------------------------------------------
    _pool("global_max", X7, global_pool=True),
    _pool("global_avg", X7, global_pool=True, pool_type="avg"),
    _pool("global_sum", X7, global_pool=True, pool_type="sum"),
    _pool("global_lp2", X7, global_pool=True, pool_type="lp", p_value=2),
    _pool("global_max_kernel_ignored", X7, global_pool=True, kernel=(2, 2), stride=(2, 2)),
    _pool("global_avg_1d", _t(2, 3, 5), global_pool=True, pool_type="avg"),
    _pool("global_max_3d", _t(1, 2, 3, 4, 3), global_pool=True),
    # --- 1-D, 3-D, 'same' -----------------------------------------------------------------
    _pool("max_1d", _t(2, 3, 9), kernel=(3,), stride=(2,), pad=(1,)),
    _pool("avg_1d_exclude", _t(2, 3, 9), kernel=(3,), stride=(2,), pad=(1,), pool_type="avg",
          count_include_pad=False),
    _pool("sum_1d_full", _t(1, 2, 8), kernel=(3,), stride=(2,), pool_type="sum",
          pooling_convention="full"),
    _pool("max_3d", _t(1, 2, 4, 5, 5), kernel=(2, 2, 2), stride=(2, 2, 2)),
    _pool("avg_3d_pad", _t(1, 2, 4, 4, 4), kernel=(3, 3, 3), stride=(2, 2, 2), pad=(1, 1, 1),
          pool_type="avg"),
    _pool("avg_same_1d", _t(1, 2, 7), kernel=(2,), stride=(2,), pad=(0, 0, 0),
          pool_type="avg", pooling_convention="same"),
    _pool("sum_same_1d", _t(1, 2, 7), kernel=(3,), stride=(2,), pad=(0, 0, 0),
          pool_type="sum", pooling_convention="same"),
    _pool("max_same_1d_f64", _t(1, 2, 7, dtype="float64"), kernel=(3,), stride=(2,),
          pad=(0, 0, 0), pooling_convention="same"),
    # --- channels-last layouts (MXNet's native kernels) -----------------------------------
    _pool("max_nhwc", _t(1, 6, 6, 3), kernel=(3, 3), stride=(2, 2), pad=(1, 1), layout="NHWC"),
    _pool("avg_nhwc_exclude", _t(1, 6, 5, 3), kernel=(2, 2), stride=(2, 2), pad=(1, 1),
          layout="NHWC", pool_type="avg", count_include_pad=False),
    _pool("max_nwc", _t(2, 7, 3), kernel=(3,), stride=(2,), layout="NWC"),
    _pool("avg_ndhwc", _t(1, 4, 4, 4, 2), kernel=(2, 2, 2), stride=(2, 2, 2), layout="NDHWC",
          pool_type="avg"),
    _pool("global_avg_nhwc", _t(2, 3, 4, 5), global_pool=True, pool_type="avg",
          layout="NHWC"),
    # --- dtypes ---------------------------------------------------------------------------
    {**_pool("avg_float16", _t(1, 2, 6, 6, dtype="float16"), kernel=(3, 3), stride=(2, 2),
             pad=(1, 1), pool_type="avg"), **F16},
    {**_pool("max_float16", _t(1, 2, 6, 6, dtype="float16"), kernel=(2, 2), stride=(2, 2)),
     **F16},
    _pool("sum_float64", _t(1, 2, 5, 5, dtype="float64"), kernel=(2, 2), pool_type="sum"),
    # --- Pooling_v1 -----------------------------------------------------------------------
    {"name": "v1_max_pad_zeros", "op": "Pooling_v1", "inputs": [_t(1, 2, 5, 5, low=-2, high=-1)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}},
    {"name": "v1_avg_full_pad", "op": "Pooling_v1", "inputs": [X],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
               "pooling_convention": "full"}},
    {"name": "v1_sum", "op": "Pooling_v1", "inputs": [X],
     "attrs": {"kernel": (2, 2), "stride": (2, 2), "pool_type": "sum"}},
    {"name": "v1_global_avg", "op": "Pooling_v1", "inputs": [X7],
     "attrs": {"kernel": (1, 1), "global_pool": True, "pool_type": "avg"}},
    # --- AdaptiveAvgPooling2D -------------------------------------------------------------
    {"name": "adaptive_3", "op": "_contrib_AdaptiveAvgPooling2D", "inputs": [_t(1, 2, 7, 5)],
     "attrs": {"output_size": 3}},
    {"name": "adaptive_2x3", "op": "_contrib_AdaptiveAvgPooling2D", "inputs": [_t(2, 2, 5, 8)],
     "attrs": {"output_size": (2, 3)}},
    {"name": "adaptive_default_1x1", "op": "_contrib_AdaptiveAvgPooling2D",
     "inputs": [_t(1, 3, 4, 4)]},
    {"name": "adaptive_upsample", "op": "_contrib_AdaptiveAvgPooling2D", "inputs": [_t(1, 1, 3, 3)],
     "attrs": {"output_size": (4, 5)}},
    {"name": "adaptive_float64", "op": "_contrib_AdaptiveAvgPooling2D",
     "inputs": [_t(1, 2, 6, 6, dtype="float64")], "attrs": {"output_size": 4}},
    # --- BilinearResize2D -----------------------------------------------------------------
    {"name": "resize_up_align", "op": "_contrib_BilinearResize2D", "inputs": [_t(1, 2, 3, 4)],
     "attrs": {"height": 5, "width": 7}},
    {"name": "resize_up_no_align", "op": "_contrib_BilinearResize2D", "inputs": [_t(1, 2, 3, 4)],
     "attrs": {"height": 5, "width": 7, "align_corners": False}},
    {"name": "resize_down_align", "op": "_contrib_BilinearResize2D", "inputs": [_t(2, 1, 7, 6)],
     "attrs": {"height": 3, "width": 4}},
    {"name": "resize_down_no_align", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(2, 1, 7, 6)], "attrs": {"height": 3, "width": 4, "align_corners": False}},
    {"name": "resize_to_1x1", "op": "_contrib_BilinearResize2D", "inputs": [_t(1, 1, 4, 4)],
     "attrs": {"height": 1, "width": 1}},
    {"name": "resize_same_size", "op": "_contrib_BilinearResize2D", "inputs": [_t(1, 1, 3, 4)],
     "attrs": {"height": 3, "width": 4}},
    {"name": "resize_scale", "op": "_contrib_BilinearResize2D", "inputs": [_t(1, 2, 4, 5)],
     "attrs": {"scale_height": 1.5, "scale_width": 0.6}},
    {"name": "resize_odd_scale_odd", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 5, 3)],
     "attrs": {"mode": "odd_scale", "scale_height": 2.0, "scale_width": 2.0}},
    {"name": "resize_odd_scale_even", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 4, 6)],
     "attrs": {"mode": "odd_scale", "scale_height": 0.5, "scale_width": 1.5}},
    {"name": "resize_like", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 2, 3, 3), _t(2, 1, 5, 4)], "attrs": {"mode": "like"}},
    {"name": "resize_to_even_down", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 5, 4)], "attrs": {"mode": "to_even_down"}},
    {"name": "resize_to_even_up", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 5, 4)], "attrs": {"mode": "to_even_up", "align_corners": False}},
    {"name": "resize_to_odd_down", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 5, 4)], "attrs": {"mode": "to_odd_down"}},
    {"name": "resize_to_odd_up", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 5, 4)], "attrs": {"mode": "to_odd_up"}},
    {"name": "resize_float16", "op": "_contrib_BilinearResize2D",
     "inputs": [_t(1, 1, 3, 3, dtype="float16")], "attrs": {"height": 5, "width": 4}, **F16},
    # --- Pad ------------------------------------------------------------------------------
    {"name": "pad_constant", "op": "Pad", "inputs": [_t(1, 2, 3, 4)],
     "attrs": {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 0, 3),
               "constant_value": 1.5}},
    {"name": "pad_edge", "op": "Pad", "inputs": [_t(1, 2, 3, 4)],
     "attrs": {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 1, 3, 1)}},
    {"name": "pad_reflect", "op": "Pad", "inputs": [_t(2, 1, 4, 3)],
     "attrs": {"mode": "reflect", "pad_width": (0, 0, 0, 0, 3, 2, 2, 1)}},
    {"name": "pad_constant_5d", "op": "Pad", "inputs": [_t(1, 1, 2, 3, 2)],
     "attrs": {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 0, 1, 1, 0, 2)}},
    {"name": "pad_edge_5d", "op": "Pad", "inputs": [_t(1, 1, 2, 3, 2)],
     "attrs": {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 1, 0, 2, 1, 0)}},
    {"name": "pad_reflect_5d", "op": "Pad", "inputs": [_t(1, 1, 3, 3, 3)],
     "attrs": {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 2, 2, 0, 1, 1)}},
    {"name": "pad_alias_float16", "op": "pad", "inputs": [_t(1, 1, 2, 3, dtype="float16")],
     "attrs": {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 1, 1),
               "constant_value": -2.0}},
    # --- Crop -----------------------------------------------------------------------------
    {"name": "crop_h_w_offset", "op": "Crop", "inputs": [_t(1, 2, 5, 6)],
     "attrs": {"h_w": (3, 2), "offset": (1, 3)}},
    {"name": "crop_h_w_center", "op": "Crop", "inputs": [_t(1, 2, 6, 7)],
     "attrs": {"h_w": (3, 4), "center_crop": True}},
    {"name": "crop_like", "op": "Crop", "inputs": [_t(2, 2, 6, 6), _t(1, 1, 4, 3)],
     "attrs": {"offset": (2, 1)}},
    {"name": "crop_like_center", "op": "Crop", "inputs": [_t(1, 2, 7, 6), _t(1, 3, 4, 3)],
     "attrs": {"center_crop": True}},
]

# MXNet's oneDNN max pooling saves its argmax workspace only in a training-mode forward; after
# an inference-mode forward (these rows' goldens) its backward reads a workspace the forward
# never wrote (each window's first tap gets the gradient). Checked in the oracle: in train mode
# MXNet routes the gradient to each window's first maximum, as gluonport does (finite
# differences check these rows).
_MAX_INFER = ("MXNet's oneDNN max-pool backward after an inference-mode forward reads a "
              "workspace that forward never wrote")
_GRAD_KEYS = {
    **dict.fromkeys(("max_valid_k2s2", "max_valid_k3s2", "max_full_k3s2", "max_pad1_resnet",
                     "max_full_pad1", "max_default_stride", "global_max_kernel_ignored",
                     "max_1d", "max_3d"), {"no_grad_golden": _MAX_INFER}),
    "max_window_all_padding_f64": {
        "no_fd": "windows of padding only give the lowest float64: differences overflow"},
}
for _row in CASES:
    _row.update(_GRAD_KEYS.get(_row["name"], {}))

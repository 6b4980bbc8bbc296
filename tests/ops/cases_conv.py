"""Case table for gluonport/ops/nn/conv.py, im2col.py (plain data; see tests/ops/_check.py).

Convolution results are BLAS sums in another order than MXNet's (oneDNN) kernels, so float32
cases use rtol 1e-4 / atol 1e-5.
"""


def _t(*shape, dtype="float32", low=-1.0, high=1.0):
    return {"shape": shape, "dtype": dtype, "low": low, "high": high}


TOL = {"rtol": 1e-4, "atol": 1e-5}
TOL64 = {"rtol": 1e-10, "atol": 1e-12}

CASES = [
    # --- Convolution 2-D ----------------------------------------------------------------
    {"name": "conv2d_basic", "op": "Convolution", "inputs": [_t(2, 3, 6, 6), _t(4, 3, 3, 3), _t(4)],
     "attrs": {"kernel": (3, 3), "num_filter": 4}, **TOL},
    {"name": "conv2d_stride2_pad1", "op": "Convolution",
     "inputs": [_t(1, 3, 7, 7), _t(4, 3, 3, 3), _t(4)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "num_filter": 4}, **TOL},
    {"name": "conv2d_dilate2", "op": "Convolution",
     "inputs": [_t(1, 2, 9, 9), _t(3, 2, 3, 3), _t(3)],
     "attrs": {"kernel": (3, 3), "dilate": (2, 2), "pad": (2, 2), "num_filter": 3}, **TOL},
    {"name": "conv2d_groups2", "op": "Convolution",
     "inputs": [_t(1, 4, 5, 5), _t(6, 2, 3, 3), _t(6)],
     "attrs": {"kernel": (3, 3), "num_filter": 6, "num_group": 2}, **TOL},
    {"name": "conv2d_depthwise", "op": "Convolution",
     "inputs": [_t(2, 4, 6, 6), _t(4, 1, 3, 3), _t(4)],
     "attrs": {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4, "num_group": 4}, **TOL},
    {"name": "conv2d_depthwise_stride2", "op": "Convolution",
     "inputs": [_t(1, 4, 7, 7), _t(4, 1, 3, 3)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "num_filter": 4,
               "num_group": 4, "no_bias": True}, **TOL},
    {"name": "conv2d_depthwise_multiplier", "op": "Convolution",
     "inputs": [_t(1, 3, 5, 5), _t(6, 1, 3, 3), _t(6)],
     "attrs": {"kernel": (3, 3), "num_filter": 6, "num_group": 3}, **TOL},
    {"name": "conv2d_no_bias", "op": "Convolution", "inputs": [_t(1, 2, 5, 5), _t(3, 2, 3, 3)],
     "attrs": {"kernel": (3, 3), "num_filter": 3, "no_bias": True}, **TOL},
    {"name": "conv2d_1x1", "op": "Convolution", "inputs": [_t(2, 8, 4, 4), _t(5, 8, 1, 1), _t(5)],
     "attrs": {"kernel": (1, 1), "num_filter": 5}, **TOL},
    {"name": "conv2d_1x1_stride2", "op": "Convolution",
     "inputs": [_t(1, 6, 7, 7), _t(4, 6, 1, 1), _t(4)],
     "attrs": {"kernel": (1, 1), "stride": (2, 2), "num_filter": 4}, **TOL},
    {"name": "conv2d_1x1_groups", "op": "Convolution",
     "inputs": [_t(1, 6, 3, 3), _t(4, 3, 1, 1)],
     "attrs": {"kernel": (1, 1), "num_filter": 4, "num_group": 2, "no_bias": True}, **TOL},
    {"name": "conv2d_1x1_pad1", "op": "Convolution",
     "inputs": [_t(1, 3, 4, 4), _t(2, 3, 1, 1), _t(2)],
     "attrs": {"kernel": (1, 1), "pad": (1, 1), "num_filter": 2}, **TOL},
    {"name": "conv2d_rect_kernel", "op": "Convolution",
     "inputs": [_t(1, 2, 6, 7), _t(3, 2, 2, 3), _t(3)],
     "attrs": {"kernel": (2, 3), "stride": (1, 2), "pad": (1, 0), "num_filter": 3}, **TOL},
    {"name": "conv2d_stride3_dilate", "op": "Convolution",
     "inputs": [_t(1, 2, 11, 9), _t(2, 2, 3, 3), _t(2)],
     "attrs": {"kernel": (3, 3), "stride": (3, 2), "dilate": (2, 1), "pad": (1, 2),
               "num_filter": 2}, **TOL},
    {"name": "conv2d_stem_7x7_s2", "op": "Convolution",
     "inputs": [_t(1, 3, 16, 16), _t(4, 3, 7, 7)],
     "attrs": {"kernel": (7, 7), "stride": (2, 2), "pad": (3, 3), "num_filter": 4,
               "no_bias": True}, **TOL},
    {"name": "conv2d_float64", "op": "Convolution",
     "inputs": [_t(1, 3, 5, 5, dtype="float64"), _t(2, 3, 3, 3, dtype="float64"),
                _t(2, dtype="float64")],
     "attrs": {"kernel": (3, 3), "pad": (1, 1), "num_filter": 2}, **TOL64},
    {"name": "conv2d_int8_saturates", "op": "Convolution",
     "inputs": [_t(1, 3, 5, 5, dtype="int8", low=-20, high=20),
                _t(2, 3, 3, 3, dtype="int8", low=-5, high=6)],
     "attrs": {"kernel": (3, 3), "num_filter": 2, "no_bias": True}, "rtol": 0, "atol": 0},
    # --- Convolution 1-D and 3-D --------------------------------------------------------
    {"name": "conv1d_stride2_pad1", "op": "Convolution",
     "inputs": [_t(2, 3, 10), _t(4, 3, 3), _t(4)],
     "attrs": {"kernel": (3,), "stride": (2,), "pad": (1,), "num_filter": 4}, **TOL},
    {"name": "conv1d_dilate_groups", "op": "Convolution",
     "inputs": [_t(1, 4, 12), _t(4, 2, 3), _t(4)],
     "attrs": {"kernel": (3,), "dilate": (2,), "num_filter": 4, "num_group": 2}, **TOL},
    {"name": "conv3d_pad1", "op": "Convolution",
     "inputs": [_t(1, 2, 5, 5, 5), _t(3, 2, 3, 3, 3), _t(3)],
     "attrs": {"kernel": (3, 3, 3), "pad": (1, 1, 1), "num_filter": 3}, **TOL},
    {"name": "conv3d_stride", "op": "Convolution",
     "inputs": [_t(1, 2, 5, 6, 5), _t(2, 2, 2, 3, 2)],
     "attrs": {"kernel": (2, 3, 2), "stride": (2, 1, 2), "num_filter": 2, "no_bias": True},
     **TOL},
    {"name": "conv_v1_2d", "op": "Convolution_v1",
     "inputs": [_t(1, 4, 6, 6), _t(4, 2, 3, 3), _t(4)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "num_filter": 4,
               "num_group": 2}, **TOL},
    # --- Deconvolution ------------------------------------------------------------------
    {"name": "deconv2d_basic", "op": "Deconvolution",
     "inputs": [_t(1, 3, 4, 4), _t(3, 2, 3, 3)],
     "attrs": {"kernel": (3, 3), "num_filter": 2}, **TOL},
    {"name": "deconv2d_stride2_pad1_adj1_bias", "op": "Deconvolution",
     "inputs": [_t(2, 2, 3, 4), _t(2, 3, 3, 3), _t(3)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "adj": (1, 1),
               "num_filter": 3, "no_bias": False}, **TOL},
    # MXNet's oneDNN deconvolution refuses target_shape on float32: float64 runs natively
    {"name": "deconv2d_target_shape_f64", "op": "Deconvolution",
     "inputs": [_t(1, 2, 4, 4, dtype="float64"), _t(2, 2, 4, 4, dtype="float64")],
     "attrs": {"kernel": (4, 4), "stride": (2, 2), "target_shape": (8, 9), "num_filter": 2},
     **TOL64},
    {"name": "deconv2d_target_overrides_pad_f64", "op": "Deconvolution",
     "inputs": [_t(1, 2, 3, 3, dtype="float64"), _t(2, 1, 3, 3, dtype="float64")],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "pad": (5, 5), "adj": (0, 0),
               "target_shape": (6, 6), "num_filter": 1}, **TOL64},
    {"name": "deconv2d_groups", "op": "Deconvolution",
     "inputs": [_t(1, 4, 3, 3), _t(4, 3, 3, 3)],
     "attrs": {"kernel": (3, 3), "num_filter": 6, "num_group": 2}, **TOL},
    {"name": "deconv2d_dilate", "op": "Deconvolution",
     "inputs": [_t(1, 2, 4, 4), _t(2, 2, 3, 3)],
     "attrs": {"kernel": (3, 3), "dilate": (2, 2), "pad": (1, 1), "num_filter": 2}, **TOL},
    {"name": "deconv2d_adj_beyond_pad", "op": "Deconvolution",
     "inputs": [_t(1, 2, 3, 3), _t(2, 2, 2, 2), _t(2)],
     "attrs": {"kernel": (2, 2), "stride": (3, 3), "adj": (2, 1), "num_filter": 2,
               "no_bias": False}, **TOL},
    {"name": "deconv1d", "op": "Deconvolution",
     "inputs": [_t(2, 3, 5), _t(3, 2, 3)],
     "attrs": {"kernel": (3,), "stride": (2,), "pad": (1,), "adj": (1,), "num_filter": 2},
     **TOL},
    {"name": "deconv3d", "op": "Deconvolution",
     "inputs": [_t(1, 2, 3, 3, 3), _t(2, 2, 2, 2, 2)],
     "attrs": {"kernel": (2, 2, 2), "stride": (2, 2, 2), "num_filter": 2}, **TOL},
    {"name": "deconv2d_float64", "op": "Deconvolution",
     "inputs": [_t(1, 2, 3, 3, dtype="float64"), _t(2, 2, 3, 3, dtype="float64")],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "num_filter": 2}, **TOL64},
    # --- UpSampling ---------------------------------------------------------------------
    {"name": "upsampling_nearest_2", "op": "UpSampling", "inputs": [_t(1, 2, 3, 4)],
     "attrs": {"scale": 2, "sample_type": "nearest"}},
    {"name": "upsampling_nearest_3", "op": "UpSampling", "inputs": [_t(2, 1, 2, 3)],
     "attrs": {"scale": 3, "sample_type": "nearest"}},
    {"name": "upsampling_nearest_concat", "op": "UpSampling",
     "inputs": [_t(1, 2, 2, 2), _t(1, 1, 4, 4)],
     "attrs": {"scale": 4, "sample_type": "nearest"}},
    {"name": "upsampling_nearest_sum", "op": "UpSampling",
     "inputs": [_t(1, 2, 2, 2), _t(1, 2, 4, 4), _t(1, 2, 1, 1)],
     "attrs": {"scale": 2, "sample_type": "nearest", "multi_input_mode": "sum"}},
    {"name": "upsampling_bilinear_2", "op": "UpSampling",
     "inputs": [_t(1, 3, 3, 4), _t(3, 1, 4, 4)],
     "attrs": {"scale": 2, "sample_type": "bilinear", "num_filter": 3}, **TOL},
    {"name": "upsampling_bilinear_3", "op": "UpSampling",
     "inputs": [_t(1, 2, 3, 3), _t(2, 1, 5, 5)],
     "attrs": {"scale": 3, "sample_type": "bilinear", "num_filter": 2}, **TOL},
    # --- im2col / col2im (float only); col2im sums overlapping window entries. MXNet 1.9.1's
    # kernels run 2-D kernels only (1-D/3-D fail there): those are checked in test_conv.py ---
    {"name": "im2col_2d", "op": "im2col", "inputs": [_t(2, 2, 5, 6)],
     "attrs": {"kernel": (2, 3), "stride": (1, 2), "pad": (1, 0)}},
    {"name": "im2col_dilate_stride_pad", "op": "im2col", "inputs": [_t(1, 3, 7, 7)],
     "attrs": {"kernel": (3, 3), "stride": (2, 2), "dilate": (2, 2), "pad": (2, 2)}},
    {"name": "im2col_float64", "op": "im2col", "inputs": [_t(1, 2, 4, 4, dtype="float64")],
     "attrs": {"kernel": (3, 3), "pad": (1, 1)}},
    {"name": "im2col_float16", "op": "im2col", "inputs": [_t(1, 2, 4, 4, dtype="float16")],
     "attrs": {"kernel": (2, 2), "stride": (2, 2)}},
    {"name": "col2im_2d", "op": "col2im", "inputs": [_t(2, 12, 10)],
     "attrs": {"output_size": (4, 5), "kernel": (2, 3), "stride": (1, 2), "pad": (1, 0)}},
    {"name": "col2im_dilate_stride_pad", "op": "col2im", "inputs": [_t(1, 27, 16)],
     "attrs": {"output_size": (7, 7), "kernel": (3, 3), "stride": (2, 2), "dilate": (2, 2),
               "pad": (2, 2)}},
    {"name": "col2im_float64", "op": "col2im", "inputs": [_t(1, 18, 16, dtype="float64")],
     "attrs": {"output_size": (4, 4), "kernel": (3, 3), "pad": (1, 1)}, **TOL64},
    {"name": "col2im_float16", "op": "col2im", "inputs": [_t(1, 8, 9, dtype="float16")],
     "attrs": {"output_size": (4, 4), "kernel": (2, 2)}, "rtol": 2e-3, "atol": 2e-3},
]


def build_graph(mx):
    """A graph through every op of conv.py and pool.py, built with ``mx`` (MXNet or gluonport);
    gen_conv.py saves MXNet's ``tojson()`` of it as tests/golden/ops/conv_pool_graph.json."""
    a = mx.sym.var("data")
    s = mx.sym.UpSampling(a, scale=2, sample_type="bilinear", num_filter=3, name="up")
    s = mx.sym.Convolution(s, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    s = mx.sym.Convolution_v1(s, kernel=(1, 1), num_filter=4, no_bias=True, name="c1")
    s = mx.sym.Deconvolution(s, kernel=(4, 4), stride=(2, 2), num_filter=2, name="d")
    s = mx.sym.Pooling(s, kernel=(2, 2), stride=(2, 2), name="p")
    s = mx.sym.Pooling(s, kernel=(2, 2), pool_type="avg", count_include_pad=False, name="p2")
    s = mx.sym.Pooling_v1(s, kernel=(1, 1), name="p3")
    s = mx.sym.UpSampling(s, scale=2, sample_type="nearest", name="n")
    s = mx.sym.Crop(s, a, center_crop=True, name="cr")
    s = mx.sym.contrib.BilinearResize2D(s, height=5, width=6, name="r")
    s = mx.sym.contrib.AdaptiveAvgPooling2D(s, output_size=(2, 3), name="ad")
    return mx.sym.Pad(s, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2), name="pd")

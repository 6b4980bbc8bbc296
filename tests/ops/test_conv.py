"""Convolution, Deconvolution and UpSampling against MXNet 1.9.1 (tests/golden/ops/conv.npz),
plus the behaviours the golden table cannot express (MXNet's CPU build refuses them or they are
about inference, names and errors)."""

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, GluonportError, OpAttributeError, ShapeError
from gluonport.ops import registry
from tests.ops import cases_conv
from tests.ops._check import GOLDEN_DIR

RNG = np.random.default_rng(7)


def _rand(*shape, dtype="float32"):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def test_aliases():
    assert registry.canonical_name("_npx_convolution") == "Convolution"
    assert registry.canonical_name("_npx_deconvolution") == "Deconvolution"
    assert registry.get("Convolution_v1") is not registry.get("Convolution")


@pytest.mark.parametrize("op, defaults", [
    ("Convolution", {"workspace": 1024, "no_bias": False, "num_group": 1, "layout": None,
                     "cudnn_tune": None, "cudnn_off": False}),
    ("Deconvolution", {"workspace": 512, "no_bias": True, "adj": (), "target_shape": ()}),
    ("UpSampling", {"num_filter": 0, "multi_input_mode": "concat", "workspace": 512}),
])
def test_defaults(op, defaults):
    fields = registry.get(op).params.fields
    for name, value in defaults.items():
        assert fields[name].default == value, name


def test_param_order_matches_mxnet():
    # positional attributes map onto MXNet's declaration order
    assert list(registry.get("Convolution").params.fields) == [
        "kernel", "stride", "dilate", "pad", "num_filter", "num_group", "workspace", "no_bias",
        "cudnn_tune", "cudnn_off", "layout"]
    assert list(registry.get("Deconvolution").params.fields)[:6] == [
        "kernel", "stride", "dilate", "pad", "adj", "target_shape"]


@pytest.mark.parametrize("call, args, weight, bias", [
    ("Convolution", dict(kernel=(3, 3), num_filter=6, num_group=2), (6, 2, 3, 3), (6,)),
    ("Convolution", dict(kernel=(3,), num_filter=5), (5, 4, 3), (5,)),
    ("Convolution", dict(kernel=(1, 2, 3), num_filter=2, no_bias=True), (2, 4, 1, 2, 3), None),
    ("Deconvolution", dict(kernel=(3, 3), num_filter=6, num_group=2), (4, 3, 3, 3), None),
    ("Deconvolution", dict(kernel=(2, 2), num_filter=3, no_bias=False), (4, 3, 2, 2), (3,)),
])
def test_infer_shape_partial_completes_weight(call, args, weight, bias):
    nd = len(args["kernel"])
    data = (2, 4) + (9,) * nd
    sym = mx.sym.invoke(call, [mx.sym.var("x")], dict(args, name="c"))
    arg_shapes, _, _ = sym.infer_shape_partial(x=data)
    shapes = dict(zip(sym.list_arguments(), arg_shapes))
    assert shapes["c_weight"] == weight
    if bias is None:
        assert "c_bias" not in shapes
    else:
        assert shapes["c_bias"] == bias


def test_infer_shape_unknown_batch():
    sym = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    args, outs, _ = sym.infer_shape_partial(x=(0, 3, 8, 8))
    assert args[1] == (4, 3, 3, 3) and outs[0] == (0, 4, 8, 8)


def test_weight_shape_mismatch_names_node_and_shapes():
    sym = mx.sym.Convolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(3, 3), num_filter=4,
                             no_bias=True, name="conv7")
    with pytest.raises(ShapeError) as err:
        sym.infer_shape(x=(1, 3, 8, 8), w=(4, 2, 3, 3))
    text = str(err.value)
    assert "conv7" in text and "(4, 2, 3, 3)" in text and "(4, 3, 3, 3)" in text


@pytest.mark.parametrize("attrs, word", [
    (dict(kernel=(3, 3), num_filter=4, stride=(1, 1, 1)), "stride"),
    (dict(kernel=(3, 3), num_filter=5, num_group=2), "num_group"),
    (dict(kernel=(3, 3, 3, 3), num_filter=4), "kernel"),
    (dict(kernel=(3, 3), num_filter=4, layout="NCW"), "layout"),
])
def test_bad_attributes_are_named(attrs, word):
    x, w = mx.nd.array(_rand(1, 4, 6, 6)), mx.nd.array(_rand(4, 4, 3, 3))
    with pytest.raises(OpAttributeError, match=word):
        mx.nd.Convolution(x, w, no_bias=True, **attrs)


def test_kernel_larger_than_data_is_a_shape_error():
    sym = mx.sym.Convolution(mx.sym.var("x"), kernel=(5, 5), num_filter=2, name="big")
    with pytest.raises(ShapeError, match="big"):
        sym.infer_shape(x=(1, 1, 3, 3))


def test_int32_refused_like_mxnet():
    x, w = mx.nd.array(np.ones((1, 1, 3, 3)), dtype="int32"), mx.nd.array(
        np.ones((1, 1, 2, 2)), dtype="int32")
    with pytest.raises(DTypeError, match="int32"):
        mx.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True)


def _nchw_reference(x, w, b, **attrs):
    out = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), **attrs)
    return out.asnumpy()


@pytest.mark.parametrize("nd", [2, 3])
def test_channels_last_layout_equals_transposed_nchw(nd):
    # MXNet 1.9.1 refuses NHWC/NDHWC on CPU; gluonport computes it (weight (F, *k, C/g))
    x, w, b = _rand(2, 4, *(6,) * nd), _rand(6, 2, *(3,) * nd), _rand(6)
    attrs = dict(kernel=(3,) * nd, stride=(2,) * nd, pad=(1,) * nd, num_filter=6, num_group=2)
    want = _nchw_reference(x, w, b, **attrs)
    last = (0, *range(2, nd + 2), 1)
    layout = "NHWC" if nd == 2 else "NDHWC"
    got = mx.nd.Convolution(mx.nd.array(x.transpose(last)), mx.nd.array(w.transpose(last)),
                            mx.nd.array(b), layout=layout, **attrs).asnumpy()
    back = (0, nd + 1, *range(1, nd + 1))
    np.testing.assert_allclose(got.transpose(back), want, rtol=1e-5, atol=1e-6)
    sym = mx.sym.Convolution(mx.sym.var("x"), layout=layout, name="c", **attrs)
    args, outs, _ = sym.infer_shape(x=x.transpose(last).shape)
    assert args[1] == w.transpose(last).shape and outs[0] == got.shape


def test_deconv_channels_last():
    x, w = _rand(1, 3, 4, 4), _rand(3, 2, 3, 3)
    attrs = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=2)
    want = mx.nd.Deconvolution(mx.nd.array(x), mx.nd.array(w), **attrs).asnumpy()
    got = mx.nd.Deconvolution(mx.nd.array(x.transpose(0, 2, 3, 1)),
                              mx.nd.array(w.transpose(0, 2, 3, 1)), layout="NHWC", **attrs)
    np.testing.assert_allclose(got.asnumpy().transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-6)


def test_float16_computed_in_float32():
    # MXNet's CPU build refuses float16 convolution ("FP16 gemm on cpu not implemented")
    x, w, b = _rand(1, 3, 6, 6), _rand(4, 3, 3, 3), _rand(4)
    want = _nchw_reference(x, w, b, kernel=(3, 3), num_filter=4)
    got = mx.nd.Convolution(*(mx.nd.array(a, dtype="float16") for a in (x, w, b)),
                            kernel=(3, 3), num_filter=4)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_deconv_is_the_transpose_of_conv():
    # <conv(x), y> == <x, deconv(y)> with the same weight and geometry
    x, w = _rand(2, 4, 7, 6).astype(np.float64), _rand(6, 2, 3, 3).astype(np.float64)
    attrs = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), dilate=(1, 2), num_group=2)
    y = mx.nd.Convolution(mx.nd.array(x, dtype="float64"), mx.nd.array(w, dtype="float64"),
                          num_filter=6, no_bias=True, **attrs).asnumpy()
    r = RNG.uniform(-1, 1, size=y.shape)
    back = mx.nd.Deconvolution(mx.nd.array(r, dtype="float64"), mx.nd.array(w, dtype="float64"),
                               num_filter=4, target_shape=(7, 6), **attrs).asnumpy()
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(y * r), np.sum(x * back), rtol=1e-10)


def test_batch_chunks_give_the_same_result(monkeypatch):
    from gluonport.ops.nn import conv_kernels

    x, w = _rand(5, 3, 8, 8), _rand(4, 3, 3, 3)
    args = dict(kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True)
    whole = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), **args).asnumpy()
    monkeypatch.setattr(conv_kernels, "_COL_BUDGET", 1)
    chunked = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), **args).asnumpy()
    np.testing.assert_array_equal(whole, chunked)


def test_upsampling_bilinear_creates_weight_variable():
    sym = mx.sym.UpSampling(mx.sym.var("data"), scale=2, sample_type="bilinear", num_filter=3,
                            name="up")
    assert sym.list_arguments() == ["data", "up_weight"]
    args, outs, _ = sym.infer_shape(data=(1, 3, 5, 5))
    assert args[1] == (3, 1, 4, 4) and outs[0] == (1, 3, 10, 10)
    nearest = mx.sym.UpSampling(mx.sym.var("a"), mx.sym.var("b"), scale=2,
                                sample_type="nearest", name="n")
    assert nearest.list_arguments() == ["a", "b"]
    assert nearest.attr_dict()["n"]["num_args"] == "2"


def test_upsampling_sum_needs_equal_channels():
    a, b = mx.nd.array(_rand(1, 2, 2, 2)), mx.nd.array(_rand(1, 3, 4, 4))
    with pytest.raises(ShapeError, match="channel"):
        mx.sym.UpSampling(mx.sym.var("a"), mx.sym.var("b"), scale=2, sample_type="nearest",
                          multi_input_mode="sum").infer_shape(a=a.shape, b=b.shape)


def test_deconv_bad_target_shape():
    x, w = mx.nd.array(_rand(1, 2, 3, 3)), mx.nd.array(_rand(2, 1, 3, 3))
    with pytest.raises(GluonportError, match="target_shape"):
        mx.nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), num_filter=1,
                            target_shape=(20, 20))


def test_bias_shape_checked_in_compute():
    x, w, b = (mx.nd.array(_rand(*s)) for s in ((1, 2, 4, 4), (4, 2, 3, 3), (2, 2)))
    with pytest.raises(ShapeError, match="bias"):
        mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4)


def test_convolution_v1_is_2d_or_3d():
    x, w = mx.nd.array(_rand(1, 2, 6)), mx.nd.array(_rand(2, 2, 3))
    with pytest.raises(OpAttributeError, match="Convolution_v1"):
        mx.nd.Convolution_v1(x, w, kernel=(3,), num_filter=2, no_bias=True)


def test_upsampling_nearest_sizes_must_divide():
    a, b = mx.nd.array(_rand(1, 1, 2, 2)), mx.nd.array(_rand(1, 1, 3, 3))
    with pytest.raises(ShapeError, match="dividing"):
        mx.nd.UpSampling(a, b, scale=2, sample_type="nearest")


def test_symbol_json_is_byte_identical_to_mxnet():
    # attribute strings, the bilinear weight's __init__, Pooling's hidden workspace in
    # node_row_ptr: MXNet 1.9.1's tojson() of the same graph (tests/golden/ops/gen_conv.py)
    path = os.path.join(GOLDEN_DIR, "conv_pool_graph.json")
    with open(path) as f:
        want = f.read()
    assert cases_conv.build_graph(mx).tojson() == want


def _naive_conv(x, w, g, groups):
    """Direct definition: one einsum per kernel tap over a strided window of the padded
    input (independent of conv_nd's phase split and im2col)."""
    from gluonport.ops.nn.conv import conv_out_size

    n, c, *sp = x.shape
    f = w.shape[0]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in g.pad])
    out_sp = [conv_out_size(s, k, st, d, p) for s, k, st, d, p in
              zip(sp, g.kernel, g.stride, g.dilate, g.pad)]
    out = np.zeros((n, f, *out_sp))
    cg, fg = c // groups, f // groups
    for k in np.ndindex(*g.kernel):
        window = tuple(slice(ki * d, ki * d + (o - 1) * s + 1, s) for ki, d, o, s in
                       zip(k, g.dilate, out_sp, g.stride))
        patch = xp[(slice(None), slice(None)) + window]
        for i in range(groups):
            out[:, i * fg:(i + 1) * fg] += np.einsum(
                "fc,nc...->nf...", w[(slice(i * fg, (i + 1) * fg), slice(None)) + k],
                patch[:, i * cg:(i + 1) * cg])
    return out


def _random_geometries(count, seed=3):
    from gluonport.ops.nn.conv import Geometry

    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        nd = int(rng.integers(1, 4))
        kernel, stride = tuple(rng.integers(1, 4, nd)), tuple(rng.integers(1, 4, nd))
        dilate, pad = tuple(rng.integers(1, 3, nd)), tuple(rng.integers(0, 3, nd))
        sp = tuple(int(v) for v in rng.integers(1, 8, nd))
        if all((k - 1) * d + 1 <= s + 2 * p for k, d, s, p in zip(kernel, dilate, sp, pad)):
            groups, cg, fg = (int(v) for v in rng.integers(1, 3, 3))
            found.append((Geometry(kernel, stride, dilate, pad, False), sp, groups, cg, fg))
    return found


@pytest.mark.parametrize("geom, sp, groups, cg, fg", _random_geometries(40))
def test_conv_nd_matches_direct_definition(geom, sp, groups, cg, fg):
    # strides larger than the kernel, dilation with stride, 1-D/3-D, groups: float64, exact
    from gluonport.ops.nn.conv import conv_nd

    x = RNG.standard_normal((2, cg * groups, *sp))
    w = RNG.standard_normal((fg * groups, cg, *geom.kernel))
    np.testing.assert_allclose(conv_nd(x, w, None, geom, groups), _naive_conv(x, w, geom, groups),
                               rtol=1e-12, atol=1e-12)


def _stride1_geometries():
    """Stride-1 cases: groups, dilation, uneven pads, 1-D and 3-D, a 1x1 image."""
    from gluonport.ops.nn.conv import Geometry

    return [(Geometry((3, 3), (1, 1), (1, 1), (1, 1), False), (4, 5), 2, 3, 2),
            (Geometry((3,), (1,), (2,), (1,), False), (6,), 1, 2, 3),
            (Geometry((2, 3, 3), (1, 1, 1), (1, 1, 2), (0, 1, 2), False), (2, 3, 5), 2, 2, 1),
            (Geometry((3, 3), (1, 1), (1, 1), (1, 1), False), (1, 1), 1, 4, 4)]


@pytest.mark.parametrize("geom, sp, groups, cg, fg",
                         _random_geometries(40, seed=5) + _stride1_geometries())
@pytest.mark.parametrize("prune", [0, 1 << 30])
@pytest.mark.parametrize("small", [0, 1 << 30])
def test_deconv_nd_is_the_adjoint_of_the_direct_definition(geom, sp, groups, cg, fg, small,
                                                           prune, monkeypatch):
    # <conv(x), y> == <x, deconv(y)> (float64) on both deconv_nd paths (samples side by side
    # in one GEMM per block of one output channel, or one GEMM per sample in one-sample
    # chunks); with and without dead taps pruned
    from gluonport.ops.nn import conv_kernels

    monkeypatch.setattr(conv_kernels, "_SMALL_IMAGE", small)
    monkeypatch.setattr(conv_kernels, "_COL_BUDGET", 1)
    monkeypatch.setattr(conv_kernels, "_TAP_BLOCK", 1)
    monkeypatch.setattr(conv_kernels, "_PRUNE", prune)  # 0: dead taps always left out
    x = RNG.standard_normal((3, cg * groups, *sp))
    w = RNG.standard_normal((fg * groups, cg, *geom.kernel))
    y = _naive_conv(x, w, geom, groups)
    r = RNG.standard_normal(y.shape)
    back = conv_kernels.deconv_nd(r, w, None, geom, geom.pad, sp, groups)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(x * back), np.sum(y * r), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(conv_kernels.conv_nd(x, w, None, geom, groups), y,
                               rtol=1e-12, atol=1e-12)


# --- im2col / col2im beyond the table (MXNet 1.9.1's kernels run 2-D kernels only) ----------
IM2COL_GEOMETRIES = [
    ((2, 3, 9), {"kernel": (3,), "stride": (2,), "pad": (1,)}),
    ((2, 2, 5, 6), {"kernel": (2, 3), "stride": (1, 2), "dilate": (2, 1), "pad": (1, 0)}),
    ((1, 2, 4, 5, 3), {"kernel": (2, 2, 2), "stride": (1, 2, 1), "pad": (0, 1, 1)}),
]


@pytest.mark.parametrize("shape, attrs", IM2COL_GEOMETRIES, ids=["1d", "2d", "3d"])
def test_im2col_times_weight_is_convolution(shape, attrs):
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, shape).astype(np.float64)
    w = rng.uniform(-1, 1, (4, shape[1], *attrs["kernel"])).astype(np.float64)
    cols = mx.nd.im2col(mx.nd.array(x, dtype="float64"), **attrs).asnumpy()
    conv = mx.nd.Convolution(mx.nd.array(x, dtype="float64"), mx.nd.array(w, dtype="float64"),
                             num_filter=4, no_bias=True, **attrs).asnumpy()
    np.testing.assert_allclose(w.reshape(4, -1) @ cols, conv.reshape(shape[0], 4, -1),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, attrs", IM2COL_GEOMETRIES, ids=["1d", "2d", "3d"])
def test_col2im_is_the_adjoint_of_im2col(shape, attrs):
    rng = np.random.RandomState(4)
    x = rng.uniform(-1, 1, shape)
    cols = mx.nd.im2col(mx.nd.array(x, dtype="float64"), **attrs).asnumpy()
    y = rng.uniform(-1, 1, cols.shape)
    back = mx.nd.col2im(mx.nd.array(y, dtype="float64"), output_size=shape[2:], **attrs)
    assert back.shape == shape
    np.testing.assert_allclose(np.sum(cols * y), np.sum(x * back.asnumpy()), rtol=1e-12)


def test_im2col_col2im_errors():
    with pytest.raises(DTypeError, match="floating point"):
        mx.nd.im2col(mx.nd.ones((1, 1, 3, 3), dtype="int32"), kernel=(2, 2))
    with pytest.raises(ShapeError, match=r"must be \(N, C \* 4, 9\)"):
        mx.nd.col2im(mx.nd.ones((1, 4, 8)), output_size=(4, 4), kernel=(2, 2))
    with pytest.raises(OpAttributeError, match="output_size"):
        mx.nd.col2im(mx.nd.ones((1, 4, 9)), output_size=(4,), kernel=(2, 2))
    sym = mx.sym.im2col(mx.sym.var("x"), kernel=(3, 3), pad=(1, 1))
    assert sym.infer_shape(x=(2, 3, 5, 5))[1] == [(2, 27, 25)]

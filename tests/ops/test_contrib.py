"""Contrib ops against MXNet 1.9.1 (tests/golden/ops/contrib.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError, ShapeError
from gluonport.ndarray import invoke


# --- what the tables cannot express ----------------------------------------------------------
def _sym(op, names, attrs):
    return mx.sym.invoke(op, [mx.sym.var(n) for n in names], attrs)


def test_selfatt_valatt_fills_attention_shape():
    s = _sym("_contrib_interleaved_matmul_selfatt_valatt", ("qkv", "att"), {"heads": 2})
    args, outs, _ = s.infer_shape_partial(qkv=(4, 3, 24))
    assert args[1] == (6, 4, 4) and outs == [(4, 3, 8)]


@pytest.mark.parametrize("op, inputs, match", [
    ("_contrib_interleaved_matmul_selfatt_qk", [(4, 2, 20)], "heads=3 x 3 blocks"),
    ("_contrib_interleaved_matmul_encdec_qk", [(3, 2, 12), (5, 2, 12)],
     r"keys_values \(5, 2, 12\) must be"),
    ("_contrib_interleaved_matmul_encdec_valatt", [(5, 2, 24), (6, 3, 4)],
     r"attention \(6, 3, 4\) must be"),
])
def test_interleaved_shape_errors(op, inputs, match):
    arrays = [mx.nd.zeros(s) for s in inputs]
    with pytest.raises(ShapeError, match=match):
        invoke(op, arrays, {"heads": 3})


def test_grid_generator_affine_needs_target_shape():
    with pytest.raises(OpAttributeError, match="target_shape"):
        invoke("GridGenerator", [mx.nd.zeros((1, 6))], {"transform_type": "affine"})


def test_grid_generator_shapes_and_hidden_output():
    s = _sym("GridGenerator", ("theta",),
             {"transform_type": "affine", "target_shape": (3, 4), "name": "grid"})
    assert s.list_outputs() == ["grid_output"]
    assert s.infer_shape(theta=(2, 6))[1] == [(2, 2, 3, 4)]
    with pytest.raises(ShapeError, match=r"grid.*\(2, 4\)"):
        s.infer_shape(theta=(2, 4))
    warp = _sym("GridGenerator", ("flow",), {"transform_type": "warp"})
    with pytest.raises(ShapeError, match="optical-flow|flow"):
        warp.infer_shape(flow=(2, 3, 4, 5))


def test_spatial_transformer_fills_loc():
    s = _sym("SpatialTransformer", ("data", "loc"),
             {"transform_type": "affine", "sampler_type": "bilinear", "target_shape": (3, 3)})
    args, outs, _ = s.infer_shape_partial(data=(2, 3, 5, 5))
    assert args[1] == (2, 6) and outs == [(2, 3, 3, 3)]
    assert len(s.list_outputs()) == 1


def test_bilinear_sampler_identity_grid_reproduces_input():
    data = np.random.RandomState(0).uniform(size=(2, 3, 4, 5)).astype(np.float32)
    theta = np.tile(np.array([[1, 0, 0, 0, 1, 0]], np.float32), (2, 1))
    grid = invoke("GridGenerator", [mx.nd.array(theta)],
                  {"transform_type": "affine", "target_shape": (4, 5)})
    out = invoke("BilinearSampler", [mx.nd.array(data), grid], {}).asnumpy()
    np.testing.assert_allclose(out, data, rtol=1e-5, atol=1e-6)


def test_bilinear_sampler_batch_mismatch():
    s = _sym("BilinearSampler", ("data", "grid"), {"name": "bs"})
    with pytest.raises(ShapeError, match=r"bs.*\(2, 3, 4, 5\).*\(3, 2, 4, 4\)"):
        s.infer_shape(data=(2, 3, 4, 5), grid=(3, 2, 4, 4))


def test_deformable_convolution_fills_parameters():
    s = _sym("_contrib_DeformableConvolution", ("data", "offset", "weight", "bias"),
             {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1), "num_group": 2,
              "num_deformable_group": 2})
    args, outs, _ = s.infer_shape_partial(data=(2, 4, 6, 7))
    assert args[1:] == [(2, 36, 6, 7), (8, 2, 3, 3), (8,)]
    assert outs == [(2, 8, 6, 7)]
    m = _sym("_contrib_ModulatedDeformableConvolution", ("data", "offset", "mask", "weight"),
             {"kernel": (3, 3), "num_filter": 8, "no_bias": True})
    args, outs, _ = m.infer_shape_partial(data=(2, 4, 6, 7))
    assert args[1:] == [(2, 18, 4, 5), (2, 9, 4, 5), (8, 4, 3, 3)] and outs == [(2, 8, 4, 5)]


def test_deformable_convolution_zero_offsets_is_convolution():
    rng = np.random.RandomState(0)
    x = rng.uniform(size=(1, 3, 5, 5)).astype(np.float32)
    w = rng.uniform(size=(2, 3, 3, 3)).astype(np.float32)
    out = invoke("_contrib_DeformableConvolution",
                 [mx.nd.array(x), mx.nd.zeros((1, 18, 3, 3)), mx.nd.array(w)],
                 {"kernel": (3, 3), "num_filter": 2, "no_bias": True}).asnumpy()
    want = np.einsum("oikl,nihwkl->nohw", w, np.lib.stride_tricks.sliding_window_view(
        x, (3, 3), axis=(2, 3)))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_deformable_convolution_rejects_3d_kernels():
    with pytest.raises(OpAttributeError, match="only 2-d kernels"):
        invoke("_contrib_DeformableConvolution",
               [mx.nd.zeros((1, 1, 4, 4, 4)), mx.nd.zeros((1, 54, 2, 2, 2)),
                mx.nd.zeros((1, 1, 3, 3, 3))],
               {"kernel": (3, 3, 3), "num_filter": 1, "no_bias": True})


def test_correlation_neighbourhood_must_fit():
    s = _sym("Correlation", ("a", "b"), {"max_displacement": 4, "kernel_size": 3,
                                         "name": "corr"})
    with pytest.raises(ShapeError, match="corr.*do not fit a 6x6 input"):
        s.infer_shape(a=(1, 2, 6, 6), b=(1, 2, 6, 6))
    ok = _sym("Correlation", ("a", "b"), {"max_displacement": 2, "stride2": 2, "pad_size": 2})
    args, outs, _ = ok.infer_shape_partial(a=(1, 2, 6, 6))
    assert args[1] == (1, 2, 6, 6) and outs == [(1, 9, 6, 6)]


def test_khatri_rao_checks():
    # oracle: MXNet's CPU kernel (BLAS) refuses integer and float16 data; matrices only
    from gluonport.errors import DTypeError

    a = mx.nd.ones((2, 3))
    with pytest.raises(DTypeError, match="float32/float64"):
        mx.nd.khatri_rao(a.astype("int32"), a.astype("int32"))
    with pytest.raises(ShapeError, match="column count"):
        mx.nd.khatri_rao(a, mx.nd.ones((4, 2)))
    with pytest.raises(ShapeError, match="matrix"):
        mx.nd.khatri_rao(mx.nd.ones((2, 3, 1)))
    sym = mx.sym.khatri_rao(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"))
    assert sym.infer_shape(a=(2, 4), b=(3, 4), c=(5, 4))[1] == [(30, 4)]

"""Unary elementwise ops, casts, clip and add_n against MXNet 1.9.1 (tests/golden/ops/unary.npz,
and amp.npz for the AMP casts)."""

import math
import re

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError
from gluonport.ops import registry
from gluonport.ops.math import special as _special
from gluonport.ops.math.unary import c_cast

UNARY_ALIASES = [
    ("_sparse_abs", "abs"), ("_sparse_round", "round"), ("_sparse_fix", "fix"),
    ("_sparse_gammaln", "gammaln"), ("_npx_gamma", "gamma"), ("_npx_erf", "erf"),
    ("_npx_erfinv", "erfinv"), ("_sparse_sigmoid", "sigmoid"), ("identity", "_copy"),
    ("cast", "Cast"), ("_npi_cast", "Cast"), ("_npi_clip", "clip"), ("_sparse_clip", "clip"),
    ("ElementWiseSum", "add_n"), ("_sparse_add_n", "add_n"),
    ("_sparse_zeros_like", "zeros_like"),
]


@pytest.mark.parametrize("alias,canonical", UNARY_ALIASES)
def test_alias_resolves(alias, canonical):
    assert registry.canonical_name(alias) == canonical


@pytest.mark.parametrize("x,dtype,want", [
    (-1.7, np.int32, -1), (2.9, np.int32, 2), (np.nan, np.int32, -(2**31)),
    (np.inf, np.int32, -(2**31)), (3e9, np.int32, -(2**31)), (-1.7, np.uint8, 255),
    (300.7, np.uint8, 44), (np.nan, np.uint8, 0), (300.7, np.int8, 44), (-129.5, np.int8, 127),
    (np.nan, np.int64, -(2**63)), (1e19, np.int64, -(2**63)), (2.0**62, np.int64, 2**62),
    (np.nan, np.bool_, True), (0.0, np.bool_, False), (70000.0, np.float16, np.inf),
])
def test_c_cast_follows_c_on_x86(x, dtype, want):
    got = c_cast(np.array([x]), dtype)
    assert got.dtype == np.dtype(dtype) and got[0] == want


GRID = [-30.0, -6.0, -2.6, -2.5, -2.4, -1.0, -0.3, -1e-9, 0.0, 1e-9, 0.1, 0.5, 1.0, 2.0, 2.49,
        2.51, 3.7, 5.9, 10.0, 27.0]


def test_erf_erfc_match_the_c_library():
    x = np.array(GRID)
    np.testing.assert_allclose(_special.erf(x), [math.erf(v) for v in GRID], rtol=1e-14,
                               atol=1e-300)
    np.testing.assert_allclose(_special.erfc(x), [math.erfc(v) for v in GRID], rtol=1e-12,
                               atol=1e-300)


def test_erfinv_inverts_erf():
    y = np.array([-0.999999, -0.9, -0.5, -1e-12, 0.0, 1e-7, 0.3, 0.7, 0.99, 1 - 1e-12])
    x = _special.erfinv(y)
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-13, atol=1e-16)
    assert list(_special.erfinv(np.array([1.0, -1.0]))) == [np.inf, -np.inf]
    assert np.isnan(_special.erfinv(np.array([1.5, -2.0, np.nan]))).all()


def test_gamma_lgamma_match_the_c_library():
    pts = [v for v in GRID if v > 0 and v < 170] + [-0.5, -1.5, -2.7, -10.3, 0.25, 150.5]
    x = np.array(pts)
    np.testing.assert_allclose(_special.gamma(x), [math.gamma(v) for v in pts], rtol=1e-12)
    np.testing.assert_allclose(_special.lgamma(x), [math.lgamma(v) for v in pts], rtol=1e-12,
                               atol=1e-14)
    poles = _special.gamma(np.array([0.0, -0.0, -1.0, -7.0, np.inf, 200.0, -np.inf]))
    assert list(poles[:2]) == [np.inf, -np.inf] and np.isnan(poles[2:4]).all()
    assert list(poles[4:6]) == [np.inf, np.inf] and np.isnan(poles[6])
    assert (_special.lgamma(np.array([0.0, -3.0, np.inf])) == np.inf).all()
    assert list(_special.lgamma(np.array([1.0, 2.0]))) == [0.0, 0.0]


def test_gamma_is_exact_at_positive_integers():
    """Gamma(n) = (n - 1)!, correctly rounded, for n = 1 .. 171 (as C's tgamma gives): the
    Lanczos sum alone is ~1e-15 off there, and an integer result truncates, so int32
    ``gamma(5)`` came out 23 with numpy 1.26's exp/pow (and ``gamma(1)`` 0 everywhere)."""
    n = np.arange(1, 172)
    want = [float(math.factorial(k - 1)) for k in n]
    assert _special.gamma(n.astype(np.float64)).tolist() == want
    assert _special.gamma(np.array([172.0]))[0] == np.inf
    got = mx.nd.gamma(mx.nd.array(np.arange(1, 13), dtype="int32")).asnumpy()
    assert got.tolist() == [math.factorial(k - 1) for k in range(1, 13)]


def test_amp_cast_in_a_graph():
    x = mx.sym.var("x")
    s = mx.sym.amp_cast(x, dtype="float16", name="c")
    assert s.infer_type(x=np.float32)[1] == [np.float16]
    assert s.infer_type(x=np.int32)[1] == [np.int32]  # only float16/float32 are cast
    assert s.eval(x=mx.nd.ones((2,)))[0].dtype == np.float16
    # MXNet's tojson() drops amp casts (remove_amp_cast=True); keeping them round-trips
    assert "amp_cast" not in s.tojson()
    kept = mx.sym.load_json(s.tojson(remove_amp_cast=False))
    assert kept.eval(x=mx.nd.ones((2,)))[0].dtype == np.float16


def test_amp_multicast_in_a_graph():
    s = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2, name="m")
    assert s.list_outputs() == ["m_output0", "m_output1"]
    assert s.infer_type(a=np.float16, b=np.float32)[1] == [np.float32, np.float32]
    narrow = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2,
                                  cast_narrow=True)
    assert narrow.infer_type(a=np.float16, b=np.float32)[1] == [np.float16, np.float16]
    assert s.infer_shape(a=(2, 3), b=(4,))[1] == [(2, 3), (4,)]
    assert mx.sym.amp_multicast(num_outputs=2, name="n").list_arguments() == ["n_data_0",
                                                                              "n_data_1"]


def test_add_n_json_matches_mxnet():
    s = mx.sym.ElementWiseSum(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"))
    text = s.tojson()
    assert '"op": "add_n"' in text  # the alias is the node's name hint, the op is add_n
    assert re.search(r'"name": "elementwisesum\d+"', text)
    assert '"num_args": "3"' in text


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.clip(mx.nd.ones(2), a_max=1), "required attribute 'a_min'"),
    (lambda: mx.nd.Cast(mx.nd.ones(2), dtype="complex64"), "dtype='complex64'"),
    (lambda: mx.nd.Cast(mx.nd.ones(2)), "required attribute 'dtype'"),
    (lambda: mx.nd.amp_multicast(mx.nd.ones(2), mx.nd.ones(2)), "num_outputs"),
    (lambda: mx.nd.hard_sigmoid(mx.nd.ones(2), gamma=1), "gamma"),
])
def test_bad_attributes_raise(call, match):
    with pytest.raises(OpAttributeError, match=match):
        call()


def test_fluent_methods_reach_the_ops():
    x = mx.nd.array([[-1.5, 0.25], [4.0, 2.5]])
    np.testing.assert_allclose(x.clip(0, 1).asnumpy(), [[0, 0.25], [1, 1]])
    np.testing.assert_allclose(x.rint().asnumpy(), [[-2, 0], [4, 2]])
    np.testing.assert_allclose(x.round().asnumpy(), [[-2, 0], [4, 3]])
    np.testing.assert_allclose(x.abs().sqrt().asnumpy(), np.sqrt(np.abs(x.asnumpy())))
    assert x.astype("int32").sign().dtype == np.int32

"""Linear algebra against MXNet 1.9.1 (tests/golden/ops/linalg.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, ShapeError

RNG = np.random.RandomState(7)
A = RNG.uniform(-1, 1, (4, 3)).astype(np.float32)
B = RNG.uniform(-1, 1, (5, 4)).astype(np.float32)


@pytest.mark.parametrize("ta,tb,lhs,rhs,want", [
    (False, False, A.T, B.T, A.T @ B.T),
    (True, False, A, B.T, A.T @ B.T),
    (False, True, A.T, B, A.T @ B.T),
    (True, True, A, B, A.T @ B.T),
])
def test_dot_transpose_flags(ta, tb, lhs, rhs, want):
    got = mx.nd.dot(mx.nd.array(lhs), mx.nd.array(rhs), transpose_a=ta, transpose_b=tb)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_dot_shape_mismatch_names_node_and_shapes():
    with pytest.raises(ShapeError, match=r"node 'd'.*\(2, 3\) x \(4, 5\)"):
        mx.sym.dot(mx.sym.var("x"), mx.sym.var("y"), name="d").infer_shape(x=(2, 3), y=(4, 5))


def test_dot_refuses_vector_transpose_and_integers():
    v = mx.nd.array([1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="cannot transpose vectors"):
        mx.nd.dot(v, v, transpose_a=True)
    i = mx.nd.array(np.ones((2, 2), np.int32), dtype=np.int32)
    with pytest.raises(DTypeError, match="float32"):
        mx.nd.dot(i, i)


def test_dot_float16_computes_in_float32():
    a = RNG.uniform(-1, 1, (3, 8)).astype(np.float16)
    got = mx.nd.dot(mx.nd.array(a, dtype=a.dtype), mx.nd.array(a.T, dtype=a.dtype))
    assert got.dtype == np.float16
    want = a.astype(np.float32) @ a.T.astype(np.float32)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-3, atol=2e-3)


def test_batch_dot_needs_3d():
    with pytest.raises(ShapeError, match="N >= 3"):
        mx.nd.batch_dot(mx.nd.array(A), mx.nd.array(B.T))


def test_gemm_completes_c_shape():
    # oracle: linalg_gemm(A, B, C).infer_shape_partial(A=(2,3,4), B=(2,4,5)) gives C (2, 3, 5)
    sym = mx.sym.linalg_gemm(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"))
    args, outs, _ = sym.infer_shape_partial(a=(2, 3, 4), b=(2, 4, 5))
    assert args == [(2, 3, 4), (2, 4, 5), (2, 3, 5)] and outs == [(2, 3, 5)]


def test_gemm2_canonical_name_and_alias():
    sym = mx.sym.linalg_gemm2(mx.sym.var("a"), mx.sym.var("b"))
    assert '"op": "_linalg_gemm2"' in sym.tojson().replace("'", '"')
    got = mx.nd.invoke("_linalg_gemm2", [mx.nd.array(A.T), mx.nd.array(B.T)], {"alpha": 2.0})
    np.testing.assert_allclose(got.asnumpy(), 2 * A.T @ B.T, rtol=1e-5, atol=1e-6)


def test_gelqf_syevd_shapes_names_and_properties():
    # oracle: list_outputs <name>_output0/1; gelqf refuses m > n; no 'linalg_syevd' alias
    sym = mx.sym.linalg.gelqf(mx.sym.var("a"), name="g")
    assert sym.list_outputs() == ["g_output0", "g_output1"]
    assert sym.infer_shape(a=(2, 3, 5))[1] == [(2, 3, 5), (2, 3, 3)]
    with pytest.raises(ShapeError, match="m <= n"):
        mx.nd.linalg.gelqf(mx.nd.ones((3, 2)))
    assert not hasattr(mx.nd, "linalg_syevd") and hasattr(mx.nd, "linalg_gelqf")
    a = RNG.uniform(-1, 1, (3, 4, 6))
    q, low = (o.asnumpy() for o in mx.nd.linalg.gelqf(mx.nd.array(a, dtype="float64")))
    np.testing.assert_allclose(low @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (3, 4, 4)),
                               atol=1e-12)
    assert np.all(np.triu(low, 1) == 0)
    s = a[:, :, :4] @ np.swapaxes(a[:, :, :4], -1, -2)
    u, lam = (o.asnumpy() for o in mx.nd.linalg.syevd(mx.nd.array(s, dtype="float64")))
    np.testing.assert_allclose(u @ s, lam[..., None] * u, atol=1e-12)
    assert np.all(np.diff(lam, axis=-1) >= 0)


def test_trian_errors_and_float16():
    with pytest.raises(ShapeError, match="triangle size"):
        mx.nd.linalg.maketrian(mx.nd.ones(5))
    with pytest.raises(ShapeError, match="out of range"):
        mx.nd.linalg.extracttrian(mx.nd.ones((3, 3)), offset=3)
    with pytest.raises(DTypeError, match="float32/float64"):
        mx.nd.linalg.extracttrian(mx.nd.ones((3, 3), dtype="float16"))
    packed = mx.nd.array(np.arange(1, 11, dtype=np.float32))
    for offset, lower in ((0, True), (0, False), (2, True), (-1, False)):
        m = mx.nd.linalg.maketrian(packed[:6] if offset else packed, offset=offset, lower=lower)
        back = mx.nd.linalg.extracttrian(m, offset=offset, lower=lower).asnumpy()
        np.testing.assert_array_equal(back, (packed[:6] if offset else packed).asnumpy())

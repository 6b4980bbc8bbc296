"""Reductions against MXNet 1.9.1 (tests/golden/ops/reduce.npz)."""

import pytest

from tests.ops import cases_reduce
from tests.ops._check import check_nd, check_sym, load_golden

GOLDEN = load_golden("reduce")
IDS = [c["name"] for c in cases_reduce.CASES]


@pytest.mark.parametrize("case", cases_reduce.CASES, ids=IDS)
def test_nd(case):
    check_nd(case, GOLDEN[case["name"]])


@pytest.mark.parametrize("case", cases_reduce.CASES, ids=IDS)
def test_sym(case):
    check_sym(case, GOLDEN[case["name"]])


# --- targeted checks the table cannot express ---------------------------------------------
import numpy as np  # noqa: E402

import gluonport as mx  # noqa: E402
from gluonport.errors import OpAttributeError, ShapeError  # noqa: E402

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("op,ref", [("sum", np.sum), ("max", np.max), ("prod", np.prod)])
def test_exclude_reduces_the_other_axes(op, ref):
    got = mx.nd.invoke(op, [mx.nd.array(X)], {"axis": (0, 2), "exclude": True}).asnumpy()
    np.testing.assert_allclose(got, ref(X, axis=1), rtol=1e-6)
    kept = mx.nd.invoke(op, [mx.nd.array(X)], {"axis": 1, "exclude": True, "keepdims": True})
    np.testing.assert_allclose(kept.asnumpy(), ref(X, axis=(0, 2), keepdims=True), rtol=1e-6)


def test_duplicate_axes_name_the_node():
    with pytest.raises(ShapeError, match=r"node 's'.*duplicates"):
        mx.sym.sum(mx.sym.var("x"), axis=(1, -1), name="s").infer_shape(x=(2, 3))


def test_axis_out_of_range():
    with pytest.raises(ShapeError, match="out of range"):
        mx.nd.sum(mx.nd.array(X), axis=3)
    with pytest.raises(ShapeError, match="out of range"):
        mx.nd.argmax(mx.nd.array(X), axis=-4)


def test_norm_refuses_other_orders():
    with pytest.raises(OpAttributeError, match="ord=3"):
        mx.nd.norm(mx.nd.array(X), ord=3)


def test_norm_out_dtype():
    # MXNet 1.9.1 infers out_dtype (checked with the oracle) but its CPU kernel then fails;
    # gluonport returns the norm cast to out_dtype.
    sym = mx.sym.norm(mx.sym.var("x"), axis=1, out_dtype="float64")
    assert sym.infer_type(x=np.float32)[1] == [np.float64]
    got = mx.nd.norm(mx.nd.array(X), axis=1, out_dtype="float64").asnumpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.sqrt((X.astype(np.float64) ** 2).sum(axis=1)))


def test_partial_shapes_like_mxnet():
    x = mx.sym.var("x")
    # a reduction needs only the input's rank (oracle: (2, 0, 3) -> (2, 3) for axis=1)
    assert mx.sym.sum(x, axis=1).infer_shape_partial(x=(2, 0, 3))[1] == [(2, 3)]
    # argmax needs the whole input shape, as in MXNet
    assert mx.sym.argmax(x, axis=1).infer_shape_partial(x=(2, 0, 3))[1] == [()]

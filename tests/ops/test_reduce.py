"""Reductions against MXNet 1.9.1 (tests/golden/ops/reduce.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError

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


# --- moments / cumsum / histogram / all_finite beyond the table --------------------------------
def test_moments_refuses_empty_axes_and_names_outputs():
    # oracle: MXNet refuses missing/empty axes; outputs are <name>_output0 / _output1
    for axes in (None, ()):
        with pytest.raises(OpAttributeError, match="empty axes"):
            mx.nd.moments(mx.nd.array(X), axes=axes)
    with pytest.raises(OpAttributeError, match="empty axes"):
        mx.sym.moments(mx.sym.var("x")).infer_shape(x=(2, 3))
    sym = mx.sym.moments(mx.sym.var("x"), axes=(1,), name="m")
    assert sym.list_outputs() == ["m_output0", "m_output1"]
    assert sym.infer_shape(x=(2, 3, 4))[1] == [(2, 4), (2, 4)]


def test_cumsum_is_np_cumsum_and_takes_negative_axes():
    # oracle: mx.sym.cumsum writes op "_np_cumsum" with input "a"; MXNet 1.9.1 fails at run
    # time on a negative axis (its kernel indexes the shape with it), gluonport counts from
    # the end as numpy does
    sym = mx.sym.cumsum(mx.sym.var("a"), axis=-1)
    assert '"op": "_np_cumsum"' in sym.tojson()
    got = mx.nd.cumsum(mx.nd.array(X), axis=-1).asnumpy()
    np.testing.assert_array_equal(got, np.cumsum(X, axis=-1))
    assert mx.nd.cumsum(mx.nd.array([True, True], dtype="bool")).dtype == np.int64
    assert sym.infer_shape(a=(2, 3))[1] == [(2, 3)]
    assert mx.sym.cumsum(mx.sym.var("a")).infer_shape(a=(2, 3))[1] == [(6,)]


def test_histogram_inputs_follow_bin_cnt():
    data = mx.sym.var("d")
    assert mx.sym._internal._histogram(data, bin_cnt=3, range=(0, 1)).list_arguments() == ["d"]
    with_bins = mx.sym._internal._histogram(data, mx.sym.var("b"))
    assert with_bins.list_arguments() == ["d", "b"]
    assert with_bins.infer_type(d=np.float64, b=np.float64)[1] == [np.int64, np.float64]
    with pytest.raises(OpAttributeError, match="bin_cnt and range together"):
        mx.nd._internal._histogram(mx.nd.array(X), bin_cnt=3)
    with pytest.raises(OpAttributeError, match="low <= high"):
        mx.nd._internal._histogram(mx.nd.array(X), bin_cnt=3, range=(2, 1))
    with pytest.raises(ShapeError, match="dtype float32"):
        mx.nd._internal._histogram(mx.nd.array(X), mx.nd.array([0, 1], dtype="float64"))


def test_all_finite_dtypes_and_init_output():
    # oracle: integer data is refused; the output is float32 (1,) whatever the input dtype
    with pytest.raises(DTypeError, match="floating point"):
        mx.nd.all_finite(mx.nd.array([1, 2], dtype="int32"))
    sym = mx.sym.multi_all_finite(mx.sym.var("a"), mx.sym.var("b"), num_arrays=2)
    assert sym.infer_type(a=np.float16, b=np.float16)[1] == [np.float32]
    assert sym.infer_shape(a=(2, 3), b=(4,))[1] == [(1,)]
    # init_output=False: MXNet leaves an all-finite output as it was (meant to accumulate
    # into out=); gluonport writes 1 there
    got = mx.nd.all_finite(mx.nd.array(X), init_output=False).asnumpy()
    np.testing.assert_array_equal(got, [1.0])

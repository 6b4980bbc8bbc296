"""Sorting against MXNet 1.9.1 (tests/golden/ops/sort.npz)."""

import json

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, ShapeError

X = mx.nd.array([[3.0, 1.0, 4.0, 1.5, 9.0], [2.0, 6.0, 5.0, 3.0, 5.5]])
TIES = mx.nd.array([1.0, 1.0, 1.0, 2.0, 2.0, 0.0])


def test_topk_both_returns_values_and_indices():
    out = mx.nd.topk(X, k=2, ret_typ="both")
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[0].asnumpy(), [[9.0, 4.0], [6.0, 5.5]])
    np.testing.assert_array_equal(out[1].asnumpy(), [[4.0, 2.0], [1.0, 4.0]])
    sym = mx.sym.topk(mx.sym.var("x"), k=2, ret_typ="both", name="t")
    assert sym.list_outputs() == ["t_output0", "t_output1"]


@pytest.mark.parametrize("op,attrs,visible,row_ptr", [
    ("topk", {"ret_typ": "value"}, ["n_output0"], [0, 1, 3]),  # hidden int32 indices
    ("topk", {"ret_typ": "indices"}, ["n_output"], [0, 1, 2]),
    ("sort", {}, ["n_output0"], [0, 1, 3]),  # MXNet's sort JSON: node_row_ptr [0, 1, 3]
    ("argsort", {}, ["n_output"], [0, 1, 2]),
])
def test_hidden_outputs_like_mxnet(op, attrs, visible, row_ptr):
    sym = mx.sym.invoke(op, [mx.sym.var("x")], {**attrs, "name": "n"})
    assert sym.list_outputs() == visible
    assert json.loads(sym.tojson())["node_row_ptr"] == row_ptr


def test_ties_keep_their_order_both_ways():
    # oracle (MXNet 1.9.1 CPU, short rows): the same orders
    down = mx.nd.topk(TIES, k=6).asnumpy()
    up = mx.nd.topk(TIES, k=6, is_ascend=True).asnumpy()
    np.testing.assert_array_equal(down, [3, 4, 0, 1, 2, 5])
    np.testing.assert_array_equal(up, [5, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(mx.nd.argsort(TIES, is_ascend=False).asnumpy(), down)
    np.testing.assert_array_equal(mx.nd.argsort(TIES).asnumpy(), up)


def test_k_larger_than_axis():
    with pytest.raises(ShapeError, match="k=6"):
        mx.nd.topk(X, k=6)


def test_index_dtype_too_narrow():
    with pytest.raises(DTypeError, match="uint8"):
        mx.nd.argsort(mx.nd.array(np.arange(300.0)), dtype="uint8")


def test_argsort_refuses_float16_like_mxnet():
    with pytest.raises(DTypeError, match="float16"):
        mx.nd.argsort(X.astype("float16"))

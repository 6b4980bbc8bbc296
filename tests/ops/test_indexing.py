"""Indexing ops against MXNet 1.9.1 (tests/golden/ops/indexing.npz), plus partial shape/type
inference and out-of-bounds errors."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, ShapeError


def test_embedding_completes_weight_shape_and_type():
    out = mx.sym.Embedding(mx.sym.var("x"), input_dim=10, output_dim=4, name="emb")
    assert out.list_arguments() == ["x", "emb_weight"]
    args, outs, _ = out.infer_shape_partial(x=(0, 3))
    assert [tuple(a) for a in args] == [(0, 3), (10, 4)] and tuple(outs[0]) == (0, 3, 4)
    args, outs, _ = out.infer_type(x="int32")
    assert [np.dtype(t) for t in args] == [np.int32, np.float32] and outs[0] == np.float32
    f16 = mx.sym.Embedding(mx.sym.var("x"), input_dim=10, output_dim=4, dtype="float16")
    assert f16.infer_type(x="float32")[1][0] == np.float16


def test_embedding_weight_shape_mismatch():
    out = mx.sym.Embedding(mx.sym.var("x"), mx.sym.var("w"), input_dim=10, output_dim=4,
                           name="emb")
    with pytest.raises(ShapeError, match=r"'emb'.*\(10, 4\)"):
        out.infer_shape(x=(2,), w=(10, 5))


@pytest.mark.parametrize("build,given,want_args,want_out", [
    (lambda x, i: mx.sym.take(x, i), {"x": (0, 4), "i": (3,)}, [(0, 4), (3,)], (3, 4)),
    (lambda x, i: mx.sym.pick(x, i), {"x": (0, 4)}, [(0, 4), (0,)], (0,)),
    (lambda x, i: mx.sym.pick(x, i, keepdims=True), {"x": (3, 4)}, [(3, 4), (3,)], (3, 1)),
    (lambda x, i: mx.sym.where(i, x, x), {"x": (0, 4), "i": (3, 4)}, [(3, 4), (3, 4)], (3, 4)),
    (lambda x, i: mx.sym.gather_nd(x, i), {"x": (0, 4), "i": (2, 5)}, [(0, 4), (2, 5)], (5,)),
    (lambda x, i: mx.sym.scatter_nd(x, i, shape=(3, 4)), {"i": (2, 5)}, [(5,), (2, 5)],
     (3, 4)),
    (lambda x, i: mx.sym.contrib.boolean_mask(x, i), {"x": (3, 4)}, [(3, 4), (3,)], (0, 4)),
])
def test_partial_inference(build, given, want_args, want_out):
    out = build(mx.sym.var("x"), mx.sym.var("i"))
    args, outs, _ = out.infer_shape_partial(**given)
    order = out.list_arguments()
    got = dict(zip(order, (tuple(a) for a in args)))
    want = dict(zip(["x", "i"], want_args))
    assert {k: got[k] for k in want} == want and tuple(outs[0]) == want_out


def test_index_dtypes_stay_independent():
    x, i = mx.sym.var("x"), mx.sym.var("i")
    for out in (mx.sym.take(x, i), mx.sym.gather_nd(x, i), mx.sym.pick(x, i)):
        args, outs, _ = out.infer_type(x="float16", i="int64")
        assert [np.dtype(t) for t in args] == [np.float16, np.int64] and outs[0] == np.float16
    args, outs, _ = mx.sym.where(i, x, mx.sym.var("y")).infer_type(i="int32", x="float16")
    assert [np.dtype(t) for t in args] == [np.int32, np.float16, np.float16]
    assert mx.sym.one_hot(i, depth=3, dtype="int8").infer_type(i="float32")[1][0] == np.int8
    assert mx.sym.batch_take(x, i).infer_type(x="float64")[0][1] == np.int32


@pytest.mark.parametrize("op,inputs,attrs,match", [
    ("take", [np.ones((3, 4)), np.array([0, 3])], {"mode": "raise"}, "out of bounds"),
    ("take", [np.ones((3, 4)), np.array([-1, 0])], {"mode": "raise"}, "out of bounds"),
    ("take", [np.ones((3, 4)), np.array([0])], {"axis": 2}, "out of range"),
    ("pick", [np.ones((3, 4)), np.array([0, 1, 2])], {"axis": None}, "axis=None"),
    ("gather_nd", [np.ones((3, 4)), np.array([[0, 2.7]])], {}, "out of bounds"),
    ("gather_nd", [np.ones((3, 4)), np.array([0, 1])], {}, "at least 2-d"),
    ("scatter_nd", [np.ones(2), np.array([[0, -1]])], {"shape": (3,)}, "out of bounds"),
    ("scatter_nd", [np.ones(3), np.array([[0, 1]])], {"shape": (3,)}, "do not fit"),
    ("where", [np.ones(4), np.ones((3, 4)), np.ones((3, 4))], {}, "does not match"),
    ("where", [np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 5))], {}, "mismatch"),
    ("batch_take", [np.ones((2, 3, 4)), np.zeros(6, np.int32)], {}, "must be"),
    ("Embedding", [np.zeros(2), np.ones((3, 5))], {"input_dim": 3, "output_dim": 4}, "weight"),
    ("_contrib_boolean_mask", [np.ones((3, 4)), np.ones(4)], {"axis": 1}, "axis=0"),
    ("_contrib_index_copy", [np.ones((3, 2)), np.array([3]), np.ones((1, 2))], {}, "bounds"),
])
def test_bad_input_raises_named_shape_error(op, inputs, attrs, match):
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    with pytest.raises(ShapeError, match=match) as err:
        mx.nd.invoke(op, arrays, attrs)
    assert str(err.value).startswith(mx.ops.registry.canonical_name(op))


def test_batch_take_needs_int32_indices():
    with pytest.raises(DTypeError, match="int32"):
        mx.nd.batch_take(mx.nd.ones((2, 3)), mx.nd.array([0, 1]))


def test_boolean_mask_executor():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mx.sym.contrib.boolean_mask(mx.sym.var("x"), mx.sym.var("m"))
    got = out.eval(x=mx.nd.array(x), m=mx.nd.array([0, 1, 1]))[0].asnumpy()
    np.testing.assert_array_equal(got, x[1:])


# --- legacy NDArray functions and ravel/unravel beyond the table ------------------------------
def test_legacy_functions_take_float32_only():
    # oracle: MXNet's legacy kernels check for float32 (real_t)
    with pytest.raises(DTypeError, match="float32"):
        mx.nd._internal._onehot_encode(mx.nd.array([1, 2], dtype="int32"), mx.nd.ones((2, 5)))
    with pytest.raises(DTypeError, match="float32"):
        mx.nd.fill_element_0index(mx.nd.ones((2, 3), dtype="float64"), mx.nd.ones(2),
                                  mx.nd.ones(2))
    with pytest.raises(ShapeError, match="one row count"):
        mx.nd.fill_element_0index(mx.nd.ones((3, 4)), mx.nd.ones(2), mx.nd.ones(2))
    with pytest.raises(ShapeError, match=r"\(2,\) and output \(3, 5\)"):
        mx.nd._internal._onehot_encode(mx.nd.array([1, 2]), mx.nd.ones((3, 5)))


def test_ravel_names_and_shape_rules():
    # oracle: the sym front end writes _ravel_multi_index; data must be (len(shape), N)
    sym = mx.sym.ravel_multi_index(mx.sym.var("a"), shape=(7, 6))
    assert '"op": "_ravel_multi_index"' in sym.tojson()
    assert sym.infer_shape(a=(2, 5))[1] == [(5,)]
    with pytest.raises(ShapeError, match="2 rows"):
        mx.nd.ravel_multi_index(mx.nd.ones((3, 2)), shape=(7, 6))
    with pytest.raises(ShapeError, match="non-empty tuple"):
        mx.nd.unravel_index(mx.nd.ones(3))
    assert mx.sym.unravel_index(mx.sym.var("a"), shape=(3, 4, 5)).infer_shape(a=(6,))[1] == \
        [(3, 6)]


def test_unravel_then_ravel_round_trips():
    flat = np.arange(0, 120, 7).astype(np.float64)
    multi = mx.nd.unravel_index(mx.nd.array(flat, dtype="float64"), shape=(4, 5, 6))
    np.testing.assert_array_equal(multi.asnumpy(), np.stack(np.unravel_index(flat.astype(int),
                                                                            (4, 5, 6))))
    back = mx.nd.ravel_multi_index(multi, shape=(4, 5, 6)).asnumpy()
    np.testing.assert_array_equal(back, flat)

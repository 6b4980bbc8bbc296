"""Creation ops (_zeros, _ones, _full, _arange, _eye, _linspace) against MXNet 1.9.1
(tests/golden/ops/init.npz), plus their errors and partial shapes."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError, ShapeError
from gluonport.ndarray import invoke


@pytest.mark.parametrize("op,attrs,match", [
    ("_arange", {"start": 0, "stop": 5, "step": 0}, "step=0"),
    ("_arange", {"start": 5, "stop": 1}, "invalid range"),
    ("_arange", {"start": 1, "stop": 5, "step": -1}, "invalid range"),
    ("_arange", {"start": 0, "stop": 5, "repeat": 0}, "repeat=0"),
    ("_linspace", {"start": 0, "stop": 1, "num": -1}, "num=-1"),
    ("_full", {"shape": (2,)}, "required attribute 'value'"),
    ("_zeros", {"shape": (2,), "dtype": "complex64"}, "dtype"),
    ("_eye", {"N": 2, "dtype": "bool"}, "dtype"),
    ("_arange", {"start": 0, "stop": 3, "dtype": "bool"}, "dtype"),
])
def test_bad_attributes_raise(op, attrs, match):
    with pytest.raises(OpAttributeError, match=match):
        invoke(op, (), attrs)


def test_unknown_shape_raises_in_imperative_mode():
    with pytest.raises(ShapeError, match="not fully known"):
        invoke("_zeros", (), {"shape": (2, 0)})
    with pytest.raises(ShapeError, match="infer_range"):
        invoke("_arange", (), {"start": 0, "infer_range": True})


def test_ctx_attribute_places_the_result():
    out = invoke("_ones", (), {"shape": (2,), "ctx": "gpu(1)"})
    assert out.context == mx.gpu(1)
    assert invoke("_zeros", (), {"shape": (2,)}).context == mx.current_context()


def test_partial_shape_is_completed_by_graph_inference():
    # legacy semantics: a 0 dim in `shape` is unknown and comes from the consumer
    z = mx.sym._internal._zeros(shape=(0, 3))
    out = mx.sym.elemwise_add(z, mx.sym.var("x"))
    arg_shapes, out_shapes, _ = out.infer_shape(x=(4, 3))
    assert out_shapes == [(4, 3)] and arg_shapes == [(4, 3)]
    assert z.infer_shape_partial() == ([], [(0, 3)], [])  # as MXNet reports it


def test_zeros_without_dtype_takes_the_consumers_dtype():
    z = mx.sym._internal._zeros_without_dtype(shape=(2, 2))
    assert z.infer_type() == (None, None, None)  # as MXNet reports it
    out = mx.sym.elemwise_add(z, mx.sym.var("x"))
    assert out.infer_type(x=np.float16)[1] == [np.float16]
    # MXNet fails here ("Unknown type enum -1"); gluonport picks float32
    assert invoke("_zeros_without_dtype", (), {"shape": (2,)}).dtype == np.float32


def test_arange_infer_range_shape_is_unknown():
    a = mx.sym._internal._arange(start=0, infer_range=True)
    assert a.infer_shape_partial() == ([], [()], [])  # as MXNet reports it


def test_sym_creation_json_matches_mxnet():
    z = mx.sym.zeros((2, 3), name="z")
    assert '"op": "_zeros"' in z.tojson() and '"shape": "(2, 3)"' in z.tojson()
    assert '"dtype": "float32"' in z.tojson()
    r = mx.sym.arange(0, 10, 2, name="r")
    assert r.infer_shape()[1] == [(5,)]
    np.testing.assert_array_equal(r.eval()[0].asnumpy(), [0, 2, 4, 6, 8])

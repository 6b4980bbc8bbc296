"""Elementwise ops against MXNet 1.9.1 (tests/golden/ops/elemwise.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError, ShapeError
from gluonport.ops import registry
from gluonport.ops.math.elemwise import int_div, mxnet_mod

ALIASES = [
    # (alias, canonical) from MXNet 1.9.1's registry
    ("_Plus", "elemwise_add"), ("_add", "elemwise_add"), ("_sparse_elemwise_add", "elemwise_add"),
    ("_Minus", "elemwise_sub"), ("_sub", "elemwise_sub"), ("_Mul", "elemwise_mul"),
    ("_Div", "elemwise_div"), ("broadcast_plus", "broadcast_add"),
    ("_sparse_broadcast_plus", "broadcast_add"), ("broadcast_minus", "broadcast_sub"),
    ("_sparse_broadcast_mul", "broadcast_mul"), ("_sparse_broadcast_div", "broadcast_div"),
    ("_npi_maximum", "broadcast_maximum"), ("_npi_minimum", "broadcast_minimum"),
    ("_Mod", "_mod"), ("_Power", "_power"), ("_Hypot", "_hypot"), ("_Not_Equal", "_not_equal"),
    ("_Greater_Equal", "_greater_equal"), ("_Logical_Xor", "_logical_xor"),
    ("_PlusScalar", "_plus_scalar"), ("_RMinusScalar", "_rminus_scalar"),
    ("_RDivScalar", "_rdiv_scalar"), ("_RPowerScalar", "_rpower_scalar"),
    ("_npi_hypot_scalar", "_hypot_scalar"), ("_npi_maximum_scalar", "_maximum_scalar"),
    ("_LesserEqualScalar", "_lesser_equal_scalar"), ("_npx_smooth_l1", "smooth_l1"),
]


@pytest.mark.parametrize("alias,canonical", ALIASES)
def test_alias_resolves(alias, canonical):
    assert registry.canonical_name(alias) == canonical


@pytest.mark.parametrize("dtype,is_int,want", [
    (np.int32, True, np.int32), (np.int32, False, np.float64), (np.uint8, False, np.float64),
    (np.float16, False, np.float16), (np.float32, True, np.float32), (np.bool_, True, np.int64),
    (np.bool_, False, np.float64),
])
def test_scalar_op_output_dtype(dtype, is_int, want):
    # NumpyBinaryScalarType: an integer array with a non-integer scalar computes in float64
    s = mx.sym._internal._mul_scalar(mx.sym.var("x"), scalar=1.5, is_int=is_int)
    assert s.infer_type(x=dtype)[1] == [want]
    got = mx.nd._internal._mul_scalar(mx.nd.array([1, 0, 1], dtype=dtype), scalar=1.5,
                                      is_int=is_int)
    assert got.dtype == want


def test_bool_array_scalar_op_computes_in_int64():
    x = mx.nd.array([True, False], dtype=np.bool_)
    np.testing.assert_array_equal(mx.nd._internal._plus_scalar(x, scalar=2.7).asnumpy(), [3, 2])
    np.testing.assert_allclose(
        mx.nd._internal._plus_scalar(x, scalar=2.5, is_int=False).asnumpy(), [3.5, 2.5])


def test_int_div_is_exact_c_division():
    a = np.array([-7, 7, -7, 7, 2**62 + 1, -(2**62) - 3, 5], dtype=np.int64)
    b = np.array([2, -2, -2, 2, 3, 7, 0], dtype=np.int64)
    want = [int(x / y) if y else 0 for x, y in zip(a.tolist(), b.tolist())]
    want[4], want[5] = (2**62 + 1) // 3, -((2**62 + 3) // 7)  # beyond float64 precision
    np.testing.assert_array_equal(int_div(a, b), want)


@pytest.mark.parametrize("a,b,want", [
    (-7.0, 2.0, 1.0), (7.0, -2.0, -1.0), (-7.0, -2.0, -1.0), (5.5, 2.0, 1.5), (3.0, 0.0, 0.0),
    (-0.5, 3.0, 2.5), (4.0, 2.0, 0.0), (-4.0, 2.0, 0.0),
])
def test_mod_takes_divisor_sign(a, b, want):
    got = mxnet_mod(np.array([a], np.float32), np.array([b], np.float32))
    assert got.dtype == np.float32 and got[0] == want


def test_same_shape_ops_refuse_to_broadcast():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(1, 3\).*broadcast_add"):
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((1, 3)))
    with pytest.raises(ShapeError, match="add1.*(2, 3).*(3, 2)"):
        mx.sym.elemwise_add(mx.sym.var("a"), mx.sym.var("b"), name="add1").infer_shape(
            a=(2, 3), b=(3, 2))
    with pytest.raises(ShapeError, match=r"bc1.*broadcast.*\(2, 3\).*\(3, 2\)"):
        mx.sym.broadcast_add(mx.sym.var("a"), mx.sym.var("b"), name="bc1").infer_shape(
            a=(2, 3), b=(3, 2))


def test_partial_shapes_complete_each_other():
    s = mx.sym.elemwise_mul(mx.sym.var("a"), mx.sym.var("b"))
    args, outs, _ = s.infer_shape_partial(a=(2, 0), b=(0, 5))
    assert args == [(2, 5), (2, 5)] and outs == [(2, 5)]
    bc = mx.sym.broadcast_add(mx.sym.var("a"), mx.sym.var("b"))
    assert bc.infer_shape(a=(4, 1, 3), b=(2, 1))[1] == [(4, 2, 3)]


def test_bad_attributes_name_the_node_and_attribute():
    j = mx.sym._internal._plus_scalar(mx.sym.var("x"), scalar=2, name="ps").tojson()
    with pytest.raises(OpAttributeError, match="'ps'.*scalar='abc'"):
        mx.sym.load_json(j.replace('"scalar": "2"', '"scalar": "abc"')).eval(x=mx.nd.ones(2))
    with pytest.raises(OpAttributeError, match="foo"):
        mx.nd._internal._plus_scalar(mx.nd.ones(2), scalar=1, foo=2)


def test_symbol_scalar_json_matches_mxnet():
    # MXNet's Symbol.__add__ builds _plus_scalar with the scalar as str(value), no is_int
    s = mx.sym.var("x") + 2.5
    assert '"op": "_plus_scalar"' in s.tojson() and '"scalar": "2.5"' in s.tojson()
    assert '"is_int"' not in s.tojson()

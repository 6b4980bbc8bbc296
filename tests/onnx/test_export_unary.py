"""ONNX export of the unary family (gluonport/ops/math/unary.py): every case of
tests/ops/cases_unary.py and the AMP casts against MXNet 1.9.1's goldens in onnxruntime, at
opset 13 and the newest;
beyond the table, against the numpy executor: float64 (onnxruntime lacks double kernels for
most of these, so they are compositions), integer inputs through float64 math, special values,
zeros_like/ones_like and a few ops under a dynamic batch.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import math

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_dynamic, check_export, export_case, run_ort
from tests.ops import cases_unary
from tests.ops._check import _compare, forward, load_golden

GOLDEN = load_golden("unary")
CASES = {c["name"]: c for c in cases_unary.CASES}


@pytest.mark.parametrize("opset", OPSETS)
def test_add_n_params(opset):
    """add_n with one operand an initializer (a parameter of the model)."""
    case = CASES["add_n_three"]
    check_export(case, GOLDEN["add_n_three"], opset, params=["in1"])


# --- beyond the table: vs the numpy executor (which matches MXNet on the table's cases) --------
NAN, INF = float("nan"), float("inf")
_R = np.random.RandomState(3)
WIDE = np.concatenate([_R.uniform(-3, 3, 24), [0.0, -0.0, 1e-9, -1e-9, 1e-300, 30.0, -30.0,
                                                 1e6, NAN, INF, -INF]]).astype(np.float64)
UNIT = np.concatenate([_R.uniform(-1, 1, 24), [0.0, 1.0, -1.0, 1e-12, 0.999999, 1.5, NAN]])
GE1 = np.concatenate([_R.uniform(1, 5, 12), [1.0, 1 + 1e-12, 1e10, 1e200, 0.5, INF, NAN]])
POS = np.concatenate([_R.uniform(0, 5, 12), [0.0, 1e-300, 1e-5, 1e300, 1000.0, 1024.0, INF,
                                             -1.0, NAN]])
GAMMA_X = np.array([-3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 10.5,
                    100.0, 171.5, 180.0, -170.3, 1e-8, INF, -INF, NAN])
# (op, float64 input, rtol): float64 is composed from ops with double kernels
F64 = [("tan", WIDE, 1e-12), ("arctan", WIDE, 1e-13), ("arcsin", UNIT, 1e-13),
       ("arccos", UNIT, 1e-13), ("sinh", WIDE, 1e-13), ("cosh", WIDE, 1e-13),
       ("arcsinh", WIDE, 1e-13), ("arccosh", GE1, 1e-13), ("arctanh", UNIT, 1e-13),
       ("erf", WIDE, 1e-13), ("erfinv", UNIT, 1e-11), ("softsign", WIDE, 1e-15),
       ("log1p", WIDE, 1e-14), ("expm1", WIDE, 1e-14), ("log10", POS, 1e-15),
       ("log2", POS, 1e-15), ("cbrt", WIDE, 1e-15), ("rcbrt", WIDE, 1e-15),
       ("gamma", GAMMA_X, 1e-12), ("gammaln", GAMMA_X, 1e-12), ("hard_sigmoid", WIDE, 0),
       ("round", WIDE, 0), ("rint", WIDE, 0), ("fix", WIDE, 0), ("sign", WIDE, 0)]
INTS = np.array([-1000, -64, -27, -8, -7, -3, -1, 0, 1, 2, 3, 8, 27, 64, 100, 1000, 1024],
                np.int32)
INT_OPS = ["cbrt", "rcbrt", "log10", "log2", "log1p", "expm1", "erf", "erfinv", "sqrt",
           "arctan", "sinh", "gamma", "gammaln", "tan", "sigmoid", "exp"]


def _check_vs_executor(op: str, x: np.ndarray, opset: int, rtol: float, attrs=None) -> None:
    case = {"name": f"{op}_{x.dtype}", "op": op, "attrs": attrs or {}, "rtol": rtol,
            "atol": 0}
    model, sym, data, _ = export_case(case, {"inputs": [x]}, opset)
    want = forward(sym, data)
    _compare(case, run_ort(model, data), want, f"onnx opset {opset}")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op,x,rtol", F64, ids=[f[0] for f in F64])
def test_float64(op, x, rtol, opset):
    _check_vs_executor(op, x, opset, rtol)


@pytest.mark.parametrize("opset", OPSETS)
def test_gamma_exact_at_positive_integers(opset):
    """The exported gamma gives (n - 1)!, correctly rounded, at n = 1 .. 171, like the
    executor and C's tgamma (the Lanczos composition alone is an ulp or more off there)."""
    n = np.arange(1, 173, dtype=np.float64)
    case = {"name": "gamma_ints", "op": "gamma", "attrs": {}}
    model, _, data, _ = export_case(case, {"inputs": [n]}, opset)
    got = run_ort(model, data)[0]
    assert got.tolist() == [float(math.factorial(k - 1)) for k in range(1, 172)] + [np.inf]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op,x,rtol", F64, ids=[f[0] for f in F64])
def test_float32_special_values(op, x, rtol, opset):
    with np.errstate(over="ignore"):  # 1e200 and 1e300 become inf
        x32 = x.astype(np.float32)
    _check_vs_executor(op, x32, opset, max(rtol, 2e-6))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op", INT_OPS)
def test_int32_through_double(op, opset):
    """Integer inputs are computed in float64 and truncated: exact cubes and powers of 10 stay
    exact (a result 1 ulp below an integer would truncate one lower)."""
    _check_vs_executor(op, INTS, opset, 0)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16"])
@pytest.mark.parametrize("op", ["negative", "square", "sign", "relu", "abs", "logical_not"])
def test_native_dtypes(op, dtype, opset):
    x = np.array([-128, -7, -1, 0, 1, 5, 100, 127], np.int64)
    if dtype == "uint8":
        x = np.array([0, 1, 5, 100, 200, 255])
    _check_vs_executor(op, x.astype(dtype), opset, 1e-3 if dtype == "float16" else 0)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", [{"a_min": -2.5, "a_max": 3.7}, {"a_min": 5, "a_max": -5},
                                   {"a_min": NAN, "a_max": 1.0}])
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int64"])
def test_clip_dtypes(attrs, dtype, opset):
    x = np.array([-100, -7, -3, -1, 0, 1, 3, 4, 100]).astype(dtype)
    _check_vs_executor("clip", x, opset, 0, attrs)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "zeros_like_int8", "sin", "abs",
                                  "clip", "cast_int32", "hard_sigmoid"])
def test_dynamic_batch(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, {"in0": 0})


def test_zeros_like_reads_shape_only_when_dynamic():
    x = mx.sym.zeros_like(mx.sym.var("x"))
    fixed = export_symbol(x, {}, in_shapes=[(2, 3)])
    assert [n.op_type for n in fixed.graph.node] == ["ConstantOfShape"]
    dyn = export_symbol(x, {}, in_shapes=[(2, 3)], dynamic_axes={"x": {0: "n"}})
    assert [n.op_type for n in dyn.graph.node] == ["Shape", "ConstantOfShape"]


def test_cast_to_bfloat16_is_refused():
    out = mx.sym.Cast(mx.sym.var("x"), dtype="bfloat16", name="c")
    with pytest.raises(ConversionError, match="'c'.*bfloat16.*float16 or float32"):
        export_symbol(out, {}, in_shapes=[(2,)])


@pytest.mark.parametrize("opset", OPSETS)
def test_amp_multicast_unread_output(opset):
    """Only the outputs a graph reads are defined."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.amp_multicast(a, b, num_outputs=2)[1]
    model = export_symbol(out, {}, in_shapes=[(2,), (2,)], in_types=["float16", "float32"],
                          opset_version=opset)
    x = np.array([1.5, -2.25], np.float32)
    got = run_ort(model, {"a": x.astype(np.float16), "b": x})
    np.testing.assert_array_equal(got[0], x)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("make", [
    lambda y, x: mx.sym.invoke("_identity_with_attr_like_rhs", [y, x], {}),
    lambda y, x: mx.sym.Cast(y, dtype="float32"),
    lambda y, x: mx.sym.amp_cast(y, dtype="float32"),
    lambda y, x: mx.sym.add_n(y)], ids=["identity_like_rhs", "cast_same", "amp_cast", "add_n"])
def test_pass_through_keeps_producer_output(make, opset):
    """An op that passes its input on must not take over the name of the node that made it
    (relu's output is read elsewhere too)."""
    x = mx.sym.var("x")
    y = mx.sym.relu(x)
    out = mx.sym.Group([make(y, x), y * 2])
    model = export_symbol(out, {}, in_shapes=[(3,)], opset_version=opset)
    feed = np.array([-1.0, 0.5, 2.0], np.float32)
    got = run_ort(model, {"x": feed})
    np.testing.assert_array_equal(got[0], [0, 0.5, 2])
    np.testing.assert_array_equal(got[1], [0, 1, 4])

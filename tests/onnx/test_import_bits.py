"""Bit manipulation imported onto MXNet ops (gluonport/onnx/importers/bits.py): BitwiseAnd/Or/
Xor/Not onto ``_npi_bitwise_*``, BitShift composed from integer products and quotients, BitCast
of same-width integers onto ``Cast``.

The references: onnxruntime on the same model where it has the kernel (Bitwise*, unsigned
BitShift), and onnx's reference evaluator for BitShift on signed types (opset 28, newer than
onnxruntime's kernels) and BitCast (no onnxruntime kernel), whose definitions (sign fill for
shifts < 0 or >= the width) are checked against numpy's saturating shifts and ``view`` here
too. Values span each dtype's whole range, extremes included; comparisons are exact.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

_check = partial(check_import, rtol=0, atol=0, skip_without_kernel=False)
_ONNX = {np.dtype(k): v for k, v in {
    "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int16": TensorProto.INT16,
    "uint16": TensorProto.UINT16, "int32": TensorProto.INT32, "uint32": TensorProto.UINT32,
    "int64": TensorProto.INT64, "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL}.items()}


def _needs_opset(opset: int, what: str) -> None:
    """Skip where the installed onnx predates ``opset`` (its checker and reference evaluator,
    the reference here, know no such op version; onnx 1.17 stops at opset 22)."""
    if onnx.defs.onnx_opset_version() < opset:
        pytest.skip(f"onnx {onnx.__version__} knows opsets up to "
                    f"{onnx.defs.onnx_opset_version()}; {what} is opset {opset}")


def _ints(dtype, shape, seed):
    """Uniform over the dtype's whole range, with its minimum, maximum, 0 and -1 planted."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    planted = np.array([info.min, info.max, 0, info.max if info.min == 0 else -1], dtype)
    flat[:4] = planted[:flat.size]
    return x


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint64"])
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_binary_matches_onnxruntime(op, dtype):
    t = _ONNX[np.dtype(dtype)]
    node = helper.make_node(op, ["a", "b"], ["y"])
    model = make_model([node], [vi("a", t, [2, 3, 4]), vi("b", t, [3, 1])], vi("y", t, [2, 3, 4]),
                       opset=18)
    _check(model, {"a": _ints(dtype, (2, 3, 4), 1), "b": _ints(dtype, (3, 1), 2)})


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32", "int64"])
def test_bitwise_not_matches_onnxruntime(dtype):
    t = _ONNX[np.dtype(dtype)]
    model = make_model([helper.make_node("BitwiseNot", ["a"], ["y"])], [vi("a", t, [4, 5])],
                       vi("y", t, [4, 5]), opset=18)
    _check(model, {"a": _ints(dtype, (4, 5), 3)})


def _shift_model(dtype, direction, opset, const_shift=None):
    t = _ONNX[np.dtype(dtype)]
    inits = []
    inputs = [vi("x", t, [3, 6])]
    if const_shift is None:
        inputs.append(vi("s", t, [6]))
    else:
        inits.append(numpy_helper.from_array(const_shift, "s"))
    node = helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)
    return make_model([node], inputs, vi("y", t, [3, 6]), inits, opset=opset)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_unsigned_shift_matches_onnxruntime(dtype, direction):
    width = np.dtype(dtype).itemsize * 8
    s = np.array([0, 1, 3, width // 2, width - 2, width - 1], dtype)
    _check(_shift_model(dtype, direction, 18), {"x": _ints(dtype, (3, 6), 4), "s": s})


def _numpy_shift(x, s, right):
    """ONNX BitShift-28 by numpy: numpy saturates shifts >= the width (0, or -1 for a right
    shift of a negative), and a negative shift is out of range the same way."""
    width = x.dtype.itemsize * 8
    s64 = s.astype(np.int64)
    out_of_range = (s64 < 0) | (s64 >= width)
    safe = np.where(out_of_range, 0, s).astype(x.dtype)
    shifted = (x >> safe) if right else (x << safe)
    fill = np.where(x < 0, -1, 0).astype(x.dtype) if right else np.zeros_like(x)
    return np.where(out_of_range, np.broadcast_to(fill, shifted.shape), shifted)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("const", [False, True], ids=["shift_input", "shift_constant"])
def test_signed_shift_matches_the_reference(dtype, direction, const):
    """Overflowing left shifts wrap; right shifts of negatives fill with the sign; shifts
    below 0 or at/past the width give the fill alone."""
    _needs_opset(28, "BitShift on signed integers")
    width = np.dtype(dtype).itemsize * 8
    s = np.array([0, 1, width - 1, width, -1, width // 2], dtype)
    model = _shift_model(dtype, direction, 28, s if const else None)
    x = _ints(dtype, (3, 6), 5)
    feeds = {"x": x} if const else {"x": x, "s": s}
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_array_equal(want, _numpy_shift(x, s, direction == "RIGHT"))
    got = prepare(model).run(feeds)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src, dst", [("int8", "uint8"), ("bool", "uint8"),
                                      ("uint32", "int32"), ("uint8", "int8")])
def test_integer_bitcast_matches_the_reference(src, dst):
    _needs_opset(26, "BitCast")
    x = (np.array([[True, False, True]]) if src == "bool" else _ints(src, (1, 3), 6))
    model = make_model([helper.make_node("BitCast", ["x"], ["y"], to=_ONNX[np.dtype(dst)])],
                       [vi("x", _ONNX[np.dtype(src)], [1, 3])],
                       vi("y", _ONNX[np.dtype(dst)], [1, 3]), opset=26)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]  # onnxruntime has no BitCast
    np.testing.assert_array_equal(want, x.view(np.dtype(dst)))
    got = prepare(model).run({"x": x})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_float_bitcast_is_refused_with_the_reason():
    _needs_opset(26, "BitCast")
    model = make_model([helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT32)],
                       [vi("x", TensorProto.FLOAT, [3])], vi("y", TensorProto.INT32, [3]),
                       opset=26)
    with pytest.raises(UnsupportedOpError, match="reinterprets the bits of a float"):
        import_graph(model)

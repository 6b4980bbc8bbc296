"""Narrow tensor types (bfloat16, float8, float8e8m0, float4, int4, int2) carried in
float32/int8/uint8 (gluonport/onnx/_import_narrow.py), against onnx's reference evaluator on
the same model (onnxruntime has no kernels for most of these casts). The reference converts
with ml_dtypes (round half to even, saturation per the ``saturate`` attribute), independent of
the composition under test.

Casts are compared exactly (bit patterns of the narrow results, NaN equal to NaN) on values
built to hit every rounding case: a log-uniform spread over and past each type's range, exact
ties between neighbouring grid points (the half-to-even rule), subnormals, the largest finite
value and the overflow boundary, zeros, infinities and NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import make_model, vi

# the reference's converter; onnx 1.18+ depends on it (onnx 1.17, pyproject's floor, does not)
ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = {
    "FLOAT8E4M3FN": ml_dtypes.float8_e4m3fn, "FLOAT8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "FLOAT8E5M2": ml_dtypes.float8_e5m2, "FLOAT8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "FLOAT4E2M1": ml_dtypes.float4_e2m1fn, "BFLOAT16": ml_dtypes.bfloat16,
}


def _grid_values(dtype) -> np.ndarray:
    """Every finite value of a narrow float type, the midpoints between neighbours (ties),
    values just off the midpoints, a log-uniform spread and the special values."""
    info = ml_dtypes.finfo(dtype)
    if np.dtype(dtype).itemsize == 1:
        every = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
    else:
        every = np.random.default_rng(0).integers(0, 1 << 16, 4000).astype(np.uint16) \
            .view(dtype).astype(np.float32)
    every = np.unique(every[np.isfinite(every)])
    mid = (every[:-1].astype(np.float64) + every[1:]) / 2
    near = np.concatenate([mid, np.nextafter(mid.astype(np.float32), np.inf),
                           np.nextafter(mid.astype(np.float32), -np.inf)])
    rng = np.random.default_rng(1)
    spread = np.exp2(rng.uniform(np.log2(float(info.smallest_subnormal)) - 3,
                                 np.log2(float(info.max)) + 3, 3000)) * rng.choice([-1, 1], 3000)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max),
               float(info.max) * 1.06, float(info.max) * 1.2, 1e30, -1e30]
    return np.concatenate([every, near, spread, special]).astype(np.float32)


def _run_both(model, feeds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = prepare(model).run(feeds)[0]
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    return got, want


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float32), want.astype(np.float32)
    bad = ~((g == w) | (np.isnan(g) & np.isnan(w)))
    assert not bad.any(), f"{bad.sum()} differ, e.g. got {g[bad][:5]} want {w[bad][:5]}"


@pytest.mark.parametrize("to, saturate", [(t, s) for t in sorted(FLOATS) for s in (1, 0)
                                           if s or t.startswith("FLOAT8")])  # float8 only
def test_cast_float32_to_narrow_float(to, saturate):
    x = _grid_values(FLOATS[to])
    attrs = {"saturate": saturate} if to.startswith("FLOAT8") else {}
    node = helper.make_node("Cast", ["x"], ["y"], to=getattr(TensorProto, to), **attrs)
    model = make_model([node], [vi("x", TensorProto.FLOAT, [x.size])],
                       vi("y", getattr(TensorProto, to), [x.size]), opset=23)
    _same_bits(*_run_both(model, {"x": x}))


@pytest.mark.parametrize("to", ["INT4", "UINT4", "INT2", "UINT2"])
@pytest.mark.parametrize("src", [TensorProto.FLOAT, TensorProto.INT32])
def test_cast_to_narrow_int_wraps(to, src):
    x = np.arange(-40, 41).astype(helper.tensor_dtype_to_np_dtype(src))
    node = helper.make_node("Cast", ["x"], ["y"], to=getattr(TensorProto, to))
    model = make_model([node], [vi("x", src, [x.size])], vi("y", getattr(TensorProto, to),
                                                             [x.size]), opset=25)
    got, want = _run_both(model, {"x": x})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.int32), want.astype(np.int32))


@pytest.mark.parametrize("to", ["FLOAT8E4M3FN", "FLOAT8E5M2", "INT4", "UINT4", "FLOAT4E2M1"])
def test_quantize_dequantize_per_axis(to):
    """QuantizeLinear along axis 1 into the narrow type, then back with DequantizeLinear."""
    t = getattr(TensorProto, to)
    scale = np.array([0.5, 2.0, 0.03], np.float32)
    zero = np.array([0, 3, -2] if to == "INT4" else [1, 0, 5] if to == "UINT4" else [0, 0, 0])
    zp = numpy_helper.from_array(zero.astype(helper.tensor_dtype_to_np_dtype(t)), "zp")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], axis=1)]
    model = make_model(nodes, [vi("x", TensorProto.FLOAT, [2, 3, 4])],
                       [vi("y", TensorProto.FLOAT, [2, 3, 4]), vi("q", t, [2, 3, 4])],
                       [numpy_helper.from_array(scale, "s"), zp], opset=23)
    x = np.random.default_rng(2).normal(0, 8, (2, 3, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = prepare(model).run({"x": x})
    want = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].dtype == want[1].dtype
    np.testing.assert_array_equal(got[1].astype(np.float32), want[1].astype(np.float32))


def test_bfloat16_ops_compute_in_float32():
    """Ops on bfloat16 tensors compute on float32 and round once at the output: within two
    bfloat16 ulps (onnx's own bfloat16 tolerance) of the reference, which rounds after every
    op (a chain without cancellation, where that would magnify the difference)."""
    bf = TensorProto.BFLOAT16
    nodes = [helper.make_node("Mul", ["a", "b"], ["m"]), helper.make_node("Tanh", ["m"], ["t"]),
             helper.make_node("Mul", ["t", "a"], ["y"])]
    model = make_model(nodes, [vi("a", bf, [64]), vi("b", bf, [64])], vi("y", bf, [64]),
                       opset=23)
    rng = np.random.default_rng(3)
    feeds = {k: rng.normal(0, 2, 64).astype(ml_dtypes.bfloat16) for k in "ab"}
    got, want = _run_both(model, feeds)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2 ** -6,
                               atol=0)


def test_carried_graph_inputs_are_float32_and_said_so():
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    model = make_model([node], [vi("x", TensorProto.FLOAT8E4M3FN, [3])],
                       vi("y", TensorProto.FLOAT, [3]), opset=23)
    with pytest.warns(UserWarning, match=r"x \(FLOAT8E4M3FN\) are carried"):
        g = import_graph(model)
    assert g.sym.infer_type(x="float32")[1] == [np.float32]


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_cast_to_e8m0(mode, saturate):
    """Every power of two, halves (1.5 * 2^e: the nearest tie), values just off both, a
    log-uniform spread, float32 subnormals and the specials; the sign is dropped."""
    powers = np.exp2(np.arange(-149, 128, dtype=np.float64))
    rng = np.random.default_rng(4)
    x = np.concatenate([powers, powers * 1.5, powers * 1.5 * (1 + 2 ** -20),
                        powers * (1 + 2 ** -20), powers * 1.999,
                        np.exp2(rng.uniform(-149, 128, 2000)) * rng.choice([-1, 1], 2000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -2.0 ** 127]])
    x = x[np.isfinite(x.astype(np.float32)) | ~np.isfinite(x)].astype(np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0,
                            saturate=saturate, round_mode=mode)
    model = make_model([node], [vi("x", TensorProto.FLOAT, [x.size])],
                       vi("y", TensorProto.FLOAT8E8M0, [x.size]), opset=24)
    _same_bits(*_run_both(model, {"x": x}))

"""gluonport.onnx.verify: the tolerance rule of compare(), and verify()/bisect() catching a
conversion that is wrong (a deliberately broken converter) while passing a correct one."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.onnx import bisect, export_symbol, register_converter, verify
from gluonport.onnx.export import _CUSTOM
from gluonport.onnx.verify import compare


def test_atol_scales_with_the_output_magnitude():
    want = np.array([50.0, -20.0, 0.01, 0.0], np.float32)
    # float32 rounding of a sum of terms ~50 reaches a few 1e-5 on the elements near 0
    rounding = want + np.array([2e-5, -1e-5, 3e-5, -3e-5], np.float32)
    assert compare("y", rounding, want, rtol=1e-4, atol=1e-5).ok
    wrong = want + np.array([0, 0, 1e-2, 0], np.float32)  # an error a bug would make
    assert not compare("y", wrong, want, rtol=1e-4, atol=1e-5).ok


def test_small_outputs_keep_the_plain_atol():
    want = np.array([0.5, 0.0], np.float32)  # max |want| < 1: the scale stays 1
    assert compare("y", want + [0, 9e-6], want, rtol=1e-4, atol=1e-5).ok
    assert not compare("y", want + [0, 3e-5], want, rtol=1e-4, atol=1e-5).ok


def test_nan_shape_and_inf_are_handled():
    want = np.array([1.0, np.nan, np.inf], np.float32)
    assert compare("y", want.copy(), want, 1e-4, 1e-5).ok
    assert not compare("y", np.array([1.0, 0.0, np.inf], np.float32), want, 1e-4, 1e-5).ok
    assert not compare("y", np.zeros(2, np.float32), want, 1e-4, 1e-5).ok


def _net():
    x = mx.sym.var("data")
    h = mx.sym.FullyConnected(x, num_hidden=8, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="act1")
    return mx.sym.FullyConnected(h, num_hidden=3, name="fc2")


def _params():
    rng = np.random.RandomState(0)
    return {"fc1_weight": rng.randn(8, 5).astype(np.float32) * 3,
            "fc1_bias": rng.randn(8).astype(np.float32),
            "fc2_weight": rng.randn(3, 8).astype(np.float32) * 10,
            "fc2_bias": rng.randn(3).astype(np.float32)}


def test_verify_passes_a_correct_conversion_and_bisect_agrees():
    sym, params = _net(), _params()
    model = export_symbol(sym, params, {"data": (4, 5)})
    report = verify(sym, params, model, in_shapes={"data": (4, 5)})
    assert report.ok, report.table()
    assert bisect(sym, params, in_shapes={"data": (4, 5)}).node is None


def test_verify_and_bisect_catch_a_wrong_converter():
    sym, params = _net(), _params()

    @register_converter("Activation")
    def _wrong(ctx):  # tanh exported as sigmoid: close in shape, wrong in value
        ctx.make("Sigmoid", ctx.inputs, outputs=ctx.outputs)

    try:
        model = export_symbol(sym, params, {"data": (4, 5)})
        report = verify(sym, params, model, in_shapes={"data": (4, 5)})
        where = bisect(sym, params, in_shapes={"data": (4, 5)})
    finally:
        _CUSTOM.pop("Activation", None)
    assert not report.ok
    with pytest.raises(mx.errors.ValidationError, match="differ"):
        report.raise_if_failed()
    assert (where.node, where.op) == ("act1", "Activation")

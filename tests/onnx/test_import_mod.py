"""Mod on floats with zero, infinite and NaN operands (gluonport/onnx/importers/math.py):
MXNet's ``mod`` gives 0 for a zero divisor, ONNX NaN; the import adds ``0 / (b != 0)``.
Against numpy's mod / fmod (what a newer onnx's reference evaluator computes; onnx
1.17's gives ``nan_to_num(fmod)`` for floats with ``fmod=0``, so it is compared only where it
agrees) and, for ``fmod=1``, onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from gluonport.onnx.backend import prepare
from tests.onnx._import_check import check_import, make_model, vi

X = [0.0, -0.0, -3.0, 3.0, -1.0, 1.0, np.inf, -np.inf, 1.0, -1.0, np.nan, 1.0, 7.5, -7.5, 5.25]
Y = [-2.0, 2.0, np.inf, np.inf, -np.inf, -np.inf, 2.0, 2.0, 0.0, -0.0, 2.0, np.nan, 2.0, 2.0,
     -1.5]


def _model(fmod, elem):
    node = helper.make_node("Mod", ["x", "y"], ["z"], fmod=fmod)
    return make_model([node], [vi("x", elem, [len(X)]), vi("y", elem, [len(X)])],
                      vi("z", elem, [len(X)]), opset=13)


@pytest.mark.parametrize("dtype, elem", [(np.float32, TensorProto.FLOAT),
                                         (np.float64, TensorProto.DOUBLE),
                                         (np.float16, TensorProto.FLOAT16)])
@pytest.mark.parametrize("fmod", [0, 1])
def test_float_mod_edge_cases(fmod, dtype, elem):
    feeds = {"x": np.array(X, dtype), "y": np.array(Y, dtype)}
    model = _model(fmod, elem)
    with np.errstate(all="ignore"):
        want = (np.fmod if fmod else np.mod)(feeds["x"], feeds["y"])
        ref = ReferenceEvaluator(model).run(None, feeds)[0]
    if fmod or not np.array_equal(ref, np.nan_to_num(np.fmod(feeds["x"], feeds["y"]))):
        np.testing.assert_array_equal(ref, want)  # onnx's reference is numpy's mod / fmod
    got = prepare(model).run(feeds)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # NaN where NaN; -0.0 == 0.0
    if fmod:
        check_import(model, feeds, rtol=0, atol=0, skip_without_kernel=False)

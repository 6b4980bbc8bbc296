"""ONNX export of dot / batch_dot / _linalg_* (ops/math/linalg.py) against MXNet 1.9.1.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import pytest

from tests.onnx._export_check import OPSETS, check_dynamic, check_export
from tests.ops import cases_linalg
from tests.ops._check import load_golden

GOLDEN = load_golden("linalg")
CASES = {c["name"]: c for c in cases_linalg.CASES}


# The second operand as a parameter (an initializer), as a model's weights are.
WEIGHTS = [n for n, c in CASES.items() if c["op"] in ("dot", "linalg_gemm2", "linalg_gemm")]


@pytest.mark.parametrize("name", WEIGHTS)
def test_export_weight_as_param(name):
    check_export(CASES[name], GOLDEN[name], OPSETS[-1], params=["in1"])


# Dynamic dims never baked into the N-d reshapes: {input: axis} per case.
DYNAMIC = {
    "dot_2d": {"in0": 0},
    "dot_nd_lhs": {"in0": 0},
    "dot_nd_both": {"in0": 0, "in1": 2},
    "dot_nd_transpose_a": {"in0": 1},
    "dot_nd_transpose_b": {"in1": 0},
    "dot_nd_transpose_both": {"in0": 2},
    "dot_vec_mat": {"in1": 1},
    "dot_mat_vec": {"in0": 0},
    "batch_dot_transpose_b": {"in0": 0, "in1": 0},
    "batch_dot_4d": {"in0": 1, "in1": 1},
    "gemm2_axis0": {"in0": 1, "in1": 1},
    "gemm2_transposes": {"in0": 0, "in1": 0},
    "gemm": {"in0": 0, "in1": 0, "in2": 0},
    "gemm_transposes_axis0": {"in0": 1, "in1": 1, "in2": 1},
    "syrk": {"in0": 0},
    "trmm_flags": {"in1": 0},
    "extractdiag_neg_offset": {"in0": 0},
    "makediag": {"in0": 0},
    "extracttrian": {"in0": 0},
    "extracttrian_offset": {"in0": 0},
    "maketrian": {"in0": 0},
    "maketrian_offset": {"in0": 1},
    "det": {"in0": 0},
    "slogdet": {"in0": 0},
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, DYNAMIC[name])

"""ONNX export of the reductions (gluonport/ops/math/{reduce,stats}.py) against MXNet 1.9.1.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

from tests.onnx._export_check import OPSETS, check_dynamic
from tests.ops import cases_reduce
from tests.ops._check import load_golden

GOLDEN = load_golden("reduce")
CASES = {c["name"]: c for c in cases_reduce.CASES}


# Dynamic batch (axis 0): reductions over it need the element count from Shape (integer mean).
DYNAMIC = ["sum_axis1", "sum_all", "sum_exclude_keepdims", "mean_axis1", "mean_all",
           "mean_int32_truncates", "mean_int8_wraps", "prod_axis0", "nansum_axis1",
           "max_keepdims", "min_exclude", "norm_frobenius", "norm_int32_ties",
           "argmax_global_keepdims", "argmax_axis1", "argmax_channel", "moments_axis1",
           "moments_all", "moments_int32_truncates", "moments_neg_axes", "cumsum_flat",
           "cumsum_axis1", "cumsum_axis0_int32", "histogram_uniform", "histogram_int32",
           "histogram_edges", "histogram_edges_unsorted", "all_finite_true",
           "multi_all_finite_inf"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, {"in0": 0})


# Beyond the table, vs the numpy executor: integer means over a dynamic axis (the count comes
# from Shape) and norm's out_dtype.
I32 = np.random.RandomState(5).randint(-9, 10, (3, 4, 5)).astype(np.int32)
EXTRA = [({"name": "mean_int32_axis0", "op": "mean", "attrs": {"axis": 0}}, I32),
         ({"name": "mean_int32_all", "op": "mean"}, I32),
         ({"name": "mean_int8_exclude", "op": "mean", "attrs": {"axis": 2, "exclude": True}},
          I32.astype(np.int8)),
         ({"name": "norm_out_float64", "op": "norm", "attrs": {"axis": 1, "out_dtype": "float64"},
           "rtol": 1e-6}, I32.astype(np.float32) / 7),
         ({"name": "norm_int32_out_float32", "op": "norm",
           "attrs": {"ord": 1, "axis": (0, 2), "out_dtype": "float32"}}, I32)]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case,x", EXTRA, ids=[c["name"] for c, _ in EXTRA])
def test_dynamic_beyond_table(case, x, opset):
    check_dynamic(case, {"inputs": [x]}, opset, {"in0": 0}, sizes=(1, 7))
